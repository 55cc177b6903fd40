package llm

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Classes of provider failure. Errors returned by providers wrap exactly one
// of them (or context.Canceled for an abort), so callers branch with
// errors.Is without parsing vendor wording.
var (
	// ErrContextOverflow means the request did not fit the model's context
	// window. Retrying the same request cannot help; compaction can.
	ErrContextOverflow = errors.New("context overflow")
	// ErrRateLimited means the provider throttled the request (HTTP 429).
	ErrRateLimited = errors.New("rate limited")
	// ErrOverloaded means the provider is temporarily overloaded (e.g.
	// Anthropic's 529 overloaded_error).
	ErrOverloaded = errors.New("provider overloaded")
	// ErrServer means the provider failed with a 5xx status.
	ErrServer = errors.New("provider server error")
	// ErrConnection means the connection failed or broke mid-stream.
	ErrConnection = errors.New("connection failed")
	// ErrAuth means the credentials were missing or refused (401, 403).
	ErrAuth = errors.New("authentication failed")
	// ErrBadResponse means the provider answered with something that is not
	// its documented format.
	ErrBadResponse = errors.New("malformed provider response")
	// ErrRequest means the provider refused the request itself (another 4xx).
	ErrRequest = errors.New("request rejected")
)

// APIError is a failure reported by a provider, with what is needed to decide
// whether and when to retry.
type APIError struct {
	// Provider names the provider, e.g. "anthropic".
	Provider string
	// StatusCode is the HTTP status, or 0 for an error event in a stream or
	// a transport failure.
	StatusCode int
	// Type is the vendor's error type, e.g. "overloaded_error".
	Type string
	// Message is the vendor's error text.
	Message string
	// RetryAfter is the delay the provider asked for, or 0.
	RetryAfter time.Duration
	// PromptTokens is the size of the refused request, in the server's own
	// tokens, and ContextTokens the context window the server has, when its
	// answer says so (llama.cpp's n_prompt_tokens and n_ctx, or the numbers
	// in an OpenAI, vLLM, OpenRouter or Anthropic overflow text); 0 when it
	// does not. They are what a caller sizes its next request from: the
	// server's tokenizer, not an estimate, counted them.
	PromptTokens, ContextTokens int
	// Kind is the class of the failure: one of the Err* values.
	Kind error
}

// Error formats the error as "status type from provider: message"; when
// the provider sent neither a status nor a type, the class of the failure
// says what went wrong ("connection to provider failed: message"). A user
// reads what failed and where, without a package-like "provider:" prefix.
func (e *APIError) Error() string {
	var head []string
	if e.StatusCode != 0 {
		head = append(head, strconv.Itoa(e.StatusCode))
	}
	if e.Type != "" {
		head = append(head, e.Type)
	}
	s := strings.Join(head, " ")
	switch {
	case e.Provider == "":
	case s != "":
		s += " from " + e.Provider
	case errors.Is(e.Kind, ErrConnection):
		s = "connection to " + e.Provider + " failed"
	case errors.Is(e.Kind, ErrBadResponse):
		s = "malformed answer from " + e.Provider
	default:
		s = e.Provider + " failed"
	}
	switch {
	case s == "":
		return e.Message
	case e.Message == "":
		return s
	}
	return s + ": " + e.Message
}

// Unwrap returns the error's class, so errors.Is(err, ErrContextOverflow)
// and the like work.
func (e *APIError) Unwrap() error { return e.Kind }

// Retryable reports whether a failure of this class may succeed when the
// same request is sent again: rate limits, overloads, 5xx and connection
// failures. A context overflow is never retryable, nor a connection a
// server on this machine refused ([RefusedLocally]).
func Retryable(err error) bool {
	if RefusedLocally(err) {
		return false
	}
	return errors.Is(err, ErrRateLimited) || errors.Is(err, ErrOverloaded) ||
		errors.Is(err, ErrServer) || errors.Is(err, ErrConnection)
}
