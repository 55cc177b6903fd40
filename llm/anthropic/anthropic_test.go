package anthropic_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/anthropic"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/llm/retry"
)

var fixedNow = func() time.Time { return time.UnixMilli(1767225600000) }

func indent(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := (*jsontext.Value)(&b).Indent(); err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func newServer(t *testing.T) *llmtest.Server {
	srv := llmtest.NewAnthropic(t)
	srv.SetNow(fixedNow)
	return srv
}

func request(srv *llmtest.Server, msgs ...llm.Message) *llm.Request {
	if len(msgs) == 0 {
		msgs = []llm.Message{&llm.UserMessage{Content: []llm.Content{llm.Text{Text: "What is here?"}}, Timestamp: 1}}
	}
	return &llm.Request{Model: srv.Model(), SystemPrompt: "You are a test.", Messages: msgs}
}

// TestTranscripts replays SSE transcripts written from Anthropic's
// documented stream format and compares the finished message with the
// message entry a session stores.
func TestTranscripts(t *testing.T) {
	for _, name := range []string{"thinking_tool_use", "error_mid_stream", "max_tokens"} {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", name+".sse"))
			if err != nil {
				t.Fatal(err)
			}
			srv := newServer(t)
			srv.Queue(llmtest.Reply{Raw: string(raw)})
			msg, err := llm.Complete(t.Context(), srv.Provider(), request(srv))
			if msg == nil {
				t.Fatalf("no message: %v", err)
			}
			var out bytes.Buffer
			out.Write(indent(t, msg))
			if err != nil {
				fmt.Fprintf(&out, "error: %v\n", err)
			}
			golden.Check(t, name+".golden", out.Bytes())
		})
	}
}

func TestThinkingBlocksKeepTheirSignatures(t *testing.T) {
	raw, _ := os.ReadFile("testdata/thinking_tool_use.sse")
	srv := newServer(t)
	srv.Queue(llmtest.Reply{Raw: string(raw)})
	msg, err := llm.Complete(t.Context(), srv.Provider(), request(srv))
	if err != nil {
		t.Fatal(err)
	}
	var sigs []string
	for _, c := range msg.Content {
		if th, ok := c.(llm.Thinking); ok {
			sigs = append(sigs, fmt.Sprintf("%v:%.8s", th.Redacted, th.Signature))
		}
	}
	want := []string{"false:EqQBCgIY", "true:EmwKAhgB", "false:ErUBCkYI"}
	if diff := cmp.Diff(want, sigs); diff != "" {
		t.Errorf("thinking signatures (-want +got):\n%s", diff)
	}
	if msg.StopReason != llm.StopReasonToolUse {
		t.Errorf("stop reason %q", msg.StopReason)
	}
	calls := msg.ToolCalls()
	if len(calls) != 1 || calls[0].Arguments.String() != `{"command":"ls -la","timeout":30}` {
		t.Errorf("tool calls %+v", calls)
	}
	// cost at 3/15/0.3/3.75 per million
	u := msg.Usage
	if u.Input != 472 || u.Output != 189 || u.CacheRead != 2048 || u.CacheWrite != 1024 || u.TotalTokens != 472+189+2048+1024 {
		t.Errorf("usage %+v", u)
	}
	wantCost := (472*3 + 189*15 + 2048*0.3 + 1024*3.75) / 1e6
	if d := u.Cost.Total - wantCost; d > 1e-12 || d < -1e-12 {
		t.Errorf("cost total %v, want %v", u.Cost.Total, wantCost)
	}
}

// conversation is a multi-turn history with everything Anthropic must get
// back: signed thinking blocks, redacted thinking, tool calls and results,
// images, and a turn from another model whose thinking must not be signed.
func conversation(model llm.Model) []llm.Message {
	args, _ := llm.NewArguments([]byte(`{"command":"ls -la"}`))
	return []llm.Message{
		&llm.UserMessage{Content: []llm.Content{
			llm.Text{Text: "What is in this picture and this directory?"},
			llm.Image{Data: "iVBORw0KGgo=", MIMEType: "image/png"},
		}, Timestamp: 1},
		&llm.AssistantMessage{
			API: model.API, Provider: model.Provider, Model: model.ID, StopReason: llm.StopReasonToolUse, Timestamp: 2,
			Content: []llm.Content{
				llm.Thinking{Thinking: "first thought", Signature: "SIG-ONE"},
				llm.Thinking{Thinking: "[Reasoning redacted]", Signature: "REDACTED-PAYLOAD==", Redacted: true},
				llm.Thinking{Thinking: "second thought", Signature: "SIG-TWO"},
				llm.Text{Text: "Listing."},
				llm.ToolCall{ID: "toolu_1", Name: "bash", Arguments: args},
			},
		},
		&llm.ToolResultMessage{ToolCallID: "toolu_1", ToolName: "bash", Content: []llm.Content{
			llm.Text{Text: "a.txt\nb.txt"}, llm.Image{Data: "R0lGOD", MIMEType: "image/gif"},
		}, Timestamp: 3},
		&llm.AssistantMessage{
			API: "openai-completions", Provider: "openai", Model: "gpt-test", StopReason: llm.StopReasonStop, Timestamp: 4,
			Content: []llm.Content{
				llm.Thinking{Thinking: "reasoning of another model", Signature: "reasoning_content"},
				llm.Text{Text: "Two files."},
			},
		},
		&llm.AssistantMessage{
			API: model.API, Provider: model.Provider, Model: model.ID, StopReason: llm.StopReasonError,
			ErrorMessage: "anthropic: 529 overloaded_error: Overloaded", Timestamp: 5,
			Content: []llm.Content{llm.Text{Text: "half an answ"}},
		},
		&llm.UserMessage{Content: []llm.Content{llm.Text{Text: "Thanks. Now run it again."}}, Timestamp: 6},
	}
}

// TestRequestBody checks the wire form of a whole conversation against a
// golden request: signatures and the redacted payload go back verbatim,
// thinking from another model goes as text, the failed turn is dropped,
// and the cache marks sit on the system prompt and the last user message.
func TestRequestBody(t *testing.T) {
	srv := newServer(t)
	srv.Reply(llmtest.Text("ok"))
	req := request(srv, conversation(srv.Model())...)
	req.Tools = []llm.Tool{{Name: "bash", Description: "Run a command.", Parameters: jsontext.Value(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)}}
	if _, err := llm.Complete(t.Context(), srv.Provider(), req); err != nil {
		t.Fatal(err)
	}
	r := srv.LastRequest()
	body := jsontext.Value(bytes.Clone(r.Body))
	if err := body.Indent(); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "request.golden.json", append(body, '\n'))
	if got := r.Header.Get("x-api-key"); got != llmtest.Key {
		t.Errorf("x-api-key = %q", got)
	}
	if got := r.Header.Get("anthropic-version"); got != anthropic.APIVersion {
		t.Errorf("anthropic-version = %q", got)
	}
}

func TestThinkingConfig(t *testing.T) {
	tests := []struct {
		name      string
		style     string
		level     llm.ThinkingLevel
		xhigh     bool
		maxTokens int
		want      string
	}{
		{"budget medium", llm.ThinkingBudgeted, llm.ThinkingMedium, false, 0, `{"max_tokens":32000,"thinking":{"type":"enabled","budget_tokens":8192}}`},
		{"budget with small cap grows max_tokens", "", llm.ThinkingHigh, false, 2000, `{"max_tokens":18384,"thinking":{"type":"enabled","budget_tokens":16384}}`},
		{"budget off", llm.ThinkingBudgeted, llm.ThinkingOff, false, 0, `{"max_tokens":32000}`},
		{"adaptive high", llm.ThinkingAdaptive, llm.ThinkingHigh, false, 0, `{"max_tokens":32000,"thinking":{"type":"adaptive"},"output_config":{"effort":"high"}}`},
		{"adaptive minimal", llm.ThinkingAdaptive, llm.ThinkingMinimal, false, 0, `{"max_tokens":32000,"thinking":{"type":"adaptive"},"output_config":{"effort":"low"}}`},
		{"adaptive xhigh with max", llm.ThinkingAdaptive, llm.ThinkingXHigh, true, 0, `{"max_tokens":32000,"thinking":{"type":"adaptive"},"output_config":{"effort":"max"}}`},
		{"adaptive xhigh without max", llm.ThinkingAdaptive, llm.ThinkingXHigh, false, 0, `{"max_tokens":32000,"thinking":{"type":"adaptive"},"output_config":{"effort":"high"}}`},
		{"adaptive off disables", llm.ThinkingAdaptive, llm.ThinkingOff, false, 0, `{"max_tokens":32000,"thinking":{"type":"disabled"}}`},
		{"always-on off sends nothing", llm.ThinkingAlwaysOn, llm.ThinkingOff, false, 0, `{"max_tokens":32000}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			srv.Reply(llmtest.Text("ok"))
			req := request(srv)
			req.Model.ThinkingStyle = tt.style
			req.Model.SupportsXHigh = tt.xhigh
			req.Reasoning = tt.level
			req.MaxTokens = tt.maxTokens
			temp := 0.5
			req.Temperature = &temp
			if _, err := llm.Complete(t.Context(), srv.Provider(), req); err != nil {
				t.Fatal(err)
			}
			var got struct {
				MaxTokens    int            `json:"max_tokens"`
				Thinking     jsontext.Value `json:"thinking,omitzero"`
				OutputConfig jsontext.Value `json:"output_config,omitzero"`
				Temperature  *float64       `json:"temperature,omitzero"`
			}
			if err := srv.LastRequest().Decode(&got); err != nil {
				t.Fatal(err)
			}
			thinks := len(got.Thinking) > 0 && !strings.Contains(string(got.Thinking), "disabled")
			if thinks == (got.Temperature != nil) {
				t.Errorf("temperature %v with thinking %s: want temperature only without thinking", got.Temperature, got.Thinking)
			}
			got.Temperature = nil
			b, _ := json.Marshal(got)
			if string(b) != tt.want {
				t.Errorf("got  %s\nwant %s", b, tt.want)
			}
		})
	}
}

func TestScriptedStream(t *testing.T) {
	srv := newServer(t)
	srv.Reply(
		llmtest.Thinking("plan one", "sig-1"),
		llmtest.Thinking("plan two", "sig-2"),
		llmtest.Text("Reading both files."),
		llmtest.ToolCall("toolu_a", "read", `{"path":"a.go"}`),
		llmtest.ToolCall("toolu_b", "read", `{"path":"b.go"}`),
		llmtest.CacheUsage(100, 50, 1000, 200),
	)
	var types []string
	var final *llm.AssistantMessage
	for ev := range srv.Provider().Stream(t.Context(), request(srv)) {
		types = append(types, ev.Type.String())
		if ev.Type == llm.EventDone {
			final = ev.Message
		}
	}
	if final == nil {
		t.Fatalf("no done event: %v", types)
	}
	if types[0] != "start" || types[len(types)-1] != "done" {
		t.Errorf("event order %v", types)
	}
	got := indent(t, final)
	golden.Check(t, "scripted.golden", got)
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		kind  error
	}{
		{"overflow", llmtest.Overflow(), llm.ErrContextOverflow},
		{"413 request too large", llmtest.HTTPError(413, "", "Request exceeds the maximum allowed number of bytes"), llm.ErrContextOverflow},
		{"auth", llmtest.HTTPError(401, "", "invalid x-api-key"), llm.ErrAuth},
		{"rate limit", llmtest.Reply{Status: 429, ErrorMessage: "Number of requests has exceeded your rate limit", RetryAfter: 7 * time.Second}, llm.ErrRateLimited},
		{"overloaded", llmtest.HTTPError(529, "", "Overloaded"), llm.ErrOverloaded},
		{"server", llmtest.HTTPError(500, "", "Internal server error"), llm.ErrServer},
		{"bad request", llmtest.HTTPError(400, "", "messages: roles must alternate"), llm.ErrRequest},
		{"error event mid-stream", llmtest.Stream(llmtest.Text("partial answer"), llmtest.ErrorEvent("overloaded_error", "Overloaded")), llm.ErrOverloaded},
		{"overflow event mid-stream", llmtest.Stream(llmtest.ErrorEvent("invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum")), llm.ErrContextOverflow},
		{"disconnect mid-stream", llmtest.Stream(llmtest.Text("partial answer"), llmtest.Disconnect()), llm.ErrConnection},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			srv.Queue(tt.reply)
			msg, err := llm.Complete(t.Context(), srv.Provider(), request(srv))
			if !errors.Is(err, tt.kind) {
				t.Fatalf("err = %v, want %v", err, tt.kind)
			}
			if msg.StopReason != llm.StopReasonError || msg.ErrorMessage == "" {
				t.Errorf("message stop %q error %q", msg.StopReason, msg.ErrorMessage)
			}
			overflow := llm.IsContextOverflow(msg, srv.Model().ContextWindow)
			if overflow != (tt.kind == llm.ErrContextOverflow) {
				t.Errorf("IsContextOverflow = %v for %q", overflow, msg.ErrorMessage)
			}
			if tt.reply.RetryAfter > 0 && llm.RetryAfterOf(err) != tt.reply.RetryAfter {
				t.Errorf("retry after %v, want %v", llm.RetryAfterOf(err), tt.reply.RetryAfter)
			}
			if len(tt.reply.Parts) > 0 && msg.Text() != "partial answer" && tt.kind != llm.ErrContextOverflow {
				t.Errorf("partial content lost: %q", msg.Text())
			}
		})
	}
}

func TestRetries(t *testing.T) {
	srv := newServer(t)
	srv.Queue(llmtest.HTTPError(529, "", "Overloaded"), llmtest.HTTPError(500, "", "oops"))
	srv.Reply(llmtest.Text("finally"))
	var notices []string
	policy := &retry.Policy{MaxRetries: 3, BaseDelay: time.Millisecond, MaxDelay: time.Second,
		OnRetry: func(n int, d time.Duration, err error) { notices = append(notices, err.Error()) }}
	msg, err := llm.Complete(t.Context(), srv.ProviderWith(policy), request(srv))
	if err != nil {
		t.Fatal(err)
	}
	if msg.Text() != "finally" || len(srv.Requests()) != 3 || len(notices) != 2 {
		t.Errorf("text %q after %d requests, notices %q", msg.Text(), len(srv.Requests()), notices)
	}

	// An overflow is never retried.
	srv.Overflow()
	srv.Reply(llmtest.Text("must not be reached"))
	_, err = llm.Complete(t.Context(), srv.ProviderWith(policy), request(srv))
	if !errors.Is(err, llm.ErrContextOverflow) || len(srv.Requests()) != 4 {
		t.Errorf("err %v after %d requests", err, len(srv.Requests()))
	}
}

// TestCancelMidStream cancels while the stream is running: the turn ends
// as aborted (not an error), keeps what arrived, and no goroutine outlives
// it.
func TestCancelMidStream(t *testing.T) {
	srv := newServer(t)
	check := llmtest.CheckGoroutines(t)
	srv.Queue(llmtest.Reply{Parts: []llmtest.Part{llmtest.Text(strings.Repeat("word ", 200))}, Delay: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var last llm.Event
	deltas := 0
	for ev := range srv.Provider().Stream(ctx, request(srv)) {
		if ev.Type == llm.EventTextDelta {
			if deltas++; deltas == 2 {
				cancel()
			}
		}
		last = ev
	}
	if last.Type != llm.EventError || last.Message.StopReason != llm.StopReasonAborted {
		t.Fatalf("last event %v with stop reason %q", last.Type, last.Message.StopReason)
	}
	if !errors.Is(last.Err, context.Canceled) || errors.Is(last.Err, llm.ErrConnection) || !llm.IsAborted(last.Err) {
		t.Errorf("err = %v, want a clean cancellation", last.Err)
	}
	if !strings.HasPrefix(last.Message.Text(), "word word") {
		t.Errorf("partial text lost: %q", last.Message.Text())
	}
	srv.Client().CloseIdleConnections()
	check()
}

// TestConsumerStopsEarly stops ranging over the stream: the request is
// cancelled and nothing is left running.
func TestConsumerStopsEarly(t *testing.T) {
	srv := newServer(t)
	check := llmtest.CheckGoroutines(t)
	srv.Queue(llmtest.Reply{Parts: []llmtest.Part{llmtest.Text(strings.Repeat("word ", 200))}, Delay: 10 * time.Millisecond})
	n := 0
	for range srv.Provider().Stream(t.Context(), request(srv)) {
		if n++; n == 3 {
			break
		}
	}
	srv.Client().CloseIdleConnections()
	check()
}

func TestCancelledBeforeRequest(t *testing.T) {
	srv := newServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	msg, err := llm.Complete(ctx, srv.Provider(), request(srv))
	if !errors.Is(err, context.Canceled) || msg.StopReason != llm.StopReasonAborted {
		t.Fatalf("err %v, stop %q", err, msg.StopReason)
	}
	if len(srv.Requests()) != 0 {
		t.Errorf("%d requests sent", len(srv.Requests()))
	}
}

// TestHugeToolArgument streams a 10 MB tool argument through the SSE
// reader and the accumulator.
func TestHugeToolArgument(t *testing.T) {
	srv := newServer(t)
	content := strings.Repeat("0123456789abcdef", 10<<20/16)
	args, _ := json.Marshal(map[string]string{"path": "big.txt", "content": content})
	srv.Reply(llmtest.ToolCall("toolu_big", "write", string(args)))
	msg, err := llm.Complete(t.Context(), srv.Provider(), request(srv))
	if err != nil {
		t.Fatal(err)
	}
	got, ok := msg.ToolCalls()[0].Arguments.StringArg("content")
	if !ok || got != content {
		t.Fatalf("content of %d bytes, want %d", len(got), len(content))
	}
}

// TestKeyNeverLeaks checks that the API key reaches the wire and nowhere
// else: not the message, not errors, not the provider's printed forms.
func TestKeyNeverLeaks(t *testing.T) {
	srv := newServer(t)
	srv.Fail(http.StatusUnauthorized, "invalid x-api-key")
	p := srv.Provider()
	msg, err := llm.Complete(context.Background(), p, request(srv))
	stored, _ := json.Marshal(msg)
	cfg := anthropic.Config{APIKey: llmtest.Key}
	for _, s := range []string{string(stored), err.Error(), fmt.Sprintf("%v %+v %#v %s", p, p, p, p),
		fmt.Sprintf("%v %+v %#v", cfg, cfg, cfg)} {
		if strings.Contains(s, llmtest.Key) {
			t.Errorf("key leaked into %q", s)
		}
	}
	if srv.LastRequest().Header.Get("x-api-key") != llmtest.Key {
		t.Error("the key was not sent")
	}
}
