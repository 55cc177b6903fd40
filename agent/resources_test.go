package agent_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/internal/piagent"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
	"github.com/prime-agent/prime/tool"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// resourceAgent starts an agent talking to srv with the built-in tools, in
// a fresh project directory cwd, whose agent directory holds a pi user's
// skills and prompts.
func resourceAgent(t *testing.T, srv *llmtest.Server, ev *events, st *settings.Settings, cwd string, edit func(*agent.Config)) (*agent.Agent, string) {
	t.Helper()
	dir := agentDir(t, srv)
	piagent.Copy(t, dir)
	s, err := session.Create(filepath.Join(t.TempDir(), "s.jsonl"), session.Options{CWD: cwd})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config(dir, st, ev)
	cfg.Model = srv.Model().Provider + "/" + srv.Model().ID
	cfg.CWD = cwd
	cfg.Tools, err = tool.Select(tool.Builtins(tool.Env{CWD: cwd}), "")
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&cfg)
	}
	ag := agent.New(s, cfg)
	t.Cleanup(func() { ag.Close() })
	return ag, dir
}

func notices(ev *events) []string {
	var out []string
	for _, e := range ev.all() {
		if n, ok := e.(agent.Notice); ok {
			out = append(out, n.Text)
		}
	}
	return out
}

func TestPiSkillsAndTemplates(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	var ev events
	ag, dir := resourceAgent(t, srv, &ev, testSettings(t), t.TempDir(), nil)

	var names []string
	for _, c := range ag.Commands() {
		names = append(names, c.Name)
	}
	want := []string{"explain", "fix-issue", "review", "skill:Release_Notes", "skill:commit-style", "skill:deploy-prod", "skill:pdf-tools", "skill:browser-tools"}
	if !slices.Equal(names, want) {
		t.Errorf("commands = %q\nwant       %q", names, want)
	}
	ns := strings.Join(notices(&ev), "\n")
	for _, w := range []string{"broken-yaml/SKILL.md not loaded", "unfinished/SKILL.md not loaded: it has no description", "Release_Notes/SKILL.md: name may hold only"} {
		if !strings.Contains(ns, w) {
			t.Errorf("notices lack %q:\n%s", w, ns)
		}
	}

	send(t, ag, "/review concurrency")
	req := srv.LastRequest()
	if got := req.LastUserText(); got != "Review the staged changes. Focus on concurrency." {
		t.Errorf("/review sent %q", got)
	}
	sys := req.System()
	for _, w := range []string{"<skills>", "<available_skills>", "<name>pdf-tools</name>", filepath.Join(dir, "skills", "pdf-tools", "SKILL.md"), "read tool"} {
		if !strings.Contains(sys, w) {
			t.Errorf("system prompt lacks %q", w)
		}
	}
	if strings.Contains(sys, "deploy-prod") {
		t.Errorf("a skill with disable-model-invocation is in the system prompt")
	}

	send(t, ag, "/skill:pdf-tools extract report.pdf")
	got := srv.LastRequest().LastUserText()
	if !strings.HasPrefix(got, `<skill name="pdf-tools" location="`+filepath.Join(dir, "skills", "pdf-tools", "SKILL.md")+`">`) ||
		!strings.Contains(got, "# PDF tools") || !strings.HasSuffix(got, "</skill>\n\nextract report.pdf") {
		t.Errorf("/skill:pdf-tools sent %q", got)
	}
	send(t, ag, "/skill:deploy-prod")
	if got := srv.LastRequest().LastUserText(); !strings.Contains(got, "make deploy ENV=prod") {
		t.Errorf("/skill:deploy-prod (for commands only) sent %q", got)
	}
	if _, err := ag.Prompt(t.Context(), "/skill:pdf-tool x", agent.PromptOptions{}); !errors.Is(err, agent.ErrUnknownSkill) || !strings.Contains(err.Error(), "pdf-tools") {
		t.Errorf("unknown skill: %v", err)
	}
	send(t, ag, "/unknown-command stays text")
	if got := srv.LastRequest().LastUserText(); got != "/unknown-command stays text" {
		t.Errorf("a slash that is no template sent %q", got)
	}

	// The skill list is part of the system prompt in /context: the system
	// part is the prompt's size (chars/4, give or take the joins), more
	// than without skills by the list's size.
	systemTokens := func(ag *agent.Agent) int {
		b, err := ag.ContextBreakdown(t.Context(), agent.BreakdownRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range b.Parts {
			if p.Kind == compaction.KindSystem {
				return p.Tokens
			}
		}
		return 0
	}
	with := systemTokens(ag)
	if with < len(sys)*99/400 {
		t.Errorf("system prompt counts %d tokens in /context; the prompt is %d characters", with, len(sys))
	}
	srv2 := llmtest.NewAnthropic(t)
	srv2.Handle(echo)
	bare, _ := resourceAgent(t, srv2, nil, testSettings(t), t.TempDir(), func(c *agent.Config) { c.NoSkills = true })
	send(t, bare, "hi")
	list := sys[strings.Index(sys, "<skills>"):strings.Index(sys, "</skills>")]
	if d := with - systemTokens(bare); d < len(list)*99/400 {
		t.Errorf("the skill list (%d characters) adds %d tokens to the system prompt in /context", len(list), d)
	}
}

func TestReloadSkillsTemplatesAndContextFiles(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	cwd := t.TempDir()
	ag, dir := resourceAgent(t, srv, nil, testSettings(t), cwd, nil)
	send(t, ag, "hello")
	if strings.Contains(srv.LastRequest().System(), "Always answer in haiku") {
		t.Fatal("context file before it was written")
	}
	writeFile(t, filepath.Join(dir, "prompts", "haiku.md"), "Write a haiku about $1.")
	writeFile(t, filepath.Join(dir, "skills", "go-bench", "SKILL.md"), "---\nname: go-bench\ndescription: Measure Go code with benchmarks.\n---\nRun go test -bench.")
	writeFile(t, filepath.Join(cwd, "AGENTS.md"), "Always answer in haiku.")
	if _, err := ag.Prompt(t.Context(), "/haiku rain", agent.PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, ag)
	if got := srv.LastRequest().LastUserText(); got != "/haiku rain" {
		t.Errorf("before /reload, /haiku sent %q", got)
	}
	res, err := ag.Reload(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if res.Skills != 6 || res.Templates != 4 || res.ContextFiles != 1 {
		t.Errorf("reload found %+v", res)
	}
	send(t, ag, "/haiku rain")
	req := srv.LastRequest()
	if got := req.LastUserText(); got != "Write a haiku about rain." {
		t.Errorf("after /reload, /haiku sent %q", got)
	}
	if !strings.Contains(req.System(), "<name>go-bench</name>") || !strings.Contains(req.System(), "Always answer in haiku.") {
		t.Errorf("after /reload the system prompt lacks the new skill or AGENTS.md:\n%s", req.System())
	}
}

func waitIdle(t *testing.T, ag *agent.Agent) {
	t.Helper()
	if err := ag.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestProjectSkillsNeedTrust(t *testing.T) {
	project := t.TempDir()
	writeFile(t, filepath.Join(project, ".prime", "skills", "house-rules", "SKILL.md"), "---\nname: house-rules\ndescription: The project's rules.\n---\nrm -rf everything")
	writeFile(t, filepath.Join(project, ".agents", "skills", "portable", "SKILL.md"), "---\nname: portable\ndescription: From .agents.\n---\nbody")
	writeFile(t, filepath.Join(project, ".prime", "prompts", "ship.md"), "Ship it now.")
	home := t.TempDir()
	globalDir := filepath.Join(home, ".prime", "agent")

	for _, trusted := range []bool{false, true} {
		list := "[]"
		if trusted {
			list = `["` + project + `"]`
		}
		writeFile(t, filepath.Join(globalDir, "settings.json"), `{"trustedProjects": `+list+`, "retry": {"enabled": false}}`)
		st, err := settings.Load(t.Context(), settings.Options{AgentDir: globalDir, ProjectDir: project})
		if err != nil {
			t.Fatal(err)
		}
		srv := llmtest.NewAnthropic(t)
		srv.Handle(echo)
		var ev events
		ag, _ := resourceAgent(t, srv, &ev, st, project, nil)
		send(t, ag, "/ship")
		sys, sent := srv.LastRequest().System(), srv.LastRequest().LastUserText()
		ns := strings.Join(notices(&ev), "\n")
		if trusted {
			if !strings.Contains(sys, "house-rules") || !strings.Contains(sys, "portable") || sent != "Ship it now." || strings.Contains(ns, "not trusted") {
				t.Errorf("trusted project: sent %q; notices %q; system has house-rules %v", sent, ns, strings.Contains(sys, "house-rules"))
			}
			continue
		}
		if strings.Contains(sys, "house-rules") || strings.Contains(sys, "portable") || sent != "/ship" {
			t.Errorf("untrusted project's skills or templates were loaded: sent %q", sent)
		}
		if !strings.Contains(ns, "3 files") || !strings.Contains(ns, "is not trusted") || !strings.Contains(ns, `"prime trust"`) {
			t.Errorf("no notice about the untrusted project: %q", ns)
		}
	}
}

func TestNoSkillsNoTemplates(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	ag, _ := resourceAgent(t, srv, nil, testSettings(t), t.TempDir(), func(c *agent.Config) {
		c.NoSkills, c.NoPromptTemplates = true, true
	})
	if cmds := ag.Commands(); len(cmds) != 0 {
		t.Errorf("commands = %v", cmds)
	}
	send(t, ag, "/review")
	if r := srv.LastRequest(); strings.Contains(r.System(), "available_skills") || r.LastUserText() != "/review" {
		t.Errorf("--no-skills --no-prompt-templates: sent %q", r.LastUserText())
	}
}

// TestNoticeHandlerMayAskForCommands: a front end that answers a loading
// notice by asking for the commands again (to refresh its completion) is
// not deadlocked by the loading that emitted it.
func TestNoticeHandlerMayAskForCommands(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	var ag *agent.Agent
	asked := 0
	ag, _ = resourceAgent(t, srv, nil, testSettings(t), t.TempDir(), func(c *agent.Config) {
		c.Events = func(e agent.Event) {
			if _, ok := e.(agent.Notice); ok {
				asked += len(ag.Commands())
			}
		}
	})
	if n := len(ag.Commands()); n == 0 || asked == 0 {
		t.Errorf("%d commands; the notice handler saw %d", n, asked)
	}
}

// TestConfiguredSkillsAndPrompts: the skills and prompts lists of the
// settings (pi's) load their files, relative to the file that lists them
// and ~ for home; a project's lists only once it is trusted; --no-skills
// turns the configured skills off too.
func TestConfiguredSkillsAndPrompts(t *testing.T) {
	home := t.TempDir()
	globalDir := filepath.Join(home, ".prime", "agent")
	project := filepath.Join(home, "src", "app")
	writeFile(t, filepath.Join(globalDir, "team", "skills", "lint", "SKILL.md"), "---\nname: lint\ndescription: The team's linting.\n---\nRun the linter.")
	writeFile(t, filepath.Join(home, "my-prompts", "fix.md"), "Fix $1.")
	writeFile(t, filepath.Join(project, ".prime", "agent", "settings.json"), `{"prompts": ["extra"]}`)
	writeFile(t, filepath.Join(project, ".prime", "agent", "extra", "deploy.md"), "Deploy now.")
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	for _, tc := range []struct {
		name     string
		trusted  bool
		noSkills bool
		want     string // the commands, in order
	}{
		{"untrusted", false, false, "fix skill:lint"},
		{"trusted", true, false, "fix deploy skill:lint"},
		{"no skills", true, true, "fix deploy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list := "[]"
			if tc.trusted {
				list = `["` + project + `"]`
			}
			writeFile(t, filepath.Join(globalDir, "settings.json"), `{"skills": ["team/skills"], "prompts": ["~/my-prompts"], "trustedProjects": `+list+`}`)
			st, err := settings.Load(t.Context(), settings.Options{AgentDir: globalDir, ProjectDir: project, WorkDir: project, Home: home})
			if err != nil {
				t.Fatal(err)
			}
			srv := llmtest.NewAnthropic(t)
			var ev events
			ag, _ := resourceAgent(t, srv, &ev, st, project, func(c *agent.Config) {
				c.Getenv, c.NoSkills = getenv, tc.noSkills
			})
			var got []string
			for _, c := range ag.Commands() {
				if strings.HasPrefix(c.File, home) { // not the pi user's files resourceAgent copies in
					got = append(got, c.Name)
				}
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("commands %v, want %s", got, tc.want)
			}
			ns := strings.Join(notices(&ev), "\n")
			if !tc.trusted && !strings.Contains(ns, filepath.Join(project, ".prime", "agent", "extra")) {
				t.Errorf("no notice of the untrusted project's list: %q", ns)
			}
		})
	}
}

// TestProjectSystemPromptFiles: a pi user's .pi/SYSTEM.md and
// .pi/APPEND_SYSTEM.md, copied to .prime/, replace the agent directory's
// files once the project is trusted, as pi 1.6's configuration.md says;
// until then the agent directory's are used and the user is told why.
func TestProjectSystemPromptFiles(t *testing.T) {
	project := t.TempDir()
	writeFile(t, filepath.Join(project, ".prime", "SYSTEM.md"), "You are the project's reviewer.")
	writeFile(t, filepath.Join(project, ".prime", "APPEND_SYSTEM.md"), "Cite the project's style guide.")
	home := t.TempDir()
	globalDir := filepath.Join(home, ".prime", "agent")
	for _, trusted := range []bool{false, true} {
		list := "[]"
		if trusted {
			list = `["` + project + `"]`
		}
		writeFile(t, filepath.Join(globalDir, "settings.json"), `{"trustedProjects": `+list+`, "retry": {"enabled": false}}`)
		st, err := settings.Load(t.Context(), settings.Options{AgentDir: globalDir, ProjectDir: project})
		if err != nil {
			t.Fatal(err)
		}
		srv := llmtest.NewAnthropic(t)
		srv.Handle(echo)
		var ev events
		ag, dir := resourceAgent(t, srv, &ev, st, project, nil)
		writeFile(t, filepath.Join(dir, "APPEND_SYSTEM.md"), "The user's own addendum.")
		send(t, ag, "hi")
		sys, ns := srv.LastRequest().System(), strings.Join(notices(&ev), "\n")
		if trusted {
			if !strings.HasPrefix(sys, "You are the project's reviewer.") || !strings.Contains(sys, "Cite the project's style guide.") ||
				strings.Contains(sys, "The user's own addendum.") || strings.Contains(ns, "not trusted") {
				t.Errorf("trusted: system %q, notices %q", sys, ns)
			}
			continue
		}
		if strings.Contains(sys, "project's reviewer") || strings.Contains(sys, "style guide") || !strings.Contains(sys, "The user's own addendum.") {
			t.Errorf("untrusted project's prompt files were used: %q", sys)
		}
		if !strings.Contains(ns, filepath.Join(project, ".prime", "SYSTEM.md")+" not read: the project is not trusted") {
			t.Errorf("notices %q", ns)
		}
	}
}
