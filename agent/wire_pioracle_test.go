package agent_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/pioracle"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
)

// TestPiBuildsTheSameRequest checks, against pi 1.6 itself, that a session
// Prime wrote while talking to each new API reads back in pi as the same
// conversation: pi's own conversion of the context (convertToLlm, then
// pi-ai's Responses or Gemini message conversion) gives the very input
// items or contents Prime sent for the last turn, reasoning items with
// their encrypted content, message ids, call ids and thought signatures
// included. It runs only when PRIME_PIORACLE names the oracle's wrapper:
//
//	PRIME_PIORACLE=$PWD/internal/pioracle/harness/pioracle go test ./agent -run PiBuilds -v
func TestPiBuildsTheSameRequest(t *testing.T) {
	pioracle.Path(t)
	for _, v := range llmtest.Vendors() {
		if v.Name == "openai-completions" {
			continue
		}
		for _, id := range []string{"", "gemini-3-pro-preview"} {
			if id != "" && v.Name != "google-generative-ai" {
				continue // Gemini 3 sends call ids
			}
			t.Run(v.Name+id, func(t *testing.T) { piBuildsTheSameRequest(t, v, id) })
		}
	}
}

// piBuildsTheSameRequest runs two prompts through v's fake server (model
// id when given) and compares Prime's last request with pi's.
func piBuildsTheSameRequest(t *testing.T, v llmtest.Vendor, id string) {
	srv := v.New(t)
	if id != "" {
		srv.SetModelID(id)
	}
	conversation(srv,
		llmtest.Stream(llmtest.Thinking("Upper-case it.", "U0lHTkFUVVJFLTE="), llmtest.Text("Calling the tool."),
			llmtest.ToolCall("call_7", "upper", `{"text":"a"}`), llmtest.Usage(50, 5)),
		llmtest.Stream(llmtest.Thinking("Report it.", "U0lHTkFUVVJFLTI="), llmtest.Text("It is A."), llmtest.Usage(60, 5)),
		llmtest.Stream(llmtest.Text("Again: A."), llmtest.Usage(70, 5)),
	)
	var ev events
	ag, path := liveWith(t, srv, &ev, testSettings(t), upper{})
	send(t, ag, "Upper-case a.")
	send(t, ag, "Once more?")
	s, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	entries := s.LeafPath()
	leaf := entries[len(entries)-1].ParentID // the context of the last request
	m := srv.Model()
	model, _ := json.Marshal(map[string]any{"id": m.ID, "provider": m.Provider, "api": m.API, "input": m.Input, "reasoning": m.Reasoning})
	if m.API != llm.APIGoogleGenerativeAI && m.API != llm.APIGoogleVertex {
		comparePayload(t, path, leaf, string(model), m.API, srv.LastRequest())
	}
	if m.API == llm.APIAnthropicMessages {
		return
	}
	var pi struct {
		Error             string           `json:"error"`
		Input             []jsontext.Value `json:"input"`
		Contents          []jsontext.Value `json:"contents"`
		SystemInstruction string           `json:"systemInstruction"`
	}
	pioracle.Ask(t, &pi, "wire", path, "--leaf", leaf, "--api", m.API, "--model", string(model))
	if pi.Error != "" {
		t.Fatal(pi.Error)
	}
	var prime struct {
		Input             []jsontext.Value `json:"input"`
		Contents          []jsontext.Value `json:"contents"`
		SystemInstruction *struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"systemInstruction"`
	}
	if err := srv.LastRequest().Decode(&prime); err != nil {
		t.Fatal(err)
	}
	want, got := canonical(t, prime.Input), canonical(t, pi.Input)
	if prime.Contents != nil {
		want, got = canonical(t, prime.Contents), canonical(t, pi.Contents)
		if prime.SystemInstruction == nil || prime.SystemInstruction.Parts[0].Text != pi.SystemInstruction {
			t.Errorf("system instruction differs: pi %q", pi.SystemInstruction)
		}
	}
	if len(want) < 5 {
		t.Fatalf("Prime sent only %d items", len(want))
	}
	if !bytes.Equal(jsonLines(want), jsonLines(got)) {
		t.Errorf("pi builds\n%s\nPrime sent\n%s", jsonLines(got), jsonLines(want))
	}
	if id != "" && !bytes.Contains(jsonLines(want), []byte(`"id":"call_7"`)) {
		t.Errorf("no call ids for %s:\n%s", id, jsonLines(want))
	}
}

// comparePayload compares the request body pi 1.6 would send for the
// context at leaf with the one Prime sent: the conversation, the system
// prompt and the tools with their cache breakpoints (Anthropic), the input
// items, tools and store (Responses).
func comparePayload(t *testing.T, path, leaf, model, api string, r *llmtest.Request) {
	t.Helper()
	var pi struct {
		Error   string                    `json:"error"`
		Payload map[string]jsontext.Value `json:"payload"`
	}
	pioracle.Ask(t, &pi, "wire", path, "--leaf", leaf, "--api", api, "--model", model, "--payload")
	if pi.Error != "" {
		t.Fatal(pi.Error)
	}
	var prime map[string]jsontext.Value
	if err := r.Decode(&prime); err != nil {
		t.Fatal(err)
	}
	if api == llm.APIAnthropicMessages {
		// The conversation's blocks are Anthropic's business (pi sends
		// tool results as strings, Prime as blocks); what must agree is
		// where the cache breakpoints sit.
		for _, k := range []string{"system", "tools", "messages"} {
			if got, want := cacheMarks(t, pi.Payload[k]), cacheMarks(t, prime[k]); got != want || want == "[]" {
				t.Errorf("%s: pi marks the cache at %s, Prime at %s", k, got, want)
			}
		}
		return
	}
	for _, k := range []string{"input", "tools", "store"} {
		if prime[k] == nil {
			t.Errorf("Prime sent no %q", k)
		}
		got, want := canonical(t, []jsontext.Value{pi.Payload[k]}), canonical(t, []jsontext.Value{prime[k]})
		if got[0] != want[0] {
			t.Errorf("%s: pi sends\n%s\nPrime sent\n%s", k, got[0], want[0])
		}
	}
}

// cacheMarks lists where a value holds "cache_control" members, as JSON
// pointers.
func cacheMarks(t *testing.T, v jsontext.Value) string {
	t.Helper()
	var marks []string
	dec := jsontext.NewDecoder(bytes.NewReader(v))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			break
		}
		if tok.Kind() == '"' && tok.String() == "cache_control" && dec.StackDepth() > 0 {
			if _, n := dec.StackIndex(dec.StackDepth()); n%2 == 1 {
				marks = append(marks, string(dec.StackPointer()))
			}
		}
	}
	return fmt.Sprint(marks)
}

// canonical re-encodes each item with sorted members (pi writes its keys
// in its own order) and drops members pi leaves undefined and Prime omits.
func canonical(t *testing.T, items []jsontext.Value) []string {
	t.Helper()
	out := make([]string, len(items))
	for i, it := range items {
		var v any
		if err := json.Unmarshal(it, &v); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(v, json.Deterministic(true))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out
}

func jsonLines(items []string) []byte {
	var b bytes.Buffer
	for _, it := range items {
		fmt.Fprintln(&b, it)
	}
	return b.Bytes()
}
