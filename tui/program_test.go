package tui

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
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
	h := newHarness(t, setup{builtins: true})
	main := filepath.Join(h.cwd, "main.go")
	write(t, main, "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n")
	missing := filepath.Join(h.cwd, "missing.go")
	h.srv.Reply(llmtest.ToolCall("e1", "edit", `{"path":"`+main+`","edits":[{"oldText":"println(\"hi\")","newText":"println(\"hello\")"}]}`), llmtest.Usage(100, 10))
	h.srv.Reply(llmtest.ToolCall("e2", "read", `{"path":"`+missing+`"}`), llmtest.Usage(120, 10))
	h.srv.Reply(llmtest.ErrorEvent("overloaded_error", "Overloaded"))
	h.waitText("v0.0.0-test")
	h.send("say hello")
	f := h.waitIdle("Error:")
	for _, want := range []string{"edit " + main, "-4", "+4", "println(\"hello\")", "read " + missing, "Overloaded"} {
		if !strings.Contains(f, want) {
			t.Errorf("the screen lacks %q:\n%s", want, f)
		}
	}
}

// twoTurns is a conversation of two turns, long enough for a
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
	loader := h.waitText("compacting… 2 messages, 13 tokens · Elapsed", "(escape to cancel)")
	frameGolden(t, "loader", loader)
	// A message typed meanwhile waits for the compaction.
	h.send("then fix the lexer")
	h.waitText("After compaction: then fix the lexer")
	h.srv.Reply(llmtest.Text("Fixing the lexer now."), llmtest.Usage(700, 10))
	close(gate)
	// The footer's meter is refreshed by an event of its own after the
	// reply: wait for the reply's measure, not just for the agent to settle.
	collapsed := h.waitIdle("[compaction]", "Fixing the lexer now.", "0.4%/200k")
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

func TestAutoCompaction(t *testing.T) {
	// A 4,000-token window less 1,000 reserved: a reply measuring 3,500
	// tokens of context starts a threshold compaction after the run.
	h := newHarness(t, setup{window: 4000, settings: compactSettings})
	h.srv.Reply(llmtest.Text("The parser lives in parse.go."), llmtest.Usage(900, 20))
	h.srv.Reply(llmtest.Text("Noted: the lexer is next."), llmtest.Usage(3500, 20))
	gate := make(chan struct{})
	h.srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		<-gate
		return llmtest.Stream(llmtest.Text("## Goal\nShip the lexer.\n\n## Progress\n- parser found in parse.go"), llmtest.Usage(800, 30))
	})
	h.waitText("v0.0.0-test")
	h.send("where is the parser?")
	frameGolden(t, "meter-before", footerOf(h.waitIdle("parse.go", "23.0%/4k")))
	h.send("and the lexer?")
	loader := h.waitText("auto-compacting… ", "(escape to cancel)")
	frameGolden(t, "loader", loader)
	close(gate)
	collapsed := h.waitIdle("[compaction]", "?/4k (auto)")
	frameGolden(t, "collapsed", collapsed)
	frameGolden(t, "meter-after", footerOf(collapsed))
	h.key('o', tea.ModCtrl)
	expanded := h.waitText("Ship the lexer.")
	frameGolden(t, "expanded", expanded)
}

func TestEscapeCancelsCompaction(t *testing.T) {
	h := newHarness(t, setup{settings: compactSettings})
	twoTurns(h)
	before, err := os.ReadFile(h.file)
	if err != nil {
		t.Fatal(err)
	}
	asked, release := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(release) }) // before the server closes
	h.srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		close(asked)
		<-release
		return llmtest.Stream(llmtest.Text("never used"))
	})
	h.send("/compact keep the tests")
	h.waitText("compacting…", "(escape to cancel)")
	<-asked
	h.key(tea.KeyEscape)
	f := h.waitIdle("Error: Compaction cancelled")
	frameGolden(t, "cancelled", f)
	after, err := os.ReadFile(h.file)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Errorf("a cancelled compaction changed the session file:\nbefore %d bytes, after %d", len(before), len(after))
	}
}

func TestTreeNavigationWithSummary(t *testing.T) {
	h := newHarness(t, setup{settings: compactSettings})
	twoTurns(h)
	// Back to the first question, without a summary: its text comes back
	// to the editor, and a new question starts a second branch.
	h.send("/tree")
	h.waitText("Session Tree", "← you are here")
	for range 3 {
		h.key(tea.KeyUp)
	}
	h.waitText("› • user: where is the parser?")
	h.enter()
	h.waitText("Summarize branch?")
	h.enter() // No summary
	h.waitText("Navigated to selected point", "where is the parser?\n─")
	h.key('c', tea.ModCtrl)
	h.srv.Reply(llmtest.Text("The tests are in parse_test.go."), llmtest.Usage(950, 20))
	h.send("where are the tests?")
	h.waitIdle("parse_test.go")

	h.send("/tree")
	tree := h.waitText("Session Tree", "└⊟ user: where is the parser?")
	frameGolden(t, "selector", tree)
	// The first branch's last question, then the choice.
	h.navigateTo("user: and the lexer?")
	h.enter()
	dialog := h.waitText("Summarize branch?", "Summarize with custom instructions")
	frameGolden(t, "summarize-dialog", dialog)

	gate := make(chan struct{})
	h.srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		<-gate
		return llmtest.Stream(llmtest.Text("## Goal\nFind the tests.\n\n## Done\n- parse_test.go holds them"), llmtest.Usage(500, 30))
	})
	h.key(tea.KeyDown)
	h.enter() // Summarize
	h.waitText("summarizing branch… (escape to cancel)")
	close(gate)
	done := h.waitIdle("[branch]", "Navigated to selected point")
	frameGolden(t, "navigated", done)
	if !strings.Contains(done, "and the lexer?\n─") {
		t.Errorf("the selected message is not back in the editor:\n%s", done)
	}
	// The summary is in the session file, where the conversation goes on.
	s, err := session.Load(h.file)
	if err != nil {
		t.Fatal(err)
	}
	if leaf := s.Leaf(); leaf == nil || leaf.Type != session.TypeBranchSummary {
		t.Errorf("the session's leaf is %v, want the branch summary", leaf)
	}
}

// navigateTo moves the tree's selection to the row showing text, a key at
// a time: after each key it waits for the frame's "(n/m)" position to
// change before looking again, so a frame that lags behind the keys cannot
// make it run past the row (the tree wraps, so every key moves it).
func (h *harness) navigateTo(text string) {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	row, pos := treeSelection(h.frame())
	for range 50 {
		if strings.Contains(row, text) {
			return
		}
		h.key(tea.KeyDown)
		for prev := pos; pos == prev; row, pos = treeSelection(h.frame()) {
			if time.Now().After(deadline) {
				h.t.Fatalf("the tree's selection did not move from %q (%s):\n%s", row, prev, h.frame())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	h.t.Fatalf("no row %q in the tree:\n%s", text, h.frame())
}

// treePosition is the tree's "(n/m)" line: the selected row's place.
var treePosition = regexp.MustCompile(`^\s*\(\d+/\d+\)`)

// treeSelection returns the tree's selected row in frame (the line that
// begins "› ") and its "(n/m)" position ("" for what the frame lacks).
func treeSelection(frame string) (row, pos string) {
	for l := range strings.SplitSeq(frame, "\n") {
		if row == "" && strings.HasPrefix(l, "› ") {
			row = l
		}
		if m := treePosition.FindString(l); m != "" {
			pos = strings.TrimSpace(m)
		}
	}
	return row, pos
}

// writeSession writes a session in dir with user messages sent at t, and
// a name when not empty.
func writeSession(t *testing.T, dir, cwd, name string, at time.Time, texts ...string) string {
	t.Helper()
	s, err := session.CreateIn(dir, session.Options{CWD: cwd})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, text := range texts {
		msg := &llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}, Timestamp: at.UnixMilli()}
		if _, err := s.Append(&session.MessageEntry{Message: msg}); err != nil {
			t.Fatal(err)
		}
	}
	if name != "" {
		if _, err := s.Append(&session.SessionInfoEntry{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	return s.File()
}

func TestSessionPicker(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	root := t.TempDir()
	here := filepath.Join(root, "--home-me-proj--")
	there := filepath.Join(root, "--home-me-other--")
	writeSession(t, here, "/home/me/proj", "", now.Add(-2*time.Hour), "fix the flaky parser test", "and the lexer")
	writeSession(t, here, "/home/me/proj", "auth refactor", now.Add(-26*time.Hour), "move the token check")
	writeSession(t, there, "/home/me/other", "", now.Add(-5*time.Minute), "write the release notes")

	pm := &pickerModel{p: &picker{dir: here, root: root, now: now}, st: newStyles(), width: termWidth, height: termHeight}
	tm := teatest.NewTestModel(t, pm, teatest.WithInitialTermSize(termWidth, termHeight))
	h := &harness{t: t, tm: tm, emu: newEmulator(t)}

	frameGolden(t, "current-folder", h.waitText("Resume Session (Current Folder)", "auth refactor"))
	h.key(tea.KeyTab)
	frameGolden(t, "all", h.waitText("Resume Session (All)", "write the release notes"))
	h.typeText("parser")
	frameGolden(t, "search", h.waitFor("one match", func(f string) bool {
		return strings.Contains(f, "(1/1)") && !strings.Contains(f, "release notes")
	}))
	h.enter()
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*pickerModel)
	if final.chosen == nil || final.chosen.FirstMessage != "fix the flaky parser test" {
		t.Fatalf("chose %+v, want the parser session", final.chosen)
	}

	// Escape cancels: nothing is chosen.
	pm = &pickerModel{p: &picker{dir: here, root: root, now: now}, st: newStyles()}
	tm = teatest.NewTestModel(t, pm, teatest.WithInitialTermSize(termWidth, termHeight))
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	if final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*pickerModel); final.chosen != nil {
		t.Fatalf("escape chose %+v", final.chosen)
	}
}
