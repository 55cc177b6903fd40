package anthropic

import (
	"testing"

	"github.com/prime-agent/prime/llm/internal/streamtest"
)

// TestParseError reads Anthropic's error bodies and the sizes of its
// overflow texts.
func TestParseError(t *testing.T) {
	for _, tc := range []struct {
		body                  string
		typ, msg              string
		promptTokens, ctxSize int
	}{
		{`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}`,
			"invalid_request_error", "prompt is too long: 213462 tokens > 200000 maximum", 213462, 200000},
		{"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"input length and `max_tokens` exceed context limit: 198000 + 21333 > 200000, decrease input length or `max_tokens` and try again\"}}",
			"invalid_request_error", "input length and `max_tokens` exceed context limit: 198000 + 21333 > 200000, decrease input length or `max_tokens` and try again", 198000, 200000},
		{`{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`,
			"request_too_large", "Request exceeds the maximum allowed number of bytes.", 0, 0},
		{`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}`,
			"invalid_request_error", "prompt is too long", 0, 0},
		{"<html>bad gateway</html>\n", "", "<html>bad gateway</html>", 0, 0},
	} {
		r := parseError([]byte(tc.body))
		if r.Type != tc.typ || r.Message != tc.msg || r.PromptTokens != tc.promptTokens || r.ContextTokens != tc.ctxSize {
			t.Errorf("%s:\ngot  %q %q sizes %d/%d\nwant %q %q sizes %d/%d", tc.body,
				r.Type, r.Message, r.PromptTokens, r.ContextTokens, tc.typ, tc.msg, tc.promptTokens, tc.ctxSize)
		}
	}
}

// FuzzParseError: any body reads without panicking into an error with
// non-negative sizes and valid UTF-8 (see streamtest.FuzzParseError).
func FuzzParseError(f *testing.F) {
	streamtest.FuzzParseError(f, "anthropic", parseError,
		`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}`,
		"{\"error\":{\"message\":\"input length and max_tokens exceed context limit: 1 + 2 > 3\"}}",
		`plain`,
	)
}
