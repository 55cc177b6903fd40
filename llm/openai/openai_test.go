package openai_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/internal/providertest"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/llm/openai"
	"github.com/prime-agent/prime/llm/retry"
)

func newServer(t *testing.T, f ...llmtest.Flavor) *llmtest.Server {
	return providertest.Fixed(llmtest.NewOpenAI(t, f...))
}

func request(srv *llmtest.Server, msgs ...llm.Message) *llm.Request {
	return providertest.Request(srv, "", "Read a.go and b.go.", msgs...)
}

// TestTranscripts replays recorded streams of OpenAI and compatible servers
// and compares the finished message with the message entry a session
// stores.
func TestTranscripts(t *testing.T) {
	providertest.Transcripts(t, func(t *testing.T) *llmtest.Server { return newServer(t) }, func(srv *llmtest.Server) *llm.Request { return request(srv) })
}

// TestToolCallAccumulation checks the quirks one by one on the recorded
// streams: two parallel calls without index, calls reusing index 0, an id
// arriving after the first delta.
func TestToolCallAccumulation(t *testing.T) {
	tests := []struct {
		file string
		want []string
		stop llm.StopReason
	}{
		{"openai_parallel_tools", []string{`call_abc read {"path":"a.go"}`, `call_def read {"path":"b.go"}`}, llm.StopReasonToolUse},
		{"ollama_no_index", []string{`call_k2p9 read {"path":"a.go"}`, `call_x7q1 read {"path":"b.go"}`}, llm.StopReasonToolUse},
		{"index_zero_parallel", []string{`call_1 grep {"pattern":"TODO"}`, `call_2 ls {"path":"src"}`}, llm.StopReasonToolUse},
		{"id_after_first_delta", []string{`call_late bash {"command":"make"}`}, llm.StopReasonToolUse},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			raw, _ := os.ReadFile("testdata/" + tt.file + ".sse")
			srv := newServer(t)
			srv.Queue(llmtest.Reply{Raw: string(raw)})
			msg, err := llm.Complete(t.Context(), srv.Provider(), request(srv))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range msg.ToolCalls() {
				got = append(got, c.ID+" "+c.Name+" "+c.Arguments.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if msg.StopReason != tt.stop {
				t.Errorf("stop %q", msg.StopReason)
			}
		})
	}
}

func TestUsageOnlyInLastChunk(t *testing.T) {
	raw, _ := os.ReadFile("testdata/openai_parallel_tools.sse")
	srv := newServer(t)
	srv.Queue(llmtest.Reply{Raw: string(raw)})
	msg, err := llm.Complete(t.Context(), srv.Provider(), request(srv))
	if err != nil {
		t.Fatal(err)
	}
	// prompt_tokens 1500 of which 1024 cached; completion 48.
	u := msg.Usage
	if u.Input != 476 || u.CacheRead != 1024 || u.Output != 48 || u.TotalTokens != 1548 {
		t.Errorf("usage %+v", u)
	}
	want := (476*3 + 48*15 + 1024*0.3) / 1e6
	if d := u.Cost.Total - want; d > 1e-12 || d < -1e-12 {
		t.Errorf("cost %v, want %v", u.Cost.Total, want)
	}
}

// TestFlavors streams the same scripted answer in the manner of each
// server flavour: the messages must all come out the same.
func TestFlavors(t *testing.T) {
	parts := []llmtest.Part{
		llmtest.Thinking("Two files; read both.", ""),
		llmtest.Text("Reading a.go and b.go."),
		llmtest.ToolCall("call_a", "read", `{"path":"a.go"}`),
		llmtest.ToolCall("call_b", "read", `{"path":"b.go"}`),
		llmtest.CacheUsage(200, 40, 100, 0),
	}
	var first []byte
	for _, f := range []llmtest.Flavor{llmtest.FlavorOpenAI, llmtest.FlavorOllama, llmtest.FlavorVLLM,
		llmtest.FlavorLlamaCpp, llmtest.FlavorLMStudio, llmtest.FlavorOpenRouter, llmtest.FlavorIndexZero} {
		t.Run(f.String(), func(t *testing.T) {
			srv := newServer(t, f)
			srv.Reply(parts...)
			req := request(srv)
			req.Model.Provider = "compat" // same name for every flavour, so the messages compare
			msg, err := llm.Complete(t.Context(), srv.Provider(), req)
			if err != nil {
				t.Fatal(err)
			}
			// The reasoning field differs by server; it is the signature.
			th := msg.Content[0].(llm.Thinking)
			if th.Signature != "reasoning" && th.Signature != "reasoning_content" {
				t.Errorf("thinking signature %q", th.Signature)
			}
			msg.Content[0] = llm.Thinking{Thinking: th.Thinking}
			got := providertest.Indent(t, msg)
			if first == nil {
				first = got
				golden.Check(t, "flavors.golden", got)
				return
			}
			if diff := cmp.Diff(string(first), string(got)); diff != "" {
				t.Errorf("%s differs from openai (-openai +%s):\n%s", f, f, diff)
			}
		})
	}
}

func TestOverflowWording(t *testing.T) {
	for _, f := range []llmtest.Flavor{llmtest.FlavorOpenAI, llmtest.FlavorOllama, llmtest.FlavorVLLM,
		llmtest.FlavorLlamaCpp, llmtest.FlavorLMStudio, llmtest.FlavorOpenRouter} {
		t.Run(f.String(), func(t *testing.T) {
			srv := newServer(t, f)
			srv.Overflow()
			msg, err := llm.Complete(t.Context(), srv.Provider(), request(srv))
			if !errors.Is(err, llm.ErrContextOverflow) {
				t.Fatalf("err = %v", err)
			}
			if !llm.IsContextOverflow(msg, 0) {
				t.Errorf("stored message %q not recognised as overflow", msg.ErrorMessage)
			}
		})
	}
}

// TestErrors: failures in OpenAI's words (the common ones are in llmtest's
// conformance suite).
func TestErrors(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		kind  error
	}{
		{"server", llmtest.HTTPError(503, "", "The engine is currently overloaded"), llm.ErrOverloaded},
		{"bad gateway", llmtest.HTTPError(502, "", "bad gateway"), llm.ErrServer},
		{"error chunk mid-stream", llmtest.Stream(llmtest.Text("Partial "), llmtest.ErrorEvent("server_error", "The server had an error")), llm.ErrServer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			srv.Queue(tt.reply)
			msg, err := llm.Complete(t.Context(), srv.Provider(), request(srv))
			if !errors.Is(err, tt.kind) {
				t.Fatalf("err = %v, want %v", err, tt.kind)
			}
			if msg.StopReason != llm.StopReasonError {
				t.Errorf("stop %q", msg.StopReason)
			}
			if tt.reply.RetryAfter > 0 && llm.RetryAfterOf(err) != tt.reply.RetryAfter {
				t.Errorf("retry after %v", llm.RetryAfterOf(err))
			}
			if len(tt.reply.Parts) > 0 && msg.Text() != "Partial " {
				t.Errorf("partial text lost: %q", msg.Text())
			}
		})
	}
}

func TestRequestBody(t *testing.T) {
	srv := newServer(t)
	srv.Reply(llmtest.Text("ok"))
	m := srv.Model()
	args, _ := llm.NewArguments([]byte(`{"path":"a.go"}`))
	msgs := []llm.Message{
		&llm.UserMessage{Content: []llm.Content{llm.Text{Text: "Look:"}, llm.Image{Data: "iVBORw0KGgo=", MIMEType: "image/png"}}, Timestamp: 1},
		&llm.AssistantMessage{API: m.API, Provider: m.Provider, Model: m.ID, StopReason: llm.StopReasonToolUse, Timestamp: 2,
			Content: []llm.Content{
				llm.Thinking{Thinking: "I should read it.", Signature: "reasoning_content"},
				llm.Text{Text: "Reading."},
				llm.ToolCall{ID: "call_1", Name: "read", Arguments: args},
				llm.ToolCall{ID: "call_2", Name: "read", Arguments: args},
			}},
		&llm.ToolResultMessage{ToolCallID: "call_1", ToolName: "read", Content: []llm.Content{
			llm.Text{Text: "package a"}, llm.Image{Data: "R0lGOD", MIMEType: "image/gif"}}, Timestamp: 3},
		&llm.UserMessage{Content: []llm.Content{llm.Text{Text: "And now?"}}, Timestamp: 4},
	}
	req := request(srv, msgs...)
	req.Tools = []llm.Tool{{Name: "read", Description: "Read a file.", Parameters: jsontext.Value(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	req.Reasoning = llm.ThinkingHigh
	req.MaxTokens = 1000
	if _, err := llm.Complete(t.Context(), srv.Provider(), req); err != nil {
		t.Fatal(err)
	}
	r := srv.LastRequest()
	providertest.CheckBody(t, r, "request.golden.json")
	if got := r.Header.Get("Authorization"); got != "Bearer "+llmtest.Key {
		t.Errorf("Authorization = %q", got)
	}
}

// TestCompatFields checks the per-server request fields chosen by the
// model's compat block.
func TestCompatFields(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name   string
		compat *llm.OpenAICompat
		want   string
	}{
		{"defaults for a compatible server", nil, `{"stream_options":{"include_usage":true},"max_tokens":1000,"reasoning_effort":"high"}`},
		{"openai-style", &llm.OpenAICompat{MaxTokensField: "max_completion_tokens", SupportsStore: &yes, SupportsDeveloperRole: &yes},
			`{"stream_options":{"include_usage":true},"store":false,"max_completion_tokens":1000,"reasoning_effort":"high","role":"developer"}`},
		{"no usage in streaming, no effort", &llm.OpenAICompat{SupportsUsageInStreaming: &no, SupportsReasoningEffort: &no}, `{"max_tokens":1000}`},
		{"qwen thinking", &llm.OpenAICompat{ThinkingFormat: "qwen"}, `{"stream_options":{"include_usage":true},"max_tokens":1000,"enable_thinking":true}`},
		{"zai thinking", &llm.OpenAICompat{ThinkingFormat: "zai"}, `{"stream_options":{"include_usage":true},"max_tokens":1000,"thinking":{"type":"enabled"}}`},
		{"openrouter routing", &llm.OpenAICompat{OpenRouterRouting: jsontext.Value(`{"only":["anthropic"]}`)},
			`{"stream_options":{"include_usage":true},"max_tokens":1000,"reasoning_effort":"high","provider":{"only":["anthropic"]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			srv.Reply(llmtest.Text("ok"))
			req := request(srv)
			req.Model.Compat = tt.compat
			req.Reasoning = llm.ThinkingHigh
			req.MaxTokens = 1000
			if _, err := llm.Complete(t.Context(), srv.Provider(), req); err != nil {
				t.Fatal(err)
			}
			var got struct {
				StreamOptions       jsontext.Value `json:"stream_options,omitzero"`
				Store               *bool          `json:"store,omitzero"`
				MaxCompletionTokens int            `json:"max_completion_tokens,omitzero"`
				MaxTokens           int            `json:"max_tokens,omitzero"`
				ReasoningEffort     string         `json:"reasoning_effort,omitzero"`
				EnableThinking      *bool          `json:"enable_thinking,omitzero"`
				Thinking            jsontext.Value `json:"thinking,omitzero"`
				Provider            jsontext.Value `json:"provider,omitzero"`
				Role                string         `json:"role,omitzero"`
			}
			r := srv.LastRequest()
			if err := r.Decode(&got); err != nil {
				t.Fatal(err)
			}
			if role := r.Messages()[0]["role"]; role == "developer" {
				got.Role = "developer"
			}
			b, _ := json.Marshal(got)
			if string(b) != tt.want {
				t.Errorf("got  %s\nwant %s", b, tt.want)
			}
		})
	}
}

func TestHugeToolArgument(t *testing.T) {
	for _, f := range []llmtest.Flavor{llmtest.FlavorOllama} { // OpenAI's own is in the conformance suite
		t.Run(f.String(), func(t *testing.T) {
			srv := newServer(t, f)
			content := strings.Repeat("0123456789abcdef", 10<<20/16)
			args, _ := json.Marshal(map[string]string{"content": content, "path": "big.txt"})
			srv.Reply(llmtest.ToolCall("call_big", "write", string(args)))
			req := request(srv)
			req.MaxTokens = 1 << 20 // within the reply limit: a model allowed a million output tokens
			msg, err := llm.Complete(t.Context(), srv.Provider(), req)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := msg.ToolCalls()[0].Arguments.StringArg("content")
			if !ok || got != content {
				t.Fatalf("content of %d bytes, want %d", len(got), len(content))
			}
		})
	}
}

// TestIdleServer: a server that answers and then goes silent fails the turn
// as a broken connection once the idle timeout passes (not as an abort:
// nobody cancelled), and no goroutine is left; a slow server that keeps
// talking is not cut off.
func TestIdleServer(t *testing.T) {
	srv := newServer(t)
	provider := func(idle time.Duration) llm.Provider {
		return openai.New(openai.Config{APIKey: llmtest.Key, HTTPOptions: llm.HTTPOptions{HTTPClient: srv.Client(), Retry: &retry.Policy{}, IdleTimeout: idle}})
	}

	// Silent: the response headers, then nothing for far longer than the limit.
	srv.Queue(llmtest.Reply{Parts: []llmtest.Part{llmtest.Text("partial "), llmtest.Text("never sent")}, Delay: time.Hour})
	check := llmtest.CheckGoroutines(t)
	msg, err := llm.Complete(t.Context(), provider(200*time.Millisecond), request(srv))
	if !errors.Is(err, llm.ErrConnection) || llm.IsAborted(err) || !strings.Contains(err.Error(), "sent nothing for 200ms") {
		t.Fatalf("err = %v, want a connection error naming the silence", err)
	}
	if msg.StopReason != llm.StopReasonError {
		t.Errorf("stop reason %q, want error", msg.StopReason)
	}
	srv.Client().CloseIdleConnections()
	check()

	// Slow but alive: an event every 20 ms under a limit generous enough that
	// a loaded machine does not stretch a gap past it (a one-second limit
	// could be; llm/internal/stream tests the bounds exactly, on a fake clock).
	srv.Queue(llmtest.Reply{Parts: []llmtest.Part{llmtest.Text("a "), llmtest.Text("b "), llmtest.Text("c")}, Delay: 20 * time.Millisecond})
	msg, err = llm.Complete(t.Context(), provider(10*time.Second), request(srv))
	if err != nil || msg.Text() != "a b c" {
		t.Fatalf("slow stream: %q, %v", msg.Text(), err)
	}
}
