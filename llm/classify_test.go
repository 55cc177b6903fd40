package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestOverflowWording feeds every provider's overflow text (as pi knows
// them and as the servers send them) and texts that must not
// count: throttling that mentions tokens, and unrelated failures.
func TestOverflowWording(t *testing.T) {
	overflow := []string{
		"prompt is too long: 213462 tokens > 200000 maximum", // Anthropic
		`400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 1 tokens > 0 maximum"}}`,
		"request_too_large",                      // Anthropic 413
		"Input is too long for requested model.", // Bedrock
		"Your input exceeds the context window of this model. Please adjust your input.",                          // OpenAI
		"The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",                  // Gemini
		"This model's maximum prompt length is 131072 but the request contains 537812 tokens.",                    // xAI
		"Please reduce the length of the messages or completion.",                                                 // Groq
		"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.", // OpenAI chat, vLLM
		"This endpoint's maximum context length is 200000 tokens. However, you requested about 250000 tokens",     // OpenRouter
		"prompt token count of 130000 exceeds the limit of 128000",                                                // Copilot
		"the request exceeds the available context size, try increasing it",                                       // llama.cpp
		"request (20494 tokens) exceeds the available context size (8192 tokens), try increasing it",              // llama.cpp, current
		"exceed_context_size_error",       // llama.cpp's type
		"Context size has been exceeded.", // llama.cpp, while generating
		"input length and `max_tokens` exceed context limit: 198000 + 21333 > 200000, decrease input length", // Anthropic
		"tokens to keep from the initial prompt is greater than the context length",                          // LM Studio
		"invalid params, context window exceeds limit",                                                       // MiniMax
		"Your request exceeded model token limit: 262144 (requested: 300000)",                                // Kimi
		"Prompt contains 140000 tokens, too large for model with 131072 maximum context length",              // Mistral
		"finish_reason: model_context_window_exceeded",                                                       // z.ai
		"400 `prompt too long; exceeded max context length by 100918 tokens`",                                // Ollama
		"prompt too long; exceeded context length by 12 tokens",                                              // Ollama, older
		"This model's context length is only 8192 tokens",                                                    // vLLM
		"Input length 300000 exceeds the maximum context length 262144",                                      // vLLM
		"The input (516368 tokens) is longer than the model's context length (262144 tokens).",               // Together
		"context_length_exceeded",
		"Context length exceeded",
		"too many tokens in request",
		"token limit exceeded",
		"400 status code (no body)", // Cerebras, Mistral
		"413 (no body)",
		"413 from openai: status code (no body)",
		"openai: 413 status code (no body)", // an older session's errorMessage
	}
	for _, s := range overflow {
		if !IsOverflowText(s) {
			t.Errorf("not recognised as overflow: %q", s)
		}
	}
	notOverflow := []string{
		"ThrottlingException: Too many tokens, please wait before trying again.",
		"Throttling error: Too many tokens, please wait before trying again.",
		"Rate limit reached for gpt-test: too many tokens per minute",
		"429 Too Many Requests: token limit exceeded for this minute",
		"Service unavailable: too many tokens",
		"503 from bedrock: Service unavailable: too many tokens",
		"429 from openai: status code (no body)",
		"Overloaded",
		"Internal server error",
		"messages: roles must alternate between user and assistant",
		"429 status code (no body)",
		"",
	}
	for _, s := range notOverflow {
		if IsOverflowText(s) {
			t.Errorf("wrongly recognised as overflow: %q", s)
		}
	}
}

func TestIsContextOverflow(t *testing.T) {
	msg := func(stop StopReason, errText string, in, cacheRead, out int) *AssistantMessage {
		return &AssistantMessage{StopReason: stop, ErrorMessage: errText, Usage: Usage{Input: in, CacheRead: cacheRead, Output: out}}
	}
	tests := []struct {
		name   string
		m      *AssistantMessage
		window int
		want   bool
	}{
		{"error wording", msg(StopReasonError, "prompt is too long: 5 tokens > 4 maximum", 0, 0, 0), 0, true},
		{"other error", msg(StopReasonError, "Overloaded", 0, 0, 0), 100, false},
		{"silent overflow", msg(StopReasonStop, "", 90, 20, 5), 100, true},
		{"at the window", msg(StopReasonStop, "", 80, 20, 5), 100, false},
		{"silent overflow without window", msg(StopReasonStop, "", 900, 0, 5), 0, false},
		{"length with no output near the window", msg(StopReasonLength, "", 990, 0, 0), 1000, true},
		{"length with output", msg(StopReasonLength, "", 990, 0, 7), 1000, false},
		{"length far from the window", msg(StopReasonLength, "", 500, 0, 0), 1000, false},
		{"aborted", msg(StopReasonAborted, "prompt is too long", 0, 0, 0), 100, false},
		{"nil", nil, 100, false},
	}
	for _, tt := range tests {
		if got := IsContextOverflow(tt.m, tt.window); got != tt.want {
			t.Errorf("%s: got %v", tt.name, got)
		}
	}
}

// TestLengthStopOverflow pins the rule that tells a context that filled
// from the output limit in a "length" stop.
func TestLengthStopOverflow(t *testing.T) {
	msg := func(stop StopReason, in, cacheRead, out int) *AssistantMessage {
		return &AssistantMessage{StopReason: stop, Usage: Usage{Input: in, CacheRead: cacheRead, Output: out}}
	}
	tests := []struct {
		name              string
		m                 *AssistantMessage
		maxTokens, window int
		want              bool
	}{
		{"llama.cpp filled its context", msg(StopReasonLength, 8165, 0, 27), 512, 8192, true},
		{"context filled, window unknown", msg(StopReasonLength, 8165, 0, 27), 512, 0, true},
		{"context filled, cached prompt", msg(StopReasonLength, 165, 8000, 27), 512, 8192, true},
		{"context filled before any output", msg(StopReasonLength, 8192, 0, 0), 512, 8192, true},
		{"output limit", msg(StopReasonLength, 900, 0, 512), 512, 8192, false},
		{"output limit with reasoning counted on top", msg(StopReasonLength, 900, 0, 1536), 512, 8192, false},
		{"output limit that also reached the window", msg(StopReasonLength, 7680, 0, 512), 512, 8192, false},
		{"no limit sent, window reached", msg(StopReasonLength, 8000, 0, 192), 0, 8192, true},
		{"no limit sent, inside the window", msg(StopReasonLength, 4000, 0, 192), 0, 8192, false},
		{"nothing known", msg(StopReasonLength, 4000, 0, 192), 0, 0, false},
		{"no usage", msg(StopReasonLength, 0, 0, 0), 512, 8192, false},
		{"finished normally", msg(StopReasonStop, 8165, 0, 27), 512, 8192, false},
		{"error", msg(StopReasonError, 8165, 0, 27), 512, 8192, false},
		{"nil", nil, 512, 8192, false},
	}
	for _, tt := range tests {
		if got := LengthStopOverflow(tt.m, tt.maxTokens, tt.window); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestNewAPIError(t *testing.T) {
	tests := []struct {
		status       int
		typ, message string
		want         error
	}{
		{400, "invalid_request_error", "prompt is too long: 300000 tokens > 200000 maximum", ErrContextOverflow},
		{400, "", "", ErrContextOverflow}, // no body
		{413, "", "", ErrContextOverflow},
		{413, "request_too_large", "Request exceeds the maximum size", ErrContextOverflow},
		{500, "", "prompt too long; exceeded max context length by 5 tokens", ErrContextOverflow},
		{400, "invalid_request_error", "context_length_exceeded", ErrContextOverflow},
		{401, "authentication_error", "invalid x-api-key", ErrAuth},
		{403, "permission_error", "no access", ErrAuth},
		{429, "rate_limit_error", "too many tokens per minute", ErrRateLimited},
		{400, "ThrottlingException", "Too many tokens, please wait", ErrRateLimited},
		{529, "overloaded_error", "Overloaded", ErrOverloaded},
		{503, "", "The engine is currently overloaded", ErrOverloaded},
		{500, "api_error", "Internal server error", ErrServer},
		{502, "", "", ErrServer},
		{408, "", "timeout", ErrServer},
		{400, "invalid_request_error", "bad field", ErrRequest},
		{404, "not_found_error", "model: claude-nope", ErrRequest},
		{0, "overloaded_error", "Overloaded", ErrOverloaded},
		{0, "api_error", "Internal error", ErrServer},
		{0, "invalid_request_error", "prompt is too long: 2 tokens > 1 maximum", ErrContextOverflow},
		// llama.cpp: the type alone, whatever its message says, and the
		// 500 of a context that filled while generating (not retried as a
		// server error).
		{400, "exceed_context_size_error", "the prompt does not fit, reworded", ErrContextOverflow},
		{400, "exceed_context_size_error", "", ErrContextOverflow},
		{500, "", "Context size has been exceeded.", ErrContextOverflow},
		{0, "server_error", "Context size has been exceeded.", ErrContextOverflow},
		{400, "invalid_request_error", "input length and `max_tokens` exceed context limit: 198000 + 21333 > 200000", ErrContextOverflow},
	}
	for _, tt := range tests {
		err := NewAPIError("p", tt.status, tt.typ, tt.message, 0)
		if !errors.Is(err, tt.want) {
			t.Errorf("%d %q %q: got %v, want %v", tt.status, tt.typ, tt.message, err.Kind, tt.want)
		}
	}
	if got := NewAPIError("openai", 413, "", "", 0).Error(); got != "413 from openai: status code (no body)" || !IsOverflowText(got) {
		t.Errorf("bodyless error text %q", got)
	}
}

func TestRetryDecision(t *testing.T) {
	tests := []struct {
		err   error
		retry bool
	}{
		{NewAPIError("p", 429, "", "slow down", 3*time.Second), true},
		{NewAPIError("p", 529, "", "Overloaded", 0), true},
		{NewAPIError("p", 500, "", "", 0), true},
		{&APIError{Kind: ErrConnection}, true},
		{NewAPIError("p", 400, "", "prompt is too long", 0), false},
		{NewAPIError("p", 413, "", "", 0), false},
		{NewAPIError("p", 401, "", "", 0), false},
		{fmt.Errorf("aborted: %w", context.Canceled), false},
		{errors.New("something else"), false},
	}
	for _, tt := range tests {
		if got, _ := RetryDecision(tt.err); got != tt.retry {
			t.Errorf("%v: retry %v, want %v", tt.err, got, tt.retry)
		}
	}
	if _, after := RetryDecision(tests[0].err); after != 3*time.Second {
		t.Errorf("retry after %v", after)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {"-3"}}, 0},
		{http.Header{"Retry-After": {"1e300"}}, math.MaxInt64},
		{http.Header{"Retry-After": {"Inf"}}, math.MaxInt64},
		{http.Header{"Retry-After": {"NaN"}}, 0},
		{http.Header{"Retry-After-Ms": {"1e300"}}, math.MaxInt64},
		{http.Header{"Retry-After": {"99999999999999"}}, math.MaxInt64},
		{http.Header{}, 0},
	}
	for _, tt := range tests {
		if got := ParseRetryAfter(tt.h, now); got != tt.want {
			t.Errorf("%v: got %v, want %v", tt.h, got, tt.want)
		}
	}
}

func TestSecret(t *testing.T) {
	s := Secret("sk-very-secret")
	cfg := struct {
		Key  Secret
		Name string
	}{s, "x"}
	for _, out := range []string{
		fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s %q %x", s, s, s, s, s, s),
		fmt.Sprintf("%v %+v %#v", cfg, cfg, cfg),
	} {
		if strings.Contains(out, "very-secret") || strings.Contains(out, fmt.Sprintf("%x", "sk-very-secret")) {
			t.Errorf("secret printed: %s", out)
		}
	}
	if s.Reveal() != "sk-very-secret" || !s.IsSet() || Secret("").IsSet() {
		t.Error("Reveal/IsSet")
	}
}
