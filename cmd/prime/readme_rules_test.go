package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prime-agent/prime/permission"
)

// readmeParagraph returns the README's paragraph (up to a blank line) that
// starts with start, its lines joined by spaces.
func readmeParagraph(t *testing.T, start string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, text, ok := strings.Cut(string(data), start)
	if !ok {
		t.Fatalf("the README has no paragraph starting %q", start)
	}
	text, _, _ = strings.Cut(text, "\n\n")
	return strings.Join(strings.Fields(start+text), " ")
}

var readmeCode = regexp.MustCompile("`([^`]+)`")

// TestREADMEPermissionRules: every rule the README's Security section
// shows in its Rules paragraph parses, and means what the words beside it
// say, for allow rules (every part of a command must match); and the
// escape paragraph's ways of stretching Bash(echo:*) are each refused.
func TestREADMEPermissionRules(t *testing.T) {
	home, project := "/home/u", "/work/p"
	where := permission.Where{Home: home, Project: project}
	bash := func(cmd string) permission.Call { return permission.Call{Tool: "bash", Command: cmd} }
	file := func(tool, path string) permission.Call { return permission.Call{Tool: tool, Paths: []string{path}} }
	// What the README says each rule matches, and what it does not.
	meaning := map[string]struct{ yes, no []permission.Call }{
		"Bash(npm test:*)": { // that command and anything after it
			yes: []permission.Call{bash("npm test"), bash("npm test -- --watch")},
			no:  []permission.Call{bash("npm testing"), bash("npm run build"), bash("npm test && curl x")},
		},
		"Bash(git status)": { // exactly
			yes: []permission.Call{bash("git status")},
			no:  []permission.Call{bash("git status -s"), bash("git stash")},
		},
		"Bash(git * --dry-run)": { // * is any text
			yes: []permission.Call{bash("git push origin main --dry-run"), bash("git clean -fd --dry-run")},
			no:  []permission.Call{bash("git push origin main")},
		},
		"Edit(src/**)": { // edit and write; paths are the project's
			yes: []permission.Call{file("edit", project+"/src/a/b.go"), file("write", project+"/src/c.go")},
			no:  []permission.Call{file("edit", project+"/docs/x.md"), file("read", project+"/src/a/b.go"), file("edit", "/src/a.go")},
		},
		"Read(~/.ssh/**)": { // read, grep, find, ls; ~/ is home
			yes: []permission.Call{file("read", home+"/.ssh/id_ed25519"), file("grep", home+"/.ssh/config"), file("find", home+"/.ssh/keys/a"), file("ls", home+"/.ssh/x")},
			no:  []permission.Call{file("read", project+"/.ssh/id_ed25519"), file("edit", home+"/.ssh/config")},
		},
		"mcp__server__tool": {
			yes: []permission.Call{{Tool: "mcp__server__tool"}},
			no:  []permission.Call{{Tool: "mcp__server__other"}, {Tool: "mcp__other__tool"}},
		},
		"mcp__server": { // all its tools
			yes: []permission.Call{{Tool: "mcp__server__tool"}, {Tool: "mcp__server__other"}},
			no:  []permission.Call{{Tool: "mcp__serverx__tool"}},
		},
	}
	rules := readmeParagraph(t, "**Rules**")
	seen := 0
	for _, m := range readmeCode.FindAllStringSubmatch(rules, -1) {
		text := m[1]
		if !regexp.MustCompile(`^(Bash|Edit|Write|Read)\(|^mcp__`).MatchString(text) || text == "Write(...)" || text == "Read(...)" {
			continue
		}
		r, err := permission.ParseRule(text)
		if err != nil {
			t.Errorf("the README's rule %s: %v", text, err)
			continue
		}
		want, ok := meaning[text]
		if !ok {
			t.Errorf("the README shows the rule %s, which this test does not know the meaning of", text)
			continue
		}
		seen++
		for _, c := range want.yes {
			if !r.Match(c, where, false) {
				t.Errorf("%s does not allow %+v", text, c)
			}
		}
		for _, c := range want.no {
			if r.Match(c, where, false) {
				t.Errorf("%s allows %+v", text, c)
			}
		}
	}
	if seen != len(meaning) {
		t.Errorf("the README's Rules paragraph shows %d of the %d rules this test knows", seen, len(meaning))
	}

	// "stretching an allow rule such as `Bash(echo:*)` with `; rm`, ...
	// (each asks instead)".
	escape := readmeParagraph(t, "Escape attempts tested on the real kernel")
	_, stretch, _ := strings.Cut(escape, "stretching an allow rule such as ")
	stretch, _, _ = strings.Cut(stretch, "(each asks instead)")
	codes := readmeCode.FindAllStringSubmatch(stretch, -1)
	if len(codes) < 2 || codes[0][1] != "Bash(echo:*)" {
		t.Fatalf("the README's stretching sentence changed: %q", stretch)
	}
	echo, err := permission.ParseRule(codes[0][1])
	if err != nil {
		t.Fatal(err)
	}
	if !echo.Match(bash("echo hi"), where, false) {
		t.Fatal("Bash(echo:*) does not allow echo hi")
	}
	attempts := []string{"echo hi `id`"} // "backquotes", in words
	for _, c := range codes[1:] {
		s := strings.ReplaceAll(c[1], "...", "id")
		if strings.HasSuffix(s, " echo") {
			attempts = append(attempts, s+" hi") // PATH=... echo
		} else {
			attempts = append(attempts, "echo hi "+s+" x")
		}
	}
	for _, cmd := range attempts {
		if echo.Match(bash(cmd), where, false) {
			t.Errorf("Bash(echo:*) allows %q", cmd)
		}
	}
}
