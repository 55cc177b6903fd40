package openai

import (
	"testing"

	"github.com/prime-agent/prime/llm/internal/streamtest"
)

// TestParseError reads the error bodies of OpenAI-compatible servers: the
// type (a string code wins over it), the text, a numeric code, and the
// sizes of a request that did not fit.
func TestParseError(t *testing.T) {
	for _, tc := range []struct {
		body                        string
		typ, msg                    string
		code, promptTokens, ctxSize int
	}{
		{`{"error":{"code":400,"message":"request (20494 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":20494,"n_ctx":8192}}`,
			"exceed_context_size_error", "request (20494 tokens) exceeds the available context size (8192 tokens), try increasing it", 400, 20494, 8192},
		// The fields win over the text; the text fills in what they lack.
		{`{"error":{"code":400,"message":"request (1 tokens) exceeds the available context size (2 tokens)","type":"exceed_context_size_error","n_ctx":4096}}`,
			"exceed_context_size_error", "request (1 tokens) exceeds the available context size (2 tokens)", 400, 1, 4096},
		{`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130541 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			"context_length_exceeded", "This model's maximum context length is 128000 tokens. However, your messages resulted in 130541 tokens. Please reduce the length of the messages.", 0, 130541, 128000},
		{`{"object":"error","message":"This model's maximum context length is 32768 tokens. However, you requested 40000 tokens (39000 in the messages, 1000 in the completion).","type":"BadRequestError","code":400}`,
			"", "This model's maximum context length is 32768 tokens. However, you requested 40000 tokens (39000 in the messages, 1000 in the completion).", 0, 39000, 32768},
		{`{"error":{"message":"This model's maximum context length is 4097 tokens, however you requested 4200 tokens (3200 in your prompt; 1000 for the completion).","type":"invalid_request_error"}}`,
			"invalid_request_error", "This model's maximum context length is 4097 tokens, however you requested 4200 tokens (3200 in your prompt; 1000 for the completion).", 0, 3200, 4097},
		{`{"error":{"message":"This endpoint's maximum context length is 200000 tokens. However, you requested about 250000 tokens (240000 of text input, 10000 in the output).","code":400}}`,
			"", "This endpoint's maximum context length is 200000 tokens. However, you requested about 250000 tokens (240000 of text input, 10000 in the output).", 400, 240000, 200000},
		{`{"error":{"message":"'max_tokens' is too large: 2000. This model's maximum context length is 32768 tokens and your request has 31000 input tokens (2000 > 32768 - 31000)."}}`,
			"", "'max_tokens' is too large: 2000. This model's maximum context length is 32768 tokens and your request has 31000 input tokens (2000 > 32768 - 31000).", 0, 31000, 32768},
		{`{"error":{"message":"Your input exceeds the context window of this model.","type":"invalid_request_error","code":"context_length_exceeded"}}`,
			"context_length_exceeded", "Your input exceeds the context window of this model.", 0, 0, 0},
		{`{"error":{"message":"maximum context length is 99999999999999999999999 tokens"}}`, "", "maximum context length is 99999999999999999999999 tokens", 0, 0, 0},
		{`{"error":"prompt too long; exceeded max context length by 12 tokens"}`, "", "prompt too long; exceeded max context length by 12 tokens", 0, 0, 0},
		{`{"message":"Context size has been exceeded."}`, "", "Context size has been exceeded.", 0, 0, 0},
		{"upstream timed out\n", "", "upstream timed out", 0, 0, 0},
	} {
		r, code := parseError([]byte(tc.body))
		if r.Type != tc.typ || r.Message != tc.msg || code != tc.code || r.PromptTokens != tc.promptTokens || r.ContextTokens != tc.ctxSize {
			t.Errorf("%s:\ngot  %q %q code %d sizes %d/%d\nwant %q %q code %d sizes %d/%d", tc.body,
				r.Type, r.Message, code, r.PromptTokens, r.ContextTokens, tc.typ, tc.msg, tc.code, tc.promptTokens, tc.ctxSize)
		}
	}
}

// FuzzParseError: any body reads without panicking into an error with
// non-negative sizes and valid UTF-8 (see streamtest.FuzzParseError).
func FuzzParseError(f *testing.F) {
	streamtest.FuzzParseError(f, "openai", ParseError,
		`{"error":{"code":400,"message":"request (20494 tokens) exceeds the available context size (8192 tokens)","type":"exceed_context_size_error","n_prompt_tokens":20494,"n_ctx":8192}}`,
		`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130541 tokens."}}`,
		`{"error":"x"}`,
		`{"message":"y"}`,
		`plain`,
		`{"error":{"n_ctx":-5}}`,
	)
}
