package llm

import (
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// Wire APIs Prime speaks. A model names the API its provider serves.
const (
	APIAnthropicMessages = "anthropic-messages"
	APIOpenAICompletions = "openai-completions"
	// APIOpenAIResponses is OpenAI's Responses API (POST /responses).
	APIOpenAIResponses = "openai-responses"
	// APIAzureOpenAIResponses is the Responses API as Azure OpenAI serves
	// it: an api-key header and an api-version query parameter.
	APIAzureOpenAIResponses = "azure-openai-responses"
	// APIGoogleGenerativeAI is Google's Gemini API with an API key.
	APIGoogleGenerativeAI = "google-generative-ai"
	// APIGoogleVertex is Gemini on Google Cloud's Vertex AI, with an
	// OAuth access token.
	APIGoogleVertex = "google-vertex"
)

// ThinkingLevel is how much reasoning to ask a reasoning model for.
type ThinkingLevel string

// The thinking levels pi stores in thinking_level_change entries.
const (
	ThinkingOff     ThinkingLevel = "off"
	ThinkingMinimal ThinkingLevel = "minimal"
	ThinkingLow     ThinkingLevel = "low"
	ThinkingMedium  ThinkingLevel = "medium"
	ThinkingHigh    ThinkingLevel = "high"
	ThinkingXHigh   ThinkingLevel = "xhigh"
)

// Model is what Prime knows about one model: where it is served, how big its
// windows are, and what it costs.
type Model struct {
	ID       string `json:"id"`
	Name     string `json:"name,omitzero"`
	Provider string `json:"provider"`
	API      string `json:"api"`
	BaseURL  string `json:"baseUrl,omitzero"`
	// Reasoning reports whether the model can think before answering.
	Reasoning bool `json:"reasoning"`
	// Input lists the input kinds the model accepts: "text", "image".
	Input []string `json:"input,omitzero"`
	// Cost is the price in US dollars per million tokens.
	Cost ModelCost `json:"cost"`
	// ContextWindow is the most tokens the model can see at once.
	ContextWindow int `json:"contextWindow"`
	// MaxTokens is the most tokens the model can produce in one turn.
	MaxTokens int `json:"maxTokens"`
	// Headers are extra HTTP headers sent with every request.
	Headers map[string]string `json:"headers,omitzero"`
	// ThinkingStyle tells how a reasoning model served over the Anthropic
	// Messages API is asked to think: [ThinkingBudgeted] (a token budget,
	// the default) or [ThinkingAdaptive] (the model decides, steered by an
	// effort level) or [ThinkingAlwaysOn].
	ThinkingStyle string `json:"thinkingStyle,omitzero"`
	// SupportsXHigh reports whether the model accepts the highest reasoning
	// effort ([ThinkingXHigh]; Anthropic's "max"). Without it xhigh is sent
	// as high.
	SupportsXHigh bool `json:"supportsXhigh,omitzero"`
	// ThinkingLevelMap is pi's per-model table of thinking levels: a level
	// mapped to a string is sent as that value, a level mapped to null is
	// one the model does not support (a request for it is clamped to the
	// nearest supported level, see [Model.ClampThinking]). Absent levels
	// are sent by their own names.
	ThinkingLevelMap map[ThinkingLevel]*string `json:"thinkingLevelMap,omitzero"`
	// Compat adjusts requests to the quirks of an OpenAI-compatible server.
	// Nil means detect them from the base URL.
	Compat *OpenAICompat `json:"compat,omitzero"`
	// SamplingParams are JSON fields merged into every request body of the
	// OpenAI APIs (Chat Completions, Responses), and
	// SamplingParamsByThinkingLevel those of one thinking level, merged
	// over them: pi's fields of those names (see [Model.SamplingBody]).
	SamplingParams                jsontext.Value                   `json:"samplingParams,omitzero"`
	SamplingParamsByThinkingLevel map[ThinkingLevel]jsontext.Value `json:"samplingParamsByThinkingLevel,omitzero"`
}

// Thinking styles of the Anthropic Messages API (see [Model.ThinkingStyle]).
const (
	ThinkingBudgeted = "budget"   // "thinking": {"type": "enabled", "budget_tokens": N}
	ThinkingAdaptive = "adaptive" // "thinking": {"type": "adaptive"} plus an effort; off sends "disabled"
	ThinkingAlwaysOn = "always"   // adaptive, and cannot be turned off (nothing is sent for off)
)

// OpenAICompat describes how an OpenAI-compatible server departs from
// OpenAI's own Chat Completions API. Every field is optional; an unset field
// is detected from the base URL (api.openai.com gets OpenAI's behaviour,
// other servers the most widely accepted one). The field names are pi's, so
// a pi models.json "compat" block reads unchanged.
type OpenAICompat struct {
	// SupportsStore: the server accepts "store": false.
	SupportsStore *bool `json:"supportsStore,omitzero"`
	// SupportsDeveloperRole: a reasoning model takes its system prompt in a
	// "developer" message rather than a "system" one.
	SupportsDeveloperRole *bool `json:"supportsDeveloperRole,omitzero"`
	// SupportsReasoningEffort: the server accepts "reasoning_effort".
	SupportsReasoningEffort *bool `json:"supportsReasoningEffort,omitzero"`
	// SupportsUsageInStreaming: the server accepts
	// "stream_options": {"include_usage": true} (default true).
	SupportsUsageInStreaming *bool `json:"supportsUsageInStreaming,omitzero"`
	// MaxTokensField names the output cap: "max_completion_tokens" (OpenAI)
	// or "max_tokens" (the default for other servers).
	MaxTokensField string `json:"maxTokensField,omitzero"`
	// RequiresToolResultName: tool messages must carry the tool's "name".
	RequiresToolResultName *bool `json:"requiresToolResultName,omitzero"`
	// RequiresAssistantAfterToolResult: a user message may not directly
	// follow tool results; an empty assistant message is put between.
	RequiresAssistantAfterToolResult *bool `json:"requiresAssistantAfterToolResult,omitzero"`
	// RequiresThinkingAsText: earlier reasoning is sent back as text inside
	// <thinking> tags instead of in a reasoning field.
	RequiresThinkingAsText *bool `json:"requiresThinkingAsText,omitzero"`
	// ThinkingFormat is how reasoning is requested: "openai"
	// (reasoning_effort, the default), "zai" ("thinking": {"type": ...}) or
	// "qwen" ("enable_thinking": bool).
	ThinkingFormat string `json:"thinkingFormat,omitzero"`
	// SupportsStrictMode: the server takes "strict" on function tools
	// (Prime sends "strict": false there; OpenAI's own models do).
	SupportsStrictMode *bool `json:"supportsStrictMode,omitzero"`
	// OpenRouterRouting is passed to OpenRouter as the request's "provider"
	// object (e.g. {"only": ["anthropic"]}).
	OpenRouterRouting jsontext.Value `json:"openRouterRouting,omitzero"`
}

// ModelCost is a model's price in US dollars per million tokens.
type ModelCost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// CostOf prices a usage at the model's rates. The arithmetic is pi's
// (price / 1e6 × tokens, then the sum in field order), so the floating-point
// results, and the stored message, are the same bytes pi writes.
func (m Model) CostOf(u Usage) Cost {
	c := Cost{
		Input:      m.Cost.Input / 1e6 * float64(u.Input),
		Output:     m.Cost.Output / 1e6 * float64(u.Output),
		CacheRead:  m.Cost.CacheRead / 1e6 * float64(u.CacheRead),
		CacheWrite: m.Cost.CacheWrite / 1e6 * float64(u.CacheWrite),
	}
	c.Total = c.Input + c.Output + c.CacheRead + c.CacheWrite
	return c
}

// thinkingLevels are the levels in order, from none to the most.
var thinkingLevels = []ThinkingLevel{ThinkingOff, ThinkingMinimal, ThinkingLow, ThinkingMedium, ThinkingHigh, ThinkingXHigh}

// supportsThinking reports whether level is one the model accepts: a model
// that cannot reason accepts only off; a level mapped to null is refused;
// xhigh needs a mapping or [Model.SupportsXHigh].
func (m Model) supportsThinking(level ThinkingLevel) bool {
	if !slices.Contains(thinkingLevels, level) {
		return false
	}
	if !m.Reasoning {
		return level == ThinkingOff
	}
	v, present := m.ThinkingLevelMap[level]
	if present && v == nil {
		return false
	}
	if level == ThinkingXHigh {
		return present || m.SupportsXHigh
	}
	return true
}

// ThinkingLevels returns the levels the model accepts, off to the most
// (pi's getSupportedThinkingLevels): only off for a model that cannot
// reason.
func (m Model) ThinkingLevels() []ThinkingLevel {
	var out []ThinkingLevel
	for _, l := range thinkingLevels {
		if m.supportsThinking(l) {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		out = []ThinkingLevel{ThinkingOff}
	}
	return out
}

// ClampThinking returns the level to ask for when level is requested (pi's
// clampThinkingLevel): level itself when the model supports it, else the
// next higher supported level, else the next lower one. "" means off.
func (m Model) ClampThinking(level ThinkingLevel) ThinkingLevel {
	if level == "" {
		level = ThinkingOff
	}
	if m.supportsThinking(level) {
		return level
	}
	at := -1
	for i, l := range thinkingLevels {
		if l == level {
			at = i
		}
	}
	if at >= 0 {
		for _, l := range thinkingLevels[at:] {
			if m.supportsThinking(l) {
				return l
			}
		}
		for i := at - 1; i >= 0; i-- {
			if m.supportsThinking(thinkingLevels[i]) {
				return thinkingLevels[i]
			}
		}
	}
	for _, l := range thinkingLevels {
		if m.supportsThinking(l) {
			return l
		}
	}
	return ThinkingOff
}

// ThinkingValue is the wire value of a (clamped) level: its mapping in
// [Model.ThinkingLevelMap], else the level's own name. mapped reports
// whether the table named it (a mapping to null gives "", true).
func (m Model) ThinkingValue(level ThinkingLevel) (value string, mapped bool) {
	v, present := m.ThinkingLevelMap[level]
	if !present {
		return string(level), false
	}
	if v == nil {
		return "", true
	}
	return *v, true
}

// AcceptsImages reports whether the model takes image input.
func (m Model) AcceptsImages() bool {
	for _, in := range m.Input {
		if in == "image" {
			return true
		}
	}
	return false
}

// String returns "provider/id".
func (m Model) String() string { return m.Provider + "/" + m.ID }
