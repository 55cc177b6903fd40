package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/tool"
)

// gateTool is a tool that reports progress and then waits until the test
// lets it finish, so that a frame can show it running.
type gateTool struct {
	started chan struct{}
	release chan struct{}
}

func newGate() *gateTool {
	return &gateTool{started: make(chan struct{}), release: make(chan struct{})}
}

func (g *gateTool) Spec() tool.Spec {
	return tool.Spec{Name: "probe", Description: "probes the build", Snippet: "probe",
		Parameters: jsontext.Value(`{"type":"object","properties":{"target":{"type":"string"}},"required":["target"]}`)}
}

func (g *gateTool) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	if c.Update != nil {
		c.Update(tool.Result{Content: []llm.Content{llm.Text{Text: "compiling 3 packages…"}}})
	}
	close(g.started)
	select {
	case <-g.release:
	case <-ctx.Done():
		return tool.Result{}, ctx.Err()
	}
	return tool.Result{Content: []llm.Content{llm.Text{Text: "ok  prime/tui\nok  prime/agent\nok  prime/session"}}}, nil
}

// frameGolden compares a frame under a subtest's name, so that one test
// can pin several frames.
func frameGolden(t *testing.T, name, frame string) {
	t.Helper()
	t.Run(name, func(t *testing.T) { (&harness{t: t}).golden(frame) })
}

func TestStreamedReplyWithToolCall(t *testing.T) {
	gate := newGate()
	env := tool.Env{}
	_ = env
	h := newHarness(t, setup{tools: []tool.Tool{gate}})
	h.srv.Reply(llmtest.Text("I'll probe the **build** first."), llmtest.ToolCall("call-1", "probe", `{"target":"./..."}`), llmtest.Usage(1200, 30))
	h.srv.Reply(llmtest.Text("All three packages build:\n\n- `tui`\n- `agent`\n- `session`"), llmtest.Usage(1300, 40))
	h.waitText("v0.0.0-test")
	h.send("does it build?")
	<-gate.started
	running := h.waitText("compiling 3 packages", "Elapsed")
	frameGolden(t, "running", running)
	close(gate.release)
	done := h.waitIdle("All three packages build")
	frameGolden(t, "done", done)
	// Ctrl-O expands the tool's output; the whole transcript is drawn
	// again, once.
	h.key('o', tea.ModCtrl)
	expanded := h.waitText("ok  prime/session", "Keys")
	if n := strings.Count(expanded, "does it build?"); n != 1 {
		t.Errorf("the transcript holds the prompt %d times after the repaint:\n%s", n, expanded)
	}
}

func TestEditDiffAndErrors(t *testing.T) {
	h := newHarness(t, setup{})
	dir := h.cwd
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tools := tool.Builtins(tool.Env{CWD: dir})
	h2 := newHarness(t, setup{tools: tools})
	_ = h
	h2.cwd = dir
	h2.srv.Reply(llmtest.ToolCall("e1", "edit", `{"path":"`+filepath.Join(dir, "main.go")+`","edits":[{"oldText":"println(\"hi\")","newText":"println(\"hello\")"}]}`), llmtest.Usage(100, 10))
	h2.srv.Reply(llmtest.ToolCall("e2", "read", `{"path":"`+filepath.Join(dir, "missing.go")+`"}`), llmtest.Usage(120, 10))
	h2.srv.Reply(llmtest.ErrorEvent("overloaded_error", "Overloaded"))
	h2.waitText("v0.0.0-test")
	h2.send("say hello")
	f := h2.waitIdle("Error:")
	for _, want := range []string{"edit " + filepath.Join(dir, "main.go"), "-4", "+4", "println(\"hello\")", "read " + filepath.Join(dir, "missing.go"), "Overloaded"} {
		if !strings.Contains(f, want) {
			t.Errorf("the screen lacks %q:\n%s", want, f)
		}
	}
}

// compactionScript is a conversation of two turns, long enough for a
// compaction to have something to summarize with keepRecentTokens 10.
func twoTurns(h *harness) {
	h.srv.Reply(llmtest.Text("The parser lives in parse.go."), llmtest.Usage(900, 20))
	h.srv.Reply(llmtest.Text("Noted: the lexer is next."), llmtest.Usage(1000, 20))
	h.waitText("v0.0.0-test")
	h.send("where is the parser?")
	h.waitIdle("parse.go")
	h.send("and the lexer?")
	h.waitIdle("lexer is next")
}

const compactSettings = `{"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 10, "reserveTokens": 1000}}`

func TestManualCompactionWithInstructions(t *testing.T) {
	h := newHarness(t, setup{settings: compactSettings})
	twoTurns(h)
	before := h.frame()
	frameGolden(t, "meter-before", footerOf(before))
	gate := make(chan struct{})
	h.srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		<-gate
		return llmtest.Stream(llmtest.Text("## Goal\nFind the parser.\n\n## Next Steps\n1. Focus on the auth refactor."), llmtest.Usage(600, 40))
	})
	h.send("/compact focus on the auth refactor")
	loader := h.waitText("compacting… (escape to cancel)")
	frameGolden(t, "loader", loader)
	// A message typed meanwhile waits for the compaction.
	h.send("then fix the lexer")
	h.waitText("After compaction: then fix the lexer")
	h.srv.Reply(llmtest.Text("Fixing the lexer now."), llmtest.Usage(700, 10))
	close(gate)
	collapsed := h.waitIdle("[compaction]", "Fixing the lexer now.")
	frameGolden(t, "collapsed", collapsed)
	if !strings.Contains(collapsed, "Instructions: focus on the auth refactor") {
		t.Errorf("the block lacks the instructions:\n%s", collapsed)
	}
	h.key('o', tea.ModCtrl)
	expanded := h.waitText("Focus on the auth refactor.")
	frameGolden(t, "expanded", expanded)
	// The session file holds the compaction with the instructions.
	s, err := session.Load(h.file)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, e := range s.Entries() {
		if p, err := e.Payload(); err == nil {
			if c, ok := p.(*session.CompactionEntry); ok {
				found = c.CustomInstructions == "focus on the auth refactor"
			}
		}
	}
	if !found {
		t.Error("no compaction entry with the instructions in the session file")
	}
}

// footerOf is the last two lines of a frame: the footer.
func footerOf(frame string) string {
	lines := strings.Split(frame, "\n")
	return strings.Join(lines[max(len(lines)-2, 0):], "\n")
}
