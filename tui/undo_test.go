package tui

import (
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
)

// flat is a frame with its lines joined and its spaces folded, to find a
// text however it was wrapped.
func flat(frame string) string { return strings.Join(strings.Fields(frame), " ") }

// TestUncompact: /uncompact with no compaction says so and stops nothing;
// after /compact and one more exchange it undoes the compaction: the
// transcript is drawn again with the summarized messages and without the
// block, and the exchange made since is said to be left on the side
// branch; the pin made since is still in force. A second /uncompact finds
// nothing to undo.
func TestUncompact(t *testing.T) {
	h := newHarness(t, setup{settings: compactSettings})
	twoTurns(h)
	h.send("/uncompact")
	h.waitText("Warning: Nothing to undo: no compaction on this branch")

	h.srv.Reply(llmtest.Text("## Goal\nFind the lexer."), llmtest.Usage(300, 20))
	h.send("/compact")
	h.waitIdle("[compaction]")
	h.srv.Reply(llmtest.Text("The tests are in lexer_test.go."), llmtest.Usage(400, 10))
	h.send("and the tests?")
	h.waitIdle("lexer_test.go")
	h.send("/pin keep the lexer small")
	pinned := h.waitText("Pinned ")
	h.send("/uncompact")
	f := h.waitIdle("Compaction undone", "stay on its side branch")
	frameGolden(t, "undone", withoutPinNotice(f)) // its ids vary: checked below
	if strings.Contains(f, "[compaction]") || strings.Contains(f, "and the tests?") || strings.Count(f, "where is the parser?") != 1 {
		t.Errorf("the transcript after the undo is not the conversation before the compaction:\n%s", f)
	}
	// The exchange, the pin and the system prompt's patch for it.
	if !strings.Contains(flat(f), "4 entries made after the compaction stay on its side branch, out of the conversation") {
		t.Errorf("the entries left behind are not said:\n%s", f)
	}
	pins := h.ag.Pins()
	if len(pins) != 1 || pins[0].Text != "keep the lexer small" {
		t.Fatalf("pins after the undo: %+v", pins)
	}
	// The pin is carried over past the undone compaction: a new id is
	// said, the same id is not.
	if renewed := strings.Contains(flat(f), "is now "+pins[0].ID+": keep the lexer small"); renewed != !strings.Contains(pinned, pins[0].ID) {
		t.Errorf("the pin's id after the undo (%s, pinned as %q) is said %v:\n%s", pins[0].ID, pinned, renewed, f)
	}
	s, err := session.Load(h.file)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range s.LeafPath() {
		if e.Type == session.TypeCompaction {
			t.Errorf("the file's path still holds compaction %s", e.ID)
		}
	}
	h.send("/uncompact")
	h.waitText("Warning: Nothing to undo: no compaction on this branch\n")
}

// TestUncompactPastThreshold: undoing a compaction that brought the
// context below the threshold warns that the next prompt compacts again.
func TestUncompactPastThreshold(t *testing.T) {
	// A 4,000-token window less 1,000 reserved: the 3,500 tokens the
	// second reply measured are past the threshold.
	h := newHarness(t, setup{window: 4000, settings: compactSettings})
	h.srv.Reply(llmtest.Text("The parser lives in parse.go."), llmtest.Usage(900, 20))
	h.srv.Reply(llmtest.Text("Noted: the lexer is next."), llmtest.Usage(3500, 20))
	h.srv.Reply(llmtest.Text("## Goal\nShip the lexer."), llmtest.Usage(800, 30))
	h.waitText("v0.0.0-test")
	h.send("where is the parser?")
	h.waitIdle("parse.go")
	h.send("and the lexer?")
	h.waitIdle("[compaction]")
	h.send("/uncompact")
	f := h.waitText("Compaction undone", "past the compaction threshold")
	if !strings.Contains(flat(f), "Warning: The whole history (3,520 tokens) is past the compaction threshold (3,000)") {
		t.Errorf("no warning of the threshold:\n%s", f)
	}
}

// withoutPinNotice is a frame without the paragraph saying a pin's new id.
func withoutPinNotice(frame string) string {
	var kept []string
	for _, para := range strings.Split(frame, "\n\n") {
		if !strings.HasPrefix(para, "Warning: The pin ") {
			kept = append(kept, para)
		}
	}
	return strings.Join(kept, "\n\n")
}
