package registry_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
)

// pi16Fields is a models.json made of the entries pi 1.6's models.md and
// models-configuration.md show: input limits and prompt cache lifetimes,
// sampling by thinking level, a thinking level map with null, compat on the
// provider and on a model, cost tiers, an OAuth provider.
const pi16Fields = `{
  "$schema": "https://pi.dev/schemas/models.schema.json",
  "providers": {
    "local": {
      "name": "Local vLLM",
      "baseUrl": %q,
      "api": "openai-completions",
      "apiKey": "EMPTY",
      "compat": {"supportsDeveloperRole": false, "maxTokensField": "max_tokens", "supportsFinishReason": false},
      "models": [
        {
          "id": "vision-model",
          "input": ["text", "image"],
          "inputLimits": {"images": {"resize": {"maxWidth": 1568, "maxHeight": 1568, "maxBytes": 524288, "jpegQuality": 75}}}
        },
        {
          "id": "qwen-thinking-model",
          "reasoning": true,
          "thinkingLevelMap": {"minimal": null, "low": "low", "xhigh": "max-effort", "max": null},
          "compat": {"maxTokensField": "max_completion_tokens"},
          "samplingParams": {"temperature": 1.0, "top_p": 0.95},
          "samplingParamsByThinkingLevel": {"off": {"temperature": 0.7, "top_p": 0.8}, "high": {"top_k": 20}},
          "cost": {"input": 1, "output": 2, "cacheRead": 0.1, "cacheWrite": 0,
                   "tiers": [{"inputTokensAbove": 200000, "input": 2, "output": 4, "cacheRead": 0.2, "cacheWrite": 0}]}
        }
      ]
    },
    "anthropic": {
      "modelOverrides": {"claude-opus-5": {"promptCache": {"short": 300, "long": 3600}}}
    },
    "radius": {"baseUrl": "https://radius.example.com/v1", "api": "openai-completions", "oauth": "radius", "models": [{"id": "r"}]}
  }
}`

// TestPi16ModelFields: Prime reads every field pi documents; those it acts
// on behave as pi says (sampling merged into the body by level, the
// thinking level map clamps and maps, compat merged field by field), and
// each one it does not act on is a warning naming the file, the line and
// the field.
func TestPi16ModelFields(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.FlavorVLLM)
	r, err := load(t, fmt.Sprintf(pi16Fields, srv.URL()+"/v1"), env{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := r.Find("local/qwen-thinking-model")
	if err != nil {
		t.Fatal(err)
	}
	m := q.Model
	if got := m.ThinkingLevels(); fmt.Sprint(got) != "[off low medium high xhigh]" {
		t.Errorf("levels %v", got)
	}
	if got := m.ClampThinking(llm.ThinkingMinimal); got != llm.ThinkingLow {
		t.Errorf("minimal clamps to %v", got)
	}
	c := m.Compat
	if c == nil || c.SupportsDeveloperRole == nil || *c.SupportsDeveloperRole || c.MaxTokensField != "max_completion_tokens" {
		t.Errorf("compat not merged field by field: %+v", c)
	}
	body := func(level llm.ThinkingLevel) string {
		t.Helper()
		p, pm, err := r.Resolve(t.Context(), "local/qwen-thinking-model")
		if err != nil {
			t.Fatal(err)
		}
		srv.Reply(llmtest.Text("ok"))
		req := &llm.Request{Model: pm, Reasoning: level, SystemPrompt: "sys",
			Messages: []llm.Message{&llm.UserMessage{Content: []llm.Content{llm.Text{Text: "hi"}}}}}
		if _, err := llm.Complete(t.Context(), p, req); err != nil {
			t.Fatal(err)
		}
		return string(srv.LastRequest().Body)
	}
	off := body(llm.ThinkingOff)
	for _, w := range []string{`"temperature":0.7`, `"top_p":0.8`, `"max_completion_tokens":16384`, `"role":"system"`} {
		if !strings.Contains(off, w) {
			t.Errorf("off body lacks %s: %s", w, off)
		}
	}
	high := body(llm.ThinkingHigh)
	for _, w := range []string{`"temperature":1.0`, `"top_p":0.95`, `"top_k":20`, `"reasoning_effort":"high"`} {
		if !strings.Contains(high, w) {
			t.Errorf("high body lacks %s: %s", w, high)
		}
	}
	if xh := body(llm.ThinkingXHigh); !strings.Contains(xh, `"reasoning_effort":"max-effort"`) {
		t.Errorf("xhigh not mapped: %s", xh)
	}
	if strings.Count(high, `"temperature"`) != 1 {
		t.Errorf("a sampling field sent twice: %s", high)
	}

	warns := strings.Join(r.Warnings(), "\n")
	for _, w := range []string{
		`models.json line 11: provider "local": model "vision-model": inputLimits is not used by Prime`,
		`provider "local": compat.supportsFinishReason is not used by Prime`,
		`provider "local": model "qwen-thinking-model": cost.tiers is not used by Prime`,
		`provider "local": model "qwen-thinking-model": thinkingLevelMap.max is not used`,
		`provider "anthropic": modelOverrides "claude-opus-5": promptCache is not used by Prime`,
		`provider "radius": oauth is not used by Prime`,
	} {
		if !strings.Contains(warns, w) {
			t.Errorf("warnings lack %q:\n%s", w, warns)
		}
	}
	for _, quiet := range []string{"$schema", `"name"`, "samplingParams is", "thinkingLevelMap.low"} {
		if strings.Contains(warns, quiet) {
			t.Errorf("a field Prime uses is warned about (%s):\n%s", quiet, warns)
		}
	}
}

func TestPi16ModelFieldErrors(t *testing.T) {
	for _, tt := range []struct{ model, want string }{
		{`{"id": "m", "thinkingLevelMap": {"turbo": "x"}}`, `thinkingLevelMap: "turbo" is not a thinking level`},
		{`{"id": "m", "samplingParams": [1]}`, `samplingParams must be an object`},
		{`{"id": "m", "samplingParamsByThinkingLevel": {"high": 3}}`, `samplingParamsByThinkingLevel "high" must be an object`},
	} {
		_, err := load(t, `{"providers": {"p": {"baseUrl": "http://x/v1", "api": "openai-completions", "models": [`+tt.model+`]}}}`, env{})
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "models.json") {
			t.Errorf("%s: err %v, want %q", tt.model, err, tt.want)
		}
	}
}

// TestPiOnlyProvider: a pi user's models.json that changes one of pi's
// built-in providers Prime does not have (a modelOverrides for
// fireworks, a proxy for together) still loads: that entry is left out
// with a warning saying what to add, and the rest of the file counts.
// Before, the whole file was refused and no model could be used.
func TestPiOnlyProvider(t *testing.T) {
	r, err := load(t, `{"providers": {
  "fireworks": {"modelOverrides": {"accounts/fireworks/models/kimi-k2": {"contextWindow": 200000}}},
  "together": {"baseUrl": "https://proxy.example.com/v1"},
  "ollama": {"baseUrl": "http://localhost:11434/v1", "api": "openai-completions", "apiKey": "ollama", "models": [{"id": "qwen3:8b"}]}
}}`, env{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Find("ollama/qwen3:8b"); err != nil {
		t.Error(err)
	}
	warns := strings.Join(r.Warnings(), "\n")
	for _, name := range []string{"fireworks", "together"} {
		if !strings.Contains(warns, fmt.Sprintf(`provider %q is built into pi but not Prime: give it a baseUrl and an api`, name)) {
			t.Errorf("no warning for %s: %q", name, warns)
		}
	}
	if _, err := load(t, `{"providers": {"fireworkz": {"models": [{"id": "m"}]}}}`, env{}); err == nil || !strings.Contains(err.Error(), "baseUrl is required") {
		t.Errorf("a provider neither knows: err %v", err)
	}
}
