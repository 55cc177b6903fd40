package registry

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
)

// fileSpec is models.json.
type fileSpec struct {
	Providers map[string]*providerSpec `json:"providers"`
}

// providerSpec is one provider of models.json; off is where it starts in
// the file, for error messages.
type providerSpec struct {
	BaseURL        string                       `json:"baseUrl"`
	API            string                       `json:"api"`
	APIKey         string                       `json:"apiKey"`
	Headers        map[string]string            `json:"headers"`
	AuthHeader     bool                         `json:"authHeader"`
	Compat         *llm.OpenAICompat            `json:"compat"`
	Models         []*modelSpec                 `json:"models"`
	ModelOverrides map[string]*modelOverrideRaw `json:"modelOverrides"`
	off            int64
}

// UnmarshalJSONFrom records where the provider starts.
func (p *providerSpec) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	off := dec.InputOffset()
	type plain providerSpec
	if err := json.UnmarshalDecode(dec, (*plain)(p)); err != nil {
		return err
	}
	p.off = off
	return nil
}

// modelSpec is one model of models.json. Pointers tell "absent" from zero.
type modelSpec struct {
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	API           string            `json:"api"`
	BaseURL       string            `json:"baseUrl"`
	Reasoning     *bool             `json:"reasoning"`
	Input         []string          `json:"input"`
	ContextWindow *int              `json:"contextWindow"`
	MaxTokens     *int              `json:"maxTokens"`
	Cost          *costSpec         `json:"cost"`
	Headers       map[string]string `json:"headers"`
	Compat        *llm.OpenAICompat `json:"compat"`
	ThinkingStyle string            `json:"thinkingStyle"`
	SupportsXHigh *bool             `json:"supportsXhigh"`
	off           int64
}

// UnmarshalJSONFrom records where the model starts.
func (m *modelSpec) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	off := dec.InputOffset()
	type plain modelSpec
	if err := json.UnmarshalDecode(dec, (*plain)(m)); err != nil {
		return err
	}
	m.off = off
	return nil
}

// modelOverrideRaw is a modelOverrides value: a partial model.
type modelOverrideRaw = modelSpec

type costSpec struct {
	Input      *float64 `json:"input"`
	Output     *float64 `json:"output"`
	CacheRead  *float64 `json:"cacheRead"`
	CacheWrite *float64 `json:"cacheWrite"`
}

// knownAPIs are the APIs pi's models.json may name.
var knownAPIs = map[string]bool{
	llm.APIAnthropicMessages: true, llm.APIOpenAICompletions: true,
	"openai-responses": true, "azure-openai-responses": true, "openai-codex-responses": true,
	"google-generative-ai": true, "google-gemini-cli": true, "google-vertex": true, "bedrock-converse-stream": true,
}

// apply merges models.json into the registry.
func (r *Registry) apply(data []byte) error {
	var f fileSpec
	if err := json.Unmarshal(data, &f, jsonwire.ReadOptions); err != nil {
		return jsonwire.Located(data, err)
	}
	at := func(off int64, format string, args ...any) error {
		line, col := position(data, off)
		return fmt.Errorf("line %d, column %d: %s", line, col, fmt.Sprintf(format, args...))
	}
	names := make([]string, 0, len(f.Providers))
	for name := range f.Providers {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return f.Providers[names[i]].off < f.Providers[names[j]].off })
	for _, name := range names {
		ps := f.Providers[name]
		if ps == nil {
			continue
		}
		if name == "" || strings.Contains(name, "/") {
			return at(ps.off, "provider name %q must be non-empty and contain no '/'", name)
		}
		if ps.API != "" && !knownAPIs[ps.API] {
			return at(ps.off, "provider %q: unknown api %q (want %s or %s)", name, ps.API, llm.APIAnthropicMessages, llm.APIOpenAICompletions)
		}
		p := r.providers[name]
		builtin := p != nil
		if !builtin {
			if ps.BaseURL == "" {
				return at(ps.off, "provider %q: baseUrl is required for a provider Prime does not know", name)
			}
			if ps.API == "" && !allModelsHaveAPI(ps.Models) {
				return at(ps.off, "provider %q: api is required (%s or %s)", name, llm.APIAnthropicMessages, llm.APIOpenAICompletions)
			}
			p = &provider{name: name}
			r.providers[name] = p
		}
		if ps.API != "" {
			p.api = ps.API
		}
		if ps.BaseURL != "" {
			p.baseURL = strings.TrimSuffix(ps.BaseURL, "/")
		}
		if ps.APIKey != "" {
			p.apiKey = ps.APIKey
		}
		p.authHeader = p.authHeader || ps.AuthHeader
		// Provider-level settings reach the built-in models they cover.
		for i := range r.entries {
			e := &r.entries[i]
			if e.Model.Provider != name {
				continue
			}
			if ps.BaseURL != "" {
				e.Model.BaseURL = p.baseURL
			}
			e.Model.Headers = mergeHeaders(e.Model.Headers, ps.Headers)
			if ov := ps.ModelOverrides[e.Model.ID]; ov != nil {
				if err := overrideModel(&e.Model, ov); err != nil {
					return at(ov.off, "provider %q: modelOverrides %q: %v", name, e.Model.ID, err)
				}
			}
		}
		for i, ms := range ps.Models {
			if ms == nil {
				continue
			}
			if ms.ID == "" {
				return at(ms.off, "provider %q: model %d has no id", name, i+1)
			}
			if ms.API != "" && !knownAPIs[ms.API] {
				return at(ms.off, "provider %q: model %q: unknown api %q", name, ms.ID, ms.API)
			}
			m := llm.Model{
				ID: ms.ID, Name: ms.ID, Provider: name, API: p.api, BaseURL: p.baseURL,
				Input: []string{"text"}, ContextWindow: 128000, MaxTokens: 16384,
				Headers: mergeHeaders(nil, ps.Headers), Compat: ps.Compat,
			}
			if err := overrideModel(&m, ms); err != nil {
				return at(ms.off, "provider %q: model %q: %v", name, ms.ID, err)
			}
			r.upsert(Entry{Model: m, Source: SourceModelsJSON})
		}
	}
	return nil
}

func allModelsHaveAPI(models []*modelSpec) bool {
	for _, m := range models {
		if m != nil && m.API == "" {
			return false
		}
	}
	return len(models) > 0
}

// upsert adds e, replacing a model of the same provider and id.
func (r *Registry) upsert(e Entry) {
	for i := range r.entries {
		if r.entries[i].Ref() == e.Ref() {
			r.entries[i] = e
			return
		}
	}
	r.entries = append(r.entries, e)
}

// overrideModel applies the fields set in ms to m.
func overrideModel(m *llm.Model, ms *modelSpec) error {
	if ms.Name != "" {
		m.Name = ms.Name
	}
	if ms.API != "" {
		m.API = ms.API
	}
	if ms.BaseURL != "" {
		m.BaseURL = strings.TrimSuffix(ms.BaseURL, "/")
	}
	if ms.Reasoning != nil {
		m.Reasoning = *ms.Reasoning
	}
	if ms.Input != nil {
		for _, in := range ms.Input {
			if in != "text" && in != "image" {
				return fmt.Errorf("input %q: want \"text\" or \"image\"", in)
			}
		}
		m.Input = ms.Input
	}
	if ms.ContextWindow != nil {
		if *ms.ContextWindow <= 0 {
			return errors.New("contextWindow must be positive")
		}
		m.ContextWindow = *ms.ContextWindow
	}
	if ms.MaxTokens != nil {
		if *ms.MaxTokens <= 0 {
			return errors.New("maxTokens must be positive")
		}
		m.MaxTokens = *ms.MaxTokens
	}
	if c := ms.Cost; c != nil {
		set := func(dst *float64, src *float64) {
			if src != nil {
				*dst = *src
			}
		}
		set(&m.Cost.Input, c.Input)
		set(&m.Cost.Output, c.Output)
		set(&m.Cost.CacheRead, c.CacheRead)
		set(&m.Cost.CacheWrite, c.CacheWrite)
	}
	m.Headers = mergeHeaders(m.Headers, ms.Headers)
	if ms.Compat != nil {
		m.Compat = ms.Compat
	}
	switch ms.ThinkingStyle {
	case "":
	case llm.ThinkingBudgeted, llm.ThinkingAdaptive, llm.ThinkingAlwaysOn:
		m.ThinkingStyle = ms.ThinkingStyle
	default:
		return fmt.Errorf("thinkingStyle %q: want %q, %q or %q", ms.ThinkingStyle, llm.ThinkingBudgeted, llm.ThinkingAdaptive, llm.ThinkingAlwaysOn)
	}
	if ms.SupportsXHigh != nil {
		m.SupportsXHigh = *ms.SupportsXHigh
	}
	return nil
}

func mergeHeaders(base, over map[string]string) map[string]string {
	if len(over) == 0 {
		return base
	}
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// position converts a byte offset to a 1-based line and column, skipping
// the whitespace before the value that starts there.
func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	for off < int64(len(data)) && bytes.IndexByte([]byte(" \t\r\n:,"), data[off]) >= 0 {
		off++
	}
	line = 1 + bytes.Count(data[:off], []byte("\n"))
	col = int(off) - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}
