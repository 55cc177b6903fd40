package agent_test

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
)

// conversationRequests returns the requests of the conversation (not the
// summary requests).
func conversationRequests(srv *llmtest.Server) []*llmtest.Request {
	var out []*llmtest.Request
	for _, r := range srv.Requests() {
		if !strings.Contains(r.LastUserText(), "<conversation>") {
			out = append(out, r)
		}
	}
	return out
}

// TestPinShownToModel: a pin is a custom entry pi ignores; the model sees it
// word for word in the system prompt from then on; PinsChanged tells the
// front ends; an unpin (by text or id) takes it out of the next request.
func TestPinShownToModel(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	var ev events
	ag, path := live(t, srv, &ev)
	send(t, ag, "hello there")
	const text = "The staging database is pg-staging-2; never touch pg-prod."
	p, err := ag.Pin("  " + text + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if p.Text != text || p.ID == "" {
		t.Fatalf("pin %+v", p)
	}
	if got := ag.Pins(); len(got) != 1 || got[0] != p {
		t.Fatalf("pins %+v", got)
	}
	if changes := eventsOf[agent.PinsChanged](&ev); len(changes) != 1 || len(changes[0].Pins) != 1 {
		t.Errorf("PinsChanged events %+v", changes)
	}
	send(t, ag, "what now")
	reqs := conversationRequests(srv)
	if sys := reqs[len(reqs)-1].System(); !strings.Contains(sys, text) || !strings.Contains(sys, `<pin id="`+p.ID+`">`) {
		t.Errorf("the request's system prompt lacks the pin:\n%s", sys)
	}
	if sys := reqs[0].System(); strings.Contains(sys, text) {
		t.Error("the request before the pin holds it")
	}
	s, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if pins := compaction.Pins(s.LeafPath()); len(pins) != 1 || pins[0].Text != text {
		t.Errorf("the file holds pins %+v", pins)
	}
	if _, err := ag.Unpin(text); err != nil {
		t.Fatal(err)
	}
	send(t, ag, "and now")
	reqs = conversationRequests(srv)
	if sys := reqs[len(reqs)-1].System(); strings.Contains(sys, text) || strings.Contains(sys, "<pins>") {
		t.Errorf("the pin is still shown after the unpin:\n%s", sys)
	}
	if len(ag.Pins()) != 0 {
		t.Errorf("pins after the unpin: %+v", ag.Pins())
	}
}

// TestPinErrors: what cannot be pinned or unpinned is an error, and writes
// nothing.
func TestPinErrors(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	ag, _ := live(t, srv, nil)
	send(t, ag, "a first message to pin later")
	before := ag.Session().Len()
	if _, err := ag.Pin(" \n "); err == nil {
		t.Error("an empty pin was accepted")
	}
	if _, err := ag.Pin(strings.Repeat("word ", agent.MaxPinTokens)); !errors.Is(err, agent.ErrPinsFull) {
		t.Errorf("a pin too large: %v", err)
	}
	if _, err := ag.Unpin("nothing like it"); !errors.Is(err, agent.ErrNoPin) {
		t.Errorf("an unknown unpin: %v", err)
	}
	if _, err := ag.PinMessage("nope"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("pinning an unknown entry: %v", err)
	}
	if n := ag.Session().Len(); n != before {
		t.Errorf("%d entries written by failed pins", n-before)
	}
	var user string
	ag.View(func(s *session.Session) {
		for _, e := range s.LeafPath() {
			if role, _ := e.MessageRole(); role == "user" {
				user = e.ID
				break
			}
		}
	})
	p, err := ag.PinMessage(user)
	if err != nil || p.Text != "a first message to pin later" || p.MessageID != user {
		t.Fatalf("pinning a message: %+v, %v", p, err)
	}
	if _, err := ag.Unpin(p.ID); err != nil {
		t.Errorf("unpin by id: %v", err)
	}
}

// TestPinsBelongToTheirBranch: a pin holds on the path below it; going back
// above it leaves it behind.
func TestPinsBelongToTheirBranch(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	ag, _ := live(t, srv, nil)
	send(t, ag, "first question")
	var first string
	ag.View(func(s *session.Session) { first = s.LeafID() })
	if _, err := ag.Pin("only on this branch"); err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Navigate(t.Context(), agent.NavigateRequest{TargetID: first}); err != nil {
		t.Fatal(err)
	}
	if pins := ag.Pins(); len(pins) != 0 {
		t.Errorf("pins after going back above the pin: %+v", pins)
	}
}

// TestPinsSurviveCompactions: through five compactions by a summarizer
// that writes nothing of it, the pin stays word for word in the system
// prompt of every request (the compaction carries it; the ledger finds it
// there and puts nothing in the summary); pi 1.6 replays the same system
// prompt from the file (with internal/pioracle/harness).
func TestPinsSurviveCompactions(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	ag, path := liveWith(t, srv, nil, testSettings(t, "compaction.keepRecentTokens", "50", "compaction.background", "false"))
	send(t, ag, "let us begin "+strings.Repeat("with some context ", 60))
	const text = "Releases go out on Tuesdays only."
	if _, err := ag.Pin(text); err != nil {
		t.Fatal(err)
	}
	for round := range 5 {
		send(t, ag, fmt.Sprintf("round %d: %s", round, strings.Repeat("more work to do ", 60)))
		res, err := ag.Compact(t.Context(), agent.CompactRequest{})
		if err != nil {
			t.Fatalf("compaction %d: %v", round+1, err)
		}
		if c := res.Compaction.LedgerCheck; c == nil || slices.ContainsFunc(c.Repaired, func(it compaction.LedgerItem) bool { return it.Kind == compaction.LedgerPinned }) {
			t.Errorf("compaction %d: the pin was put into the summary: %+v", round+1, c)
		}
	}
	send(t, ag, "last question")
	reqs := conversationRequests(srv)
	if sys := reqs[len(reqs)-1].System(); !strings.Contains(sys, text) {
		t.Fatalf("after five compactions the system prompt lacks the pin:\n%s", sys)
	}
	if os.Getenv("PRIME_PIORACLE") != "" {
		pi := piContext(t, path, "")
		if pi.System == nil || !strings.Contains(pi.System.Prompt, text) {
			t.Errorf("pi's system prompt lacks the pin: %+v", pi.System)
		}
		comparePiContext(t, "after five compactions with a pin", path, "", pi)
	}
}
