package llm

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Usage is the token accounting of one assistant turn, as the provider
// reported it, with its cost in US dollars.
type Usage struct {
	Input       int  `json:"input"`       // uncached input tokens
	Output      int  `json:"output"`      // output tokens, reasoning included
	CacheRead   int  `json:"cacheRead"`   // input tokens read from the prompt cache
	CacheWrite  int  `json:"cacheWrite"`  // input tokens written to the prompt cache
	TotalTokens int  `json:"totalTokens"` // as reported, or the sum of the four
	Cost        Cost `json:"cost"`
}

// Cost is the price of a turn in US dollars, by kind of token.
type Cost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`
}

// ContextTokens is the size of the context this turn saw and produced: the
// reported total when it is non-zero, else the sum of its parts (pi's
// calculateContextTokens).
func (u Usage) ContextTokens() int {
	if u.TotalTokens != 0 {
		return u.TotalTokens
	}
	return u.Input + u.Output + u.CacheRead + u.CacheWrite
}

// Add returns the sum of two usages, for requests that took several calls.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		Input:       u.Input + v.Input,
		Output:      u.Output + v.Output,
		CacheRead:   u.CacheRead + v.CacheRead,
		CacheWrite:  u.CacheWrite + v.CacheWrite,
		TotalTokens: u.TotalTokens + v.TotalTokens,
		Cost: Cost{
			Input:      u.Cost.Input + v.Cost.Input,
			Output:     u.Cost.Output + v.Cost.Output,
			CacheRead:  u.Cost.CacheRead + v.Cost.CacheRead,
			CacheWrite: u.Cost.CacheWrite + v.Cost.CacheWrite,
			Total:      u.Cost.Total + v.Cost.Total,
		},
	}
}

// UnmarshalJSONFrom reads a usage object leniently: token counts written as
// fractions are truncated, null and missing members are zero.
func (u *Usage) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var w struct {
		Input       float64 `json:"input"`
		Output      float64 `json:"output"`
		CacheRead   float64 `json:"cacheRead"`
		CacheWrite  float64 `json:"cacheWrite"`
		TotalTokens float64 `json:"totalTokens"`
		Cost        *Cost   `json:"cost"`
	}
	if err := json.UnmarshalDecode(dec, &w); err != nil {
		return err
	}
	*u = Usage{
		Input:       int(w.Input),
		Output:      int(w.Output),
		CacheRead:   int(w.CacheRead),
		CacheWrite:  int(w.CacheWrite),
		TotalTokens: int(w.TotalTokens),
	}
	if w.Cost != nil {
		u.Cost = *w.Cost
	}
	return nil
}
