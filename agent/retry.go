package agent

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/prime-agent/prime/llm"
)

// textRetryCancelled is the final error of retries whose wait was cancelled.
const textRetryCancelled = "Retry cancelled"

// transientText matches the error texts of failures worth sending again
// (overloads, rate limits, 5xx statuses, broken connections, timeouts), for
// replies whose error was not classified (read back from a session file).
var transientText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)overloaded|server is busy|server busy|high demand|capacity|rate.?limit|too many requests|` +
		`\b(429|500|502|503|504|520|524)\b|service unavailable|server error|internal error|provider returned error|upstream|` +
		`network error|connection (refused|reset|closed|error|lost)|fetch failed|econnreset|etimedout|epipe|enotfound|eai_again|` +
		`socket hang up|timed? ?out|terminated|websocket (closed|error)|stream (ended|closed) (early|unexpectedly)|retry delay|` +
		`please (retry|try again)|try again later`)
})

// quotaText matches failures that retrying cannot fix: spent quotas and
// billing limits, even when they come as a 429.
var quotaText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)insufficient_quota|quota exceeded|exceeded your (current )?quota|billing|` +
		`(monthly|daily|plan|usage) limit|credit balance`)
})

// retryable reports whether a failed reply is worth sending again: it failed
// (not aborted), not for a context overflow, and its classified error (or,
// when none, its text) says the failure was transient, not a spent quota.
func retryable(m *llm.AssistantMessage, err error) bool {
	if m == nil || m.StopReason != llm.StopReasonError {
		return false
	}
	if errors.Is(err, llm.ErrContextOverflow) || llm.IsOverflowText(m.ErrorMessage) || quotaText().MatchString(m.ErrorMessage) {
		return false
	}
	var apiErr *llm.APIError
	if errors.As(err, &apiErr) {
		return llm.Retryable(err)
	}
	if errors.Is(err, llm.ErrConnection) || errors.Is(err, llm.ErrBadResponse) {
		return true
	}
	return transientText().MatchString(m.ErrorMessage)
}

// decideRetry decides, as a run ends, whether its failed reply is sent again
// automatically (AgentEnd.WillRetry).
func (a *Agent) decideRetry(last *llm.AssistantMessage) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := &a.conv
	rs := a.settings().Retry()
	if !c.autoRetry || !rs.Enabled || c.retries >= rs.MaxRetries || !retryable(last, c.lastErr) {
		return false
	}
	c.retry = true
	return true
}

// retryWait announces the next retry, hides the failed reply from the model,
// and waits the retry's delay; false means the wait was cancelled or the
// provider asked for a longer wait than allowed (the retries end).
func (a *Agent) retryWait(ctx context.Context, last *llm.AssistantMessage) bool {
	a.mu.Lock()
	c := &a.conv
	rs := a.settings().Retry()
	c.retries++
	attempt := c.retries
	delay := time.Duration(rs.BaseDelayMs) * time.Millisecond << (attempt - 1)
	maxDelay := time.Duration(rs.MaxDelayMs) * time.Millisecond
	if maxDelay > 0 && delay > maxDelay {
		delay = maxDelay
	}
	asked := llm.RetryAfterOf(c.lastErr)
	waitCtx, cancel := context.WithCancel(ctx)
	c.retryCancel = cancel
	c.move(evRetryWait)
	a.mu.Unlock()
	defer func() {
		cancel()
		a.mu.Lock()
		a.conv.retryCancel = nil
		a.conv.move(evRetryEnd)
		a.mu.Unlock()
	}()
	text := ""
	if last != nil {
		text = last.ErrorMessage
	}
	if asked > 0 {
		if maxDelay > 0 && asked > maxDelay {
			a.endRetriesWith(attempt, text+" (the provider asks to wait "+asked.Round(time.Second).String()+", longer than retry.maxDelayMs)")
			return false
		}
		delay = max(delay, asked)
	}
	a.emit(RetryStart{Attempt: attempt, MaxAttempts: rs.MaxRetries, Delay: delay, ErrorMessage: text})
	a.omitLastReply()
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-waitCtx.Done():
		a.endRetriesWith(attempt, textRetryCancelled)
		return false
	}
}

// endRetries ends a series of retries that did not succeed (the attempts ran
// out, or the last failure was not worth retrying).
func (a *Agent) endRetries(last *llm.AssistantMessage) {
	a.mu.Lock()
	attempt := a.conv.retries
	a.mu.Unlock()
	if attempt == 0 {
		return
	}
	text := ""
	if last != nil {
		text = last.ErrorMessage
	}
	a.endRetriesWith(attempt, text)
}

func (a *Agent) endRetriesWith(attempt int, finalError string) {
	a.mu.Lock()
	a.conv.retries = 0
	a.mu.Unlock()
	a.emit(RetryEnd{Success: false, Attempt: attempt, FinalError: finalError})
}

// AbortRetry cancels the wait before an automatic retry: the retries end
// (RetryEnd with "Retry cancelled") and the agent settles, not aborted.
func (a *Agent) AbortRetry() {
	a.mu.Lock()
	cancel := a.conv.retryCancel
	a.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// GaveUpText says how a series of retries that failed ended, for a front
// end: "gave up after 3 retries: <the last error>", or, when the wait was
// cancelled, "retry cancelled".
func GaveUpText(e RetryEnd) string {
	switch {
	case e.Success:
		return ""
	case e.FinalError == textRetryCancelled:
		return "retry cancelled"
	}
	word := "retries"
	if e.Attempt == 1 {
		word = "retry"
	}
	return fmt.Sprintf("gave up after %d %s: %s", e.Attempt, word, e.FinalError)
}

// RoundDelay rounds a retry's delay for reading: to the millisecond below a
// second, else to a tenth of a second.
func RoundDelay(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}
