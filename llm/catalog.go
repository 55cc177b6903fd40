package llm

import "strings"

// catalogModel is one row of the built-in catalog: where a model is
// served, its windows, its list prices (US dollars per million tokens:
// input, output, cache read, cache write) and its thinking levels.
type catalogModel struct {
	provider, api, id, name string
	reasoning, images       bool
	window, maxOut          int
	in, out, cacheRead      float64
	cacheWrite              float64
	// levels is the model's thinking-level table, "level=value" pairs
	// joined by commas, "-" for a level the model does not support (see
	// [Model.ThinkingLevelMap]); "" for none.
	levels string
}

// providerBaseURLs are the endpoints of the built-in providers besides
// Anthropic. Vertex AI's depends on the location, so it has none here.
var providerBaseURLs = map[string]string{
	ProviderOpenAI:     "https://api.openai.com/v1",
	ProviderGoogle:     "https://generativelanguage.googleapis.com/v1beta",
	ProviderXAI:        "https://api.x.ai/v1",
	ProviderGroq:       "https://api.groq.com/openai/v1",
	ProviderDeepSeek:   "https://api.deepseek.com",
	ProviderCerebras:   "https://api.cerebras.ai/v1",
	ProviderMistral:    "https://api.mistral.ai/v1",
	ProviderOpenRouter: "https://openrouter.ai/api/v1",
}

// providerDefaults are pi 1.6's default model of each provider
// (defaultModelPerProvider), listed first among the provider's models.
var providerDefaults = map[string]string{
	ProviderOpenAI: "gpt-6.2-sol", ProviderGoogle: "gemini-4-argon", ProviderGoogleVertex: "gemini-4-argon",
	ProviderDeepSeek: "deepseek-v4-pro", ProviderOpenRouter: "moonshotai/kimi-k2.7-code", ProviderXAI: "grok-4.7",
	ProviderGroq: "openai/gpt-oss-120b", ProviderCerebras: "gpt-oss-120b", ProviderMistral: "devstral-medium-latest",
}

// ProviderOrder is the order in which built-in providers are offered when
// no model is chosen: Anthropic and OpenAI, then the rest in pi 1.6's
// order; a provider not listed comes after them.
var ProviderOrder = []string{
	ProviderAnthropic, ProviderOpenAI, ProviderAzure, ProviderDeepSeek, ProviderGoogle, ProviderGoogleVertex,
	ProviderOpenRouter, ProviderXAI, ProviderGroq, ProviderCerebras, ProviderMistral,
}

// ProviderBaseURL returns the endpoint of a built-in provider, or "".
func ProviderBaseURL(provider string) string { return providerBaseURLs[provider] }

// providerCompat are the quirks pi handles for the built-in providers
// that their base URLs do not reveal.
var providerCompat = map[string]*OpenAICompat{
	// OpenAI's models take "strict" on their tools.
	ProviderOpenAI: {SupportsStrictMode: ptr(true)},
	// Groq and Cerebras take OpenAI's name for the output cap; Cerebras
	// refuses "store".
	ProviderGroq:     {MaxTokensField: "max_completion_tokens"},
	ProviderCerebras: {MaxTokensField: "max_completion_tokens", SupportsStore: ptr(false)},
}

// model builds the Model of a catalog row.
func (c catalogModel) model() Model {
	m := Model{
		ID: c.id, Name: c.name, Provider: c.provider, API: c.api, BaseURL: providerBaseURLs[c.provider],
		Reasoning: c.reasoning, Input: []string{"text"},
		Cost:          ModelCost{Input: c.in, Output: c.out, CacheRead: c.cacheRead, CacheWrite: c.cacheWrite},
		ContextWindow: c.window, MaxTokens: c.maxOut, Compat: providerCompat[c.provider],
	}
	if c.images {
		m.Input = []string{"text", "image"}
	}
	if c.levels != "" {
		m.ThinkingLevelMap = map[ThinkingLevel]*string{}
		for _, pair := range strings.Split(c.levels, ",") {
			k, v, _ := strings.Cut(pair, "=")
			if v == "-" {
				m.ThinkingLevelMap[ThinkingLevel(k)] = nil
				continue
			}
			m.ThinkingLevelMap[ThinkingLevel(k)] = ptr(v)
		}
	}
	return m
}

// catalog is pi 1.6's model catalog for the providers Prime serves besides
// Anthropic (pi-ai's providers/data, November 2026): OpenAI and xAI over
// the Responses API, Gemini and Vertex AI, and the Chat Completions
// presets. Mistral's models, which pi reaches over Mistral's own
// conversations API, are served here over Mistral's Chat Completions
// endpoint. Price tiers above a prompt size are not modelled: the base
// price is used.
var catalog = []catalogModel{
	{"openai", "openai-responses", "chat-latest", "Chat Latest", true, true, 400000, 128000, 5, 30, 0.5, 0, ""},
	{"openai", "openai-responses", "gpt-4", "GPT-4", false, false, 8192, 8192, 30, 60, 0, 0, ""},
	{"openai", "openai-responses", "gpt-4-turbo", "GPT-4 Turbo", false, true, 128000, 4096, 10, 30, 0, 0, ""},
	{"openai", "openai-responses", "gpt-4.1", "GPT-4.1", false, true, 1047576, 32768, 2, 8, 0.5, 0, ""},
	{"openai", "openai-responses", "gpt-4.1-mini", "GPT-4.1 mini", false, true, 1047576, 32768, 0.4, 1.6, 0.1, 0, ""},
	{"openai", "openai-responses", "gpt-4.1-nano", "GPT-4.1 nano", false, true, 1047576, 32768, 0.1, 0.4, 0.025, 0, ""},
	{"openai", "openai-responses", "gpt-4o", "GPT-4o", false, true, 128000, 16384, 2.5, 10, 1.25, 0, ""},
	{"openai", "openai-responses", "gpt-4o-2024-05-13", "GPT-4o (2024-05-13)", false, true, 128000, 4096, 5, 15, 0, 0, ""},
	{"openai", "openai-responses", "gpt-4o-2024-08-06", "GPT-4o (2024-08-06)", false, true, 128000, 16384, 2.5, 10, 1.25, 0, ""},
	{"openai", "openai-responses", "gpt-4o-2024-11-20", "GPT-4o (2024-11-20)", false, true, 128000, 16384, 2.5, 10, 1.25, 0, ""},
	{"openai", "openai-responses", "gpt-4o-mini", "GPT-4o mini", false, true, 128000, 16384, 0.15, 0.6, 0.075, 0, ""},
	{"openai", "openai-responses", "gpt-5", "GPT-5", true, true, 400000, 128000, 1.25, 10, 0.125, 0, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"openai", "openai-responses", "gpt-5-chat-latest", "GPT-5 Chat Latest", false, true, 128000, 16384, 1.25, 10, 0.125, 0, "off=-"},
	{"openai", "openai-responses", "gpt-5-mini", "GPT-5 Mini", true, true, 400000, 128000, 0.25, 2, 0.025, 0, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"openai", "openai-responses", "gpt-5-nano", "GPT-5 Nano", true, true, 400000, 128000, 0.05, 0.4, 0.005, 0, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"openai", "openai-responses", "gpt-5-pro", "GPT-5 Pro", true, true, 400000, 128000, 15, 120, 0, 0, "off=-,minimal=-,low=-,medium=-,high=high,xhigh=-"},
	{"openai", "openai-responses", "gpt-5.1", "GPT-5.1", true, true, 400000, 128000, 1.25, 10, 0.125, 0, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"openai", "openai-responses", "gpt-5.2", "GPT-5.2", true, true, 400000, 128000, 1.75, 14, 0.175, 0, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-5.2-pro", "GPT-5.2 Pro", true, true, 400000, 128000, 21, 168, 0, 0, "off=-,minimal=-,low=-,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-5.3-codex", "GPT-5.3 Codex", true, true, 400000, 128000, 1.75, 14, 0.175, 0, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-5.3-codex-spark", "GPT-5.3 Codex Spark", true, true, 128000, 32000, 1.75, 14, 0.175, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-5.4", "GPT-5.4", true, true, 272000, 128000, 2.5, 15, 0.25, 0, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-5.4-mini", "GPT-5.4 mini", true, true, 400000, 128000, 0.75, 4.5, 0.075, 0, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-5.4-nano", "GPT-5.4 nano", true, true, 400000, 128000, 0.2, 1.25, 0.02, 0, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-5.4-pro", "GPT-5.4 Pro", true, true, 1050000, 128000, 30, 180, 0, 0, "off=-,minimal=-,low=-,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-5.5", "GPT-5.5", true, true, 272000, 128000, 5, 30, 0.5, 0, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-5.5-pro", "GPT-5.5 Pro", true, true, 1050000, 128000, 30, 180, 0, 0, "off=-,minimal=-,low=-,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-5.6-cyber", "GPT-5.6 Cyber", true, true, 400000, 128000, 12.5, 75, 1.25, 15.625, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-5.6-luna", "GPT-5.6 Luna", true, true, 272000, 128000, 0.2, 1.2, 0.02, 0.25, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-5.6-sol", "GPT-5.6 Sol", true, true, 272000, 128000, 4, 20, 0.4, 5, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-5.6-terra", "GPT-5.6 Terra", true, true, 272000, 128000, 2, 12, 0.2, 2.5, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-6-astra", "GPT-6 Astra", true, true, 272000, 128000, 10, 50, 1, 12.5, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-6-cyber", "GPT-6 Cyber", true, true, 1050000, 128000, 20, 100, 2, 25, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-6-luna", "GPT-6 Luna", true, true, 272000, 128000, 0.1, 0.5, 0.01, 0.125, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-6-sol", "GPT-6 Sol", true, true, 272000, 128000, 2, 10, 0.2, 2.5, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-6.1-sol", "GPT-6.1 Sol", true, true, 272000, 128000, 2, 10, 0.1, 2.5, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-6.1-terra", "GPT-6.1 Terra", true, true, 272000, 128000, 1, 5, 0.05, 1.25, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-6.2-astra", "GPT-6.2 Astra", true, true, 272000, 128000, 8, 40, 0.4, 10, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-6.2-sol", "GPT-6.2 Sol", true, true, 272000, 128000, 2, 10, 0.1, 2.5, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-daybreak-blue-latest", "Daybreak Blue", true, true, 1050000, 128000, 4, 20, 0.4, 5, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "gpt-daybreak-red-latest", "Daybreak Red", true, true, 400000, 128000, 12.5, 75, 1.25, 15.625, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openai", "openai-responses", "o1", "o1", true, true, 200000, 100000, 15, 60, 7.5, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"openai", "openai-responses", "o1-pro", "o1-pro", true, true, 200000, 100000, 150, 600, 0, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"openai", "openai-responses", "o3", "o3", true, true, 200000, 100000, 2, 8, 0.5, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"openai", "openai-responses", "o3-mini", "o3-mini", true, false, 200000, 100000, 1.1, 4.4, 0.55, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"openai", "openai-responses", "o3-pro", "o3-pro", true, true, 200000, 100000, 20, 80, 0, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"openai", "openai-responses", "o4-mini", "o4-mini", true, true, 200000, 100000, 1.1, 4.4, 0.275, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"google", "google-generative-ai", "deep-research-max-preview-04-2026", "Deep Research Max Preview (Apr-21-2026)", true, true, 1048576, 65536, 2, 12, 0.2, 0, ""},
	{"google", "google-generative-ai", "deep-research-preview-04-2026", "Deep Research Preview (Apr-21-2026)", true, true, 1048576, 65536, 2, 12, 0.2, 0, ""},
	{"google", "google-generative-ai", "gemini-2.5-computer-use-preview-10-2025", "Gemini 2.5 Computer Use Preview 10-2025", true, true, 128000, 64000, 1.25, 10, 0, 0, ""},
	{"google", "google-generative-ai", "gemini-2.5-flash", "Gemini 2.5 Flash", true, true, 1048576, 65536, 0.3, 2.5, 0.03, 0, ""},
	{"google", "google-generative-ai", "gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite", true, true, 1048576, 65536, 0.1, 0.4, 0.01, 0, ""},
	{"google", "google-generative-ai", "gemini-2.5-pro", "Gemini 2.5 Pro", true, true, 1048576, 65536, 1.25, 10, 0.125, 0, ""},
	{"google", "google-generative-ai", "gemini-3-flash-preview", "Gemini 3 Flash Preview", true, true, 1048576, 65536, 0.5, 3, 0.05, 0, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"google", "google-generative-ai", "gemini-3.1-flash-lite", "Gemini 3.1 Flash Lite", true, true, 1048576, 65536, 0.25, 1.5, 0.025, 0, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"google", "google-generative-ai", "gemini-3.1-flash-lite-preview", "Gemini 3.1 Flash Lite Preview", true, true, 1048576, 65536, 0.25, 1.5, 0.025, 0, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"google", "google-generative-ai", "gemini-3.1-pro-preview", "Gemini 3.1 Pro Preview", true, true, 1048576, 65536, 2, 12, 0.2, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"google", "google-generative-ai", "gemini-3.1-pro-preview-customtools", "Gemini 3.1 Pro Preview Custom Tools", true, true, 1048576, 65536, 2, 12, 0.2, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"google", "google-generative-ai", "gemini-3.5-flash", "Gemini 3.5 Flash", true, true, 1048576, 65536, 1.5, 9, 0.15, 0, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"google", "google-generative-ai", "gemini-3.5-flash-lite", "Gemini 3.5 Flash Lite", true, true, 1048576, 65536, 0.3, 2.5, 0.03, 0, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"google", "google-generative-ai", "gemini-3.6-flash", "Gemini 3.6 Flash", true, true, 1048576, 65536, 0.75, 3.75, 0.075, 0, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"google", "google-generative-ai", "gemini-3.7-flash", "Gemini 3.7 Flash", true, true, 1048576, 65536, 0.75, 3.75, 0.075, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"google", "google-generative-ai", "gemini-3.8-flash", "Gemini 3.8 Flash", true, true, 1048576, 65536, 0.75, 3.75, 0.075, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"google", "google-generative-ai", "gemini-4-argon", "Gemini 4 Argon", true, true, 1048576, 32768, 2, 10, 0.1, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"google", "google-generative-ai", "gemini-4-carbon", "Gemini 4 Carbon", true, true, 1048576, 32768, 2, 10, 0.1, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"google", "google-generative-ai", "gemini-4-hydrogen", "Gemini 4 Hydrogen", true, true, 1048576, 65536, 1.5, 7.5, 0.075, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"google", "google-generative-ai", "gemini-4-neon", "Gemini 4 Neon", true, true, 1048576, 65536, 3, 15, 0.15, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"google", "google-generative-ai", "gemini-flash-latest", "Gemini Flash Latest", true, true, 1048576, 65536, 1.5, 9, 0.15, 0, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"google", "google-generative-ai", "gemini-flash-lite-latest", "Gemini Flash-Lite Latest", true, true, 1048576, 65536, 0.25, 1.5, 0.025, 0, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"google", "google-generative-ai", "gemini-pro-latest", "Gemini Pro Latest", true, true, 1048576, 65536, 2, 12, 0.2, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"google", "google-generative-ai", "gemini-robotics-er-2-preview", "Gemini Robotics-ER 2 Preview", true, true, 131072, 65536, 1, 5, 0.1, 0, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"google", "google-generative-ai", "gemma-4-26b-a4b-it", "Gemma 4 26B A4B IT", true, true, 262144, 32768, 0, 0, 0, 0, "off=-,minimal=MINIMAL,low=-,medium=-,high=HIGH"},
	{"google", "google-generative-ai", "gemma-4-31b-it", "Gemma 4 31B IT", true, true, 262144, 32768, 0, 0, 0, 0, "off=-,minimal=MINIMAL,low=-,medium=-,high=HIGH"},
	{"google-vertex", "google-vertex", "gemini-2.5-flash", "Gemini 2.5 Flash", true, true, 1048576, 65536, 0.3, 2.5, 0.03, 0, ""},
	{"google-vertex", "google-vertex", "gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite", true, true, 1048576, 65536, 0.1, 0.4, 0.01, 0, ""},
	{"google-vertex", "google-vertex", "gemini-2.5-pro", "Gemini 2.5 Pro", true, true, 1048576, 65536, 1.25, 10, 0.125, 0, ""},
	{"google-vertex", "google-vertex", "gemini-3-flash-preview", "Gemini 3 Flash Preview", true, true, 1048576, 65536, 0.5, 3, 0.05, 0, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"google-vertex", "google-vertex", "gemini-3.1-flash-lite", "Gemini 3.1 Flash Lite", true, true, 1048576, 65536, 0.25, 1.5, 0.025, 0, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"google-vertex", "google-vertex", "gemini-3.1-pro-preview", "Gemini 3.1 Pro Preview", true, true, 1048576, 65536, 2, 12, 0.2, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"google-vertex", "google-vertex", "gemini-3.1-pro-preview-customtools", "Gemini 3.1 Pro Preview Custom Tools", true, true, 1048576, 65536, 2, 12, 0.2, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"google-vertex", "google-vertex", "gemini-3.5-flash", "Gemini 3.5 Flash", true, true, 1048576, 65536, 1.5, 9, 0.15, 0, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"google-vertex", "google-vertex", "gemini-3.5-flash-lite", "Gemini 3.5 Flash Lite", true, true, 1048576, 65536, 0.3, 2.5, 0.03, 0, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"google-vertex", "google-vertex", "gemini-3.6-flash", "Gemini 3.6 Flash", true, true, 1048576, 65536, 0.75, 3.75, 0.075, 0, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"google-vertex", "google-vertex", "gemini-3.7-flash", "Gemini 3.7 Flash", true, true, 1048576, 65536, 0.75, 3.75, 0.075, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"google-vertex", "google-vertex", "gemini-3.8-flash", "Gemini 3.8 Flash", true, true, 1048576, 65536, 0.75, 3.75, 0.075, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"google-vertex", "google-vertex", "gemini-4-argon", "Gemini 4 Argon", true, true, 1048576, 65536, 2, 10, 0.1, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"google-vertex", "google-vertex", "gemini-4-carbon", "Gemini 4 Carbon", true, true, 1048576, 65536, 2, 10, 0.1, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"google-vertex", "google-vertex", "gemini-4-hydrogen", "Gemini 4 Hydrogen", true, true, 1048576, 65536, 1.5, 7.5, 0.075, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"google-vertex", "google-vertex", "gemini-4-neon", "Gemini 4 Neon", true, true, 1048576, 65536, 3, 15, 0.15, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"google-vertex", "google-vertex", "gemini-robotics-er-2-preview", "Gemini Robotics-ER 2 Preview", true, true, 131072, 65536, 1, 5, 0.1, 0, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"xai", "openai-responses", "grok-4.3", "Grok 4.3", true, true, 1000000, 30000, 1.25, 2.5, 0.2, 0, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"xai", "openai-responses", "grok-4.5", "Grok 4.5", true, true, 500000, 500000, 2, 6, 0.3, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"xai", "openai-responses", "grok-4.6", "Grok 4.6", true, true, 500000, 500000, 2, 6, 0.5, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"xai", "openai-responses", "grok-4.7", "Grok 4.7", true, true, 500000, 500000, 2, 6, 0.5, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"groq", "openai-completions", "llama-3.1-8b-instant", "Llama 3.1 8B", false, false, 131072, 131072, 0.05, 0.08, 0, 0, ""},
	{"groq", "openai-completions", "llama-3.3-70b-versatile", "Llama 3.3 70B", false, false, 131072, 32768, 0.59, 0.79, 0, 0, ""},
	{"groq", "openai-completions", "openai/gpt-oss-120b", "GPT OSS 120B", true, false, 131072, 65536, 0.15, 0.6, 0.075, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"groq", "openai-completions", "openai/gpt-oss-20b", "GPT OSS 20B", true, false, 131072, 65536, 0.075, 0.3, 0.0375, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"groq", "openai-completions", "openai/gpt-oss-safeguard-20b", "Safety GPT OSS 20B", true, false, 131072, 65536, 0.075, 0.3, 0.0375, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"groq", "openai-completions", "qwen/qwen3.6-27b", "Qwen3.6 27B", true, true, 131072, 16384, 0.6, 3, 0.3, 0, "off=none,minimal=-,low=-,medium=-,high=default,xhigh=-"},
	{"groq", "openai-completions", "qwen/qwen3.8-27b", "Qwen3.8 27B", true, true, 131072, 16384, 0.8, 4, 0, 0, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"deepseek", "openai-completions", "deepseek-flash", "DeepSeek V4.1 Flash", true, true, 1000000, 384000, 0.3, 1.2, 0.006, 0, "minimal=-,low=low,medium=-,high=high"},
	{"deepseek", "openai-completions", "deepseek-v4-pro", "DeepSeek V4 Pro", true, false, 1000000, 384000, 1.32, 3.96, 0.044, 0, "minimal=-,low=-,medium=-,high=high"},
	{"cerebras", "openai-completions", "gpt-oss-120b", "GPT OSS 120B", true, false, 131072, 40960, 0.35, 0.75, 0.35, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"cerebras", "openai-completions", "qwen-3.8-27b", "Qwen3.8 27B", true, true, 131072, 40960, 0.99, 1.49, 0.99, 0, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"mistral", "openai-completions", "codestral-2508", "Codestral 25.08", false, false, 256000, 8192, 0.3, 0.9, 0.03, 0, ""},
	{"mistral", "openai-completions", "codestral-latest", "Codestral (latest)", false, false, 256000, 4096, 0.3, 0.9, 0.03, 0, ""},
	{"mistral", "openai-completions", "deepseek-v4-1-flash-1017", "DeepSeek V4.1 Flash 1017", true, true, 1048576, 128000, 0.3, 1.2, 0.007, 0, "off=none,minimal=-,low=low,medium=-,high=high,xhigh=-"},
	{"mistral", "openai-completions", "devstral-2512", "Devstral 2", false, false, 262144, 262144, 0.4, 2, 0.04, 0, ""},
	{"mistral", "openai-completions", "devstral-latest", "Devstral 2", false, false, 262144, 262144, 0.4, 2, 0.04, 0, ""},
	{"mistral", "openai-completions", "devstral-medium-latest", "Devstral 2 (latest)", false, false, 262144, 262144, 0.4, 2, 0.04, 0, ""},
	{"mistral", "openai-completions", "glm-5-2", "GLM-5.2", true, false, 1048576, 131072, 1.4, 4.4, 0.14, 0, "off=none,minimal=-,low=-,medium=-,high=high,xhigh=-"},
	{"mistral", "openai-completions", "labs-devstral-small-2512", "Devstral Small 2", false, true, 256000, 256000, 0, 0, 0, 0, ""},
	{"mistral", "openai-completions", "labs-leanstral-1-5-1", "Leanstral 1.5", true, true, 262144, 128000, 0, 0, 0, 0, "off=none,minimal=-,low=-,medium=-,high=high,xhigh=-"},
	{"mistral", "openai-completions", "magistral-medium-latest", "Magistral Medium (latest)", true, true, 262144, 16384, 2, 5, 0.2, 0, "off=none,minimal=-,low=-,medium=-,high=high,xhigh=-"},
	{"mistral", "openai-completions", "ministral-14b-2512", "Ministral 3 14B", false, true, 262144, 262144, 0.2, 0.2, 0.02, 0, ""},
	{"mistral", "openai-completions", "ministral-3b-2512", "Ministral 3 3B", false, true, 131072, 131072, 0.1, 0.1, 0.01, 0, ""},
	{"mistral", "openai-completions", "ministral-3b-latest", "Ministral 3B (latest)", false, true, 131072, 128000, 0.1, 0.1, 0.01, 0, ""},
	{"mistral", "openai-completions", "ministral-8b-2512", "Ministral 3 8B", false, true, 262144, 262144, 0.15, 0.15, 0.015, 0, ""},
	{"mistral", "openai-completions", "ministral-8b-latest", "Ministral 8B (latest)", false, true, 262144, 128000, 0.15, 0.15, 0.015, 0, ""},
	{"mistral", "openai-completions", "mistral-large-2512", "Mistral Large 3", false, true, 262144, 262144, 0.5, 1.5, 0.05, 0, ""},
	{"mistral", "openai-completions", "mistral-large-4", "Mistral Large 4", true, true, 1048576, 262144, 0.7, 2.1, 0.07, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"mistral", "openai-completions", "mistral-large-4-0-8", "Mistral Large 4.0.8", true, true, 1048576, 262144, 0.7, 2.1, 0.07, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"mistral", "openai-completions", "mistral-large-latest", "Mistral Large (latest)", true, true, 1048576, 262144, 0.7, 2.1, 0.07, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"mistral", "openai-completions", "mistral-medium-2505", "Mistral Medium 3", false, true, 131072, 131072, 0.4, 2, 0.04, 0, ""},
	{"mistral", "openai-completions", "mistral-medium-2508", "Mistral Medium 3.1", false, true, 262144, 262144, 0.4, 2, 0.04, 0, ""},
	{"mistral", "openai-completions", "mistral-medium-2604", "Mistral Medium 3.5", true, true, 262144, 262144, 1.5, 7.5, 0.15, 0, "off=none,minimal=-,low=-,medium=-,high=high,xhigh=-"},
	{"mistral", "openai-completions", "mistral-medium-3.5", "Mistral Medium 3.5", true, true, 262144, 262144, 1.5, 7.5, 0, 0, "off=none,minimal=-,low=-,medium=-,high=high,xhigh=-"},
	{"mistral", "openai-completions", "mistral-medium-latest", "Mistral Medium (latest)", true, true, 262144, 262144, 1.5, 7.5, 0.15, 0, "off=none,minimal=-,low=-,medium=-,high=high,xhigh=-"},
	{"mistral", "openai-completions", "mistral-small-2506", "Mistral Small 3.2", false, true, 128000, 16384, 0.1, 0.3, 0.01, 0, ""},
	{"mistral", "openai-completions", "mistral-small-2603", "Mistral Small 4", true, true, 262144, 256000, 0.15, 0.6, 0.015, 0, "off=none,minimal=-,low=-,medium=-,high=high,xhigh=-"},
	{"mistral", "openai-completions", "mistral-small-latest", "Mistral Small (latest)", true, true, 262144, 256000, 0.15, 0.6, 0.015, 0, "off=none,minimal=-,low=-,medium=-,high=high,xhigh=-"},
	{"mistral", "openai-completions", "open-mistral-nemo", "Open Mistral Nemo", false, false, 128000, 128000, 0.15, 0.15, 0.015, 0, ""},
	{"mistral", "openai-completions", "pixtral-12b", "Pixtral 12B", false, true, 128000, 128000, 0.15, 0.15, 0.015, 0, ""},
	{"mistral", "openai-completions", "voxtral-small-2507", "Voxtral Small", false, false, 32768, 32000, 0.1, 0.4, 0.01, 0, ""},
	{"mistral", "openai-completions", "voxtral-small-latest", "Voxtral Small (latest)", false, false, 32768, 32000, 0.1, 0.4, 0.01, 0, ""},
	{"mistral", "openai-completions", "zai-glm-5-2", "GLM-5.2", true, false, 1048576, 131072, 1.4, 4.4, 0.14, 0, "off=none,minimal=-,low=-,medium=-,high=high,xhigh=-"},
	{"mistral", "openai-completions", "zai-glm-5-3", "GLM-5.3", true, false, 1048576, 131072, 1.4, 4.4, 0.14, 0, "off=-,minimal=-,low=low,medium=-,high=high,xhigh=-"},
	{"mistral", "openai-completions", "zai-glm-5-3-flash", "GLM-5.3-Flash", true, true, 1048576, 131072, 0.15, 0.5, 0.03, 0, "off=-,minimal=-,low=low,medium=-,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "deepseek/deepseek-chat", "DeepSeek: DeepSeek V3", false, false, 128000, 16000, 0.2574, 1.0287, 0, 0, ""},
	{"openrouter", "openai-completions", "deepseek/deepseek-chat-v3-0324", "DeepSeek: DeepSeek V3 0324", false, false, 128000, 115200, 0.29, 1.14, 0.11, 0, ""},
	{"openrouter", "openai-completions", "deepseek/deepseek-chat-v3.1", "DeepSeek: DeepSeek V3.1", true, false, 163840, 147456, 0.25, 0.95, 0.13, 0, ""},
	{"openrouter", "openai-completions", "deepseek/deepseek-r1-0528", "DeepSeek: R1 0528", true, false, 128000, 32000, 0.571, 2.286, 0, 0, "off=-"},
	{"openrouter", "openai-completions", "deepseek/deepseek-v3.1-terminus", "DeepSeek: DeepSeek V3.1 Terminus", true, false, 163840, 147456, 0.27, 1, 0, 0, ""},
	{"openrouter", "openai-completions", "deepseek/deepseek-v3.2", "DeepSeek: DeepSeek V3.2", true, false, 163840, 147456, 0.26, 0.38, 0.13, 0, ""},
	{"openrouter", "openai-completions", "deepseek/deepseek-v3.2-exp", "DeepSeek: DeepSeek V3.2 Exp", true, false, 163840, 147456, 0.27, 0.41, 0, 0, ""},
	{"openrouter", "openai-completions", "deepseek/deepseek-v4-flash", "DeepSeek: DeepSeek V4 Flash 0423", true, false, 1048576, 393216, 0.09, 0.18, 0.018, 0, "off=none,minimal=-,low=-,medium=-,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "deepseek/deepseek-v4-flash-0731", "DeepSeek: DeepSeek V4 Flash 0731", true, false, 1048576, 943718, 0.047, 0.3, 0.035, 0, "off=none,minimal=-,low=low,medium=-,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "deepseek/deepseek-v4-flash-vision-exp", "DeepSeek: DeepSeek V4 Flash Vision Exp", true, true, 1048575, 943717, 0.44, 1.32, 0.014, 0, "off=none,minimal=-,low=low,medium=-,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "deepseek/deepseek-v4-pro", "DeepSeek: DeepSeek V4 Pro 0423", true, false, 1048576, 393216, 0.9, 1.5, 0.2, 0, "off=none,minimal=-,low=-,medium=-,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "deepseek/deepseek-v4-pro-0813", "DeepSeek: DeepSeek V4 Pro 0813", true, false, 1048576, 943718, 1.32, 3.96, 0.044, 0, "off=none,minimal=-,low=low,medium=-,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "deepseek/deepseek-v4.1-flash", "DeepSeek: DeepSeek V4.1 Flash", true, true, 1048576, 943718, 0.3, 1.2, 0.006, 0, "off=none,minimal=-,low=low,medium=-,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "deepseek/deepseek-v4.1-flash-1017", "DeepSeek: DeepSeek V4.1 Flash 1017", true, true, 1048576, 393216, 0.15, 0.6, 0.003, 0, "off=none,minimal=-,low=low,medium=-,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "google/gemini-2.5-flash", "Google: Gemini 2.5 Flash", true, true, 1048576, 65535, 0.3, 2.5, 0.03, 0.083333, ""},
	{"openrouter", "openai-completions", "google/gemini-2.5-flash-lite", "Google: Gemini 2.5 Flash Lite", true, true, 1048576, 65535, 0.1, 0.4, 0.01, 0.083333, ""},
	{"openrouter", "openai-completions", "google/gemini-2.5-pro", "Google: Gemini 2.5 Pro", true, true, 1048576, 65536, 1.25, 10, 0.125, 0.375, "off=-"},
	{"openrouter", "openai-completions", "google/gemini-2.5-pro-preview", "Google: Gemini 2.5 Pro Preview 06-05", true, true, 1048576, 65536, 1.25, 10, 0.125, 0.375, "off=-"},
	{"openrouter", "openai-completions", "google/gemini-3-flash-preview", "Google: Gemini 3 Flash Preview", true, true, 1048576, 65536, 0.5, 3, 0.05, 0.083333, "off=none,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "google/gemini-3-pro-image", "Google: Nano Banana Pro (Gemini 3 Pro Image)", true, true, 65536, 32768, 2, 12, 0.2, 0.375, "off=-"},
	{"openrouter", "openai-completions", "google/gemini-3.1-flash-lite", "Google: Gemini 3.1 Flash Lite", true, true, 1048576, 65536, 0.25, 1.5, 0.025, 0.083333, "off=none,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "google/gemini-3.1-flash-lite-preview", "Google: Gemini 3.1 Flash Lite Preview", true, true, 1048576, 65536, 0.25, 1.5, 0.025, 0.083333, "off=none,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "google/gemini-3.1-pro-preview", "Google: Gemini 3.1 Pro Preview", true, true, 1048576, 65536, 2, 12, 0.2, 0.375, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "google/gemini-3.1-pro-preview-customtools", "Google: Gemini 3.1 Pro Preview Custom Tools", true, true, 1048576, 65536, 2, 12, 0.2, 0.375, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "google/gemini-3.5-flash", "Google: Gemini 3.5 Flash", true, true, 1048576, 65536, 1.5, 9, 0.15, 0.083333, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "google/gemini-3.5-flash-lite", "Google: Gemini 3.5 Flash Lite", true, true, 1048576, 65536, 0.3, 2.5, 0.03, 0.083333, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "google/gemini-3.6-flash", "Google: Gemini 3.6 Flash", true, true, 1048576, 65536, 0.75, 3.75, 0.075, 0.041667, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "google/gemini-3.7-flash", "Google: Gemini 3.7 Flash", true, true, 1048576, 65536, 0.75, 3.75, 0.075, 0.041667, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "google/gemini-3.8-flash", "Google: Gemini 3.8 Flash", true, true, 1048576, 65536, 0.825, 4.125, 0.0825, 0.041667, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "google/gemini-4-argon", "Google: Gemini 4 Argon", true, true, 1048576, 943718, 2, 10, 0.1, 0.1875, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "google/gemini-4-carbon", "Google: Gemini 4 Carbon", true, true, 1048576, 943718, 2, 10, 0.1, 0.1875, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "google/gemini-4-hydrogen", "Google: Gemini 4 Hydrogen", true, true, 1048576, 943718, 1.5, 7.5, 0.075, 0.083333, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "google/gemini-4-neon", "Google: Gemini 4 Neon", true, true, 1048576, 943718, 3, 15, 0.15, 0.083333, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "google/gemini-nano-banana-2.1", "Google: Nano Banana 2.1", true, true, 65536, 58982, 1.5, 7.5, 0, 0, "off=none,minimal=minimal,low=-,medium=-,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "mistralai/codestral-2508", "Mistral: Codestral 2508", false, false, 256000, 204800, 0.3, 0.9, 0.03, 0, ""},
	{"openrouter", "openai-completions", "mistralai/devstral-2512", "Mistral: Devstral 2 2512", false, false, 262144, 209715, 0.4, 2, 0.04, 0, ""},
	{"openrouter", "openai-completions", "mistralai/ministral-14b-2512", "Mistral: Ministral 3 14B 2512", false, true, 262144, 209715, 0.2, 0.2, 0.02, 0, ""},
	{"openrouter", "openai-completions", "mistralai/ministral-3b-2512", "Mistral: Ministral 3 3B 2512", false, true, 131072, 104857, 0.1, 0.1, 0.01, 0, ""},
	{"openrouter", "openai-completions", "mistralai/ministral-8b-2512", "Mistral: Ministral 3 8B 2512", false, true, 262144, 209715, 0.15, 0.15, 0.015, 0, ""},
	{"openrouter", "openai-completions", "mistralai/mistral-large", "Mistral Large", false, false, 128000, 102400, 2, 6, 0.2, 0, ""},
	{"openrouter", "openai-completions", "mistralai/mistral-large-2407", "Mistral Large 2407", false, false, 131072, 104857, 2, 6, 0.2, 0, ""},
	{"openrouter", "openai-completions", "mistralai/mistral-large-2512", "Mistral: Mistral Large 3 2512", false, true, 262144, 209715, 0.5, 1.5, 0.05, 0, ""},
	{"openrouter", "openai-completions", "mistralai/mistral-large-4-0", "Mistral: Mistral Large 4", true, true, 1048576, 262144, 0.7, 2.1, 0.07, 0, "off=none,minimal=-,low=-,medium=-,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "mistralai/mistral-medium-3", "Mistral: Mistral Medium 3", false, true, 131072, 104857, 0.44, 2.2, 0.044, 0, ""},
	{"openrouter", "openai-completions", "mistralai/mistral-medium-3-5", "Mistral: Mistral Medium 3.5", true, true, 262144, 209715, 1.5, 7.5, 0, 0, "off=none,minimal=-,low=-,medium=-,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "mistralai/mistral-medium-3.1", "Mistral: Mistral Medium 3.1", false, true, 131072, 104857, 0.44, 2.2, 0.044, 0, ""},
	{"openrouter", "openai-completions", "mistralai/mistral-nemo", "Mistral: Mistral Nemo", false, false, 131072, 16384, 0.029, 0.03, 0, 0, ""},
	{"openrouter", "openai-completions", "mistralai/mistral-saba", "Mistral: Saba", false, false, 32768, 26214, 0.2, 0.6, 0.02, 0, ""},
	{"openrouter", "openai-completions", "mistralai/mistral-small-2603", "Mistral: Mistral Small 4", true, true, 262144, 209715, 0.15, 0.6, 0.015, 0, "off=none,minimal=-,low=-,medium=-,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "mistralai/mistral-small-3.1-24b-instruct", "Mistral: Mistral Small 3.1 24B", false, true, 128000, 102400, 0.351, 0.555, 0, 0, ""},
	{"openrouter", "openai-completions", "mistralai/mistral-small-3.2-24b-instruct", "Mistral: Mistral Small 3.2 24B", false, true, 128000, 16384, 0.075, 0.2, 0, 0, ""},
	{"openrouter", "openai-completions", "mistralai/mixtral-8x22b-instruct", "Mistral: Mixtral 8x22B Instruct", false, false, 65536, 52428, 2, 6, 0.2, 0, ""},
	{"openrouter", "openai-completions", "mistralai/voxtral-small-24b-2507", "Mistral: Voxtral Small 24B 2507", false, false, 32768, 26214, 0.1, 0.3, 0.01, 0, ""},
	{"openrouter", "openai-completions", "moonshotai/kimi-k2", "MoonshotAI: Kimi K2 0711", false, false, 131072, 98304, 0.57, 2.3, 0, 0, ""},
	{"openrouter", "openai-completions", "moonshotai/kimi-k2-0905", "MoonshotAI: Kimi K2 0905", false, false, 262144, 98304, 0.6, 2.5, 0, 0, ""},
	{"openrouter", "openai-completions", "moonshotai/kimi-k2-thinking", "MoonshotAI: Kimi K2 Thinking", true, false, 262144, 98304, 0.6, 2.5, 0.15, 0, "off=-"},
	{"openrouter", "openai-completions", "moonshotai/kimi-k2.5", "MoonshotAI: Kimi K2.5", true, true, 262144, 4096, 0.41, 2.06, 0.07, 0, ""},
	{"openrouter", "openai-completions", "moonshotai/kimi-k2.6", "MoonshotAI: Kimi K2.6", true, true, 262144, 235929, 0.65, 3.41, 0.15, 0, ""},
	{"openrouter", "openai-completions", "moonshotai/kimi-k2.7-code", "MoonshotAI: Kimi K2.7 Code", true, true, 262144, 235929, 0.6, 3, 0.12, 0, "off=-"},
	{"openrouter", "openai-completions", "moonshotai/kimi-k3", "MoonshotAI: Kimi K3", true, true, 1048576, 131072, 0.192, 16, 0.182, 0, "off=none,minimal=-,low=low,medium=-,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "moonshotai/kimi-k3.1-pro", "MoonshotAI: Kimi K3.1 Pro", true, true, 1048576, 131072, 0.253, 8.8, 0.18, 0, "off=none,minimal=-,low=low,medium=-,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "openai/gpt-3.5-turbo-0613", "OpenAI: GPT-3.5 Turbo (older v0613)", false, false, 4095, 3685, 1, 2, 0, 0, ""},
	{"openrouter", "openai-completions", "openai/gpt-3.5-turbo-16k", "OpenAI: GPT-3.5 Turbo 16k", false, false, 16385, 4096, 3, 4, 0, 0, ""},
	{"openrouter", "openai-completions", "openai/gpt-4", "OpenAI: GPT-4", false, false, 8191, 4096, 30, 60, 0, 0, ""},
	{"openrouter", "openai-completions", "openai/gpt-4.1", "OpenAI: GPT-4.1", false, true, 1047576, 32768, 2, 8, 0.5, 0, ""},
	{"openrouter", "openai-completions", "openai/gpt-4.1-mini", "OpenAI: GPT-4.1 Mini", false, true, 1047576, 32768, 0.4, 1.6, 0.1, 0, ""},
	{"openrouter", "openai-completions", "openai/gpt-4.1-nano", "OpenAI: GPT-4.1 Nano", false, true, 1047576, 942818, 0.1, 0.4, 0.03, 0, ""},
	{"openrouter", "openai-completions", "openai/gpt-4o", "OpenAI: GPT-4o", false, true, 128000, 16384, 2.5, 10, 1.25, 0, ""},
	{"openrouter", "openai-completions", "openai/gpt-4o-2024-05-13", "OpenAI: GPT-4o (2024-05-13)", false, true, 128000, 4096, 5, 15, 0, 0, ""},
	{"openrouter", "openai-completions", "openai/gpt-4o-2024-08-06", "OpenAI: GPT-4o (2024-08-06)", false, true, 128000, 16384, 2.5, 10, 1.25, 0, ""},
	{"openrouter", "openai-completions", "openai/gpt-4o-2024-11-20", "OpenAI: GPT-4o (2024-11-20)", false, true, 128000, 16384, 2.5, 10, 1.25, 0, ""},
	{"openrouter", "openai-completions", "openai/gpt-4o-mini", "OpenAI: GPT-4o-mini", false, true, 128000, 16384, 0.15, 0.6, 0.075, 0, ""},
	{"openrouter", "openai-completions", "openai/gpt-4o-mini-2024-07-18", "OpenAI: GPT-4o-mini (2024-07-18)", false, true, 128000, 16384, 0.15, 0.6, 0.075, 0, ""},
	{"openrouter", "openai-completions", "openai/gpt-5", "OpenAI: GPT-5", true, true, 400000, 128000, 1.25, 10, 0.125, 0, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "openai/gpt-5-mini", "OpenAI: GPT-5 Mini", true, true, 400000, 128000, 0.25, 2, 0.025, 0, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "openai/gpt-5-nano", "OpenAI: GPT-5 Nano", true, true, 400000, 128000, 0.05, 0.4, 0.005, 0, "off=-,minimal=minimal,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "openai/gpt-5-pro", "OpenAI: GPT-5 Pro", true, true, 400000, 128000, 15, 120, 0, 0, "off=-,minimal=-,low=-,medium=-,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "openai/gpt-5.1", "OpenAI: GPT-5.1", true, true, 400000, 128000, 1.25, 10, 0.125, 0, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "openai/gpt-5.1-codex", "OpenAI: GPT-5.1-Codex", true, true, 400000, 128000, 1.25, 10, 0.13, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "openai/gpt-5.1-codex-max", "OpenAI: GPT-5.1-Codex-Max", true, true, 400000, 128000, 1.25, 10, 0.125, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-5.1-codex-mini", "OpenAI: GPT-5.1-Codex-Mini", true, true, 400000, 128000, 0.25, 2, 0.03, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "openai/gpt-5.2", "OpenAI: GPT-5.2", true, true, 400000, 128000, 1.75, 14, 0.175, 0, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-5.2-chat", "OpenAI: GPT-5.2 Chat", false, true, 128000, 32000, 1.75, 14, 0.175, 0, "xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-5.2-codex", "OpenAI: GPT-5.2-Codex", true, true, 400000, 128000, 1.75, 14, 0.175, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-5.2-pro", "OpenAI: GPT-5.2 Pro", true, true, 400000, 128000, 21, 168, 0, 0, "off=-,minimal=-,low=-,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-5.3-codex", "OpenAI: GPT-5.3-Codex", true, true, 400000, 128000, 1.75, 14, 0.175, 0, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-5.4", "OpenAI: GPT-5.4", true, true, 1050000, 128000, 2.5, 15, 0.25, 0, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-5.4-mini", "OpenAI: GPT-5.4 Mini", true, true, 400000, 128000, 0.75, 4.5, 0.075, 0, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-5.4-nano", "OpenAI: GPT-5.4 Nano", true, true, 400000, 128000, 0.2, 1.25, 0.02, 0, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-5.4-pro", "OpenAI: GPT-5.4 Pro", true, true, 1050000, 128000, 30, 180, 0, 0, "off=-,minimal=-,low=-,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-5.5", "OpenAI: GPT-5.5", true, true, 1050000, 128000, 5, 30, 0.5, 0, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-5.5-pro", "OpenAI: GPT-5.5 Pro", true, true, 1050000, 128000, 30, 180, 0, 0, "off=-,minimal=-,low=-,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-5.6-luna", "OpenAI: GPT-5.6 Luna", true, true, 1050000, 128000, 0.2, 1.2, 0.02, 0.25, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-5.6-luna-pro", "OpenAI: GPT-5.6 Luna Pro", true, true, 1050000, 128000, 0.2, 1.2, 0.02, 0.25, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-5.6-sol", "OpenAI: GPT-5.6 Sol", true, true, 1050000, 128000, 4, 20, 0.4, 5, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-5.6-sol-pro", "OpenAI: GPT-5.6 Sol Pro", true, true, 1050000, 128000, 4, 20, 0.4, 5, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-5.6-terra", "OpenAI: GPT-5.6 Terra", true, true, 1050000, 128000, 2, 12, 0.2, 2.5, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-5.6-terra-pro", "OpenAI: GPT-5.6 Terra Pro", true, true, 1050000, 128000, 2, 12, 0.2, 2.5, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-6-astra", "OpenAI: GPT-6 Astra", true, true, 1050000, 128000, 10, 50, 1, 12.5, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-6-astra-pro", "OpenAI: GPT-6 Astra Pro", true, true, 1050000, 128000, 10, 50, 1, 12.5, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-6-luna", "OpenAI: GPT-6 Luna", true, true, 1050000, 128000, 0.1, 0.5, 0.01, 0.125, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-6-luna-pro", "OpenAI: GPT-6 Luna Pro", true, true, 1050000, 128000, 0.1, 0.5, 0.01, 0.125, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-6-sol", "OpenAI: GPT-6 Sol", true, true, 1050000, 128000, 2, 10, 0.2, 2.5, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-6-sol-pro", "OpenAI: GPT-6 Sol Pro", true, true, 1050000, 128000, 2, 10, 0.2, 2.5, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-6.1-sol", "OpenAI: GPT-6.1 Sol", true, true, 1050000, 128000, 2, 10, 0.1, 2.5, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-6.1-sol-pro", "OpenAI: GPT-6.1 Sol Pro", true, true, 1050000, 128000, 2, 10, 0.1, 2.5, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-6.1-terra", "OpenAI: GPT-6.1 Terra", true, true, 1050000, 128000, 1, 5, 0.05, 1.25, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-6.1-terra-pro", "OpenAI: GPT-6.1 Terra Pro", true, true, 1050000, 128000, 1, 5, 0.05, 1.25, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-6.2-astra", "OpenAI: GPT-6.2 Astra", true, true, 1050000, 128000, 8, 40, 0.4, 10, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-6.2-astra-pro", "OpenAI: GPT-6.2 Astra Pro", true, true, 1050000, 128000, 8, 40, 0.4, 10, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-6.2-sol", "OpenAI: GPT-6.2 Sol", true, true, 1050000, 128000, 2, 10, 0.1, 2.5, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-6.2-sol-pro", "OpenAI: GPT-6.2 Sol Pro", true, true, 1050000, 128000, 2, 10, 0.1, 2.5, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "openai/gpt-audio", "OpenAI: GPT Audio", false, false, 128000, 16384, 2.5, 10, 0, 0, ""},
	{"openrouter", "openai-completions", "openai/gpt-audio-mini", "OpenAI: GPT Audio Mini", false, false, 128000, 16384, 0.6, 2.4, 0, 0, ""},
	{"openrouter", "openai-completions", "openai/gpt-chat-latest", "OpenAI: GPT Chat Latest", false, true, 400000, 128000, 5, 30, 0.5, 0, ""},
	{"openrouter", "openai-completions", "openai/gpt-oss-120b", "OpenAI: gpt-oss-120b", true, false, 131072, 117964, 0.09, 0.36, 0, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "openai/gpt-oss-20b", "OpenAI: gpt-oss-20b", true, false, 131072, 117964, 0.018, 0.09, 0.009, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "openai/gpt-oss-safeguard-20b", "OpenAI: gpt-oss-safeguard-20b", true, false, 131072, 65536, 0.075, 0.3, 0.0375, 0, "off=-"},
	{"openrouter", "openai-completions", "openai/o3", "OpenAI: o3", true, true, 200000, 100000, 2, 8, 0.5, 0, "off=-"},
	{"openrouter", "openai-completions", "openai/o3-pro", "OpenAI: o3 Pro", true, true, 200000, 100000, 20, 80, 0, 0, "off=-"},
	{"openrouter", "openai-completions", "qwen/qwen3-coder", "Qwen: Qwen3 Coder 480B A35B", false, false, 262144, 65536, 0.3, 1, 0.1, 0, ""},
	{"openrouter", "openai-completions", "qwen/qwen3-coder-30b-a3b-instruct", "Qwen: Qwen3 Coder 30B A3B Instruct", false, false, 262144, 235929, 0.15, 0.6, 0, 0, ""},
	{"openrouter", "openai-completions", "qwen/qwen3-coder-flash", "Qwen: Qwen3 Coder Flash", false, false, 1000000, 65536, 0.195, 0.975, 0.039, 0.24375, ""},
	{"openrouter", "openai-completions", "qwen/qwen3-coder-next", "Qwen: Qwen3 Coder Next", false, false, 262144, 235929, 0.12, 0.8, 0.07, 0, ""},
	{"openrouter", "openai-completions", "x-ai/grok-4.20", "SpaceXSI: Grok 4.20", true, true, 2000000, 1800000, 1.25, 2.5, 0.2, 0, ""},
	{"openrouter", "openai-completions", "x-ai/grok-4.3", "SpaceXSI: Grok 4.3", true, true, 1000000, 900000, 1.25, 2.5, 0.2, 0, "off=none,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "x-ai/grok-4.5", "SpaceXSI: Grok 4.5", true, true, 500000, 450000, 2, 6, 0.3, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "x-ai/grok-4.6", "SpaceXSI: Grok 4.6", true, true, 500000, 450000, 2, 6, 0.5, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "x-ai/grok-4.7", "SpaceXSI: Grok 4.7", true, true, 500000, 450000, 2, 6, 0.5, 0, "off=-,minimal=-,low=low,medium=medium,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "z-ai/glm-4.5", "Z.ai: GLM 4.5", true, false, 131072, 98304, 0.6, 2.2, 0.11, 0, ""},
	{"openrouter", "openai-completions", "z-ai/glm-4.5-air", "Z.ai: GLM 4.5 Air", true, false, 131072, 98304, 0.13, 0.85, 0.025, 0, ""},
	{"openrouter", "openai-completions", "z-ai/glm-4.5v", "Z.ai: GLM 4.5V", true, true, 65536, 16384, 0.6, 1.8, 0.11, 0, ""},
	{"openrouter", "openai-completions", "z-ai/glm-4.6", "Z.ai: GLM 4.6", true, false, 202752, 131072, 0.5, 2, 0.1, 0, ""},
	{"openrouter", "openai-completions", "z-ai/glm-4.6v", "Z.ai: GLM 4.6V", true, true, 131072, 32768, 0.3, 0.9, 0.05, 0, ""},
	{"openrouter", "openai-completions", "z-ai/glm-4.7", "Z.ai: GLM 4.7", true, false, 202752, 131072, 0.4, 1.75, 0.08, 0, ""},
	{"openrouter", "openai-completions", "z-ai/glm-4.7-flash", "Z.ai: GLM 4.7 Flash", true, false, 131072, 117964, 0.0605, 0.4, 0, 0, ""},
	{"openrouter", "openai-completions", "z-ai/glm-5", "Z.ai: GLM 5", true, false, 202752, 131072, 0.6, 1.9, 0.119, 0, ""},
	{"openrouter", "openai-completions", "z-ai/glm-5-turbo", "Z.ai: GLM 5 Turbo", true, false, 202752, 131072, 1.2, 4, 0.24, 0, ""},
	{"openrouter", "openai-completions", "z-ai/glm-5.1", "Z.ai: GLM 5.1", true, false, 204800, 131072, 1.19, 3.74, 0.6, 0, ""},
	{"openrouter", "openai-completions", "z-ai/glm-5.2", "Z.ai: GLM 5.2", true, false, 1048576, 943718, 0.62, 2.42, 0.14, 0, "off=none,minimal=-,low=-,medium=-,high=high,xhigh=xhigh"},
	{"openrouter", "openai-completions", "z-ai/glm-5.3", "Z.ai: GLM 5.3", true, false, 1048576, 943718, 0.0699, 1.4, 0.0689, 0, "off=-,minimal=-,low=low,medium=-,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "z-ai/glm-5.3-flash", "Z.ai: GLM 5.3 Flash", true, true, 1048576, 131072, 0.0399, 0.0784, 0.03, 0, "off=-,minimal=-,low=low,medium=-,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "z-ai/glm-5.3-flashx", "Z.ai: GLM 5.3 FlashX", true, true, 1048576, 131072, 0.37, 1.25, 0.075, 0, "off=-,minimal=-,low=low,medium=-,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "z-ai/glm-5.3-flashx-legal", "Z.ai: GLM 5.3 FlashX Legal", true, true, 1048576, 131072, 0.37, 1.25, 0.075, 0, "off=-,minimal=-,low=low,medium=-,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "z-ai/glm-5.3-prime", "Z.ai: GLM 5.3 Prime", true, false, 1000000, 131072, 1.68, 5.28, 0.336, 0, "off=-,minimal=-,low=low,medium=-,high=high,xhigh=-"},
	{"openrouter", "openai-completions", "z-ai/glm-5v-turbo", "Z.ai: GLM 5V Turbo", true, true, 202752, 131072, 1.2, 4, 0.24, 0, ""},
}
