package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prime-agent/prime/internal/mdblocks"
)

// TestREADMEHooksExample installs the README's hooks settings in a project
// (with docs/hooks.md's user-requests.py, the script they name, beside
// them) and runs the README's hook commands on a session Prime wrote: each
// compact line first untrusted, where it starts with the README's
// "skipped … hooks … project not trusted" line and the hook does not run;
// then "prime trust", after which the hook writes the summary, the dry run
// names it and writes nothing, and --no-hooks leaves it out.
func TestREADMEHooksExample(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed; the documented hook is a Python script")
	}
	docs, err := mdblocks.Tested(filepath.Join("..", "..", "docs", "hooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	e := newReadmeUserEnv(t)
	for _, prompt := range []string{`prime -p "add a retry to the fetcher"`, `prime -p -c "make it three attempts"`, `prime -p -c "now the tests"`} {
		e.run(t, []string{prompt})
	}
	files, _ := filepath.Glob(filepath.Join(e.agentDir(), "sessions", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions %v", files)
	}
	written, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	settingsDir := filepath.Join(e.project, ".prime", "agent")
	if err := os.MkdirAll(filepath.Join(settingsDir, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(settingsDir, "hooks", "user-requests.py"), []byte(docs["user-requests.py"]), 0o755); err != nil {
		t.Fatal(err)
	}
	hooksJSON := strings.Join(readmeBlock(t, `"hooks"`, `"session_before_compact"`), "\n")
	if !strings.Contains(hooksJSON, `"./hooks/user-requests.py"`) {
		t.Fatalf("the README's hooks settings no longer name docs/hooks.md's script:\n%s", hooksJSON)
	}
	writeFile(t, filepath.Join(settingsDir, "settings.json"), hooksJSON)

	// The README's words for a project not trusted, its figure for any.
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	quoted := regexp.MustCompile("`([^`]*skipped [^`]*not trusted[^`]*)`").FindSubmatch(readme)
	if quoted == nil {
		t.Fatal("the README no longer quotes the line for a project's hooks skipped")
	}
	pattern := strings.ReplaceAll(figures(string(quoted[1])), regexp.QuoteMeta("<project>"), regexp.QuoteMeta(e.project))
	skipped := regexp.MustCompile("(?m)^" + strings.Replace(pattern, " hooks ", " hooks? ", 1) + "$")

	block := readmeBlock(t, "prime compact FILE --dry-run", "prime trust")
	var compacts []string
	for _, line := range block {
		if strings.HasPrefix(line, "prime compact FILE") {
			compacts = append(compacts, line)
		} else if !strings.HasPrefix(line, "prime trust") {
			t.Fatalf("the README's hooks block has a line this test does not know: %q", line)
		}
	}
	// compact runs one line on a new copy of the session and returns its
	// output and the copy's new entries.
	compact := func(line string) (string, string) {
		file := filepath.Join(t.TempDir(), "s.jsonl")
		writeFile(t, file, string(written))
		out := e.run(t, []string{strings.Replace(line, "FILE", file, 1)})
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return out, strings.TrimPrefix(string(data), string(written))
	}
	for _, line := range compacts {
		out, added := compact(line)
		if strings.Contains(line, "--no-hooks") {
			continue // no hook either way
		}
		if !skipped.MatchString(out) || strings.Contains(added, "user-requests.py") {
			t.Errorf("%s, untrusted: want the README's line %q and no hook:\n%s", line, quoted[1], out)
		}
	}
	if out := e.run(t, []string{"prime trust"}); !strings.Contains(out, e.project) {
		t.Errorf("prime trust: %s", out)
	}
	for _, line := range compacts {
		out, added := compact(line)
		switch {
		case strings.Contains(line, "--dry-run"):
			if added != "" || !strings.Contains(out, `a real run calls session_before_compact: "./hooks/user-requests.py"`) {
				t.Errorf("%s: wrote %q; output:\n%s", line, added, out)
			}
		case strings.Contains(line, "--no-hooks"):
			if !strings.Contains(added, `"type":"compaction"`) || strings.Contains(added, "user-requests.py") || strings.Contains(out, "summary by hook") {
				t.Errorf("%s: wrote %q; output:\n%s", line, added, out)
			}
		default:
			if !strings.Contains(out, `summary by hook "./hooks/user-requests.py"`) || !strings.Contains(added, "make it three attempts") {
				t.Errorf("%s: wrote %q; output:\n%s", line, added, out)
			}
		}
	}
}
