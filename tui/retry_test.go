package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm/llmtest"
)

const quickRetries = `{"retry": {"baseDelayMs": 1, "maxRetries": 2}}`

// TestRetriesGiveUp: replies that fail and are retried are not shown; when
// the retries run out, one line says so with the last error.
func TestRetriesGiveUp(t *testing.T) {
	h := newHarness(t, setup{settings: quickRetries})
	h.srv.Handle(func(*llmtest.Request) llmtest.Reply {
		return llmtest.HTTPError(503, "server_error", "the server is busy")
	})
	h.waitText("v0.0.0-test")
	h.send("hello")
	f := h.waitIdle("gave up")
	if n := strings.Count(f, "Error:"); n != 1 {
		t.Errorf("%d error lines, want 1:\n%s", n, f)
	}
	frameGolden(t, "gave-up", linesFrom(f, "Error:"))
}

// TestRetrySucceeds: a reply that failed once and then succeeded shows only
// the answer.
func TestRetrySucceeds(t *testing.T) {
	h := newHarness(t, setup{settings: quickRetries})
	h.srv.Queue(llmtest.HTTPError(503, "server_error", "the server is busy"))
	h.srv.Reply(llmtest.Text("Second time lucky."))
	h.waitText("v0.0.0-test")
	h.send("hello")
	if f := h.waitIdle("Second time lucky."); strings.Contains(f, "Error:") || strings.Contains(f, "busy") {
		t.Errorf("the failed attempt is shown:\n%s", f)
	}
}

// TestRetryLine: while retries run, the line says when the next attempt goes
// out and what failed.
func TestRetryLine(t *testing.T) {
	now := time.Unix(1000, 0)
	m := &Model{now: now, retryAt: now.Add(3 * time.Second),
		retry: &agent.RetryStart{Attempt: 2, MaxAttempts: 3, ErrorMessage: "fake: 529 overloaded_error:\nOverloaded"}}
	if got, want := m.retryLine(), "retrying in 3s (2/3)… (escape to cancel) · fake: 529 overloaded_error: Overloaded"; got != want {
		t.Errorf("retryLine = %q, want %q", got, want)
	}
	m.retryAt = now
	if got, want := m.retryLine(), "retrying (2/3)… (escape to cancel) · fake: 529 overloaded_error: Overloaded"; got != want {
		t.Errorf("retryLine = %q, want %q", got, want)
	}
}
