package tui

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
)

// withIDs replaces the entry ids in a frame with names, for goldens (ids
// are random).
func withIDs(frame string, names map[string]string) string {
	for id, name := range names {
		frame = strings.ReplaceAll(frame, id, name)
	}
	return frame
}

// filePins reads the pins of the session file's path, as a reader of the
// file (pi, Prime resumed) finds them.
func filePins(t *testing.T, file string) []compaction.Pin {
	t.Helper()
	s, err := session.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	return compaction.Pins(s.LeafPath())
}

// TestPinCommands: /pin, /pins, /unpin by id and by text, and their
// errors: no text, an unknown pin.
func TestPinCommands(t *testing.T) {
	h := newHarness(t, setup{})
	h.srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		return llmtest.Stream(llmtest.Text("Noted."), llmtest.Usage(200, 5))
	})
	h.waitText("v0.0.0-test")
	h.send("the tests run with make check")
	h.waitIdle("Noted.")
	h.send("/pin")
	h.waitText("Warning: /pin TEXT pins a text")
	h.send("/pin never push to main")
	h.waitText("Pinned ", ": never push to main (the model sees it")
	h.send("/pin keep the old signature of Check")
	h.waitText("keep the old signature of Check (the model sees it")
	pins := h.ag.Pins()
	if len(pins) != 2 {
		t.Fatalf("pins %+v", pins)
	}
	names := map[string]string{pins[0].ID: "<pin-1>", pins[1].ID: "<pin-2>"}
	h.send("/pins")
	f := h.waitText("[pins]", pins[1].ID)
	frameGolden(t, "pins", withIDs(f, names))

	h.send("/unpin nothing like it")
	h.waitText(`Error: no pin "nothing like it" on this branch: /pins lists them with their ids`)
	h.send("/unpin " + pins[0].ID)
	h.waitText("Unpinned " + pins[0].ID + ": never push to main")
	h.send("/unpin keep the old signature of Check")
	h.waitText("Unpinned " + pins[1].ID + ": keep the old signature of Check")
	h.send("/unpin")
	h.waitText("Warning: /unpin ID or /unpin TEXT removes a pin")
	h.send("/pins")
	f = h.waitText("No pins on this branch")
	frameGolden(t, "unpinned", withIDs(f, names))
	if got := filePins(t, h.file); len(got) != 0 {
		t.Errorf("the file still holds pins %+v", got)
	}
}

// TestTreePin: Shift-P in /tree pins the selected message's text; the
// row is marked, the next request shows the pin to the model.
func TestTreePin(t *testing.T) {
	h := newHarness(t, setup{settings: compactSettings})
	twoTurns(h)
	h.send("/tree")
	h.waitText("Session Tree", "shift+p pin")
	h.navigateTo("user: where is the parser?")
	h.typeText("P")
	f := h.waitText("› • [pinned] user: where is the parser?", "Pinned ")
	pins := h.ag.Pins()
	if len(pins) != 1 || pins[0].Text != "where is the parser?" || pins[0].MessageID == "" {
		t.Fatalf("pins %+v", pins)
	}
	frameGolden(t, "tree", withIDs(f, map[string]string{pins[0].ID: "<pin>"}))
	if got := filePins(t, h.file); len(got) != 1 || got[0].MessageID != pins[0].MessageID {
		t.Errorf("the file holds pins %+v", got)
	}
	// Pinning a row with no text says why and leaves the tree open.
	h.navigateTo("[system]")
	h.typeText("P")
	h.waitText("Error: ", "has no text to pin", "Session Tree")
	h.key('c', tea.ModCtrl) // closes the tree
	h.srv.Reply(llmtest.Text("Still in parse.go."), llmtest.Usage(1100, 10))
	h.send("remind me")
	h.waitIdle("Still in parse.go.")
	reqs := h.srv.Requests()
	if sys := reqs[len(reqs)-1].System(); !strings.Contains(sys, "where is the parser?") {
		t.Errorf("the model does not see the pin:\n%s", sys)
	}
}

// A move that leaves pins behind says which.
func TestPinsLeft(t *testing.T) {
	a := compaction.Pin{ID: "aaaa1111", Text: "never push to main"}
	b := compaction.Pin{ID: "bbbb2222", Text: "keep the old signature"}
	for _, c := range []struct {
		before, after []compaction.Pin
		want          string
	}{
		{nil, nil, ""},
		{[]compaction.Pin{a}, []compaction.Pin{a}, ""},
		{[]compaction.Pin{a}, nil, "The pin aaaa1111: never push to main stays on the branch left: the model no longer sees it (/pin it again to keep it here)"},
		{[]compaction.Pin{a, b}, []compaction.Pin{b}, "The pin aaaa1111: never push to main stays on the branch left: the model no longer sees it (/pin it again to keep it here)"},
		{[]compaction.Pin{a, b}, nil, "2 pins stay on the branch left, the model no longer sees them (/pin them again to keep them here): aaaa1111: never push to main; bbbb2222: keep the old signature"},
	} {
		if got := pinsLeft(c.before, c.after); got != c.want {
			t.Errorf("pinsLeft = %q, want %q", got, c.want)
		}
	}
}

// An undone compaction says what became of the pins.
func TestPinsRenewed(t *testing.T) {
	a := agent.Pin{ID: "aaaa1111", Text: "never push to main"}
	a2 := agent.Pin{ID: "cccc3333", Text: "never push to main"}
	b := agent.Pin{ID: "bbbb2222", Text: "keep the old signature"}
	for _, c := range []struct {
		before, after []agent.Pin
		want          []string
	}{
		{nil, nil, nil},
		{[]agent.Pin{a, b}, []agent.Pin{a, b}, nil},
		{[]agent.Pin{a}, []agent.Pin{a2}, []string{"The pin aaaa1111 is now cccc3333: never push to main (/unpin cccc3333 removes it)"}},
		{[]agent.Pin{a, b}, []agent.Pin{a}, []string{"The pin bbbb2222: keep the old signature is no longer on this branch: the model no longer sees it (/pin it again to keep it)"}},
		{[]agent.Pin{a}, []agent.Pin{a, b}, []string{"The pin bbbb2222: keep the old signature is on this branch again: the model sees it"}},
	} {
		if got := pinsRenewed(c.before, c.after); !slices.Equal(got, c.want) {
			t.Errorf("pinsRenewed(%v, %v) = %q, want %q", c.before, c.after, got, c.want)
		}
	}
}
