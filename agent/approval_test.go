package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/permission"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
	"github.com/prime-agent/prime/tool"
)

// gated is an agent with the built-in tools working in a project of its
// own, its calls put through the permission mode, and settings read from
// real files (so "always" answers are saved).
type gated struct {
	ag      *agent.Agent
	ev      *events
	project string
	agent   string // the agent directory
	asked   chan agent.ApprovalRequest
	settled chan agent.ApprovalSettled
}

func newGated(t *testing.T, srv *llmtest.Server, mode string, approvals agent.Approvals, conf agent.Confinement) *gated {
	t.Helper()
	return newGatedWith(t, srv, mode, approvals, conf)
}

// newGatedWith is newGated with more tools than the built-in ones.
func newGatedWith(t *testing.T, srv *llmtest.Server, mode string, approvals agent.Approvals, conf agent.Confinement, more ...tool.Tool) *gated {
	t.Helper()
	g := &gated{ev: &events{}, project: t.TempDir(), agent: agentDir(t, srv),
		asked: make(chan agent.ApprovalRequest, 8), settled: make(chan agent.ApprovalSettled, 8)}
	st, err := settings.Load(t.Context(), settings.Options{AgentDir: g.agent, ProjectDir: g.project, WorkDir: g.project})
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{"retry.enabled", "false"}, {"permissions.mode", mode}} {
		if st, err = st.WithOverride(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	s, err := session.Create(filepath.Join(t.TempDir(), "s.jsonl"), session.Options{CWD: g.project})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config(g.agent, st, g.ev)
	cfg.Model = srv.Model().Provider + "/" + srv.Model().ID
	cfg.NoContextFiles = true
	cfg.CWD = g.project
	cfg.Tools = append(tool.Builtins(tool.Env{CWD: g.project}), more...)
	cfg.Approvals = approvals
	cfg.Confinement = func() agent.Confinement { return conf }
	g.ev.setOn(func(e agent.Event) {
		switch e := e.(type) {
		case agent.ApprovalAsked:
			g.asked <- e.Request
		case agent.ApprovalSettled:
			g.settled <- e
		}
	})
	g.ag = agent.New(s, cfg)
	t.Cleanup(func() { g.ag.Close() })
	return g
}

// request waits for the next approval request.
func (g *gated) request(t *testing.T) agent.ApprovalRequest {
	t.Helper()
	select {
	case r := <-g.asked:
		return r
	case <-time.After(30 * time.Second):
		t.Fatalf("no approval request; events: %s", g.ev.kinds())
	}
	return agent.ApprovalRequest{}
}

// toolResults are the texts of the run's tool results, in order.
func (g *gated) toolResults() []string {
	var out []string
	for _, e := range g.ev.all() {
		if te, ok := e.(agent.ToolEnd); ok {
			out = append(out, llm.TextOf(te.Result.Content))
		}
	}
	return out
}

func startPrompt(t *testing.T, ag *agent.Agent) {
	t.Helper()
	if _, err := ag.Prompt(t.Context(), "go", agent.PromptOptions{}); err != nil {
		t.Fatal(err)
	}
}

func waitSettled(t *testing.T, ag *agent.Agent) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if err := ag.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestAskModeOnceAndDenyWithMessage(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.ToolCall("c1", "bash", `{"command":"echo made > made.txt && echo ran"}`), llmtest.Usage(10, 1))
	srv.Reply(llmtest.ToolCall("c2", "write", `{"path":"denied.txt","content":"no\n"}`), llmtest.Usage(10, 1))
	srv.Reply(llmtest.Text("done"), llmtest.Usage(10, 1))
	g := newGated(t, srv, "ask", agent.ApprovalsAsk, agent.Confinement{})
	startPrompt(t, g.ag)

	r := g.request(t)
	if r.Tool != "bash" || r.Command != "echo made > made.txt && echo ran" || !strings.Contains(r.Reason, "ask mode") || r.Always != "" {
		t.Errorf("bash request: %+v", r)
	}
	if err := g.ag.Answer(r.ID, agent.Answer{Choice: agent.ChoiceOnce}); err != nil {
		t.Fatal(err)
	}
	w := g.request(t)
	if w.Tool != "write" || w.Path != "denied.txt" || w.Preview != "+no" || w.Always == "" {
		t.Errorf("write request: %+v", w)
	}
	if err := g.ag.Answer(w.ID, agent.Answer{Choice: agent.ChoiceDeny, Message: "write it in notes/ instead"}); err != nil {
		t.Fatal(err)
	}
	if err := g.ag.Answer(w.ID, agent.Answer{Choice: agent.ChoiceOnce}); err == nil {
		t.Error("a request was answered twice")
	}
	waitSettled(t, g.ag)
	res := g.toolResults()
	if len(res) != 2 || !strings.Contains(res[0], "ran") ||
		res[1] != "Not run: the user denied this call. The user says: write it in notes/ instead" {
		t.Errorf("results: %q", res)
	}
	if _, err := os.Stat(filepath.Join(g.project, "made.txt")); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(g.project, "denied.txt")); err == nil {
		t.Error("the denied write was written")
	}
	if !strings.Contains(srv.Requests()[2].Text(), "write it in notes/ instead") {
		t.Error("the model was not told the user's message")
	}
}

func TestAskModeAlwaysIsSavedAndNotAskedAgain(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.ToolCall("c1", "bash", `{"command":"echo one"}`), llmtest.Usage(10, 1))
	srv.Reply(llmtest.ToolCall("c2", "bash", `{"command":"echo two"}`), llmtest.Usage(10, 1))
	srv.Reply(llmtest.Text("done"), llmtest.Usage(10, 1))
	g := newGated(t, srv, "ask", agent.ApprovalsAsk, agent.Confinement{})
	startPrompt(t, g.ag)
	r := g.request(t)
	if r.Always != "Bash(echo:*)" {
		t.Fatalf("always = %q", r.Always)
	}
	if err := g.ag.Answer(r.ID, agent.Answer{Choice: agent.ChoiceAlways}); err != nil {
		t.Fatal(err)
	}
	waitSettled(t, g.ag)
	if res := g.toolResults(); len(res) != 2 || res[1] != "two\n" {
		t.Errorf("results: %q", res)
	}
	if len(g.asked) != 0 {
		t.Error("the second command asked again")
	}
	// The project is not trusted: the rule goes to the user's file, for
	// this project.
	b, err := os.ReadFile(filepath.Join(g.agent, "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := settings.Load(t.Context(), settings.Options{AgentDir: g.agent, ProjectDir: g.project, WorkDir: g.project})
	if err != nil {
		t.Fatal(err)
	}
	if got := st.PermissionRules().Allow; len(got) != 1 || got[0] != "Bash(echo:*)" {
		t.Errorf("saved rules %q in %s", got, b)
	}
	other, _ := settings.Load(t.Context(), settings.Options{AgentDir: g.agent, ProjectDir: t.TempDir()})
	if got := other.PermissionRules().Allow; len(got) != 0 {
		t.Errorf("another project got the rule: %q", got)
	}
	if v := g.ag.Permissions(); v.Mode != "ask" || len(v.Allow) == 0 {
		t.Errorf("permissions view: %+v", v)
	}
}

func TestNoOneToAskDenies(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.ToolCall("c1", "bash", `{"command":"echo hi > x.txt"}`), llmtest.Usage(10, 1))
	srv.Reply(llmtest.Text("done"), llmtest.Usage(10, 1))
	g := newGated(t, srv, "ask", agent.ApprovalsNone, agent.Confinement{})
	send(t, g.ag, "go")
	res := g.toolResults()
	if len(res) != 1 || !strings.HasPrefix(res[0], "Not run: ask mode asks before every command, and no one can approve it here") || !strings.Contains(res[0], "--yes") {
		t.Errorf("results: %q", res)
	}
	if _, err := os.Stat(filepath.Join(g.project, "x.txt")); err == nil {
		t.Error("the command ran")
	}
}

func TestYesApproves(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.ToolCall("c1", "bash", `{"command":"echo hi > x.txt"}`), llmtest.Usage(10, 1))
	srv.Reply(llmtest.Text("done"), llmtest.Usage(10, 1))
	g := newGated(t, srv, "ask", agent.ApprovalsApprove, agent.Confinement{})
	send(t, g.ag, "go")
	if _, err := os.Stat(filepath.Join(g.project, "x.txt")); err != nil {
		t.Errorf("the command did not run: %v", err)
	}
}

func TestAbortAnswersAPendingApproval(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.ToolCall("c1", "bash", `{"command":"echo hi"}`), llmtest.Usage(10, 1))
	g := newGated(t, srv, "ask", agent.ApprovalsAsk, agent.Confinement{})
	startPrompt(t, g.ag)
	r := g.request(t)
	g.ag.Abort()
	waitSettled(t, g.ag)
	select {
	case s := <-g.settled:
		if s.ID != r.ID || !s.Cancelled {
			t.Errorf("settled: %+v", s)
		}
	default:
		t.Error("the request was not settled")
	}
	if ids := g.ag.PendingApprovals(); len(ids) != 0 {
		t.Errorf("still pending: %v", ids)
	}
	if err := g.ag.Answer(r.ID, agent.Answer{Choice: agent.ChoiceOnce}); err == nil {
		t.Error("a given-up request could be answered")
	}
}

func TestReadOnlyRefusesChanges(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.ToolCall("c1", "write", `{"path":"a.txt","content":"x"}`), llmtest.ToolCall("c2", "ls", `{}`), llmtest.Usage(10, 1))
	srv.Reply(llmtest.Text("done"), llmtest.Usage(10, 1))
	g := newGated(t, srv, "read-only", agent.ApprovalsAsk, agent.Confinement{})
	send(t, g.ag, "go")
	res := g.toolResults()
	if len(res) != 2 || !strings.Contains(strings.Join(res, "\n"), "Not run: Prime's permissions refuse this call: read-only mode changes no file.") {
		t.Errorf("results: %q", res)
	}
	if _, err := os.Stat(filepath.Join(g.project, "a.txt")); err == nil {
		t.Error("read-only mode wrote a file")
	}
}

func TestSetPermissionMode(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.ToolCall("c1", "write", `{"path":"a.txt","content":"x"}`), llmtest.Usage(10, 1))
	srv.Reply(llmtest.Text("done"), llmtest.Usage(10, 1))
	g := newGated(t, srv, "full", agent.ApprovalsAsk, agent.Confinement{})
	if err := g.ag.SetPermissionMode("plan"); err == nil {
		t.Error("an unknown mode was taken")
	}
	if err := g.ag.SetPermissionMode("read-only"); err != nil {
		t.Fatal(err)
	}
	send(t, g.ag, "go")
	if res := g.toolResults(); len(res) != 1 || !strings.Contains(res[0], "read-only") {
		t.Errorf("results: %q", res)
	}
}

// sandboxFor makes the confinement of sandbox mode for a project, on the
// real kernel, or skips.
func sandboxFor(t *testing.T, project string) agent.Confinement {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox is Linux's")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	write := append([]string{project}, permission.DefaultWrite()...)
	sb := &permission.Sandbox{Exe: exe, Write: write}
	if err := sb.Probe(); err != nil {
		t.Skipf("this kernel cannot confine commands: %v", err)
	}
	return agent.Confinement{Sandbox: sb, Scope: &permission.Scope{Write: write}}
}

func TestSandboxAsksToRerunUnconfined(t *testing.T) {
	outside := filepath.Join(os.Getenv("HOME"), ".prime-perm-test-"+strings.ReplaceAll(t.Name(), "/", "_"))
	os.RemoveAll(outside)
	t.Cleanup(func() { os.RemoveAll(outside) })
	if os.Getenv("HOME") == "" || strings.HasPrefix(outside, os.TempDir()) {
		t.Skip("no home directory outside the temporary directories")
	}
	cmd := "mkdir " + outside
	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.ToolCall("c1", "bash", `{"command":"`+cmd+`"}`), llmtest.Usage(10, 1))
	srv.Reply(llmtest.ToolCall("c2", "bash", `{"command":"`+cmd+`-2"}`), llmtest.Usage(10, 1))
	srv.Reply(llmtest.Text("done"), llmtest.Usage(10, 1))
	var g *gated
	conf := sandboxFor(t, t.TempDir())
	g = newGated(t, srv, "sandbox", agent.ApprovalsAsk, conf)
	t.Cleanup(func() { os.RemoveAll(outside + "-2") })
	startPrompt(t, g.ag)
	r := g.request(t)
	if !r.Rerun || r.Command != cmd || r.Always != "Bash(mkdir:*)" {
		t.Errorf("request: %+v", r)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("the confined command made a directory outside the project")
	}
	if err := g.ag.Answer(r.ID, agent.Answer{Choice: agent.ChoiceOnce}); err != nil {
		t.Fatal(err)
	}
	r2 := g.request(t)
	if err := g.ag.Answer(r2.ID, agent.Answer{Choice: agent.ChoiceDeny}); err != nil {
		t.Fatal(err)
	}
	waitSettled(t, g.ag)
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("the approved re-run did not run: %v", err)
	}
	if _, err := os.Stat(outside + "-2"); err == nil {
		t.Error("the refused re-run ran")
	}
	res := g.toolResults()
	if len(res) != 2 || !strings.HasPrefix(res[0], "The command failed in the sandbox; the user let it run again") ||
		!strings.HasSuffix(res[1], "The user chose not to run it again outside the sandbox.") {
		t.Errorf("results: %q", res)
	}
}

// TestNoSandboxAsksForCommands: in sandbox mode where the kernel cannot
// confine commands, each command asks (here no one can answer, so it is
// denied saying why); reading still runs.
func TestNoSandboxAsksForCommands(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.ToolCall("c1", "bash", `{"command":"echo hi > x.txt"}`), llmtest.ToolCall("c2", "ls", `{}`), llmtest.Usage(10, 1))
	srv.Reply(llmtest.Text("done"), llmtest.Usage(10, 1))
	g := newGated(t, srv, "sandbox", agent.ApprovalsNone, agent.Confinement{NoSandbox: "no Landlock in this kernel"})
	send(t, g.ag, "go")
	res := strings.Join(g.toolResults(), "\n")
	if !strings.Contains(res, "this system cannot confine commands (no Landlock in this kernel), so each command asks, and no one can approve it here") {
		t.Errorf("results: %s", res)
	}
	if _, err := os.Stat(filepath.Join(g.project, "x.txt")); err == nil {
		t.Error("the command ran")
	}
	if v := g.ag.Permissions(); v.Sandboxed || v.NoSandbox == "" || v.Mode != "sandbox" {
		t.Errorf("permissions view: %+v", v)
	}
}

// TestOtherToolsShowTheirArguments: a tool that is not Prime's own asks
// with its arguments as the preview, and a rule naming it lets it run.
func TestOtherToolsShowTheirArguments(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.ToolCall("c1", "upper", `{"text":"hi"}`), llmtest.Usage(10, 1))
	srv.Reply(llmtest.Text("done"), llmtest.Usage(10, 1))
	g := newGatedWith(t, srv, "sandbox", agent.ApprovalsAsk, agent.Confinement{NoSandbox: "none"}, upper{})
	startPrompt(t, g.ag)
	r := g.request(t)
	if r.Tool != "upper" || r.Preview != `{"text":"hi"}` || r.Always != "upper" {
		t.Errorf("request: %+v", r)
	}
	if err := g.ag.Answer(r.ID, agent.Answer{Choice: agent.ChoiceOnce}); err != nil {
		t.Fatal(err)
	}
	waitSettled(t, g.ag)
	if res := g.toolResults(); len(res) != 1 || res[0] != "HI" {
		t.Errorf("results: %q", res)
	}
}

// TestSandboxRerunAlways: "always" to the re-run question saves the
// command's prefix in permissions.allowUnconfined, and the next command
// with that prefix runs outside the sandbox without asking.
func TestSandboxRerunAlways(t *testing.T) {
	home := os.Getenv("HOME")
	outside := filepath.Join(home, ".prime-perm-test-always")
	if home == "" || strings.HasPrefix(outside, os.TempDir()) {
		t.Skip("no home directory outside the temporary directories")
	}
	for _, p := range []string{outside, outside + "-2"} {
		os.RemoveAll(p)
		t.Cleanup(func() { os.RemoveAll(p) })
	}
	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.ToolCall("c1", "bash", `{"command":"mkdir `+outside+`"}`), llmtest.Usage(10, 1))
	srv.Reply(llmtest.ToolCall("c2", "bash", `{"command":"mkdir `+outside+`-2"}`), llmtest.Usage(10, 1))
	srv.Reply(llmtest.Text("done"), llmtest.Usage(10, 1))
	g := newGated(t, srv, "sandbox", agent.ApprovalsAsk, sandboxFor(t, t.TempDir()))
	startPrompt(t, g.ag)
	r := g.request(t)
	if !r.Rerun || r.Always != "Bash(mkdir:*)" {
		t.Fatalf("request: %+v", r)
	}
	if err := g.ag.Answer(r.ID, agent.Answer{Choice: agent.ChoiceAlways}); err != nil {
		t.Fatal(err)
	}
	waitSettled(t, g.ag)
	if len(g.asked) != 0 {
		t.Error("the second mkdir asked")
	}
	for _, p := range []string{outside, outside + "-2"} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	st, err := settings.Load(t.Context(), settings.Options{AgentDir: g.agent, ProjectDir: g.project, WorkDir: g.project})
	if err != nil {
		t.Fatal(err)
	}
	if r := st.PermissionRules(); len(r.AllowUnconfined) != 1 || r.AllowUnconfined[0] != "Bash(mkdir:*)" || len(r.Allow) != 0 {
		t.Errorf("saved: %+v", r)
	}
}
