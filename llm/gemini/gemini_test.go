package gemini_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/gemini"
	"github.com/prime-agent/prime/llm/internal/providertest"
	"github.com/prime-agent/prime/llm/llmtest"
)

func newServer(t *testing.T) *llmtest.Server {
	return providertest.Fixed(llmtest.NewGemini(t))
}

func request(srv *llmtest.Server, msgs ...llm.Message) *llm.Request {
	return providertest.Request(srv, llm.ThinkingMedium, "What is here?", msgs...)
}

// TestTranscripts replays streams written from the Gemini API reference
// (GenerateContentResponse chunks of streamGenerateContent?alt=sse): a
// thought summary, text carrying a thought signature, a function call with
// its id and signature and usage with cached and thought tokens (Gemini 3);
// an answer cut by MAX_TOKENS; one stopped by SAFETY; two parallel calls
// without ids (Gemini 2.5); an error object mid-stream.
func TestTranscripts(t *testing.T) {
	providertest.Transcripts(t, newServer, func(srv *llmtest.Server) *llm.Request { return request(srv) })
}

// TestStopAndUsage: finish reasons map to stop reasons; usage takes the
// cached tokens out of the input and the thoughts into the output.
func TestStopAndUsage(t *testing.T) {
	for name, want := range map[string]llm.StopReason{
		"thinking_tool_call": llm.StopReasonToolUse, "max_tokens": llm.StopReasonLength, "safety": llm.StopReasonError,
		"parallel_calls_no_id": llm.StopReasonToolUse, "error_chunk": llm.StopReasonError,
	} {
		raw, _ := os.ReadFile(filepath.Join("testdata", name+".sse"))
		srv := newServer(t)
		srv.Queue(llmtest.Reply{Raw: string(raw)})
		msg, err := llm.Complete(t.Context(), srv.Provider(), request(srv))
		if msg.StopReason != want {
			t.Errorf("%s: stop %q, want %q (%v)", name, msg.StopReason, want, err)
		}
		switch name {
		case "thinking_tool_call":
			if u := msg.Usage; u.Input != 1432-1024 || u.CacheRead != 1024 || u.Output != 22+41 || u.TotalTokens != 1495 {
				t.Errorf("usage %+v", u)
			}
		case "safety":
			if !strings.Contains(msg.ErrorMessage, "SAFETY") {
				t.Errorf("error %q", msg.ErrorMessage)
			}
		case "error_chunk":
			if !errors.Is(err, llm.ErrOverloaded) || msg.Text() != "Partial " {
				t.Errorf("err %v, text %q", err, msg.Text())
			}
		case "parallel_calls_no_id":
			calls := msg.ToolCalls()
			if len(calls) != 2 || calls[0].ID == calls[1].ID || !strings.HasPrefix(calls[0].ID, "read_") {
				t.Errorf("calls %+v", calls)
			}
		}
	}
}

// TestSignaturesGoBack: a streamed turn is stored and sent back: the
// thought signature on the text part and on the function call return on
// the same parts, the call with its id, the result as a functionResponse.
func TestSignaturesGoBack(t *testing.T) {
	raw, _ := os.ReadFile("testdata/thinking_tool_call.sse")
	srv := newServer(t)
	srv.Queue(llmtest.Reply{Raw: string(raw)})
	req := request(srv)
	req.Model.ID = "gemini-3-pro-preview"
	first, err := llm.Complete(t.Context(), srv.Provider(), req)
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := json.Marshal(first)
	back, _ := llm.DecodeMessage(stored)
	call := first.ToolCalls()[0]
	result := &llm.ToolResultMessage{ToolCallID: call.ID, ToolName: call.Name, Content: []llm.Content{llm.Text{Text: "a.txt"}}, Timestamp: 3}
	srv.Reply(llmtest.Text("Done."))
	req.Messages = append(req.Messages, back, result)
	if _, err := llm.Complete(t.Context(), srv.Provider(), req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Contents []struct {
			Role  string           `json:"role"`
			Parts []jsontext.Value `json:"parts"`
		} `json:"contents"`
	}
	if err := srv.LastRequest().Decode(&body); err != nil {
		t.Fatal(err)
	}
	if len(body.Contents) != 3 || body.Contents[1].Role != "model" || len(body.Contents[1].Parts) != 3 {
		t.Fatalf("contents %+v", body.Contents)
	}
	model := body.Contents[1].Parts
	for i, want := range []string{
		`{"thought":true,"text":"**Finding the files**\n\nI should list the directory first."}`,
		`{"text":"Let me list the files.","thoughtSignature":"CiQB0e2Kb7Y3pZ5mWcH1kYqDn6c1Vqg5Q2ZbJm3VfWn0a1sKQwHR7Yp1"}`,
		`{"functionCall":{"name":"bash","args":{"command":"ls -la"},"id":"7x1qpl0d"},"thoughtSignature":"EpsECpgEAdHtim9vX8bJm1GzK3fQmZ6q0pWn8sYb2a7c4d5e6f7g8h9i0jQ="}`,
	} {
		if string(model[i]) != want {
			t.Errorf("part %d: %s\nwant %s", i, model[i], want)
		}
	}
	if got := string(body.Contents[2].Parts[0]); got != `{"functionResponse":{"name":"bash","response":{"output":"a.txt"},"id":"7x1qpl0d"}}` {
		t.Errorf("result %s", got)
	}
}

// TestRequestBody checks a whole conversation's wire form against a golden
// request (API reference, "models.streamGenerateContent": contents,
// systemInstruction, tools with functionDeclarations, generationConfig
// with thinkingConfig).
func TestRequestBody(t *testing.T) {
	srv := newServer(t)
	srv.Reply(llmtest.Text("ok"))
	m := srv.Model()
	m.ID = "gemini-3-pro-preview"
	args, _ := llm.NewArguments([]byte(`{"command":"ls"}`))
	msgs := []llm.Message{
		&llm.UserMessage{Content: []llm.Content{llm.Text{Text: "Look."}, llm.Image{Data: "iVBORw0KGgo=", MIMEType: "image/png"}}, Timestamp: 1},
		&llm.AssistantMessage{API: m.API, Provider: m.Provider, Model: m.ID, StopReason: llm.StopReasonToolUse, Timestamp: 2, Content: []llm.Content{
			llm.Thinking{Thinking: "plan", Signature: "U0lHMQ=="},
			llm.Text{Text: "Listing."},
			llm.ToolCall{ID: "c1", Name: "bash", Arguments: args, ThoughtSignature: "U0lHMg=="},
		}},
		&llm.ToolResultMessage{ToolCallID: "c1", ToolName: "bash", Content: []llm.Content{llm.Text{Text: "a.txt"}, llm.Image{Data: "R0lGOD", MIMEType: "image/gif"}}, Timestamp: 3},
		&llm.AssistantMessage{API: llm.APIAnthropicMessages, Provider: "anthropic", Model: "claude-test", StopReason: llm.StopReasonToolUse, Timestamp: 4, Content: []llm.Content{
			llm.Thinking{Thinking: "another model's thought", Signature: "EqQB"},
			llm.Text{Text: "Reading.", Signature: "not-base64!"},
			llm.ToolCall{ID: "toolu_01.x", Name: "bash", Arguments: args},
		}},
		&llm.ToolResultMessage{ToolCallID: "toolu_01.x", ToolName: "bash", Content: []llm.Content{llm.Text{Text: "denied"}}, IsError: true, Timestamp: 5},
		&llm.AssistantMessage{API: m.API, Provider: m.Provider, Model: m.ID, StopReason: llm.StopReasonError, ErrorMessage: "boom", Timestamp: 6,
			Content: []llm.Content{llm.Text{Text: "half"}}},
		providertest.User("Again?", 7),
	}
	req := &llm.Request{Model: m, SystemPrompt: "You are a test.", Messages: msgs, Reasoning: llm.ThinkingHigh,
		Tools: []llm.Tool{{Name: "bash", Description: "Run a command.", Parameters: jsontext.Value(
			`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"command":{"type":"string"},"mode":{"const":"fast"}},"required":["command"]}`)}}}
	if _, err := llm.Complete(t.Context(), srv.Provider(), req); err != nil {
		t.Fatal(err)
	}
	r := srv.LastRequest()
	providertest.CheckBody(t, r, "request.golden.json")
	if r.Path != "/v1beta/models/gemini-3-pro-preview:streamGenerateContent" || r.Header.Get("x-goog-api-key") != llmtest.Key {
		t.Errorf("path %s, key %q", r.Path, r.Header.Get("x-goog-api-key"))
	}
}

// TestThinkingConfig: a level on Gemini 3 and later, a budget on 2.5; off
// is a budget of 0, or the lowest level of a model that cannot stop
// thinking.
func TestThinkingConfig(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		id     string
		levels map[llm.ThinkingLevel]*string
		level  llm.ThinkingLevel
		want   string
	}{
		{"gemini-2.5-pro", nil, llm.ThinkingMedium, `{"includeThoughts":true,"thinkingBudget":8192}`},
		{"gemini-2.5-flash", nil, llm.ThinkingHigh, `{"includeThoughts":true,"thinkingBudget":24576}`},
		{"gemini-2.5-flash", nil, llm.ThinkingOff, `{"thinkingBudget":0}`},
		{"gemini-3-pro-preview", nil, llm.ThinkingHigh, `{"includeThoughts":true,"thinkingLevel":"HIGH"}`},
		{"gemini-3.1-pro-preview", map[llm.ThinkingLevel]*string{llm.ThinkingOff: nil, llm.ThinkingMinimal: nil}, llm.ThinkingOff, `{"thinkingLevel":"LOW"}`},
		{"gemini-3-flash-preview", map[llm.ThinkingLevel]*string{llm.ThinkingOff: nil, llm.ThinkingXHigh: nil}, llm.ThinkingXHigh, `{"includeThoughts":true,"thinkingLevel":"HIGH"}`},
		{"gemma-4-31b-it", map[llm.ThinkingLevel]*string{llm.ThinkingOff: nil, llm.ThinkingMinimal: str("MINIMAL"), llm.ThinkingLow: nil, llm.ThinkingMedium: nil, llm.ThinkingHigh: str("HIGH")},
			llm.ThinkingLow, `{"includeThoughts":true,"thinkingLevel":"HIGH"}`},
		{"gemini-experimental", nil, llm.ThinkingLow, `{"includeThoughts":true,"thinkingBudget":-1}`},
	} {
		srv := newServer(t)
		srv.Reply(llmtest.Text("ok"))
		req := request(srv)
		req.Model.ID, req.Model.ThinkingLevelMap, req.Reasoning = tc.id, tc.levels, tc.level
		if _, err := llm.Complete(t.Context(), srv.Provider(), req); err != nil {
			t.Fatal(err)
		}
		var body struct {
			GenerationConfig struct {
				ThinkingConfig jsontext.Value `json:"thinkingConfig"`
			} `json:"generationConfig"`
		}
		srv.LastRequest().Decode(&body)
		if got := string(body.GenerationConfig.ThinkingConfig); got != tc.want {
			t.Errorf("%s at %s: %s, want %s", tc.id, tc.level, got, tc.want)
		}
	}
}

// TestSchema: what parametersJsonSchema refuses is dropped or converted.
func TestSchema(t *testing.T) {
	for in, want := range map[string]string{
		`{"$schema":"x","type":"object","properties":{"a":{"const":"v"},"const":{"type":"string"}}}`: `{"properties":{"a":{"enum":["v"]},"const":{"type":"string"}},"type":"object"}`,
		`{"type":"object","properties":{"n":{"const":3,"enum":[3,4]}}}`:                              `{"properties":{"n":{"const":3,"enum":[3,4]}},"type":"object"}`,
		`"not an object"`: `{"type":"object","properties":{}}`,
		``:                `{"type":"object","properties":{}}`,
	} {
		if got := string(gemini.Schema(jsontext.Value(in))); got != want {
			t.Errorf("%s:\n got %s\nwant %s", in, got, want)
		}
	}
}

// TestVertexURL: Vertex AI's endpoint is the location's host and the
// project's path; "global" has no location prefix.
func TestVertexURL(t *testing.T) {
	for _, tc := range []struct{ project, location, base, want string }{
		{"p", "us-central1", "", "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"},
		{"p", "", "", "https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"},
		{"p", "europe-west4", "https://{location}-aiplatform.googleapis.com", "https://europe-west4-aiplatform.googleapis.com/v1/projects/p/locations/europe-west4/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"},
	} {
		got := gemini.Endpoint(gemini.Config{Vertex: true, Project: tc.project, Location: tc.location}, llm.Model{ID: "gemini-2.5-pro", BaseURL: tc.base})
		if got != tc.want {
			t.Errorf("%+v:\n got %s\nwant %s", tc, got, tc.want)
		}
	}
}
