package tui

import (
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/prime-agent/prime/agent"
)

// TestCompactingLine: the loader counts the seconds, says what is being
// summarized, how much of the summary has streamed, which request is out,
// and what went wrong meanwhile.
func TestCompactingLine(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m := &Model{st: newStyles(), compacting: agent.ReasonManual, cprog: compactProgress{since: start}}
	m.now = start.Add(12 * time.Second)
	for _, p := range []*agent.Progress{
		{Kind: agent.ProgressPlanned, Tokens: 8400, Messages: 23},
		{Kind: agent.ProgressRequest, Part: 2},
		{Kind: agent.ProgressText, Delta: string(make([]byte, 1280))},
	} {
		m.onProgress(p)
	}
	want := "compacting… 23 messages, 8,400 tokens · Elapsed 12s · summary 320 tokens so far · part 2 (escape to cancel)"
	if got := ansi.Strip(m.compactingLine()); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	m.onProgress(&agent.Progress{Kind: agent.ProgressRetry, Attempt: 1, Delay: 4 * time.Second})
	m.onProgress(&agent.Progress{Kind: agent.ProgressRequest, Attempt: 1})
	want = "compacting… 23 messages, 8,400 tokens · Elapsed 12s · summary 320 tokens so far · smaller retry 1 (escape to cancel) (the provider failed; attempt 2 in 4s)"
	if got := ansi.Strip(m.compactingLine()); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
