package llm

// Built-in provider names (pi's).
const (
	ProviderAnthropic    = "anthropic"
	ProviderOpenAI       = "openai"
	ProviderAzure        = "azure"
	ProviderGoogle       = "google"
	ProviderGoogleVertex = "google-vertex"
	ProviderXAI          = "xai"
	ProviderGroq         = "groq"
	ProviderDeepSeek     = "deepseek"
	ProviderCerebras     = "cerebras"
	ProviderMistral      = "mistral"
	ProviderOpenRouter   = "openrouter"
)

// BuiltinModels returns the models Prime knows without configuration:
// current Anthropic models, and pi 1.6's catalog for OpenAI and xAI (over
// the Responses API), Google's Gemini API and Vertex AI, Groq, DeepSeek,
// Cerebras, Mistral and OpenRouter, with their windows, output limits,
// reasoning support and levels, input kinds and list prices (US dollars
// per million tokens; Anthropic cache reads cost 0.1× and 5-minute cache
// writes 1.25× the input price). Each provider's default (pi's) comes
// first among its models. models.json can correct any of them without a
// new release. Each call returns a fresh slice.
func BuiltinModels() []Model {
	anthropic := func(id, name string, in, out float64, window, maxOut int, style string, xhigh bool) Model {
		return Model{
			ID: id, Name: name, Provider: ProviderAnthropic, API: APIAnthropicMessages,
			BaseURL:   "https://api.anthropic.com",
			Reasoning: true, ThinkingStyle: style, SupportsXHigh: xhigh,
			Input:         []string{"text", "image"},
			Cost:          ModelCost{Input: in, Output: out, CacheRead: in * 0.1, CacheWrite: in * 1.25},
			ContextWindow: window, MaxTokens: maxOut,
		}
	}
	models := []Model{
		anthropic("claude-fable-5-1", "Claude Fable 5.1", 10, 50, 1_000_000, 128_000, ThinkingAlwaysOn, true),
		anthropic("claude-opus-5-5", "Claude Opus 5.5", 4, 20, 1_000_000, 128_000, ThinkingAlwaysOn, true),
		anthropic("claude-sonnet-5-5", "Claude Sonnet 5.5", 2, 10, 1_000_000, 128_000, ThinkingAdaptive, false),
		anthropic("claude-opus-5", "Claude Opus 5", 5, 25, 1_000_000, 128_000, ThinkingAdaptive, true),
		anthropic("claude-sonnet-5", "Claude Sonnet 5", 2, 10, 1_000_000, 128_000, ThinkingAdaptive, false),
		anthropic("claude-opus-4-5", "Claude Opus 4.5", 5, 25, 200_000, 64_000, ThinkingBudgeted, false),
		anthropic("claude-sonnet-4-5", "Claude Sonnet 4.5", 3, 15, 200_000, 64_000, ThinkingBudgeted, false),
		anthropic("claude-haiku-4-5", "Claude Haiku 4.5", 1, 5, 200_000, 64_000, ThinkingBudgeted, false),
	}
	for _, c := range catalog {
		if providerDefaults[c.provider] == c.id {
			models = append(models, c.model())
		}
	}
	for _, c := range catalog {
		if providerDefaults[c.provider] != c.id {
			models = append(models, c.model())
		}
	}
	return models
}

func ptr[T any](v T) *T { return &v }
