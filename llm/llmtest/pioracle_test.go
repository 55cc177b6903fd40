package llmtest_test

import (
	"fmt"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/pioracle"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
)

// TestPiStoresWhatPrimeStores streams the same scripted answer from each
// fake server to pi 1.6's own provider code (pi-ai, through
// internal/pioracle/harness) and to Prime's, and compares the assistant messages
// each would store: reasoning items, text signatures, call ids, thought
// signatures, usage and cost. pi also stores its raw stop reason, its
// count of reasoning tokens, 1-hour cache writes and where the cost came
// from, which Prime does not keep; they are left out of the comparison. It runs only when PRIME_PIORACLE names the oracle:
//
//	PRIME_PIORACLE=$PWD/internal/pioracle/harness/pioracle go test ./llm/llmtest -run PiStores -v
func TestPiStoresWhatPrimeStores(t *testing.T) {
	pioracle.Path(t)
	parts := []llmtest.Part{
		llmtest.Thinking("Check both files.", "U0lHTkFUVVJF"), llmtest.Text("Reading a and b."),
		llmtest.ToolCall("call_1", "read", `{"path":"a.go"}`), llmtest.ToolCall("call_2", "read", `{"path":"b.go"}`),
		llmtest.CacheUsage(120, 30, 1000, 0),
	}
	transcript := func(path string) llmtest.Reply {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return llmtest.Reply{Raw: string(raw)}
	}
	// The providers' transcripts written from the vendors' references.
	extra := map[string][]llmtest.Reply{
		"openai-responses": {transcript("../responses/testdata/reasoning_tool_call.sse"), transcript("../responses/testdata/incomplete_max_output.sse")},
		"google-generative-ai": {transcript("../gemini/testdata/thinking_tool_call.sse"), transcript("../gemini/testdata/max_tokens.sse"),
			transcript("../gemini/testdata/parallel_calls_no_id.sse")},
	}
	for _, v := range llmtest.Vendors() {
		if v.Name == "openai-completions" || v.Name == "google-vertex" {
			continue // pi reaches Vertex AI through Google's credentials only
		}
		for i, reply := range append([]llmtest.Reply{llmtest.Stream(parts...)}, extra[v.Name]...) {
			t.Run(fmt.Sprintf("%s/%d", v.Name, i), func(t *testing.T) { compareWithPi(t, v, reply) })
		}
	}
}

// compareWithPi serves reply to pi and to Prime and compares the messages
// they store.
func compareWithPi(t *testing.T, v llmtest.Vendor, reply llmtest.Reply) {
	srv := v.New(t)
	m := srv.Model()
	model, _ := json.Marshal(map[string]any{"id": m.ID, "provider": m.Provider, "api": m.API, "baseUrl": m.BaseURL,
		"reasoning": m.Reasoning, "input": m.Input, "contextWindow": m.ContextWindow, "maxTokens": m.MaxTokens, "cost": m.Cost})
	srv.Queue(reply)
	var pi struct {
		Error   string                    `json:"error"`
		Message map[string]jsontext.Value `json:"message"`
	}
	pioracle.Ask(t, &pi, "complete", "--api", m.API, "--model", string(model), "--prompt", "go", "--reasoning", "medium", "--key", llmtest.Key)
	if pi.Error != "" {
		t.Fatal(pi.Error)
	}
	var ts int64
	json.Unmarshal(pi.Message["timestamp"], &ts)
	srv.SetNow(func() time.Time { return time.UnixMilli(ts) })
	srv.Queue(reply)
	msg, _ := llm.Complete(t.Context(), srv.Provider(), &llm.Request{Model: m, Reasoning: llm.ThinkingMedium,
		Messages: []llm.Message{&llm.UserMessage{Content: []llm.Content{llm.Text{Text: "go"}}, Timestamp: 1}}})
	// What pi 1.6 stores and Prime does not: the raw stop reason,
	// the reasoning tokens, the 1-hour cache writes, whether the
	// cost came from the provider, and (set by pi's agent, by
	// Prime's agent too) the duration.
	delete(pi.Message, "rawStopReason")
	delete(pi.Message, "durationMs")
	var usage map[string]jsontext.Value
	json.Unmarshal(pi.Message["usage"], &usage)
	delete(usage, "reasoning")
	delete(usage, "cacheWrite1h")
	var cost map[string]jsontext.Value
	json.Unmarshal(usage["cost"], &cost)
	delete(cost, "totalFromProvider")
	usage["cost"], _ = json.Marshal(cost, json.Deterministic(true))
	pi.Message["usage"], _ = json.Marshal(usage, json.Deterministic(true))
	want, _ := json.Marshal(pi.Message, json.Deterministic(true))
	var primeMsg map[string]jsontext.Value
	b, _ := json.Marshal(msg)
	json.Unmarshal(b, &primeMsg)
	got, _ := json.Marshal(primeMsg, json.Deterministic(true))
	// A Gemini call without an id gets "<name>_<ms>_<n>" from each
	// at its own clock.
	madeUp := regexp.MustCompile(`"id":"([a-z]+)_\d{13}_(\d+)"`)
	w := madeUp.ReplaceAllString(canonicalJSON(t, want), `"id":"${1}_T_${2}"`)
	g := madeUp.ReplaceAllString(canonicalJSON(t, got), `"id":"${1}_T_${2}"`)
	if w != g {
		t.Errorf("pi stores\n%s\nPrime stores\n%s", w, g)
	}
}

// canonicalJSON re-encodes with sorted members at every depth.
func canonicalJSON(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v, json.Deterministic(true))
	return string(out)
}
