package agent_test

import (
	"errors"
	"testing"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
)

// TestContextBreakdownOfAgent: the agent measures its context against the
// model it converses with: the system prompt, its tools and the pins are
// there, with the threshold and the background mark of the settings.
func TestContextBreakdownOfAgent(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	ag, _ := live(t, srv, nil, upper{})
	send(t, ag, "hello")
	if _, err := ag.Pin("a pinned note, shown in the system prompt"); err != nil {
		t.Fatal(err)
	}
	b, err := ag.ContextBreakdown(t.Context(), agent.BreakdownRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if b.WindowSource != agent.SourceModel || b.Window != srv.Model().ContextWindow || b.Threshold != b.Window-compaction.DefaultReserveTokens ||
		b.BackgroundMark != b.Threshold*80/100 {
		t.Errorf("window %d (%s), threshold %d, mark %d", b.Window, b.WindowSource, b.Threshold, b.BackgroundMark)
	}
	if b.Tokens(compaction.KindSystem) == 0 || b.Tokens(compaction.KindTools) == 0 || b.Tokens(compaction.KindUser) == 0 || b.Tokens(compaction.KindAssistant) == 0 {
		t.Errorf("parts %+v", b.Parts)
	}
	if b.Compaction != nil || b.NotCompactable == "" {
		t.Errorf("a short conversation has nothing to compact: %+v", b.Compaction)
	}
	if _, err := ag.ContextBreakdown(t.Context(), agent.BreakdownRequest{LeafID: "nope"}); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("an unknown leaf: %v", err)
	}
	w, err := ag.ContextBreakdown(t.Context(), agent.BreakdownRequest{ContextWindow: 1000})
	if err != nil || w.Window != 1000 || w.WindowSource != agent.SourceRequest {
		t.Errorf("a requested window: %+v, %v", w, err)
	}
}
