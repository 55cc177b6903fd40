package tui

import (
	"slices"
	"time"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm"
)

// A failed reply that the agent sends again is not part of the transcript:
// while retries run, the status line says what failed and when the next
// attempt goes out, and when they give up, one line says so. A failed reply
// is therefore held out of the scrollback until its run ends.

// holdFailed holds a reply that failed until the run says whether it is
// retried.
func (m *Model) holdFailed(a *assistantItem) {
	if a.stop == llm.StopReasonError {
		m.releaseFailed()
		a.held, m.failed = true, a
	}
}

// onAgentEnd drops the failed reply a retry replaces, and shows one that
// ends a run without retries.
func (m *Model) onAgentEnd(e agent.AgentEnd) {
	switch {
	case m.failed == nil:
	case e.WillRetry:
		m.dropFailed()
	case m.retry == nil:
		m.releaseFailed()
	}
	// After retries, the failed reply waits for RetryEnd, which says it.
}

// onRetryEnd ends a series of retries: on failure, one line with the last
// error replaces the failed reply.
func (m *Model) onRetryEnd(e agent.RetryEnd) {
	last := m.retry
	m.retry = nil
	if e.Success {
		return
	}
	m.dropFailed()
	text := agent.GaveUpText(e)
	if text == "retry cancelled" && last != nil {
		text += " after: " + last.ErrorMessage
	}
	m.fail(text)
}

// retryLine is the status line while retries run: "retrying in 4s (2/3)…
// (escape to cancel) · 529 overloaded", the wait counting down, then
// "retrying (2/3)…" while the attempt runs, with what failed.
func (m *Model) retryLine() string {
	n := itoa(m.retry.Attempt) + "/" + itoa(m.retry.MaxAttempts)
	line := "retrying (" + n + ")… (escape to cancel)"
	if left := m.retryAt.Sub(m.now).Round(time.Second); left > 0 {
		line = "retrying in " + left.String() + " (" + n + ")… (escape to cancel)"
	}
	if msg := oneLine(m.retry.ErrorMessage); msg != "" {
		line += " · " + msg // what failed, last: a narrow screen cuts it first
	}
	return line
}

// releaseFailed lets the held failed reply go to the scrollback.
func (m *Model) releaseFailed() {
	if m.failed != nil {
		m.failed.held, m.failed = false, nil
	}
}

// dropFailed removes the held failed reply from the transcript (it was
// never printed: held items are not finished).
func (m *Model) dropFailed() {
	if m.failed == nil {
		return
	}
	if i := slices.Index(m.items, item(m.failed)); i >= m.printed {
		m.items = slices.Delete(m.items, i, i+1)
	}
	m.failed = nil
}
