package llm

// Wire APIs Prime speaks. A model names the API its provider serves.
const (
	APIAnthropicMessages = "anthropic-messages"
	APIOpenAICompletions = "openai-completions"
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
}

// ModelCost is a model's price in US dollars per million tokens.
type ModelCost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// CostOf prices a usage at the model's rates.
func (m Model) CostOf(u Usage) Cost {
	c := Cost{
		Input:      float64(u.Input) * m.Cost.Input / 1e6,
		Output:     float64(u.Output) * m.Cost.Output / 1e6,
		CacheRead:  float64(u.CacheRead) * m.Cost.CacheRead / 1e6,
		CacheWrite: float64(u.CacheWrite) * m.Cost.CacheWrite / 1e6,
	}
	c.Total = c.Input + c.Output + c.CacheRead + c.CacheWrite
	return c
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
