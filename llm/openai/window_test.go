package openai_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/llm/retry"
)

// bigRequest is a request of about n chars/4 tokens.
func bigRequest(srv *llmtest.Server, n int) *llm.Request {
	return request(srv, &llm.UserMessage{Content: []llm.Content{llm.Text{Text: strings.Repeat("word ", n*4/5)}}, Timestamp: 1})
}

// TestOverflowSizes: a request too large for a server's window comes back
// as an overflow carrying the sizes the server reported, read from
// llama.cpp's n_prompt_tokens and n_ctx or from each wording that gives
// both numbers; wordings without numbers leave them 0.
func TestOverflowSizes(t *testing.T) {
	for _, tc := range []struct {
		flavor llmtest.Flavor
		sized  bool
	}{
		{llmtest.FlavorLlamaCpp, true}, {llmtest.FlavorOpenAI, true}, {llmtest.FlavorVLLM, true},
		{llmtest.FlavorOpenRouter, true}, {llmtest.FlavorOllama, false}, {llmtest.FlavorLMStudio, false},
	} {
		for _, ratio := range []float64{1, 2.3} {
			srv := newServer(t, tc.flavor)
			w := llmtest.Window{Size: 2000, Ratio: ratio}
			srv.SetWindow(w)
			req := bigRequest(srv, 3000)
			req.MaxTokens = 500
			_, err := llm.Complete(t.Context(), srv.Provider(), req)
			var apiErr *llm.APIError
			if !errors.As(err, &apiErr) || !errors.Is(err, llm.ErrContextOverflow) {
				t.Fatalf("%s: err = %v, want an overflow", tc.flavor, err)
			}
			prompt := w.PromptTokens(srv.LastRequest())
			if prompt < int(3000*ratio) {
				t.Fatalf("%s: the window counted %d tokens", tc.flavor, prompt)
			}
			want := [2]int{}
			if tc.sized {
				want = [2]int{prompt, 2000}
			}
			if got := [2]int{apiErr.PromptTokens, apiErr.ContextTokens}; got != want {
				t.Errorf("%s at %.1f: sizes %v, want %v (%s)", tc.flavor, ratio, got, want, apiErr.Message)
			}
			if st := srv.WindowStats(); st.Refused != 1 {
				t.Errorf("%s: stats %+v", tc.flavor, st)
			}
		}
	}
}

// TestLlamaCppOverflowBody: llama.cpp's error is an overflow by its type
// alone, whatever its message says, and its sizes come from the body's
// fields; its 500 for a context that filled is an overflow too, and is not
// retried as a server error.
func TestLlamaCppOverflowBody(t *testing.T) {
	srv := newServer(t, llmtest.FlavorLlamaCpp)
	srv.Queue(llmtest.Reply{Status: 400, ErrorType: "exceed_context_size_error", ErrorMessage: "the prompt is bigger than the slot",
		PromptTokens: 20494, ContextTokens: 8192})
	_, err := llm.Complete(t.Context(), srv.Provider(), request(srv))
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || !errors.Is(err, llm.ErrContextOverflow) || apiErr.PromptTokens != 20494 || apiErr.ContextTokens != 8192 {
		t.Errorf("err = %v (%+v)", err, apiErr)
	}

	policy := &retry.Policy{MaxRetries: 3, BaseDelay: time.Millisecond}
	for _, rep := range []llmtest.Reply{
		llmtest.HTTPError(500, "server_error", "Context size has been exceeded."),
		llmtest.Stream(llmtest.Text("The summ"), llmtest.ErrorEvent("server_error", "Context size has been exceeded.")),
	} {
		before := len(srv.Requests())
		srv.Queue(rep)
		_, err = llm.Complete(t.Context(), srv.ProviderWith(policy), request(srv))
		if !errors.Is(err, llm.ErrContextOverflow) || len(srv.Requests())-before != 1 {
			t.Errorf("err = %v after %d requests", err, len(srv.Requests())-before)
		}
	}
}

// TestLlamaCppFillsItsContext: llama.cpp takes a prompt below its window
// whatever max_tokens says and generates until the context is full; the
// turn stops with "length", its input and output filling the window with
// fewer output tokens than max_tokens: a context overflow by
// llm.LengthStopOverflow, not the output limit. An answer cut at max_tokens
// is the output limit.
func TestLlamaCppFillsItsContext(t *testing.T) {
	srv := newServer(t, llmtest.FlavorLlamaCpp)
	srv.SetWindow(llmtest.Window{Size: 1200, Ratio: 1.3})
	answer := strings.Repeat("summary ", 2000)
	for _, tc := range []struct {
		maxTokens int
		overflow  bool
	}{{4000, true}, {100, false}} {
		srv.Reply(llmtest.Text(answer), llmtest.Usage(1, 1))
		req := bigRequest(srv, 700) // with 1.3: about 910 of the 1,200
		req.MaxTokens = tc.maxTokens
		msg, err := llm.Complete(t.Context(), srv.Provider(), req)
		if err != nil {
			t.Fatal(err)
		}
		u := msg.Usage
		if msg.StopReason != llm.StopReasonLength || u.Input < 900 || u.Output == 0 || !strings.HasPrefix(answer, msg.Text()) {
			t.Fatalf("max %d: stop %s, usage %+v", tc.maxTokens, msg.StopReason, u)
		}
		if got := llm.LengthStopOverflow(msg, req.MaxTokens, 0); got != tc.overflow {
			t.Errorf("max %d: LengthStopOverflow = %v with usage %+v", tc.maxTokens, got, u)
		}
		if tc.overflow && u.Input+u.Output != 1200 {
			t.Errorf("input %d + output %d do not fill the window", u.Input, u.Output)
		}
		if !tc.overflow && u.Output != tc.maxTokens {
			t.Errorf("output %d, want max_tokens %d", u.Output, tc.maxTokens)
		}
	}
	if st := srv.WindowStats(); st != (llmtest.WindowStats{Filled: 1, Truncated: 1}) {
		t.Errorf("stats %+v", st)
	}
}
