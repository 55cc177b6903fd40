package llm

import (
	"context"
	"errors"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// overflowWording matches the texts providers use to say that a request did
// not fit the model's context window. Each alternative is one vendor's (or
// server's) wording; matching is case-insensitive. The list follows pi's
// so a session that pi classified reads the same here,
// and adds wordings pi does not know: llama.cpp's error type (its message
// has been reworded before) and its 500 for a context that filled while
// generating, and Anthropic's refusal of an input that fits only without
// the requested output.
var overflowWording = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)` + strings.Join([]string{
		`prompt is too long`,                                  // Anthropic
		`request_too_large`,                                   // Anthropic 413 error type
		`input is too long for requested model`,               // Amazon Bedrock
		`exceeds the context window`,                          // OpenAI
		`input token count.*exceeds the maximum`,              // Google Gemini
		`maximum prompt length is \d+`,                        // xAI
		`reduce the length of the messages`,                   // Groq
		`maximum context length is \d+ tokens`,                // OpenAI Chat Completions, OpenRouter, vLLM, DeepSeek
		`exceeds the limit of \d+`,                            // GitHub Copilot
		`exceeds the available context size`,                  // llama.cpp server
		`exceed_context_size_error`,                           // llama.cpp server's error type
		`context size has been exceeded`,                      // llama.cpp server, a 500 while generating
		`input length and .max_tokens. exceed`,                // Anthropic: input + max_tokens > window
		`greater than the context length`,                     // LM Studio
		`context window exceeds limit`,                        // MiniMax
		`exceeded model token limit`,                          // Kimi
		`too large for model with \d+ maximum context length`, // Mistral
		`model_context_window_exceeded`,                       // z.ai finish reason
		`prompt too long; exceeded (?:max )?context length`,   // Ollama
		`context length is only \d+ tokens`,                   // vLLM
		`input length.*exceeds.*context length`,               // vLLM
		`is longer than the model'?s context length`,          // Together
		`context[_ ]length[_ ]exceeded`,                       // generic (OpenAI's error code)
		`too many tokens`,                                     // generic
		`token limit exceeded`,                                // generic
	}, "|"))
})

// bodylessOverflow matches a 400 or 413 answered without a body, which is how
// Cerebras and Mistral report an overflow. The forms of [APIError.Error]
// are allowed: "413 from provider: …", and the "provider: 413 …" of the
// errorMessage older sessions hold.
var bodylessOverflow = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^(?:[\w.-]+:\s*)?4(?:00|13)(?:\s+from\s+[\w.-]+)?:?\s*(?:status code)?\s*\(no body\)`)
})

// throttlingWording matches texts that mention tokens but mean throttling,
// such as Bedrock's "ThrottlingException: Too many tokens, please wait" or a
// tokens-per-minute quota. They
// veto an overflow match: waiting helps, compaction does not.
var throttlingWording = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^(?:[\w.-]+:\s*)?(?:\d{3}\s+)?(?:from\s+[\w.-]+:\s*)?(?:Throttling error|Service unavailable):|throttl|rate[ _-]?limit|too many requests|tokens per (?:minute|min\b|day)`)
})

// IsOverflowText reports whether an error text says the request overflowed
// the model's context window, in any provider's wording Prime knows.
func IsOverflowText(text string) bool {
	if text == "" || throttlingWording().MatchString(text) {
		return false
	}
	return overflowWording().MatchString(text) || bodylessOverflow().MatchString(text)
}

// IsContextOverflow reports whether a finished assistant turn shows that the
// context did not fit the model (pi's isContextOverflow, 0.73 rules):
//   - the turn failed with an error text in any provider's overflow wording;
//   - the turn "succeeded" but its input exceeds contextWindow (servers such
//     as z.ai accept an overflowing request silently);
//   - the turn was cut by the output limit before producing a single token
//     with its input at 99% of contextWindow or more.
//
// contextWindow ≤ 0 disables the usage-based checks.
func IsContextOverflow(m *AssistantMessage, contextWindow int) bool {
	if m == nil {
		return false
	}
	if m.StopReason == StopReasonError {
		return IsOverflowText(m.ErrorMessage)
	}
	if contextWindow <= 0 {
		return false
	}
	input := m.Usage.Input + m.Usage.CacheRead
	switch m.StopReason {
	case StopReasonStop:
		return input > contextWindow
	case StopReasonLength:
		return m.Usage.Output == 0 && float64(input) >= 0.99*float64(contextWindow)
	}
	return false
}

// LengthStopOverflow reports whether a turn that stopped with
// [StopReasonLength] was stopped by a full context window rather than by the
// output limit it asked for. Some servers (llama.cpp's llama-server among
// them) accept any prompt smaller than their context whatever the output
// limit, generate until the context is full, and report that stop as
// "length", exactly as they report the output limit. maxTokens is the output
// limit the request was sent with, contextWindow the model's window; either
// may be 0 (unknown). The rule:
//
//   - maxTokens > 0: the stop is an overflow exactly when the answer has
//     fewer output tokens than maxTokens; an answer that reached maxTokens
//     (or passed it, as a provider counting reasoning on top may report)
//     was cut by the output limit, whatever the window;
//   - maxTokens ≤ 0: it is an overflow when the input and output tokens
//     together reach contextWindow (contextWindow > 0).
//
// Any other stop reason, a nil message, or a message without any usage (no
// input and no output tokens: nothing to tell by) gives false. A caller that
// gets true should retry with less input; sending the same request again,
// or asking for more output, cannot help. A server whose own output cap is
// below the one requested also reads as an overflow under this rule; the
// smaller retry then ends the same way, and the caller reports a full
// context. [IsContextOverflow] applies pi's narrower rule (no output at all,
// input at 99 % of the window) to a stored message.
func LengthStopOverflow(m *AssistantMessage, maxTokens, contextWindow int) bool {
	if m == nil || m.StopReason != StopReasonLength {
		return false
	}
	input := m.Usage.Input + m.Usage.CacheRead + m.Usage.CacheWrite
	if input == 0 && m.Usage.Output == 0 {
		return false
	}
	if maxTokens > 0 {
		return m.Usage.Output < maxTokens
	}
	return contextWindow > 0 && input+m.Usage.Output >= contextWindow
}

// NewAPIError classifies a provider failure. status is the HTTP status (0
// for an error event inside a stream), errType the vendor's error type or
// code (e.g. "overloaded_error", "context_length_exceeded"), message its
// text. The overflow wording wins over the status: Anthropic reports an
// overflow as a 400, some servers as a 413 or even a 500.
func NewAPIError(provider string, status int, errType, message string, retryAfter time.Duration) *APIError {
	// The text may be any bytes a server sent; stored messages must be
	// valid UTF-8.
	errType, message = strings.ToValidUTF8(errType, "\uFFFD"), strings.ToValidUTF8(message, "\uFFFD")
	e := &APIError{Provider: provider, StatusCode: status, Type: errType, Message: message, RetryAfter: retryAfter}
	if message == "" && errType == "" && status != 0 {
		e.Message = "status code (no body)"
	}
	e.Kind = classify(status, errType, e.Message)
	return e
}

func classify(status int, errType, message string) error {
	lowerType := strings.ToLower(errType)
	throttled := throttlingWording().MatchString(message) || throttlingWording().MatchString(errType)
	switch {
	case !throttled && (IsOverflowText(message) || IsOverflowText(errType)):
		return ErrContextOverflow
	case status == http.StatusRequestEntityTooLarge && !throttled:
		return ErrContextOverflow
	case status == http.StatusBadRequest && errType == "" && message == "status code (no body)":
		return ErrContextOverflow
	case status == http.StatusUnauthorized || status == http.StatusForbidden ||
		strings.Contains(lowerType, "authentication") || strings.Contains(lowerType, "permission"):
		return ErrAuth
	case status == http.StatusTooManyRequests || strings.Contains(lowerType, "rate_limit") || throttled:
		return ErrRateLimited
	case status == 529 || strings.Contains(lowerType, "overloaded") || strings.Contains(strings.ToLower(message), "overloaded"):
		return ErrOverloaded
	case status >= 500 || lowerType == "api_error" || lowerType == "server_error" || lowerType == "internal_server_error":
		return ErrServer
	case status == http.StatusRequestTimeout || status == http.StatusConflict:
		// Transient by HTTP's own definition; the SDKs retry them too.
		return ErrServer
	case status >= 400:
		return ErrRequest
	}
	return ErrServer
}

// RetryAfterOf returns the delay a failed request's provider asked for
// (Retry-After), or 0.
func RetryAfterOf(err error) time.Duration {
	var e *APIError
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}

// duration is n units, at most the longest duration there is: a server's
// "Retry-After: 1e300" (or "Inf") once overflowed to a negative wait,
// which read as no wait at all and was retried at once.
func duration(n float64, unit time.Duration) time.Duration {
	if n*float64(unit) >= float64(math.MaxInt64) {
		return math.MaxInt64
	}
	return time.Duration(n * float64(unit))
}

// ParseRetryAfter reads the delay a server asks for in its response headers:
// "retry-after-ms" (milliseconds, sent by OpenAI and Anthropic), then
// "Retry-After" as seconds or an HTTP date. It returns 0 when there is none.
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return duration(ms, time.Millisecond)
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if !(s > 0) { // NaN too
			return 0
		}
		return duration(s, time.Second)
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// IsAborted reports whether err comes from a cancelled request rather than
// a failure: it wraps context.Canceled or context.DeadlineExceeded.
func IsAborted(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// RetryDecision says whether a failed request may succeed when sent again
// (rate limits, overloads, 5xx, broken connections; never a context
// overflow, an auth failure or an abort) and the delay the provider asked
// for. It is the classifier the providers' retries use.
func RetryDecision(err error) (retry bool, after time.Duration) {
	if IsAborted(err) || errors.Is(err, ErrContextOverflow) {
		return false, 0
	}
	return Retryable(err), RetryAfterOf(err)
}
