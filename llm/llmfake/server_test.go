package llmfake_test

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmfake"
)

// TestUnanswered checks that a request nothing answers fails as a server
// error and is reported, without any testing hook in the server itself.
func TestUnanswered(t *testing.T) {
	for _, api := range []string{llm.APIAnthropicMessages, llm.APIOpenAICompletions} {
		t.Run(api, func(t *testing.T) {
			srv := llmfake.NewServer(api, llmfake.FlavorOpenAI)
			defer srv.Close()
			var reported []int
			srv.OnUnanswered(func(r *llmfake.Request, n int) { reported = append(reported, n) })
			srv.Reply(llmfake.Text("one"))
			ask := func() (*llm.AssistantMessage, error) {
				return llm.Complete(context.Background(), srv.Provider(), &llm.Request{Model: srv.Model(),
					Messages: []llm.Message{&llm.UserMessage{Content: []llm.Content{llm.Text{Text: "hi"}}}}})
			}
			if msg, err := ask(); err != nil || msg.Text() != "one" {
				t.Fatalf("first: %v %v", msg, err)
			}
			_, err := ask()
			if !errors.Is(err, llm.ErrServer) {
				t.Errorf("unanswered request: %v, want a server error", err)
			}
			if len(reported) != 1 || reported[0] != 2 {
				t.Errorf("reported %v, want [2]", reported)
			}
		})
	}
}

// ask is a request of one user message of n chars/4 tokens.
func ask(srv *llmfake.Server, n, maxTokens int) *llm.Request {
	return &llm.Request{Model: srv.Model(), SystemPrompt: "Summarize.", MaxTokens: maxTokens,
		Messages: []llm.Message{&llm.UserMessage{Content: []llm.Content{llm.Text{Text: strings.Repeat("abcd", n)}}}}}
}

// TestWindowCounts: the simulated tokenizer counts chars/4 times the ratio,
// plus the chat template per message, and reports that count as the
// usage, whatever the script says.
func TestWindowCounts(t *testing.T) {
	for _, api := range []string{llm.APIAnthropicMessages, llm.APIOpenAICompletions} {
		for _, ratio := range []float64{0, 0.9, 4.3} {
			srv := llmfake.NewServer(api, llmfake.FlavorLlamaCpp)
			w := llmfake.Window{Size: 100000, Ratio: ratio}
			srv.SetWindow(w)
			srv.Reply(llmfake.Text(strings.Repeat("wxyz", 50)), llmfake.Usage(1, 1))
			msg, err := llm.Complete(t.Context(), srv.Provider(), ask(srv, 1000, 5000))
			srv.Close()
			if err != nil {
				t.Fatal(err)
			}
			r := ratio
			if r == 0 {
				r = 1
			}
			// The system prompt and the message, each with its template.
			wantIn := int(math.Ceil(r*float64(len("Summarize."))/4)) + int(math.Ceil(r*4000/4)) + 8
			if msg.Usage.Input+msg.Usage.CacheRead != wantIn || msg.Usage.Output != int(math.Ceil(r*50)) || w.PromptTokens(srv.LastRequest()) != wantIn {
				t.Errorf("%s at %v: usage %+v, want input %d output %d", api, ratio, msg.Usage, wantIn, int(math.Ceil(r*50)))
			}
		}
	}
}

// TestDefaultUsage: a reply that names no usage reports an estimate of the
// exchange, chars/4 of what was sent (as the window counts it) and of what
// is returned, in every vendor's format; a scripted usage wins.
func TestDefaultUsage(t *testing.T) {
	apis := []string{llm.APIAnthropicMessages, llm.APIOpenAICompletions, llm.APIOpenAIResponses, llm.APIGoogleGenerativeAI}
	for _, api := range apis {
		t.Run(api, func(t *testing.T) {
			srv := llmfake.NewServer(api, llmfake.FlavorOpenAI)
			defer srv.Close()
			srv.Reply(llmfake.Text(strings.Repeat("wxyz", 30)), llmfake.Text("ab"))
			msg, err := llm.Complete(t.Context(), srv.Provider(), ask(srv, 500, 0))
			if err != nil {
				t.Fatal(err)
			}
			wantIn := llmfake.Window{}.PromptTokens(srv.LastRequest())
			if u := msg.Usage; u.Input+u.CacheRead != wantIn || u.Output != 30+1 || wantIn < 500 {
				t.Errorf("usage %+v, want input %d output 31", u, wantIn)
			}
			srv.Reply(llmfake.Text("x"), llmfake.Usage(7, 3))
			msg, err = llm.Complete(t.Context(), srv.Provider(), ask(srv, 500, 0))
			if err != nil || msg.Usage.Input+msg.Usage.CacheRead != 7 || msg.Usage.Output != 3 {
				t.Errorf("scripted usage: %v %+v", err, msg.Usage)
			}
		})
	}
}

// TestWindowRefusesWithoutUsingAReply: a request the window refuses is
// answered by the window, the scripted reply waits for the next request;
// the counts say what happened.
func TestWindowRefusesWithoutUsingAReply(t *testing.T) {
	srv := llmfake.NewServer(llm.APIOpenAICompletions, llmfake.FlavorLlamaCpp)
	defer srv.Close()
	srv.SetWindow(llmfake.Window{Size: 1000})
	srv.Reply(llmfake.Text("the answer"))
	if _, err := llm.Complete(t.Context(), srv.Provider(), ask(srv, 2000, 100)); !errors.Is(err, llm.ErrContextOverflow) {
		t.Fatalf("err = %v", err)
	}
	// llama.cpp takes a prompt below its window whatever max_tokens says.
	msg, err := llm.Complete(t.Context(), srv.Provider(), ask(srv, 500, 5000))
	if err != nil || msg.Text() != "the answer" || msg.StopReason != llm.StopReasonStop {
		t.Fatalf("%v %v", msg, err)
	}
	if st := srv.WindowStats(); st != (llmfake.WindowStats{Refused: 1}) {
		t.Errorf("stats %+v", st)
	}
	srv.SetWindow(llmfake.Window{})
	if st := srv.WindowStats(); st != (llmfake.WindowStats{}) {
		t.Errorf("stats not reset: %+v", st)
	}
}

// TestWindowRefusesInputPlusOutput: the servers other than llama.cpp
// refuse a prompt that fits only without the requested output.
func TestWindowRefusesInputPlusOutput(t *testing.T) {
	for _, api := range []string{llm.APIAnthropicMessages, llm.APIOpenAICompletions} {
		srv := llmfake.NewServer(api, llmfake.FlavorOpenAI)
		srv.SetWindow(llmfake.Window{Size: 1000})
		srv.Reply(llmfake.Text("fits"))
		_, err := llm.Complete(t.Context(), srv.Provider(), ask(srv, 500, 600))
		msg, err2 := llm.Complete(t.Context(), srv.Provider(), ask(srv, 500, 400))
		srv.Close()
		if !errors.Is(err, llm.ErrContextOverflow) || err2 != nil || msg.Text() != "fits" {
			t.Errorf("%s: %v; then %v %v", api, err, msg, err2)
		}
	}
}

// TestCannedOverflowNumbers: a reply scripted as an overflow reports the
// request's own size against a window just too small for it, so that a
// client sizing its next request from the numbers sees a consistent
// answer; with a window set, the window.
func TestCannedOverflowNumbers(t *testing.T) {
	srv := llmfake.NewServer(llm.APIOpenAICompletions, llmfake.FlavorLlamaCpp)
	defer srv.Close()
	for _, w := range []llmfake.Window{{}, {Size: 100000, Ratio: 2}} {
		srv.SetWindow(w)
		srv.Queue(llmfake.Overflow())
		_, err := llm.Complete(t.Context(), srv.Provider(), ask(srv, 300, 100))
		var e *llm.APIError
		if !errors.As(err, &e) || !errors.Is(err, llm.ErrContextOverflow) {
			t.Fatalf("err = %v", err)
		}
		prompt := w.PromptTokens(srv.LastRequest())
		if e.PromptTokens != prompt || e.ContextTokens != prompt-1 {
			t.Errorf("window %+v: sizes %d/%d for a prompt of %d", w, e.PromptTokens, e.ContextTokens, prompt)
		}
	}
}

// TestLlamaCppKeepAlive: llama.cpp's stream opens with ":" comment lines,
// which a client must skip.
func TestLlamaCppKeepAlive(t *testing.T) {
	srv := llmfake.NewServer(llm.APIOpenAICompletions, llmfake.FlavorLlamaCpp)
	defer srv.Close()
	srv.Reply(llmfake.Text("hi"))
	resp, err := http.Post(srv.URL()+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","stream":true,"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(string(body), ":\n\n:\n\ndata: ") {
		t.Errorf("stream starts %.40q", body)
	}
	srv.Reply(llmfake.Text("hi"))
	if msg, err := llm.Complete(t.Context(), srv.Provider(), ask(srv, 10, 0)); err != nil || msg.Text() != "hi" {
		t.Errorf("%v %v", msg, err)
	}
}

// TestScriptedLlamaCppSizes: a script file can give llama.cpp's error body
// its n_prompt_tokens and n_ctx, and a reply writes back what it read.
func TestScriptedLlamaCppSizes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(path, []byte(`{"replies": [{"status": 400, "errorType": "exceed_context_size_error",
		"errorMessage": "the prompt does not fit", "promptTokens": 20494, "contextTokens": 8192}]}`), 0o600)
	sc, err := llmfake.ReadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := json.Marshal(sc.Replies[0]); err != nil || !strings.Contains(string(b), `"promptTokens":20494,"contextTokens":8192`) {
		t.Errorf("%s, %v", b, err)
	}
	srv := llmfake.NewServer(llm.APIOpenAICompletions, llmfake.FlavorLlamaCpp)
	defer srv.Close()
	srv.Play(sc)
	_, err = llm.Complete(t.Context(), srv.Provider(), ask(srv, 10, 0))
	var e *llm.APIError
	if !errors.As(err, &e) || !errors.Is(err, llm.ErrContextOverflow) || e.PromptTokens != 20494 || e.ContextTokens != 8192 {
		t.Errorf("err = %v (%+v)", err, e)
	}
}

// TestOpenAICompletionWithoutStream: a Chat Completions request that does
// not ask for a stream gets one chat.completion object (what a script using
// the plain HTTP API reads); an error part gets an HTTP error instead.
func TestOpenAICompletionWithoutStream(t *testing.T) {
	srv := llmfake.NewServer(llm.APIOpenAICompletions, llmfake.FlavorVLLM)
	defer srv.Close()
	srv.Reply(llmfake.Thinking("plan", "sig"), llmfake.Text("Hello "), llmfake.Text("there"), llmfake.Usage(12, 3))
	srv.Reply(llmfake.ToolCall("c1", "read", `{ "path": "a.go" }`))
	srv.Reply(llmfake.Text("half"), llmfake.ErrorEvent("server_error", "the model crashed"))
	post := func(body string) (int, map[string]any) {
		t.Helper()
		resp, err := http.Post(srv.URL()+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatalf("%v: %s", err, data)
		}
		return resp.StatusCode, out
	}
	message := func(out map[string]any) (map[string]any, any) {
		choice := out["choices"].([]any)[0].(map[string]any)
		return choice["message"].(map[string]any), choice["finish_reason"]
	}

	code, out := post(`{"model":"m1","messages":[{"role":"user","content":"hi"}]}`)
	msg, finish := message(out)
	usage := out["usage"].(map[string]any)
	if code != 200 || out["object"] != "chat.completion" || out["model"] != "m1" || msg["content"] != "Hello there" || msg["reasoning_content"] != "plan" ||
		finish != "stop" || usage["prompt_tokens"] != 12.0 || usage["completion_tokens"] != 3.0 {
		t.Errorf("text answer %d: %v", code, out)
	}
	code, out = post(`{"model":"m1","stream":false,"messages":[{"role":"user","content":"read"}]}`)
	msg, finish = message(out)
	calls, _ := msg["tool_calls"].([]any)
	if code != 200 || msg["content"] != nil || finish != "tool_calls" || len(calls) != 1 ||
		calls[0].(map[string]any)["function"].(map[string]any)["arguments"] != `{"path":"a.go"}` {
		t.Errorf("tool call answer %d: %v", code, out)
	}
	code, out = post(`{"model":"m1","messages":[{"role":"user","content":"hi"}]}`)
	if code != 500 || out["message"] != "the model crashed" {
		t.Errorf("error answer %d: %v", code, out)
	}
	if len(srv.Requests()) != 3 || srv.LastRequest().LastUserText() != "hi" {
		t.Errorf("requests %d", len(srv.Requests()))
	}
}

// TestRequestConversation reads the transcript of a summary request, and
// nothing from another request.
func TestRequestConversation(t *testing.T) {
	srv := llmfake.NewServer(llm.APIAnthropicMessages, llmfake.FlavorOpenAI)
	defer srv.Close()
	for _, tc := range []struct {
		prompt, want string
		ok           bool
	}{
		{"<conversation>\n[User]: hi\n\n[Assistant]: yes\n</conversation>\n\nSummarize.", "[User]: hi\n\n[Assistant]: yes", true},
		{"<conversation>\n[User]: a </conversation> b\n</conversation>\n\n<previous-summary>\nx\n</previous-summary>\n\nUpdate.", "[User]: a </conversation> b", true},
		{"Summarize <conversation>\n[User]: hi\n</conversation>\n\n", "", false},
		{"<conversation>\n[User]: never closed", "", false},
	} {
		srv.Reply(llmfake.Text("ok"))
		if _, err := llm.Complete(context.Background(), srv.Provider(), &llm.Request{Model: srv.Model(),
			Messages: []llm.Message{&llm.UserMessage{Content: []llm.Content{llm.Text{Text: tc.prompt}}}}}); err != nil {
			t.Fatal(err)
		}
		if got, ok := srv.LastRequest().Conversation(); got != tc.want || ok != tc.ok {
			t.Errorf("%q: got %q, %v; want %q, %v", tc.prompt, got, ok, tc.want, tc.ok)
		}
	}
}
