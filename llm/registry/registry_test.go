package registry_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/llm/registry"
	"github.com/prime-agent/prime/llm/retry"
)

// env is a fake environment.
type env map[string]string

func (e env) get(k string) string { return e[k] }

func load(t *testing.T, modelsJSON string, e env) (*registry.Registry, error) {
	t.Helper()
	dir := t.TempDir()
	if modelsJSON != "" {
		if err := os.WriteFile(filepath.Join(dir, "models.json"), []byte(modelsJSON), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return registry.Load(registry.Options{AgentDir: dir, Getenv: e.get, Retry: &retry.Policy{}})
}

func TestBuiltins(t *testing.T) {
	r, err := load(t, "", env{"ANTHROPIC_API_KEY": "sk-ant-test"})
	if err != nil {
		t.Fatal(err)
	}
	e, err := r.Find("anthropic/claude-opus-5")
	if err != nil {
		t.Fatal(err)
	}
	if e.Source != registry.SourceBuiltin || !e.HasKey || e.Key != "$ANTHROPIC_API_KEY" || e.Model.ContextWindow != 1_000_000 {
		t.Errorf("entry %+v", e)
	}
	o, err := r.Find("gpt-5.5")
	if err != nil {
		t.Fatal(err)
	}
	if o.HasKey || o.Key != "$OPENAI_API_KEY" || o.Model.BaseURL != "https://api.openai.com/v1" {
		t.Errorf("entry %+v", o)
	}
	if _, err := r.Find("claude-nope"); !errors.Is(err, registry.ErrUnknownModel) {
		t.Errorf("err = %v", err)
	}
	for _, e := range r.Models() {
		m := e.Model
		// A free model (Gemma, Mistral's labs models) is free both ways.
		priced := m.Cost.Input > 0 && m.Cost.Output > 0 || m.Cost == (llm.ModelCost{})
		if m.ContextWindow <= 0 || m.MaxTokens <= 0 || !priced || len(m.Input) == 0 || !e.Supported {
			t.Errorf("incomplete built-in %s: %+v", e.Ref(), m)
		}
	}
}

func TestOpenAIBaseURL(t *testing.T) {
	r, err := load(t, "", env{"OPENAI_BASE_URL": "http://proxy.local:8080/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := r.Find("openai/gpt-5")
	if e.Model.BaseURL != "http://proxy.local:8080/v1" {
		t.Errorf("base URL %q", e.Model.BaseURL)
	}
}

func TestDefaultAgentDir(t *testing.T) {
	got, _ := registry.DefaultAgentDir(env{"PRIME_CODING_AGENT_DIR": "/x/agent", "HOME": "/home/u"}.get)
	if got != "/x/agent" {
		t.Errorf("got %q", got)
	}
	got, _ = registry.DefaultAgentDir(env{"HOME": "/home/u"}.get)
	if got != "/home/u/.prime/agent" {
		t.Errorf("got %q", got)
	}
}

// piModelsJSON is a models.json as pi users write it.
const piModelsJSON = `{
  "providers": {
    "ollama": {
      "baseUrl": "http://localhost:11434/v1",
      "api": "openai-completions",
      "apiKey": "ollama",
      "compat": {"supportsUsageInStreaming": false, "maxTokensField": "max_tokens"},
      "models": [
        { "id": "llama3.1:8b" },
        { "id": "qwen3:8b", "name": "Qwen 3", "reasoning": true, "input": ["text", "image"],
          "contextWindow": 40960, "maxTokens": 8192, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0} }
      ]
    },
    "anthropic": {
      "baseUrl": "https://my-proxy.example.com",
      "headers": {"x-team": "TEAM_HEADER"},
      "modelOverrides": {"claude-opus-5": {"name": "Opus via proxy", "cost": {"input": 4}}},
      "models": [{"id": "claude-haiku-4-5", "contextWindow": 100000}]
    },
    "openrouter": {
      "baseUrl": "https://openrouter.ai/api/v1",
      "apiKey": "OPENROUTER_API_KEY",
      "api": "openai-completions",
      "models": [{"id": "anthropic/claude-sonnet-5", "compat": {"openRouterRouting": {"only": ["anthropic"]}}}]
    },
    "responses-only": {
      "baseUrl": "https://api.example.com/v1",
      "api": "openai-responses",
      "models": [{"id": "r1"}]
    },
    "bedrock": {
      "baseUrl": "https://bedrock.example.com",
      "api": "bedrock-converse-stream",
      "models": [{"id": "b1"}]
    }
  }
}`

func TestPiModelsJSON(t *testing.T) {
	r, err := load(t, piModelsJSON, env{})
	if err != nil {
		t.Fatal(err)
	}
	get := func(ref string) registry.Entry {
		t.Helper()
		e, err := r.Find(ref)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	l := get("ollama/llama3.1:8b")
	if l.Source != registry.SourceModelsJSON || l.Model.ContextWindow != 128000 || l.Model.MaxTokens != 16384 ||
		l.Model.Name != "llama3.1:8b" || l.Model.API != llm.APIOpenAICompletions || l.Model.BaseURL != "http://localhost:11434/v1" ||
		!l.HasKey || l.Key != registry.SourceModelsJSON || l.Model.Compat == nil || l.Model.Compat.MaxTokensField != "max_tokens" {
		t.Errorf("llama: %+v", l)
	}
	q := get("qwen3:8b")
	if !q.Model.Reasoning || q.Model.ContextWindow != 40960 || !q.Model.AcceptsImages() || q.Model.Name != "Qwen 3" {
		t.Errorf("qwen: %+v", q.Model)
	}
	o := get("anthropic/claude-opus-5")
	if o.Model.Name != "Opus via proxy" || o.Model.Cost.Input != 4 || o.Model.Cost.Output != 25 ||
		o.Model.BaseURL != "https://my-proxy.example.com" || o.Model.Headers["x-team"] != "TEAM_HEADER" || o.Source != registry.SourceBuiltin {
		t.Errorf("override: %+v", o)
	}
	h := get("anthropic/claude-haiku-4-5")
	if h.Model.ContextWindow != 100000 || h.Source != registry.SourceModelsJSON {
		t.Errorf("replaced built-in: %+v", h)
	}
	or := get("openrouter/anthropic/claude-sonnet-5")
	if or.HasKey || or.Key != "$OPENROUTER_API_KEY" || !strings.Contains(string(or.Model.Compat.OpenRouterRouting), `"anthropic"`) {
		t.Errorf("openrouter: %+v", or)
	}
	if e := get("responses-only/r1"); !e.Supported {
		t.Error("openai-responses model marked unsupported")
	}
	if p, m, err := r.Resolve(t.Context(), "responses-only/r1"); err != nil || p == nil || m.API != llm.APIOpenAIResponses {
		t.Errorf("openai-responses: %v, %v", p, err)
	}
	if e := get("bedrock/b1"); e.Supported {
		t.Error("bedrock-converse-stream model marked supported")
	}
	if _, _, err := r.Resolve(t.Context(), "bedrock/b1"); !errors.Is(err, registry.ErrUnsupportedAPI) {
		t.Errorf("err = %v", err)
	}
	if _, _, err := r.Resolve(t.Context(), "openrouter/anthropic/claude-sonnet-5"); !errors.Is(err, registry.ErrNoKey) ||
		!strings.Contains(err.Error(), "OPENROUTER_API_KEY") {
		t.Errorf("err = %v", err)
	}
}

func TestBrokenModelsJSON(t *testing.T) {
	tests := []struct {
		name, json, want string
	}{
		{"syntax", "{\n  \"providers\": {\n    \"x\": {\"baseUrl\": \"http://h\",, }\n  }\n}", "line 3, column"},
		{"wrong type", "{\"providers\": {\"x\": {\"baseUrl\": 7}}}", "line 1, column 33"},
		{"model without id", "{\"providers\": {\n \"x\": {\"baseUrl\": \"http://h\", \"api\": \"openai-completions\",\n  \"models\": [\n   {\"name\": \"n\"}]}}}", "line 4, column 4: provider \"x\": model 1 has no id"},
		{"unknown api", "{\"providers\": {\"x\": {\"baseUrl\": \"http://h\", \"api\": \"telepathy\"}}}", "unknown api \"telepathy\""},
		{"custom provider without baseUrl", "{\"providers\": {\n\"x\": {\"api\": \"openai-completions\", \"models\": [{\"id\": \"m\"}]}}}", "line 2, column 6: provider \"x\": baseUrl is required"},
		{"bad thinking style", "{\"providers\": {\"anthropic\": {\"models\": [{\"id\": \"m\", \"thinkingStyle\": \"loud\"}]}}}", "thinkingStyle \"loud\""},
		{"empty file", "", "line 1, column 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "models.json")
			os.WriteFile(path, []byte(tt.json), 0o600)
			_, err := registry.Load(registry.Options{AgentDir: dir, Getenv: env{}.get})
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks the file or %q", err, tt.want)
			}
		})
	}
}

// TestResolveAgainstFakeServer builds providers from models.json and talks
// to a fake server: the key and headers come from the environment and a
// command, and reach the wire.
func TestResolveAgainstFakeServer(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.FlavorVLLM)
	asrv := llmtest.NewAnthropic(t)
	models := fmt.Sprintf(`{"providers": {
		"local": {"baseUrl": %q, "api": "openai-completions", "apiKey": "LOCAL_KEY",
		          "headers": {"x-tenant": "TENANT_ID", "x-literal": "plain"}, "models": [{"id": "served-model"}]},
		"proxy": {"baseUrl": %q, "api": "anthropic-messages", "apiKey": "!printf '%%s' from-command", "authHeader": true,
		          "models": [{"id": "claude-proxied", "reasoning": true}]}
	}}`, srv.URL()+"/v1", asrv.URL())
	r, err := load(t, models, env{"LOCAL_KEY": "sk-local-secret", "TENANT_ID": "tenant-7"})
	if err != nil {
		t.Fatal(err)
	}
	srv.Reply(llmtest.Text("hi from local"))
	p, m, err := r.Resolve(t.Context(), "local/served-model")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := llm.Complete(t.Context(), p, &llm.Request{Model: m, Messages: []llm.Message{&llm.UserMessage{Content: []llm.Content{llm.Text{Text: "hi"}}}}})
	if err != nil || msg.Text() != "hi from local" || msg.Provider != "local" || msg.Model != "served-model" {
		t.Fatalf("msg %+v, err %v", msg, err)
	}
	h := srv.LastRequest().Header
	if h.Get("Authorization") != "Bearer sk-local-secret" || h.Get("X-Tenant") != "tenant-7" || h.Get("X-Literal") != "plain" {
		t.Errorf("headers %v", h)
	}

	asrv.Reply(llmtest.Text("hi from proxy"))
	p, m, err = r.Resolve(t.Context(), "proxy/claude-proxied")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llm.Complete(t.Context(), p, &llm.Request{Model: m, Messages: []llm.Message{&llm.UserMessage{Content: []llm.Content{llm.Text{Text: "hi"}}}}}); err != nil {
		t.Fatal(err)
	}
	ah := asrv.LastRequest().Header
	if ah.Get("X-Api-Key") != "from-command" || ah.Get("Authorization") != "Bearer from-command" {
		t.Errorf("headers %v", ah)
	}
}

// TestKeysNeverShown: entries, their JSON, errors and printed providers
// carry no key.
func TestKeysNeverShown(t *testing.T) {
	secret := "sk-never-print-me-42"
	models := `{"providers": {"lit": {"baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions", "apiKey": "` + secret + `", "models": [{"id": "m"}]},
	  "fail": {"baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions", "apiKey": "!echo ` + secret + `; exit 3", "models": [{"id": "m"}]}}}`
	r, err := load(t, models, env{"ANTHROPIC_API_KEY": secret, "OPENAI_API_KEY": secret})
	if err != nil {
		t.Fatal(err)
	}
	var outputs []string
	b, _ := json.Marshal(r.Models())
	outputs = append(outputs, string(b), fmt.Sprintf("%+v %#v", r.Models(), r))
	for _, ref := range []string{"lit/m", "anthropic/claude-opus-5", "openai/gpt-5"} {
		p, m, err := r.Resolve(t.Context(), ref)
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, fmt.Sprintf("%v %+v %#v %+v", p, p, p, m))
		msg, err := llm.Complete(t.Context(), p, &llm.Request{Model: m}) // connection refused
		b, _ := json.Marshal(msg)
		outputs = append(outputs, string(b), fmt.Sprint(err))
	}
	_, _, err = r.Resolve(t.Context(), "fail/m")
	if err == nil {
		t.Error("failing key command: no error")
	}
	outputs = append(outputs, fmt.Sprint(err))
	for _, s := range outputs {
		if strings.Contains(s, secret) {
			t.Errorf("key shown in %q", s)
		}
	}
}

// TestPi16ValueForms: a models.json written as pi 1.6's docs show it
// ("$NAME", "${NAME}" inside a header, "$$", a dummy "EMPTY" key for
// vLLM) sends what pi sends; an unset variable is an error naming it, and
// the entry says the key is missing before any request.
func TestPi16ValueForms(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.FlavorVLLM)
	vllm := llmtest.NewOpenAI(t, llmtest.FlavorVLLM)
	models := fmt.Sprintf(`{
  "$schema": "https://pi.dev/schemas/models.schema.json",
  "providers": {
    "proxy": {"baseUrl": %q, "api": "openai-completions", "apiKey": "$PROXY_KEY",
              "headers": {"x-tenant": "team-${TENANT}", "x-price": "$$5", "x-bang": "$!x"}, "models": [{"id": "m"}]},
    "vllm": {"baseUrl": %q, "api": "openai-completions", "apiKey": "EMPTY", "models": [{"id": "served"}]},
    "unset": {"baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions", "apiKey": "${UNSET_KEY}", "models": [{"id": "u"}]},
    "unsethdr": {"baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions", "apiKey": "k",
                 "headers": {"x-org": "$UNSET_ORG"}, "models": [{"id": "h"}]}
  }
}`, srv.URL()+"/v1", vllm.URL()+"/v1")
	r, err := load(t, models, env{"PROXY_KEY": "sk-proxy", "TENANT": "7"})
	if err != nil {
		t.Fatal(err)
	}
	hi := &llm.Request{Messages: []llm.Message{&llm.UserMessage{Content: []llm.Content{llm.Text{Text: "hi"}}}}}
	call := func(ref string) error {
		p, m, err := r.Resolve(t.Context(), ref)
		if err != nil {
			return err
		}
		req := *hi
		req.Model = m
		_, err = llm.Complete(t.Context(), p, &req)
		return err
	}
	srv.Reply(llmtest.Text("ok"))
	if err := call("proxy/m"); err != nil {
		t.Fatal(err)
	}
	h := srv.LastRequest().Header
	if h.Get("Authorization") != "Bearer sk-proxy" || h.Get("X-Tenant") != "team-7" || h.Get("X-Price") != "$5" || h.Get("X-Bang") != "!x" {
		t.Errorf("headers %v", h)
	}
	vllm.Reply(llmtest.Text("ok"))
	if err := call("vllm/served"); err != nil {
		t.Fatal(err)
	}
	if got := vllm.LastRequest().Header.Get("Authorization"); got != "Bearer EMPTY" {
		t.Errorf("vLLM key: Authorization %q", got)
	}
	e, _ := r.Find("unset/u")
	if e.HasKey || e.Key != "$UNSET_KEY" {
		t.Errorf("unset entry %+v", e)
	}
	if err := call("unset/u"); !errors.Is(err, registry.ErrNoKey) || !strings.Contains(err.Error(), "UNSET_KEY") {
		t.Errorf("unset key: %v", err)
	}
	if err := call("unsethdr/h"); err == nil || !strings.Contains(err.Error(), "x-org") || !strings.Contains(err.Error(), "UNSET_ORG") {
		t.Errorf("unset header variable: %v", err)
	}
	if got := r.KeyVariables(); !slices.Contains(got, "PROXY_KEY") || !slices.Contains(got, "UNSET_KEY") || slices.Contains(got, "EMPTY") {
		t.Errorf("KeyVariables %v", got)
	}
}
