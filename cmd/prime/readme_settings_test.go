package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// readmeSettings is what prime settings --json reports.
type readmeSettings struct {
	ProjectTrusted bool `json:"projectTrusted"`
	Settings       []struct {
		Key    string         `json:"key"`
		Value  jsontext.Value `json:"value"`
		Source string         `json:"source"`
	} `json:"settings"`
	Problems []map[string]any `json:"problems"`
}

// value is the key's value as compact JSON text, "" when not listed.
func (s *readmeSettings) value(key string) (value, source string) {
	for _, e := range s.Settings {
		if e.Key == key {
			v := e.Value.Clone()
			if err := v.Compact(); err != nil {
				return string(e.Value), e.Source
			}
			return string(v), e.Source
		}
	}
	return "", ""
}

// settingsJSON runs prime settings --json (and args) in the project.
func (e *readmeUserEnv) settingsJSON(t *testing.T, args ...string) *readmeSettings {
	t.Helper()
	out := e.run(t, []string{"prime settings --json " + strings.Join(args, " ")})
	var s readmeSettings
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("prime settings --json: %v\n%s", err, out)
	}
	return &s
}

// settingLeaves flattens a settings file's JSON into prime settings' keys
// and their values as compact JSON text; a modelOverrides object's keys
// are model names, written ["provider/id"].
func settingLeaves(t *testing.T, prefix string, raw jsontext.Value, out map[string]string) {
	t.Helper()
	var obj map[string]jsontext.Value
	if raw.Kind() != '{' {
		v := raw.Clone()
		if err := v.Compact(); err != nil {
			t.Fatal(err)
		}
		out[prefix] = string(v)
		return
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	for k, v := range obj {
		name := prefix + "." + k
		switch {
		case prefix == "":
			name = k
		case strings.HasSuffix(prefix, ".modelOverrides"):
			name = prefix + `["` + k + `"]`
		}
		settingLeaves(t, name, v, out)
	}
}

// TestREADMESettingsExample puts the README's settings.json in a new
// user's agent directory and runs the README's settings commands after it,
// line by line: every value of the file is reported from the global file
// without a problem, the model override applies with --model, set and
// unset change only their key (the rest of the file as it was, in order),
// and prime trust trusts the project.
func TestREADMESettingsExample(t *testing.T) {
	e := newReadmeHome(t)
	file := filepath.Join(e.agentDir(), "settings.json")
	example := strings.Join(readmeBlock(t, `"modelOverrides"`, `"retry"`), "\n") + "\n"
	writeFile(t, file, example)
	leaves := map[string]string{}
	settingLeaves(t, "", jsontext.Value(example), leaves)

	s := e.settingsJSON(t)
	if len(s.Problems) != 0 {
		t.Errorf("the README's settings.json has problems: %v", s.Problems)
	}
	for key, want := range leaves {
		if got, source := s.value(key); got != want || source != "global" {
			t.Errorf("%s: %s from %q, the README's file says %s", key, got, source, want)
		}
	}

	commands := readmeBlock(t, "prime settings set compaction.enabled false", "prime trust")
	for _, line := range commands {
		out := e.run(t, []string{line})
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		switch args := strings.Fields(strings.SplitN(line, "#", 2)[0]); {
		case len(args) < 2 || args[0] != "prime":
			t.Errorf("the README's settings block has a line that is not a prime command: %q", line)
		case args[1] == "trust":
			if !e.settingsJSON(t).ProjectTrusted {
				t.Errorf("%s: the project is not trusted:\n%s", line, out)
			}
		case len(args) == 2: // prime settings
			if !strings.Contains(out, "compaction.keepRecentTokens") || !strings.Contains(out, file) {
				t.Errorf("%s:\n%s", line, out)
			}
		case args[1] == "settings" && args[2] == "--json":
			model := args[len(args)-1]
			var got readmeSettings
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%s: %v\n%s", line, err, out)
			}
			want := leaves[`compaction.modelOverrides["`+model+`"].keepRecentTokens`]
			if v, _ := got.value("compaction.keepRecentTokens"); want == "" || v != want {
				t.Errorf("%s: keepRecentTokens %s, the README's override for %s is %q", line, v, model, want)
			}
		case args[1] == "settings" && args[2] == "set":
			if v, _ := e.settingsJSON(t).value(args[3]); v != args[4] {
				t.Errorf("%s: %s is %s", line, args[3], v)
			}
			if !keepsLines(example, text) {
				t.Errorf("%s rewrote more than its key:\n%s", line, text)
			}
		case args[1] == "settings" && args[2] == "unset":
			if _, source := e.settingsJSON(t).value(args[3]); source != "default" {
				t.Errorf("%s: %s still comes from %q:\n%s", line, args[3], source, text)
			}
			if !strings.Contains(text, `"keepRecentTokens": 60000`) {
				t.Errorf("%s took the model override too:\n%s", line, text)
			}
		default:
			t.Errorf("the README's settings block has a line this test does not know: %q", line)
		}
	}
}

// keepsLines reports whether every line of before is in after, in order
// (a comma after a value that is no longer the last aside).
func keepsLines(before, after string) bool {
	rest := strings.Split(after, "\n")
	for _, l := range strings.Split(before, "\n") {
		i := 0
		for i < len(rest) && strings.TrimSuffix(rest[i], ",") != strings.TrimSuffix(l, ",") {
			i++
		}
		if i == len(rest) {
			return false
		}
		rest = rest[i+1:]
	}
	return true
}

// readmeDefaultRow is a row of the README's settings table: `key`s, then
// the `default`s in the same order.
var readmeDefaultRow = regexp.MustCompile("^\\| (`[^|]+`) \\| (`[^|]+`) \\|")

// TestREADMESettingsDefaults: the defaults in the README's settings table
// are what prime settings reports for a new user.
func TestREADMESettingsDefaults(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(data), "| key | default | meaning |")
	table, _, _ = strings.Cut(table, "\n\n")
	e := newReadmeHome(t)
	s := e.settingsJSON(t)
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		m := readmeDefaultRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		keys, defaults := strings.Split(m[1], ", "), strings.Split(m[2], ", ")
		if len(keys) != len(defaults) {
			t.Errorf("the README's row %q names %d keys and %d defaults", line, len(keys), len(defaults))
			continue
		}
		for i := range keys {
			key, want := strings.Trim(keys[i], "`"), strings.Trim(defaults[i], "`")
			if got, source := s.value(key); got != want || source != "default" {
				t.Errorf("%s: a new user has %s (%q), the README says %s", key, got, source, want)
			}
			rows++
		}
	}
	if rows < 10 {
		t.Errorf("read %d defaults from the README's settings table; did its form change?", rows)
	}
}

// TestREADMEUntrustedShellPath: a project not trusted that sets shellPath
// is shown by prime settings as the README quotes it, with a warning that
// names the key, the file and the line; once trusted, the value applies.
func TestREADMEUntrustedShellPath(t *testing.T) {
	para := readmeParagraph(t, "**What a project may set.**")
	quoted := regexp.MustCompile("`(default \\(project sets (\\S+): ignored, not trusted\\))`").FindStringSubmatch(para)
	if quoted == nil {
		t.Fatalf("the README's paragraph no longer quotes how prime settings shows an ignored shellPath: %s", para)
	}
	e := newReadmeHome(t)
	file := filepath.Join(e.project, ".prime", "agent", "settings.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, file, `{"shellPath": "`+quoted[2]+`"}`)
	out := e.run(t, []string{"prime settings"})
	var row, warning string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "shellPath ") {
			row = l
		}
		if strings.Contains(l, file+":1:") && strings.Contains(l, "shellPath") {
			warning = l
		}
	}
	if !strings.HasSuffix(row, " "+quoted[1]) {
		t.Errorf("prime settings shows shellPath as %q, the README as %q", row, quoted[1])
	}
	if warning == "" || !strings.Contains(warning, "not trusted") {
		t.Errorf("no warning naming the key, the file and the line:\n%s", out)
	}
	e.run(t, []string{"prime trust"})
	if v, source := e.settingsJSON(t).value("shellPath"); v != `"`+quoted[2]+`"` || source != "project" {
		t.Errorf("trusted: shellPath %s from %q", v, source)
	}
}
