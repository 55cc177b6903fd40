package prompttemplate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/internal/piagent"
)

func TestLoadPiPrompts(t *testing.T) {
	agentDir := t.TempDir()
	piagent.Copy(t, agentDir)
	ts, warnings, untrusted := Load(Options{AgentDir: agentDir})
	if len(warnings) != 0 || len(untrusted) != 0 {
		t.Fatalf("warnings %v, untrusted %v", warnings, untrusted)
	}
	var got []string
	for _, tp := range ts {
		got = append(got, tp.Name+"|"+tp.Description+"|"+tp.ArgumentHint)
	}
	want := []string{
		"explain|Explain what $@ does, step by step, for someone new to this ...|",
		"fix-issue|Fix a GitHub issue by number|<issue> [notes]",
		"review|Review staged git changes|[focus]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("templates:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	out, ok := Expand(ts, `/fix-issue 42 "only the parser" please`)
	wantOut := "Read issue #42 with `gh issue view 42`, reproduce it, fix it and add a test.\nNotes from the user: only the parser please"
	if !ok || out != wantOut {
		t.Errorf("expanded:\n%s\nwant:\n%s", out, wantOut)
	}
	if out, _ := Expand(ts, "/review"); out != "Review the staged changes. Focus on correctness, security, and error handling." {
		t.Errorf("/review = %q", out)
	}
}

func TestLoadProject(t *testing.T) {
	root := t.TempDir()
	agentDir, project := filepath.Join(root, "agent"), filepath.Join(root, "proj")
	for p, text := range map[string]string{
		filepath.Join(agentDir, "prompts", "review.md"):          "user review $1",
		filepath.Join(agentDir, "prompts", "mine.md"):            "mine",
		filepath.Join(project, ".prime", "prompts", "review.md"): "---\ndescription: the project's\n---\nproject review $1",
		filepath.Join(project, ".prime", "prompts", "bad.md"):    "---\ndescription: [x\n---\nbody",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ts, warnings, untrusted := Load(Options{AgentDir: agentDir, ProjectDir: project})
	if len(ts) != 2 || len(untrusted) != 2 || len(warnings) != 0 {
		t.Fatalf("untrusted project: %d templates, untrusted %v, warnings %v", len(ts), untrusted, warnings)
	}
	if out, _ := Expand(ts, "/review x"); out != "user review x" {
		t.Errorf("untrusted: /review = %q", out)
	}
	ts, warnings, _ = Load(Options{AgentDir: agentDir, ProjectDir: project, Trusted: true})
	if out, _ := Expand(ts, "/review x"); out != "project review x" {
		t.Errorf("trusted: /review = %q", out)
	}
	if len(warnings) != 2 {
		t.Fatalf("warnings = %v, want the bad file and the second review", warnings)
	}
	for _, w := range warnings {
		if !strings.Contains(w.String(), w.File) {
			t.Errorf("warning %q does not name its file", w)
		}
	}
}

func TestLoadExplicitPaths(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) string {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	agentDir := filepath.Join(root, "agent")
	write("agent/prompts/review.md", "discovered review")
	again := write("agent/prompts/fix.md", "discovered fix")
	own := write("mine/review.md", "explicit review")
	write("pack/haiku.md", "a haiku")
	for _, tc := range []struct {
		noDiscovery bool
		want        string
	}{
		{false, "review:explicit review fix:discovered fix haiku:a haiku"},
		{true, "review:explicit review fix:discovered fix haiku:a haiku"}, // fix.md is named explicitly too
	} {
		templates, warnings, _ := Load(Options{AgentDir: agentDir, Paths: []string{own, again, filepath.Join(root, "pack"), filepath.Join(root, "nope.md")}, NoDiscovery: tc.noDiscovery})
		var got []string
		for _, tp := range templates {
			got = append(got, tp.Name+":"+strings.TrimSpace(tp.Body))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("noDiscovery %v: %v, want %s", tc.noDiscovery, got, tc.want)
		}
		var msgs []string
		for _, w := range warnings {
			msgs = append(msgs, w.String())
		}
		wantWarnings := 1 // the missing path; fix.md found again is no warning
		if !tc.noDiscovery {
			wantWarnings = 2 // and the discovered review.md under the explicit one's name
		}
		if len(warnings) != wantWarnings || !strings.Contains(msgs[0], "nope.md") {
			t.Errorf("noDiscovery %v: warnings %v", tc.noDiscovery, msgs)
		}
	}
}
