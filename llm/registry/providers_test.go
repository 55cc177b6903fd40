package registry_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/llm/registry"
)

// TestBuiltinProviders: each built-in provider reads its key from pi's
// variable and serves its models over its API.
func TestBuiltinProviders(t *testing.T) {
	r, err := load(t, "", env{"GOOGLE_API_KEY": "g", "XAI_API_KEY": "x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ref, api, key string
		has           bool
	}{
		{"openai/gpt-5.5", llm.APIOpenAIResponses, "$OPENAI_API_KEY", false},
		{"google/gemini-2.5-pro", llm.APIGoogleGenerativeAI, "$GOOGLE_API_KEY", true},
		{"google-vertex/gemini-2.5-pro", llm.APIGoogleVertex, "$GOOGLE_CLOUD_ACCESS_TOKEN", false},
		{"xai/grok-4.3", llm.APIOpenAIResponses, "$XAI_API_KEY", true},
		{"groq/openai/gpt-oss-120b", llm.APIOpenAICompletions, "$GROQ_API_KEY", false},
		{"deepseek/deepseek-v4-pro", llm.APIOpenAICompletions, "$DEEPSEEK_API_KEY", false},
		{"cerebras/gpt-oss-120b", llm.APIOpenAICompletions, "$CEREBRAS_API_KEY", false},
		{"mistral/devstral-latest", llm.APIOpenAICompletions, "$MISTRAL_API_KEY", false},
		{"openrouter/openai/gpt-5.5", llm.APIOpenAICompletions, "$OPENROUTER_API_KEY", false},
	} {
		e, err := r.Find(tc.ref)
		if err != nil {
			t.Errorf("%s: %v", tc.ref, err)
			continue
		}
		if e.Model.API != tc.api || e.Key != tc.key || e.HasKey != tc.has || !e.Supported {
			t.Errorf("%s: api %s, key %s (%v), supported %v", tc.ref, e.Model.API, e.Key, e.HasKey, e.Supported)
		}
	}
	if _, err := r.Find("openai/gpt-5.1-codex"); !errors.Is(err, registry.ErrUnknownModel) {
		t.Errorf("an OpenRouter id read as OpenAI's model: %v", err)
	}
	if _, err := r.Find("gemini-3.1-pro-preview"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("gemini-3.1-pro-preview is on both Google APIs; the id alone must be ambiguous: %v", err)
	}
	if _, _, err := r.Resolve(t.Context(), "google-vertex/gemini-2.5-pro"); !errors.Is(err, registry.ErrNoKey) {
		t.Errorf("vertex without a token: %v", err)
	}
}

// TestNewAPIsThroughTheRegistry: models.json naming the new APIs gives
// providers that reach the fake servers, the key in each vendor's header
// (Gemini's GEMINI_API_KEY winning over GOOGLE_API_KEY).
func TestNewAPIsThroughTheRegistry(t *testing.T) {
	for _, srv := range []*llmtest.Server{llmtest.NewResponses(t), llmtest.NewAzure(t), llmtest.NewGemini(t), llmtest.NewVertex(t)} {
		m := srv.Model()
		models := fmt.Sprintf(`{"providers": {%q: {"baseUrl": %q, "api": %q, "models": [{"id": %q, "input": ["text", "image"]}]}}}`,
			m.Provider, m.BaseURL, m.API, m.ID)
		r, err := load(t, models, env{
			"OPENAI_API_KEY": llmtest.Key, "AZURE_OPENAI_API_KEY": llmtest.Key, "GEMINI_API_KEY": llmtest.Key,
			"GOOGLE_API_KEY": "not-this-one", "GOOGLE_CLOUD_ACCESS_TOKEN": llmtest.Key,
		})
		if err != nil {
			t.Fatal(err)
		}
		p, model, err := r.Resolve(t.Context(), m.Provider+"/"+m.ID)
		if err != nil {
			t.Fatalf("%s: %v", m.API, err)
		}
		srv.Reply(llmtest.Text("hello"))
		msg, err := llm.Complete(t.Context(), p, &llm.Request{Model: model, Messages: []llm.Message{&llm.UserMessage{Content: []llm.Content{llm.Text{Text: "hi"}}}}})
		if err != nil || msg.Text() != "hello" {
			t.Errorf("%s: %q, %v", m.API, msg.Text(), err)
		}
		h := srv.LastRequest().Header
		if got := h.Get("Authorization") + h.Get("api-key") + h.Get("x-goog-api-key"); got != llmtest.Key && got != "Bearer "+llmtest.Key {
			t.Errorf("%s: key sent as %q", m.API, got)
		}
	}
}

// TestAzureEndpoint: an Azure model needs an endpoint, from the
// environment (the resource's name will do) or models.json.
func TestAzureEndpoint(t *testing.T) {
	models := `{"providers": {"azure": {"models": [{"id": "gpt-5.5", "api": "azure-openai-responses"}]}}}`
	r, err := load(t, models, env{"AZURE_OPENAI_API_KEY": "k"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Resolve(t.Context(), "azure/gpt-5.5"); err == nil || !strings.Contains(err.Error(), "AZURE_OPENAI_RESOURCE_NAME") {
		t.Errorf("no endpoint: %v", err)
	}
	r, err = load(t, models, env{"AZURE_OPENAI_API_KEY": "k", "AZURE_OPENAI_RESOURCE_NAME": "myres"})
	if err != nil {
		t.Fatal(err)
	}
	if _, m, err := r.Resolve(t.Context(), "azure/gpt-5.5"); err != nil || m.BaseURL != "https://myres.openai.azure.com/openai/v1" {
		t.Errorf("resource name: %v, base %q", err, m.BaseURL)
	}
}

// TestDefaultOrder: with several keys, the first usable model is pi's
// default of the first provider in pi's order, Anthropic and OpenAI
// first; a provider from models.json comes after the built-in ones.
func TestDefaultOrder(t *testing.T) {
	local := `{"providers": {"aaa-local": {"baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions", "apiKey": "k", "models": [{"id": "m"}]}}}`
	for _, tc := range []struct {
		env  env
		want string
	}{
		{env{"GEMINI_API_KEY": "g", "OPENAI_API_KEY": "o"}, "openai/gpt-6.2-sol"},
		{env{"GOOGLE_API_KEY": "g", "GROQ_API_KEY": "q"}, "google/gemini-4-argon"},
		{env{"MISTRAL_API_KEY": "m"}, "mistral/devstral-medium-latest"},
		{env{}, "aaa-local/m"},
	} {
		r, err := load(t, local, tc.env)
		if err != nil {
			t.Fatal(err)
		}
		first := ""
		for _, e := range r.Models() {
			if e.Supported && e.HasKey {
				first = e.Ref()
				break
			}
		}
		if first != tc.want {
			t.Errorf("%v: first usable %s, want %s", tc.env, first, tc.want)
		}
	}
}
