package llmtest_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
)

// TestWireFormat pins what the fake servers send for one scripted answer,
// so the format can be read against the vendors' documentation: a thinking
// block, text, two tool calls and usage, in each vendor's (and each
// compatible server's) manner: the Responses API's semantic events
// (Azure's without the encrypted reasoning in output_item.done), Gemini's
// GenerateContentResponse chunks.
func TestWireFormat(t *testing.T) {
	parts := []llmtest.Part{
		llmtest.Thinking("Check both files.", "sig-abc"),
		llmtest.Text("Reading a and b."),
		llmtest.ToolCall("call_1", "read", `{"path": "a.go"}`),
		llmtest.ToolCall("call_2", "read", `{"path": "b.go"}`),
		llmtest.CacheUsage(120, 30, 1000, 50),
	}
	servers := map[string]*llmtest.Server{
		"anthropic":         llmtest.NewAnthropic(t),
		"openai":            llmtest.NewOpenAI(t),
		"ollama":            llmtest.NewOpenAI(t, llmtest.FlavorOllama),
		"openai-index-zero": llmtest.NewOpenAI(t, llmtest.FlavorIndexZero),
		"llamacpp":          llmtest.NewOpenAI(t, llmtest.FlavorLlamaCpp),
		"responses":         llmtest.NewResponses(t),
		"azure":             llmtest.NewAzure(t),
		"gemini":            llmtest.NewGemini(t),
	}
	for name, srv := range servers {
		t.Run(name, func(t *testing.T) {
			srv.Reply(parts...)
			url := srv.URL() + "/v1/chat/completions"
			body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[]}`
			switch srv.API() {
			case llm.APIAnthropicMessages:
				url = srv.URL() + "/v1/messages"
				body = `{"model":"m","stream":true,"max_tokens":100,"messages":[]}`
			case llm.APIOpenAIResponses:
				url, body = srv.URL()+"/v1/responses", `{"model":"m","stream":true,"store":false,"input":[]}`
			case llm.APIAzureOpenAIResponses:
				url, body = srv.URL()+"/openai/v1/responses?api-version=v1", `{"model":"m","stream":true,"store":false,"input":[]}`
			case llm.APIGoogleGenerativeAI:
				url, body = srv.URL()+"/v1beta/models/m:streamGenerateContent?alt=sse", `{"contents":[]}`
			}
			resp, err := http.Post(url, "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			path := filepath.Join("testdata", name+".sse")
			if golden.Updating() {
				os.WriteFile(path, got, 0o644)
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", path, diff)
			}
		})
	}
}
