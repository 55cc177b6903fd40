package tui

import (
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm/llmtest"
)

// backgroundSettings: the fake's window is 200,000 tokens, so compaction
// starts above 4,000 and the background summary above 2,000.
const backgroundSettings = `{"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 10, "reserveTokens": 196000, "backgroundThreshold": 50}}`

// pastTheMark scripts a conversation whose second answer takes the
// context past the background mark (2,500 tokens) and whose third takes it
// past the threshold (4,500), summaries coming from summary, and sends the
// first two prompts.
func pastTheMark(h *harness, summary llmtest.Handler) {
	h.srv.Handle(llmtest.Scripted(summary, nil,
		llmtest.Stream(llmtest.Text("The parser lives in parse.go."), llmtest.Usage(900, 20)),
		llmtest.Stream(llmtest.Text("Noted: the lexer is next."), llmtest.Usage(2500, 20)),
		llmtest.Stream(llmtest.Text("The tests pass."), llmtest.Usage(4500, 20))))
	h.waitText("v0.0.0-test")
	h.send("where is the parser?")
	h.waitIdle("parse.go")
	h.send("and the lexer?")
}

// TestFooterBackground: the footer's note on the background summary.
func TestFooterBackground(t *testing.T) {
	st := newStyles()
	for _, c := range []struct {
		status agent.BackgroundStatus
		want   string
	}{
		{agent.BackgroundStatus{}, "0.0%/200k (auto)"},
		{agent.BackgroundStatus{Writing: true}, "0.0%/200k (auto) ⠙ summarizing ahead"},
		{agent.BackgroundStatus{Ready: true}, "0.0%/200k (auto) ✓ summary ready"},
	} {
		f := footer{usage: agent.ContextUsage{Known: true, Window: 200000}, auto: true, background: c.status}
		got := ansi.Strip(f.render(&view{width: 60, st: &st, frame: 1}))
		if line := strings.TrimRight(strings.Split(got, "\n")[1], " "); !strings.HasPrefix(line, c.want) || strings.Contains(line[len(c.want):], "summar") {
			t.Errorf("%+v: footer %q, want it to begin %q", c.status, line, c.want)
		}
	}
}

// TestBackgroundSummary: past the background mark the footer says a
// summary is being written, then that it is ready; past the threshold it
// is used at once, and the receipt says so.
func TestBackgroundSummary(t *testing.T) {
	h := newHarness(t, setup{settings: backgroundSettings})
	gate := make(chan struct{})
	summary := func(r *llmtest.Request) llmtest.Reply {
		<-gate
		return llmtest.Stream(llmtest.Text("## Goal\nFind the parser."), llmtest.Usage(600, 30))
	}
	pastTheMark(h, summary)
	writing := h.waitIdle("lexer is next", "summarizing ahead")
	frameGolden(t, "writing", footerOf(writing))
	close(gate)
	ready := h.waitText("✓ summary ready")
	frameGolden(t, "ready", footerOf(ready))
	h.send("and the tests?")
	f := h.waitIdle("[compaction]", "The tests pass.")
	if strings.Contains(footerOf(f), "summar") {
		t.Errorf("the footer still shows the background summary once used:\n%s", footerOf(f))
	}
	h.key('o', tea.ModCtrl)
	f = h.waitText("Background    written while the conversation went on")
	if !regexp.MustCompile(`the conversation waited ([0-9]+ms|N\.Ns)`).MatchString(flat(f)) {
		t.Errorf("the receipt does not say how long the conversation waited:\n%s", f)
	}
}

// TestBackgroundFailure: a background summary that fails is said as a
// warning; the compaction at the threshold then writes its own summary.
func TestBackgroundFailure(t *testing.T) {
	h := newHarness(t, setup{settings: backgroundSettings})
	var failed atomic.Bool
	summary := func(r *llmtest.Request) llmtest.Reply {
		if !failed.Swap(true) {
			return llmtest.HTTPError(400, "invalid_request_error", "the summarizer refused")
		}
		return llmtest.Stream(llmtest.Text("## Goal\nFind the parser."), llmtest.Usage(600, 30))
	}
	pastTheMark(h, summary)
	h.waitIdle("lexer is next")
	h.send("and the tests?")
	f := h.waitIdle("[compaction]", "The tests pass.")
	if !strings.Contains(flat(f), "Warning: The background summary failed (") || !strings.Contains(flat(f), "the summarizer refused") {
		t.Errorf("the failure is not said:\n%s", f)
	}
	if got := h.ag.BackgroundSummary(); got.Writing || got.Ready {
		t.Errorf("background status after the compaction: %+v", got)
	}
}
