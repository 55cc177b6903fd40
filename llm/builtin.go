package llm

// Built-in provider names.
const (
	ProviderAnthropic = "anthropic"
	ProviderOpenAI    = "openai"
)

// BuiltinModels returns the models Prime knows without configuration:
// current Anthropic and OpenAI models with their windows, output limits,
// reasoning support, input kinds and list prices (US dollars per million
// tokens; Anthropic cache reads cost 0.1× and 5-minute cache writes 1.25×
// the input price, OpenAI cached input 0.1×). Prices and limits are the
// vendors' published figures as of November 2026; models.json can correct
// any of them without a new release. Each call returns a fresh slice.
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
	completionTokens := &OpenAICompat{MaxTokensField: "max_completion_tokens", SupportsDeveloperRole: ptr(true)}
	openai := func(id, name string, in, out, cached, cacheWrite float64, window, maxOut int, reasoning, xhigh bool) Model {
		return Model{
			ID: id, Name: name, Provider: ProviderOpenAI, API: APIOpenAICompletions,
			BaseURL:   "https://api.openai.com/v1",
			Reasoning: reasoning, SupportsXHigh: xhigh,
			Input:         []string{"text", "image"},
			Cost:          ModelCost{Input: in, Output: out, CacheRead: cached, CacheWrite: cacheWrite},
			ContextWindow: window, MaxTokens: maxOut,
			Compat: completionTokens,
		}
	}
	return []Model{
		anthropic("claude-fable-5-1", "Claude Fable 5.1", 10, 50, 1_000_000, 128_000, ThinkingAlwaysOn, true),
		anthropic("claude-opus-5-5", "Claude Opus 5.5", 4, 20, 1_000_000, 128_000, ThinkingAlwaysOn, true),
		anthropic("claude-sonnet-5-5", "Claude Sonnet 5.5", 2, 10, 1_000_000, 128_000, ThinkingAdaptive, false),
		anthropic("claude-opus-5", "Claude Opus 5", 5, 25, 1_000_000, 128_000, ThinkingAdaptive, true),
		anthropic("claude-sonnet-5", "Claude Sonnet 5", 2, 10, 1_000_000, 128_000, ThinkingAdaptive, false),
		anthropic("claude-opus-4-5", "Claude Opus 4.5", 5, 25, 200_000, 64_000, ThinkingBudgeted, false),
		anthropic("claude-sonnet-4-5", "Claude Sonnet 4.5", 3, 15, 200_000, 64_000, ThinkingBudgeted, false),
		anthropic("claude-haiku-4-5", "Claude Haiku 4.5", 1, 5, 200_000, 64_000, ThinkingBudgeted, false),

		openai("gpt-5.6-sol", "GPT-5.6 Sol", 5, 30, 0.5, 6.25, 1_050_000, 128_000, true, true),
		openai("gpt-5.6-terra", "GPT-5.6 Terra", 2.5, 15, 0.25, 3.125, 1_050_000, 128_000, true, true),
		openai("gpt-5.6-luna", "GPT-5.6 Luna", 1, 6, 0.1, 1.25, 1_050_000, 128_000, true, true),
		openai("gpt-5.5", "GPT-5.5", 5, 30, 0.5, 0, 1_050_000, 128_000, true, true),
		openai("gpt-5.4", "GPT-5.4", 2.5, 15, 0.25, 0, 1_050_000, 128_000, true, true),
		openai("gpt-5.4-mini", "GPT-5.4 mini", 0.75, 4.5, 0.075, 0, 400_000, 128_000, true, false),
		openai("gpt-5", "GPT-5", 1.25, 10, 0.125, 0, 400_000, 128_000, true, false),
		openai("gpt-5-mini", "GPT-5 mini", 0.25, 2, 0.025, 0, 400_000, 128_000, true, false),
		openai("gpt-4.1", "GPT-4.1", 2, 8, 0.5, 0, 1_047_576, 32_768, false, false),
	}
}

func ptr[T any](v T) *T { return &v }
