package anthropic_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/anthropic"
	"github.com/prime-agent/prime/llm/internal/providertest"
	"github.com/prime-agent/prime/llm/llmtest"
)

func newServer(t *testing.T) *llmtest.Server {
	return providertest.Fixed(llmtest.NewAnthropic(t))
}

func request(srv *llmtest.Server, msgs ...llm.Message) *llm.Request {
	return providertest.Request(srv, "", "What is here?", msgs...)
}

// TestTranscripts replays SSE transcripts written from Anthropic's
// documented stream format and compares the finished message with the
// message entry a session stores.
func TestTranscripts(t *testing.T) {
	providertest.Transcripts(t, newServer, func(srv *llmtest.Server) *llm.Request { return request(srv) },
		"thinking_tool_use", "error_mid_stream", "max_tokens")
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
	providertest.CheckBody(t, r, "request.golden.json")
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
	got := providertest.Indent(t, final)
	golden.Check(t, "scripted.golden", got)
}

// TestErrors: Anthropic's own failures (the common ones are in llmtest's
// conformance suite).
func TestErrors(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		kind  error
	}{
		{"413 request too large", llmtest.HTTPError(413, "", "Request exceeds the maximum allowed number of bytes"), llm.ErrContextOverflow},
		{"overloaded", llmtest.HTTPError(529, "", "Overloaded"), llm.ErrOverloaded},
		{"error event mid-stream", llmtest.Stream(llmtest.Text("partial answer"), llmtest.ErrorEvent("overloaded_error", "Overloaded")), llm.ErrOverloaded},
		{"overflow event mid-stream", llmtest.Stream(llmtest.ErrorEvent("invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum")), llm.ErrContextOverflow},
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
