package responses_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/internal/providertest"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/llm/responses"
	"github.com/prime-agent/prime/llm/retry"
)

func newServer(t *testing.T) *llmtest.Server {
	return providertest.Fixed(llmtest.NewResponses(t))
}

func request(srv *llmtest.Server, msgs ...llm.Message) *llm.Request {
	return providertest.Request(srv, llm.ThinkingMedium, "What is here?", msgs...)
}

// TestTranscripts replays streams written from the Responses API's
// documented events (API reference, "Streaming events"): reasoning with
// two summary parts and encrypted content, text, a function call and
// usage with cached and reasoning tokens; a response cut by
// max_output_tokens; one withheld by the content filter; a failed
// response; an overflow as an error event and as a failed response. Each
// ends as the message a session stores.
func TestTranscripts(t *testing.T) {
	providertest.Transcripts(t, newServer, func(srv *llmtest.Server) *llm.Request { return request(srv) })
}

// TestStopReasons: completed is stop (toolUse with calls), the output limit
// is length, a content filter and a failure are errors, and an overflow
// event is an overflow.
func TestStopReasons(t *testing.T) {
	for name, want := range map[string]string{
		"reasoning_tool_call": "toolUse", "incomplete_max_output": "length", "incomplete_content_filter": "error",
		"failed": "error", "error_overflow": "error", "failed_overflow": "error",
	} {
		raw, _ := os.ReadFile(filepath.Join("testdata", name+".sse"))
		srv := newServer(t)
		srv.Queue(llmtest.Reply{Raw: string(raw)})
		msg, err := llm.Complete(t.Context(), srv.Provider(), request(srv))
		if string(msg.StopReason) != want {
			t.Errorf("%s: stop %q, want %s (%v)", name, msg.StopReason, want, err)
		}
		if strings.HasSuffix(name, "_overflow") && (!errors.Is(err, llm.ErrContextOverflow) || !llm.IsContextOverflow(msg, 200000)) {
			t.Errorf("overflow event: %v", err)
		}
		if name == "incomplete_max_output" && (msg.Usage.Output != 64 || llm.LengthStopOverflow(msg, 64, 0)) {
			t.Errorf("cut answer: usage %+v", msg.Usage)
		}
	}
}

// TestUsage: input_tokens include the cached ones, which are reported apart;
// reasoning tokens are part of the output.
func TestUsage(t *testing.T) {
	raw, _ := os.ReadFile("testdata/reasoning_tool_call.sse")
	srv := newServer(t)
	srv.Queue(llmtest.Reply{Raw: string(raw)})
	msg, err := llm.Complete(t.Context(), srv.Provider(), request(srv))
	if err != nil {
		t.Fatal(err)
	}
	u := msg.Usage
	if u.Input != 2301-1792 || u.CacheRead != 1792 || u.Output != 318 || u.TotalTokens != 2619 {
		t.Errorf("usage %+v", u)
	}
	if want := (509*3 + 318*15 + 1792*0.3) / 1e6; u.Cost.Total-want > 1e-12 || want-u.Cost.Total > 1e-12 {
		t.Errorf("cost %v, want %v", u.Cost.Total, want)
	}
}

// TestReasoningGoesBack is the stateless round trip: a streamed turn is
// stored, and the next request sends its reasoning item verbatim
// (encrypted content included), its message under its id and its call with
// both ids; the result goes with the call id.
func TestReasoningGoesBack(t *testing.T) {
	raw, _ := os.ReadFile("testdata/reasoning_tool_call.sse")
	srv := newServer(t)
	srv.Queue(llmtest.Reply{Raw: string(raw)})
	first, err := llm.Complete(t.Context(), srv.Provider(), request(srv))
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := json.Marshal(first)
	back, err := llm.DecodeMessage(stored)
	if err != nil {
		t.Fatal(err)
	}
	call := first.ToolCalls()[0]
	result := &llm.ToolResultMessage{ToolCallID: call.ID, ToolName: call.Name, Content: []llm.Content{llm.Text{Text: "a.txt"}}, Timestamp: 3}
	srv.Reply(llmtest.Text("Two files."))
	if _, err := llm.Complete(t.Context(), srv.Provider(), request(srv, providertest.User("What is here?", 1), back, result)); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Input   []jsontext.Value `json:"input"`
		Include []string         `json:"include"`
		Store   *bool            `json:"store"`
	}
	if err := srv.LastRequest().Decode(&body); err != nil {
		t.Fatal(err)
	}
	if len(body.Input) != 6 || body.Store == nil || *body.Store || fmt.Sprint(body.Include) != "[reasoning.encrypted_content]" {
		t.Fatalf("body: %d items, store %v, include %v", len(body.Input), body.Store, body.Include)
	}
	reasoning := first.Content[0].(llm.Thinking).Signature
	if got := string(body.Input[2]); got != reasoning || !strings.Contains(got, `"encrypted_content":"gAAAAABor0Ax`) {
		t.Errorf("reasoning item sent as\n%s\nwant\n%s", got, reasoning)
	}
	for i, want := range []string{
		`"id":"msg_68af4033f8b08193b1c8ad3f4d2d7a9c05438e46b5f69a3b"`,
		`"id":"fc_68af4034a1f08193a0c2d3b3c1d0e66905438e46b5f69a3b","call_id":"call_RDHo7QbBv4wBGJhE0yDHMbPc"`,
		`{"type":"function_call_output","call_id":"call_RDHo7QbBv4wBGJhE0yDHMbPc","output":"a.txt"}`,
	} {
		if !strings.Contains(string(body.Input[3+i]), want) {
			t.Errorf("item %d: %s\nwant it to hold %s", 3+i, body.Input[3+i], want)
		}
	}
}

// conversation has everything a request must carry: this model's own
// turn (reasoning item, message id, call ids), a tool result with an
// image, a turn of another provider's (its thinking dropped, its ids
// made acceptable), a failed turn (dropped), and the latest prompt.
func conversation(model llm.Model) []llm.Message {
	args, _ := llm.NewArguments([]byte(`{"command":"ls"}`))
	args2, _ := llm.NewArguments([]byte(`{"path":"a.txt"}`))
	item := `{"id":"rs_1","type":"reasoning","encrypted_content":"ENC==","summary":[{"type":"summary_text","text":"plan"}]}`
	return []llm.Message{
		&llm.UserMessage{Content: []llm.Content{llm.Text{Text: "Look at this."}, llm.Image{Data: "iVBORw0KGgo=", MIMEType: "image/png"}}, Timestamp: 1},
		&llm.AssistantMessage{API: model.API, Provider: model.Provider, Model: model.ID, StopReason: llm.StopReasonToolUse, Timestamp: 2,
			Content: []llm.Content{
				llm.Thinking{Thinking: "plan", Signature: item},
				llm.Text{Text: "Listing.", Signature: `{"v":1,"id":"msg_1","phase":"commentary"}`},
				llm.ToolCall{ID: "call_1|fc_1", Name: "bash", Arguments: args},
			}},
		&llm.ToolResultMessage{ToolCallID: "call_1|fc_1", ToolName: "bash", Content: []llm.Content{
			llm.Text{Text: "a.txt"}, llm.Image{Data: "R0lGOD", MIMEType: "image/gif"}}, Timestamp: 3},
		&llm.AssistantMessage{API: llm.APIAnthropicMessages, Provider: "anthropic", Model: "claude-test", StopReason: llm.StopReasonToolUse, Timestamp: 4,
			Content: []llm.Content{
				llm.Thinking{Thinking: "another model's thought", Signature: "EqQB"},
				llm.Text{Text: "Reading it."},
				llm.ToolCall{ID: "toolu_01.x", Name: "read", Arguments: args2},
			}},
		&llm.ToolResultMessage{ToolCallID: "toolu_01.x", ToolName: "read", Content: []llm.Content{llm.Text{Text: "hello"}}, IsError: true, Timestamp: 5},
		&llm.AssistantMessage{API: model.API, Provider: model.Provider, Model: model.ID, StopReason: llm.StopReasonError,
			ErrorMessage: "openai: 500 server_error", Timestamp: 6, Content: []llm.Content{llm.Text{Text: "half"}}},
		providertest.User("Thanks. Again?", 7),
	}
}

// TestRequestBody checks a whole conversation's wire form against a
// golden request (API reference, "Create a model response": input items,
// function tools, reasoning, include, store, max_output_tokens,
// prompt_cache_key; "strict" on the tools of a model that takes it).
func TestRequestBody(t *testing.T) {
	srv := newServer(t)
	srv.Reply(llmtest.Text("ok"))
	req := request(srv, conversation(srv.Model())...)
	req.Tools = []llm.Tool{{Name: "bash", Description: "Run a command.", Parameters: jsontext.Value(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)}}
	req.SessionID = "0195f2c7-session"
	strict := true
	req.Model.Compat = &llm.OpenAICompat{SupportsStrictMode: &strict} // as OpenAI's own models
	if _, err := llm.Complete(t.Context(), srv.Provider(), req); err != nil {
		t.Fatal(err)
	}
	r := srv.LastRequest()
	providertest.CheckBody(t, r, "request.golden.json")
	if r.Path != "/v1/responses" || r.Header.Get("Authorization") != "Bearer "+llmtest.Key {
		t.Errorf("path %s, auth %q", r.Path, r.Header.Get("Authorization"))
	}
}

// TestEffort: the thinking level is clamped to the model's levels and sent
// by the model's table; off is "none" unless the model cannot turn
// reasoning off; a model that does not reason gets no reasoning at all.
func TestEffort(t *testing.T) {
	none, minimal := "none", "minimal"
	gpt5 := map[llm.ThinkingLevel]*string{llm.ThinkingOff: nil, llm.ThinkingMinimal: &minimal, llm.ThinkingXHigh: nil}
	gpt51 := map[llm.ThinkingLevel]*string{llm.ThinkingOff: &none, llm.ThinkingMinimal: nil}
	for _, tc := range []struct {
		name      string
		reasoning bool
		levels    map[llm.ThinkingLevel]*string
		xhigh     bool
		level     llm.ThinkingLevel
		want      string
	}{
		{"medium", true, nil, false, llm.ThinkingMedium, `{"effort":"medium","summary":"auto"}`},
		{"off by default", true, nil, false, llm.ThinkingOff, `{"effort":"none"}`},
		{"xhigh without support", true, nil, false, llm.ThinkingXHigh, `{"effort":"high","summary":"auto"}`},
		{"xhigh with support", true, nil, true, llm.ThinkingXHigh, `{"effort":"xhigh","summary":"auto"}`},
		{"gpt-5 off sends nothing", true, gpt5, false, llm.ThinkingOff, ``},
		{"gpt-5 xhigh clamps to high", true, gpt5, true, llm.ThinkingXHigh, `{"effort":"high","summary":"auto"}`},
		{"gpt-5.1 minimal clamps up to low", true, gpt51, false, llm.ThinkingMinimal, `{"effort":"low","summary":"auto"}`},
		{"gpt-5.1 off", true, gpt51, false, "", `{"effort":"none"}`},
		{"no reasoning", false, nil, false, llm.ThinkingHigh, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t)
			srv.Reply(llmtest.Text("ok"))
			req := request(srv)
			req.Model.Reasoning, req.Model.ThinkingLevelMap, req.Model.SupportsXHigh, req.Reasoning = tc.reasoning, tc.levels, tc.xhigh, tc.level
			if _, err := llm.Complete(t.Context(), srv.Provider(), req); err != nil {
				t.Fatal(err)
			}
			var body struct {
				Reasoning jsontext.Value `json:"reasoning"`
				Include   []string       `json:"include"`
			}
			srv.LastRequest().Decode(&body)
			if got := string(body.Reasoning); got != tc.want {
				t.Errorf("reasoning %s, want %s", got, tc.want)
			}
			if (len(body.Include) > 0) != strings.Contains(tc.want, "summary") {
				t.Errorf("include %v with reasoning %s", body.Include, body.Reasoning)
			}
		})
	}
}

// TestAzure: Azure's form posts to {base}/responses?api-version=..., sends
// the key in api-key and the deployment as the model, and takes the
// encrypted reasoning from the completed response when output_item.done
// leaves it out.
func TestAzure(t *testing.T) {
	srv := llmtest.NewAzure(t)
	srv.Reply(llmtest.Thinking("plan", "ENCRYPTED=="), llmtest.Text("ok"))
	p := responses.New(responses.Config{APIKey: llmtest.Key, HTTPOptions: llm.HTTPOptions{HTTPClient: srv.Client(), Retry: &retry.Policy{}}, Azure: true,
		APIVersion: "2025-04-01-preview", Deployments: map[string]string{"gpt-test": "my-deployment"}})
	msg, err := llm.Complete(t.Context(), p, request(srv))
	if err != nil {
		t.Fatal(err)
	}
	r := srv.LastRequest()
	if r.Header.Get("api-key") != llmtest.Key || r.Header.Get("Authorization") != "" || r.Model() != "my-deployment" {
		t.Errorf("api-key %q, authorization %q, model %q", r.Header.Get("api-key"), r.Header.Get("Authorization"), r.Model())
	}
	if sig := msg.Content[0].(llm.Thinking).Signature; !strings.Contains(sig, `"encrypted_content":"ENCRYPTED=="`) {
		t.Errorf("reasoning item %s lacks the encrypted content", sig)
	}
}

// TestAzureURL: the endpoint for each form of Azure base URL.
func TestAzureURL(t *testing.T) {
	for base, want := range map[string]string{
		"https://res.openai.azure.com":                     "https://res.openai.azure.com/openai/v1/responses?api-version=v1",
		"https://res.openai.azure.com/openai":              "https://res.openai.azure.com/openai/v1/responses?api-version=v1",
		"https://res.openai.azure.com/openai/v1/":          "https://res.openai.azure.com/openai/v1/responses?api-version=v1",
		"https://res.openai.azure.com/openai/v1/responses": "https://res.openai.azure.com/openai/v1/responses?api-version=v1",
	} {
		if got := responses.Endpoint(responses.Config{Azure: true}, llm.Model{BaseURL: base}); got != want {
			t.Errorf("%s: %s, want %s", base, got, want)
		}
	}
}
