package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/skill"
	"github.com/prime-agent/prime/tool"
)

// TestSystemPrompt pins Prime's system prompt: its sections with the default
// tools and a context file, and with a custom prompt and an addendum.
func TestSystemPrompt(t *testing.T) {
	var specs []tool.Spec
	tools, err := tool.Select(tool.Builtins(tool.Env{CWD: "/work/project"}), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		specs = append(specs, tl.Spec())
	}
	files := []ContextFile{{Path: "/work/project/AGENTS.md", Content: "Run go test before you say done."}}
	for _, tc := range []struct {
		name string
		spec promptSpec
	}{
		{"system-prompt.golden", promptSpec{tools: specs, contextFiles: files, cwd: "/work/project"}},
		{"system-prompt-custom.golden", promptSpec{custom: "You review code only.", addendum: "Answer in French.", tools: specs, cwd: "/work/project"}},
		{"system-prompt-no-tools.golden", promptSpec{cwd: "/work/project"}},
		{"system-prompt-skills.golden", promptSpec{tools: specs, contextFiles: files, cwd: "/work/project",
			skills: skill.Prompt(testSkills, skillReader(specs))}},
		{"system-prompt-skills-bash.golden", promptSpec{tools: []tool.Spec{{Name: "bash", Snippet: "run commands"}}, cwd: "/work/project",
			skills: skill.Prompt(testSkills, "bash")}},
	} {
		m := &session.SystemMessage{Sections: tc.spec.sections()}
		golden.Check(t, tc.name, m.Prompt())
	}
}

// testSkills are a user's skills as skill.Load returns them: one only for
// "/skill:" (left out of the prompt), one whose description needs escaping.
var testSkills = []skill.Skill{
	{Name: "pdf-tools", Description: "Extract text and tables from PDF files. Use when reading, converting, or inspecting PDFs.",
		File: "/home/me/.prime/agent/skills/pdf-tools/SKILL.md", Dir: "/home/me/.prime/agent/skills/pdf-tools"},
	{Name: "deploy-prod", Description: "Deploy to production.", DisableModelInvocation: true,
		File: "/home/me/.prime/agent/skills/deploy-prod/SKILL.md", Dir: "/home/me/.prime/agent/skills/deploy-prod"},
	{Name: "sql-review", Description: "Review SQL for <injection> & \"N+1\" queries.", Scope: skill.Project,
		File: "/work/project/.prime/skills/sql-review/SKILL.md", Dir: "/work/project/.prime/skills/sql-review"},
}

func TestLoadContextFiles(t *testing.T) {
	root := t.TempDir()
	agentDir := filepath.Join(root, "agent")
	project := filepath.Join(root, "repo", "sub")
	os.MkdirAll(agentDir, 0o755)
	os.MkdirAll(project, 0o755)
	os.WriteFile(filepath.Join(agentDir, "AGENTS.md"), []byte("\ufeffglobal rules"), 0o644)
	os.WriteFile(filepath.Join(root, "repo", "CLAUDE.md"), []byte("repo rules"), 0o644)
	os.WriteFile(filepath.Join(root, "repo", "AGENTS.md"), []byte("repo agents"), 0o644) // wins over CLAUDE.md
	os.WriteFile(filepath.Join(project, "CLAUDE.md"), []byte("sub rules"), 0o644)
	os.Mkdir(filepath.Join(root, "AGENTS.md"), 0o755) // a directory is not a file
	files, _, err := LoadContextFiles(agentDir, project, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, strings.TrimPrefix(f.Path, root)+"="+f.Content)
	}
	want := "/agent/AGENTS.md=global rules /repo/AGENTS.md=repo agents /repo/sub/CLAUDE.md=sub rules"
	if strings.Join(got, " ") != want {
		t.Errorf("files %v\nwant %s", got, want)
	}
	// The agent directory inside the project: its file comes once.
	files, _, _ = LoadContextFiles(project, project, nil)
	n := 0
	for _, f := range files {
		if f.Content == "sub rules" {
			n++
		}
	}
	if n != 1 || len(files) != 2 {
		t.Errorf("a directory read twice: %d files, the file %d times", len(files), n)
	}
}

// TestSystemPatch: the first prompt declares everything; an unchanged prompt
// needs no patch; a changed section, a removed one and a changed tool are
// patched alone.
func TestSystemPatch(t *testing.T) {
	tools := []llm.Tool{
		{Name: "read", Description: "reads", Parameters: jsontext.Value(`{"type":"object"}`)},
		{Name: "bash", Description: "runs", Parameters: jsontext.Value(`{"type":"object"}`)},
	}
	want := []session.SystemSection{{Name: "preamble", Text: "hi"}, {Name: "cwd", Text: "<cwd>\n/a\n</cwd>"}}
	first := systemPatch(nil, want, tools, 1)
	if first == nil || len(first.Sections) != 2 || len(first.ToolsAdded) != 2 || len(first.ToolsRemoved) != 0 {
		t.Fatalf("first %+v", first)
	}
	replayed := session.ReplaySystem([]session.Message{first})
	if p := systemPatch(replayed, want, tools, 2); p != nil {
		t.Errorf("an unchanged prompt gets a patch: %+v", p)
	}
	changed := []session.SystemSection{{Name: "preamble", Text: "hello"}}
	tools2 := []llm.Tool{tools[0], {Name: "bash", Description: "runs commands", Parameters: jsontext.Value(`{"type":"object"}`)}}
	p := systemPatch(replayed, changed, tools2, 3)
	if p == nil {
		t.Fatal("no patch")
	}
	if len(p.Sections) != 2 || p.Sections[0].Text != "hello" || p.Sections[1].Name != "cwd" || !p.Sections[1].Removed {
		t.Errorf("sections %+v", p.Sections)
	}
	if len(p.ToolsAdded) != 1 || p.ToolsAdded[0].Name != "bash" || len(p.ToolsRemoved) != 1 || p.ToolsRemoved[0] != "bash" {
		t.Errorf("tools added %+v removed %v", p.ToolsAdded, p.ToolsRemoved)
	}
	after := session.ReplaySystem([]session.Message{first, p})
	if q := systemPatch(after, changed, tools2, 4); q != nil {
		t.Errorf("after the patch: %+v", q)
	}
}
