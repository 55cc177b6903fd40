package skill

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/internal/piagent"
)

// piAgentDir returns an agent directory holding a pi user's skills,
// copied unchanged from ~/.pi/agent/skills.
func piAgentDir(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "agent")
	piagent.Copy(t, dir)
	return dir
}

func names(skills []Skill) []string {
	var out []string
	for _, s := range skills {
		out = append(out, s.Name)
	}
	return out
}

func TestLoadPiSkills(t *testing.T) {
	agentDir := piAgentDir(t)
	skills, warnings, untrusted := Load(Options{AgentDir: agentDir})
	if len(untrusted) != 0 {
		t.Errorf("untrusted = %v", untrusted)
	}
	got := strings.Join(names(skills), " ")
	want := "Release_Notes commit-style deploy-prod pdf-tools browser-tools"
	if got != want {
		t.Errorf("skills = %s\nwant     %s", got, want)
	}
	var ws []string
	for _, w := range warnings {
		rel, _ := filepath.Rel(agentDir, w.File)
		w.File = rel
		ws = append(ws, w.String())
	}
	golden.Check(t, "pi-warnings", strings.Join(ws, "\n")+"\n")
	pdf, ok := Find(skills, "pdf-tools")
	if !ok || pdf.Dir != filepath.Join(agentDir, "skills", "pdf-tools") || pdf.Scope != User {
		t.Fatalf("pdf-tools = %+v", pdf)
	}
	if d, _ := Find(skills, "deploy-prod"); !d.DisableModelInvocation {
		t.Errorf("deploy-prod should be for /skill: only")
	}
	// The prompt's list, with the agent directory replaced so the golden
	// does not depend on where the test ran.
	prompt := strings.ReplaceAll(Prompt(skills, "read"), agentDir, "$AGENT")
	golden.Check(t, "pi-prompt", prompt+"\n")
}

func TestPromptReaders(t *testing.T) {
	s := []Skill{{Name: "a", Description: `x < y & "z"`, File: "/s/a/SKILL.md"}}
	if p := Prompt(s, "bash"); !strings.Contains(p, promptBash) || !strings.Contains(p, "x &lt; y &amp; &quot;z&quot;") {
		t.Errorf("bash prompt = %s", p)
	}
	if p := Prompt(s, ""); !strings.Contains(p, promptIndirect) {
		t.Errorf("indirect prompt = %s", p)
	}
	if p := Prompt([]Skill{{Name: "b", DisableModelInvocation: true}}, "read"); p != "" {
		t.Errorf("prompt of hidden skills = %q, want empty", p)
	}
}

func TestLoadProjectTrustAndOrder(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	skillText := func(name, desc string) string {
		return "---\nname: " + name + "\ndescription: " + desc + "\n---\nbody of " + desc + "\n"
	}
	write("home/.prime/agent/skills/shared/SKILL.md", skillText("shared", "user copy"))
	write("home/.prime/agent/skills/mine/SKILL.md", skillText("mine", "user only"))
	write("home/.agents/skills/portable/SKILL.md", skillText("portable", "from ~/.agents"))
	write("repo/.git/HEAD", "ref: refs/heads/main\n")
	write("repo/.prime/skills/shared/SKILL.md", skillText("shared", "project copy"))
	write("repo/.agents/skills/group/lint/SKILL.md", skillText("lint", "repo root agents"))
	write("repo/.agents/skills/top.md", "---\ndescription: agents layout skips top-level files\n---\n")
	write("repo/sub/.agents/skills/sub-skill/SKILL.md", skillText("sub-skill", "from a subdirectory"))
	write(".agents/skills/outside/SKILL.md", skillText("outside", "above the git root"))
	opts := Options{AgentDir: filepath.Join(root, "home/.prime/agent"), Home: filepath.Join(root, "home"),
		ProjectDir: filepath.Join(root, "repo"), CWD: filepath.Join(root, "repo/sub")}

	skills, _, untrusted := Load(opts)
	if got := strings.Join(names(skills), " "); got != "mine shared portable" {
		t.Errorf("untrusted project: skills = %s", got)
	}
	if len(untrusted) != 3 {
		t.Errorf("untrusted files = %v, want the project's three", untrusted)
	}
	if s, _ := Find(skills, "shared"); s.Description != "user copy" {
		t.Errorf("untrusted project's skill replaced the user's: %+v", s)
	}

	opts.Trusted = true
	skills, warnings, untrusted := Load(opts)
	if got := strings.Join(names(skills), " "); got != "shared sub-skill lint mine portable" {
		t.Errorf("trusted: skills = %s", got)
	}
	if s, _ := Find(skills, "shared"); s.Description != "project copy" || s.Scope != Project {
		t.Errorf("project skill should win: %+v", s)
	}
	if len(untrusted) != 0 || len(warnings) != 1 || !strings.Contains(warnings[0].String(), `another skill is named "shared"`) {
		t.Errorf("warnings = %v, untrusted = %v", warnings, untrusted)
	}
}

func TestExpand(t *testing.T) {
	agentDir := piAgentDir(t)
	skills, _, _ := Load(Options{AgentDir: agentDir})
	pdf, _ := Find(skills, "pdf-tools")
	got, err := pdf.Expand("  extract report.pdf ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "expand", strings.ReplaceAll(got, agentDir, "$AGENT")+"\n")
	if err := os.Remove(pdf.File); err != nil {
		t.Fatal(err)
	}
	if _, err := pdf.Expand(""); err == nil || !strings.Contains(err.Error(), "pdf-tools") {
		t.Errorf("expanding a removed skill: %v", err)
	}
}

func TestNameProblems(t *testing.T) {
	tests := []struct {
		name string
		n    int
	}{
		{"pdf-tools", 0}, {"a1", 0}, {"PDF", 1}, {"-a", 1}, {"a-", 1}, {"a--b", 1},
		{strings.Repeat("a", 65), 1}, {"Bad_Name-", 2},
	}
	for _, tt := range tests {
		if got := nameProblems(tt.name); len(got) != tt.n {
			t.Errorf("nameProblems(%q) = %q, want %d", tt.name, got, tt.n)
		}
	}
}

// BenchmarkLoad measures the startup cost of reading skills: the pi
// directory of testdata, and 200 skills of a typical size.
func BenchmarkLoad(b *testing.B) {
	pi := filepath.Join(b.TempDir(), "agent")
	piagent.Copy(b, pi)
	many := b.TempDir()
	body := strings.Repeat("Step by step instructions for the task at hand.\n", 100)
	for i := range 200 {
		dir := filepath.Join(many, "skills", fmt.Sprintf("skill-%03d", i))
		if err := os.MkdirAll(filepath.Join(dir, "references"), 0o755); err != nil {
			b.Fatal(err)
		}
		text := fmt.Sprintf("---\nname: skill-%03d\ndescription: Does task %d. Use when the user asks for task %d.\n---\n%s", i, i, i, body)
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct{ name, dir string }{{"pi", pi}, {"200", many}} {
		b.Run(bc.name, func(b *testing.B) {
			var prompt string
			for b.Loop() {
				skills, _, _ := Load(Options{AgentDir: bc.dir})
				prompt = Prompt(skills, "read")
			}
			b.ReportMetric(float64(len(prompt))/4, "prompt-tokens")
		})
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
	write("agent/skills/found/SKILL.md", "---\nname: found\ndescription: discovered\n---\n")
	write("agent/skills/both/SKILL.md", "---\nname: both\ndescription: discovered copy\n---\n")
	file := write("mine/both.md", "---\nname: both\ndescription: explicit copy\n---\n")
	write("pack/one/SKILL.md", "---\nname: one\ndescription: from a directory\n---\n")
	missing := filepath.Join(root, "nope")
	for _, tc := range []struct {
		name        string
		noDiscovery bool
		want        string
	}{
		{"with discovery", false, "both:explicit copy one:from a directory found:discovered"},
		{"explicit only", true, "both:explicit copy one:from a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			skills, warnings, _ := Load(Options{AgentDir: agentDir, Paths: []string{file, filepath.Join(root, "pack"), missing}, NoDiscovery: tc.noDiscovery})
			var got []string
			for _, s := range skills {
				got = append(got, s.Name+":"+s.Description)
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("skills %v, want %s", got, tc.want)
			}
			if len(warnings) == 0 || warnings[0].String() != "skill "+missing+" not loaded: not found" {
				t.Errorf("warnings %v", warnings)
			}
		})
	}
}
