package gemini

import (
	"errors"
	"testing"

	"github.com/prime-agent/prime/llm"
)

// TestParseError reads Google's error bodies: the overflow with its sizes,
// quota exhaustion, an overload, a list-wrapped body, plain text.
func TestParseError(t *testing.T) {
	for _, tc := range []struct {
		body           string
		status         int
		kind           error
		prompt, window int
	}{
		{`{"error":{"code":400,"message":"The input token count (1196265) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`, 400, llm.ErrContextOverflow, 1196265, 1048576},
		{`{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`, 429, llm.ErrRateLimited, 0, 0},
		{`{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`, 503, llm.ErrOverloaded, 0, 0},
		{`[{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}]`, 400, llm.ErrRequest, 0, 0},
		{`{"error":{"code":403,"message":"Permission denied","status":"PERMISSION_DENIED"}}`, 403, llm.ErrAuth, 0, 0},
		{"<html>502</html>", 502, llm.ErrServer, 0, 0},
	} {
		e := ParseError([]byte(tc.body)).APIError("google", tc.status, 0)
		if !errors.Is(e, tc.kind) || e.PromptTokens != tc.prompt || e.ContextTokens != tc.window {
			t.Errorf("%s: %v (%d/%d)", tc.body, e, e.PromptTokens, e.ContextTokens)
		}
	}
}
