package anthropic_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
)

// TestOverflowSizes: Anthropic's two refusals of a request that does not
// fit its window, a prompt beyond it and a prompt that fits only without
// the requested output, are overflows carrying both numbers, as is an
// overflow reported by an error event in the stream.
func TestOverflowSizes(t *testing.T) {
	srv := newServer(t)
	w := llmtest.Window{Size: 2000, Ratio: 1.3}
	srv.SetWindow(w)
	for _, tc := range []struct {
		name            string
		chars4, maxToks int
	}{{"input and max_tokens", 1200, 1000}} { // "prompt is too long" is in the conformance suite
		req := request(srv, &llm.UserMessage{Content: []llm.Content{llm.Text{Text: strings.Repeat("word ", tc.chars4*4/5)}}, Timestamp: 1})
		req.MaxTokens = tc.maxToks
		_, err := llm.Complete(t.Context(), srv.Provider(), req)
		var apiErr *llm.APIError
		if !errors.As(err, &apiErr) || !errors.Is(err, llm.ErrContextOverflow) {
			t.Fatalf("%s: err = %v, want an overflow", tc.name, err)
		}
		if prompt := w.PromptTokens(srv.LastRequest()); apiErr.PromptTokens != prompt || apiErr.ContextTokens != 2000 {
			t.Errorf("%s: sizes %d/%d, want %d/2000 (%s)", tc.name, apiErr.PromptTokens, apiErr.ContextTokens, prompt, apiErr.Message)
		}
	}
	srv.SetWindow(llmtest.Window{})
	srv.Reply(llmtest.ErrorEvent("invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum"))
	_, err := llm.Complete(t.Context(), srv.Provider(), request(srv))
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || apiErr.PromptTokens != 250000 || apiErr.ContextTokens != 200000 {
		t.Errorf("error event: %v (%+v)", err, apiErr)
	}
}
