package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
	"github.com/prime-agent/prime/tool"
)

// editorLine is the editor's first line in a frame: the line after the
// rule above it.
func editorLine(frame string) string {
	lines := strings.Split(frame, "\n")
	for i := len(lines) - 1; i > 0; i-- {
		if strings.HasPrefix(lines[i], "──") && i >= 2 && strings.HasPrefix(lines[i-2], "──") {
			return lines[i-1]
		}
	}
	return ""
}

func TestQueueRestoreAndEscape(t *testing.T) {
	gate := newGate()
	h := newHarness(t, setup{tools: []tool.Tool{gate}})
	h.srv.Reply(llmtest.ToolCall("call-1", "probe", `{"target":"./..."}`), llmtest.Usage(100, 10))
	h.waitText("v0.0.0-test")
	h.send("build it")
	<-gate.started
	h.waitText("working…")
	// Enter while the agent works steers it; Alt-Enter queues a follow-up.
	h.send("also run the tests")
	h.typeText("then commit")
	h.key(tea.KeyEnter, tea.ModAlt)
	h.waitText("Steering: also run the tests", "Follow-up: then commit", "alt+up to edit all queued messages")
	// Alt-Up brings them back to the editor.
	h.key(tea.KeyUp, tea.ModAlt)
	f := h.waitFor("queue back in the editor", func(f string) bool {
		return !strings.Contains(f, "Steering:") && strings.Contains(f, "also run the tests")
	})
	if !strings.Contains(f, "also run the tests\n\nthen commit") {
		t.Errorf("the editor does not hold the queued messages:\n%s", f)
	}
	// Queued again, then Escape: the reply stops and they come back.
	h.enter()
	h.waitText("Steering: also run the tests")
	h.key(tea.KeyEscape)
	f = h.waitIdle("Operation aborted")
	if !strings.Contains(f, "also run the tests") || strings.Contains(f, "Steering:") {
		t.Errorf("after Escape:\n%s", f)
	}
	close(gate.release)
}

func TestQuitKeys(t *testing.T) {
	t.Run("ctrl+c twice", func(t *testing.T) {
		h := newHarness(t, setup{})
		h.waitText("v0.0.0-test")
		h.typeText("half a thought")
		h.key('c', tea.ModCtrl) // clears
		h.waitFor("cleared editor", func(f string) bool { return !strings.Contains(f, "half a thought") })
		h.key('c', tea.ModCtrl)
		h.key('c', tea.ModCtrl)
		h.tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	})
	t.Run("ctrl+d", func(t *testing.T) {
		h := newHarness(t, setup{})
		h.waitText("v0.0.0-test")
		h.typeText("x")
		h.key('d', tea.ModCtrl) // not on a non-empty editor
		h.key(tea.KeyBackspace)
		h.waitFor("empty editor", func(f string) bool { return editorLine(f) == "" })
		h.key('d', tea.ModCtrl)
		h.tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	})
}

func TestSettingsAutoCompaction(t *testing.T) {
	h := newHarness(t, setup{})
	h.waitText("0.0%/200k (auto)")
	h.send("/settings")
	h.waitFor("the settings list", func(f string) bool { return regexp.MustCompile(`auto-compaction +on`).MatchString(f) })
	h.enter()
	h.waitText("Auto-compaction off")
	h.waitFor("the meter without (auto)", func(f string) bool { return strings.Contains(f, "0.0%/200k ") && !strings.Contains(f, "(auto)") })
	if h.ag.State().AutoCompaction {
		t.Error("the agent still compacts automatically")
	}
	st, err := settings.Load(t.Context(), settings.Options{AgentDir: h.agent})
	if err != nil {
		t.Fatal(err)
	}
	if st.Compaction("").Enabled {
		t.Errorf("settings.json does not say compaction.enabled false:\n%s", readFile(t, filepath.Join(h.agent, "settings.json")))
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestShellCommands(t *testing.T) {
	h := newHarness(t, setup{})
	h.waitText("v0.0.0-test")
	h.send("!echo visible; exit 3")
	h.waitText("$ echo visible; exit 3", "visible", "(exit 3)")
	h.send("!!echo private")
	h.waitText("$ echo private", "private\n")
	// Recorded in the session (written to the file with the first reply),
	// once the command has ended: the output shows while it runs.
	want := "echo visible; exit 3 exclude=false|echo private exclude=true"
	var got []string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		got = nil
		for _, it := range h.ag.Transcript().Items {
			if it.Kind == agent.TranscriptBash {
				got = append(got, it.Bash.Command+" exclude="+boolText(it.Bash.ExcludeFromContext))
			}
		}
		if strings.Join(got, "|") == want {
			return
		}
	}
	t.Errorf("bash records %q", got)
}

func TestThinkingToggle(t *testing.T) {
	h := newHarness(t, setup{})
	h.srv.Reply(llmtest.Thinking("The user wants a haiku about tests.", "sig"), llmtest.Text("Green bars at dawn."), llmtest.Usage(100, 20))
	h.waitText("v0.0.0-test")
	h.send("a haiku")
	h.waitIdle("The user wants a haiku about tests.", "Green bars at dawn.")
	h.key('t', tea.ModCtrl)
	f := h.waitFor("folded thinking", func(f string) bool {
		return strings.Contains(f, "Thinking…") && !strings.Contains(f, "The user wants")
	})
	if strings.Count(f, "Green bars at dawn.") != 1 {
		t.Errorf("the repaint left the reply %d times:\n%s", strings.Count(f, "Green bars at dawn."), f)
	}
	h.waitFor("the setting written", func(string) bool {
		b, _ := os.ReadFile(filepath.Join(h.agent, "settings.json"))
		return strings.Contains(string(b), `"hideThinkingBlock": true`)
	})
}

func TestResizeRepaints(t *testing.T) {
	h := newHarness(t, setup{})
	long := strings.Repeat("word ", 30)
	h.srv.Reply(llmtest.Text(long), llmtest.Usage(100, 20))
	h.waitText("v0.0.0-test")
	h.send("talk")
	h.waitIdle("word word")
	h.emu.Resize(50, termHeight)
	h.tm.Send(tea.WindowSizeMsg{Width: 50, Height: termHeight})
	f := h.waitFor("the transcript at 50 columns", func(f string) bool {
		return strings.Contains(f, "\n"+strings.Repeat("─", 50)+"\n")
	})
	for _, l := range strings.Split(f, "\n") {
		if len([]rune(l)) > 50 {
			t.Errorf("a line wider than 50 columns after the resize: %q", l)
		}
	}
	if n := strings.Count(f, " talk"); n != 1 {
		t.Errorf("the prompt shows %d times after the resize:\n%s", n, f)
	}
}

func TestResumeShowsCompactionFirst(t *testing.T) {
	h := newHarness(t, setup{settings: compactSettings})
	twoTurns(h)
	h.srv.Reply(llmtest.Text("## Goal\nKeep going."), llmtest.Usage(300, 20))
	h.send("/compact keep the lexer")
	h.waitIdle("[compaction]")
	h.ag.Close()
	file := h.file

	h2 := newHarness(t, setup{settings: compactSettings, session: file})
	f := h2.waitText("Session compacted 1 time")
	block := strings.Index(f, "[compaction]")
	kept := strings.Index(f, "and the lexer?")
	first := strings.Index(f, "where is the parser?")
	if block < 0 || kept < 0 || block > kept || first >= 0 {
		t.Errorf("want the block first, then the kept messages, and not the summarized ones:\n%s", f)
	}
	if !strings.Contains(f, "Instructions: keep the lexer") || !strings.Contains(f, "?/200k") {
		t.Errorf("resumed screen:\n%s", f)
	}
}

func TestSessionCommands(t *testing.T) {
	h := newHarness(t, setup{})
	h.srv.Reply(llmtest.Text("Answer one."), llmtest.Usage(100, 10))
	h.waitText("v0.0.0-test")
	h.send("/name")
	h.waitText("The session has no name")
	h.send("/name auth work")
	h.waitText("Session name set: auth work", "~/001 • auth work")
	h.send("question one")
	h.waitIdle("Answer one.")
	h.send("/session")
	h.waitText("[session]", "Messages", "Cost")
	h.send("/hotkeys")
	h.waitText("Keys", "alt+enter", "/export [file.html]")
	h.send("/copy")
	h.waitText("Copied the last reply to the clipboard")
	h.send("/export out.jsonl")
	h.waitText("Exported to ~/001/out.jsonl")
	out, err := session.Load(filepath.Join(h.cwd, "out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(out.LeafPath()); n < 3 {
		t.Errorf("the export holds %d entries", n)
	}
	h.send("/export out.html")
	h.waitText("Exported to ~/001/out.html")
	page, err := os.ReadFile(filepath.Join(h.cwd, "out.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), `<svg id="ctx-chart"`) || !strings.Contains(string(page), "Answer one.") {
		t.Errorf("the HTML export lacks the chart or the reply (%d bytes)", len(page))
	}
	h.send("/export out.txt")
	h.waitText("/export writes an HTML page")
	// /fork from the only question: a new session, its text in the editor.
	before := h.ag.State().SessionFile
	h.send("/fork")
	h.waitText("Fork from which message?", "› question one")
	h.enter()
	f := h.waitText("Forked to new session")
	if editorLine(f) != "question one" {
		t.Errorf("the editor holds %q after /fork:\n%s", editorLine(f), f)
	}
	if h.ag.State().SessionFile == before {
		t.Error("/fork did not change the session")
	}
	h.key('c', tea.ModCtrl)
	h.send("/new")
	h.waitText("✓ New session started")
	if n := h.ag.Stats().TotalMessages; n != 0 {
		t.Errorf("the new session holds %d messages", n)
	}
}

func TestModelSelector(t *testing.T) {
	h := newHarness(t, setup{})
	h.waitText("claude-test • medium")
	h.key('l', tea.ModCtrl)
	f := h.waitText("Choose a model", "anthropic/claude-test")
	if !strings.Contains(f, "(current)") {
		t.Errorf("the current model is not marked:\n%s", f)
	}
	h.enter()
	h.waitText("Model: claude-test")
	// The provider's key in models.json serves its built-in models too:
	// Ctrl-P moves to the next of them.
	h.key('p', tea.ModCtrl)
	h.waitText("Switched to ")
	h.send("/model anthropic/claude-test")
	h.waitText("Model: claude-test", "claude-test • medium")
	h.key(tea.KeyTab, tea.ModShift)
	h.waitText("Thinking level: high", "claude-test • high")
	h.send("/thinking nonsense")
	h.waitText(`unknown thinking level "nonsense"`)
	h.send("/thinking off")
	h.waitText("claude-test • thinking off")
	if lvl := h.ag.ThinkingLevel(); lvl != llm.ThinkingOff {
		t.Errorf("thinking level %s", lvl)
	}
}

func TestCompletion(t *testing.T) {
	h := newHarness(t, setup{})
	write(t, filepath.Join(h.cwd, "notes.md"), "x")
	h.waitText("v0.0.0-test")
	h.typeText("/tr")
	h.waitText("› /tree")
	h.key(tea.KeyEscape)
	h.key('c', tea.ModCtrl)
	h.typeText("read @no")
	h.waitText("› @notes.md")
	h.key(tea.KeyTab)
	f := h.waitFor("the completed file", func(f string) bool { return strings.HasPrefix(editorLine(f), "read @notes.md") })
	_ = f
}

func TestLongReplyLeavesCleanScrollback(t *testing.T) {
	h := newHarness(t, setup{})
	var b strings.Builder
	for i := 1; i <= 60; i++ {
		b.WriteString("Paragraph " + itoa(i) + ".\n\n")
	}
	h.srv.Reply(llmtest.Text(b.String()), llmtest.Usage(100, 200))
	h.waitText("v0.0.0-test")
	h.send("write a lot")
	f := h.waitIdle("Paragraph 60.")
	rule := strings.Repeat("─", termWidth)
	if n := strings.Count(f, rule); n != 2 {
		t.Errorf("the editor's rules appear %d times in scrollback and screen, want 2 (a copy of the live area reached the scrollback):\n%s", n, f)
	}
	if strings.Contains(f, "working…") {
		t.Errorf("an old frame of the live area is in the scrollback:\n%s", f)
	}
	for i := 1; i <= 60; i++ {
		if n := strings.Count(f, "Paragraph "+itoa(i)+".\n"); n != 1 {
			t.Fatalf("paragraph %d appears %d times:\n%s", i, n, f)
		}
	}
	// The same transcript, printed at startup when the session is resumed.
	h.ag.Close()
	h2 := newHarness(t, setup{session: h.file})
	f = h2.waitText("Paragraph 60.", "claude-test")
	if n := strings.Count(f, rule); n != 2 {
		t.Errorf("resumed: the editor's rules appear %d times, want 2:\n%s", n, f)
	}
	if !strings.Contains(f, "Paragraph 1.\n\nParagraph 2.\n") || strings.Count(f, "Paragraph 30.\n") != 1 {
		t.Errorf("resumed transcript:\n%s", f)
	}
}

func TestUnknownCommand(t *testing.T) {
	h := newHarness(t, setup{})
	h.waitText("v0.0.0-test")
	h.send("/frobnicate now")
	h.waitText("Unknown command /frobnicate")
	if n := len(h.srv.Requests()); n != 0 {
		t.Errorf("an unknown command reached the model (%d requests)", n)
	}
}

func TestBranchSummaryCancelled(t *testing.T) {
	h := newHarness(t, setup{settings: compactSettings})
	twoTurns(h)
	before := readFile(t, h.file)
	asked, release := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(release) })
	h.srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		close(asked)
		<-release
		return llmtest.Stream(llmtest.Text("never used"))
	})
	h.send("/tree")
	h.waitText("Session Tree")
	h.navigateTo("user: where is the parser?")
	h.enter()
	h.waitText("Summarize branch?")
	h.key(tea.KeyDown)
	h.enter()
	h.waitText("summarizing branch… (escape to cancel)")
	<-asked
	h.key(tea.KeyEscape)
	f := h.waitText("Branch summarization cancelled", "Session Tree", "› • user: where is the parser?")
	_ = f
	if after := readFile(t, h.file); after != before {
		t.Error("a cancelled branch summary changed the session file")
	}
	// Escape on the reopened tree closes it; the conversation is where it was.
	h.key(tea.KeyEscape)
	h.waitFor("the tree closed", func(f string) bool { return !strings.Contains(f, "Session Tree") })
	var leafText string
	if items := h.ag.Transcript().Items; len(items) > 0 && items[len(items)-1].Kind == agent.TranscriptAssistant {
		leafText = items[len(items)-1].Message.(*llm.AssistantMessage).Text()
	}
	if leafText != "Noted: the lexer is next." {
		t.Errorf("the leaf moved to %q", leafText)
	}
}

func TestCompactionFailure(t *testing.T) {
	// The summarizer named in the settings does not exist: the compaction
	// fails before anything is asked (a model that fails falls back to
	// the summary built by code instead).
	h := newHarness(t, setup{settings: `{"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 10, "model": "anthropic/no-such-model"}}`})
	twoTurns(h)
	h.send("/compact")
	f := h.waitIdle("Compaction failed")
	if !strings.Contains(f, "Error: Compaction failed") || !strings.Contains(f, "no-such-model") {
		t.Errorf("a failed compaction:\n%s", f)
	}
	if strings.Contains(f, "[compaction]") {
		t.Errorf("a failed compaction shows a block:\n%s", f)
	}
}

func TestPasteAndDoubleEscape(t *testing.T) {
	h := newHarness(t, setup{})
	h.srv.Reply(llmtest.Text("Got both lines."), llmtest.Usage(100, 10))
	h.waitText("v0.0.0-test")
	h.tm.Send(tea.PasteMsg{Content: "first pasted line\nsecond pasted line"})
	h.waitText("first pasted line\nsecond pasted line")
	h.enter()
	h.waitIdle("Got both lines.")
	sent := h.lastUserText()
	if sent != "first pasted line\nsecond pasted line" {
		t.Errorf("sent %q", sent)
	}
	// Escape twice on an empty editor opens the tree.
	h.key(tea.KeyEscape)
	h.key(tea.KeyEscape)
	h.waitText("Session Tree", "› • assistant: Got both lines. ← you are here")
	h.key(tea.KeyEnter)
	h.waitText("Already at this point")
}

// lastUserText is the text of the latest user message in the transcript.
func (h *harness) lastUserText() string {
	var sent string
	for _, it := range h.ag.Transcript().Items {
		if it.Kind == agent.TranscriptUser {
			sent = userText(it.Message.(*llm.UserMessage).Content)
		}
	}
	return sent
}

func TestLargePasteFolds(t *testing.T) {
	// A paste of more than ten lines (or a thousand characters) shows as a
	// marker and is sent whole; Backspace after a marker takes all of it.
	h := newHarness(t, setup{})
	h.srv.Reply(llmtest.Text("Read the log."), llmtest.Usage(100, 10))
	h.waitText("v0.0.0-test")
	var lines []string
	for i := range 30 {
		lines = append(lines, fmt.Sprintf("log line %02d", i))
	}
	log := strings.Join(lines, "\n")
	h.typeText("look at ")
	h.tm.Send(tea.PasteMsg{Content: log})
	h.waitText("look at [paste #1 +30 lines]")
	long := strings.Repeat("x", 1200)
	h.tm.Send(tea.PasteMsg{Content: long})
	h.waitText("[paste #1 +30 lines][paste #2 1200 chars]")
	if f := h.frame(); strings.Contains(f, "log line 05") || strings.Contains(f, "xxxxxxxx") {
		t.Fatalf("a folded paste is drawn in the editor:\n%s", f)
	}
	h.key(tea.KeyBackspace)
	h.waitFor("the second marker gone", func(f string) bool {
		return strings.Contains(f, "look at [paste #1 +30 lines]") && !strings.Contains(f, "paste #2")
	})
	h.typeText(" please")
	h.enter()
	h.waitIdle("Read the log.")
	sent := h.lastUserText()
	if want := "look at " + log + " please"; sent != want {
		t.Errorf("sent %q, want %q", sent, want)
	}
}

func TestResumeAndCloneCommands(t *testing.T) {
	h := newHarness(t, setup{})
	h.srv.Reply(llmtest.Text("First session's answer."), llmtest.Usage(100, 10))
	h.waitText("v0.0.0-test")
	h.send("/clone")
	h.waitText("Nothing to clone yet")
	h.send("remember the first session")
	h.waitIdle("First session's answer.")
	first := h.ag.State().SessionFile
	h.send("/clone")
	h.waitText("Cloned to new session")
	if h.ag.State().SessionFile == first {
		t.Fatal("/clone did not change the session")
	}
	h.send("/new")
	h.waitText("✓ New session started")
	// The new session's directory is the first one's: /resume lists them.
	h.send("/resume")
	h.waitText("Resume Session (Current Folder)")
	h.typeText("remember")
	h.waitText("› remember the first session")
	h.enter()
	h.waitText("Resumed", "First session's answer.")
}

func TestGitBranch(t *testing.T) {
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/feature/tui\n")
	sub := filepath.Join(repo, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := gitBranch(sub); got != "feature/tui" {
		t.Errorf("branch %q", got)
	}
	// A worktree: .git is a file naming the git directory.
	wt, gitdir := t.TempDir(), t.TempDir()
	write(t, filepath.Join(gitdir, "HEAD"), "0123456789abcdef0123456789abcdef01234567\n")
	write(t, filepath.Join(wt, ".git"), "gitdir: "+gitdir+"\n")
	if got := gitBranch(wt); got != "0123456" {
		t.Errorf("detached worktree head %q", got)
	}
	if got := gitBranch(t.TempDir()); got != "" {
		t.Errorf("outside a repository: %q", got)
	}
}

func TestTreeLabels(t *testing.T) {
	h := newHarness(t, setup{settings: compactSettings})
	twoTurns(h)
	h.send("/tree")
	h.waitText("Session Tree")
	h.navigateTo("user: where is the parser?")
	h.tm.Send(tea.KeyPressMsg{Code: 'l', ShiftedCode: 'L', Text: "L", Mod: tea.ModShift})
	h.waitText("Label for this entry (empty removes it)")
	h.typeText("milestone")
	h.enter()
	f := h.waitText("[milestone] user: where is the parser?")
	if !strings.Contains(f, "› • [milestone] user: where is the parser?") {
		t.Errorf("the labeled entry is not selected:\n%s", f)
	}
	// Ctrl-L filters to labeled entries.
	h.key('l', tea.ModCtrl)
	h.waitText("(1/1) [labeled]")
	var label string
	tree, err := h.ag.Tree(agent.TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for stack := tree.Roots; len(stack) > 0; {
		n := stack[len(stack)-1]
		stack = append(stack[:len(stack)-1], n.Children...)
		if n.Label != "" {
			label = n.Label
		}
	}
	if label != "milestone" {
		t.Errorf("the session's label is %q", label)
	}
}
