package tui

import (
	"strings"
	"time"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/internal/numfmt"
)

// compactProgress is what the compaction loader says while a summary is
// written: how long it has run, what it summarizes, how much of the summary
// has streamed, and which request (a part, a smaller retry) is out.
type compactProgress struct {
	since            time.Time
	tokens, messages int
	chars            int    // of summary text streamed
	step             string // "part 2", "smaller retry 1", or ""
}

// onCompactProgress records a compaction's progress event.
func (m *Model) onCompactProgress(p *agent.Progress) {
	c := &m.cprog
	switch p.Kind {
	case agent.ProgressPlanned:
		c.tokens, c.messages = p.Tokens, p.Messages
	case agent.ProgressText:
		c.chars += len(p.Delta)
	case agent.ProgressRequest:
		var step []string
		if p.Part > 1 {
			step = append(step, "part "+itoa(p.Part))
		}
		if p.Attempt > 0 {
			step = append(step, "smaller retry "+itoa(p.Attempt))
		}
		c.step = strings.Join(step, ", ")
	}
}

// compactingLine is the loader's text: "compacting… 12 messages, 8,400
// tokens · Elapsed 3s · summary 320 tokens so far (escape to cancel)",
// with what went wrong meanwhile (a retry, a fallback) after it.
func (m *Model) compactingLine() string {
	text := "compacting…"
	switch m.compacting {
	case agent.ReasonThreshold:
		text = "auto-compacting…"
	case agent.ReasonOverflow:
		text = "context overflow: compacting…"
	}
	c := m.cprog
	parts := []string{text}
	if c.messages > 0 {
		parts[0] += " " + itoa(c.messages) + " " + plural(c.messages, "message", "messages") + ", " + numfmt.Commas(c.tokens) + " tokens"
	}
	if !c.since.IsZero() {
		parts = append(parts, "Elapsed "+max(m.now.Sub(c.since), 0).Round(time.Second).String())
	}
	if c.chars > 0 {
		parts = append(parts, "summary "+numfmt.Commas((c.chars+3)/4)+" tokens so far")
	}
	if c.step != "" {
		parts = append(parts, c.step)
	}
	line := strings.Join(parts, " · ") + " (escape to cancel)"
	if m.compactNote != "" {
		line += " " + m.st.muted.Render(m.compactNote)
	}
	return line
}
