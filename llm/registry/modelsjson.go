package registry

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
)

// fileSpec is models.json.
type fileSpec struct {
	Schema    string                   `json:"$schema"`
	Providers map[string]*providerSpec `json:"providers"`
	Unknown   jsontext.Value           `json:",embed"`
}

// providerSpec is one provider of models.json; off is where it starts in
// the file, for error messages.
type providerSpec struct {
	BaseURL        string                       `json:"baseUrl"`
	API            string                       `json:"api"`
	APIKey         string                       `json:"apiKey"`
	Headers        map[string]string            `json:"headers"`
	AuthHeader     bool                         `json:"authHeader"`
	Compat         *compatSpec                  `json:"compat"`
	Models         []*modelSpec                 `json:"models"`
	ModelOverrides map[string]*modelOverrideRaw `json:"modelOverrides"`
	// Name is pi's display name; Prime shows provider names as they are.
	Name    string         `json:"name"`
	Unknown jsontext.Value `json:",embed"`
	off     int64
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
	Compat        *compatSpec       `json:"compat"`
	ThinkingStyle string            `json:"thinkingStyle"`
	SupportsXHigh *bool             `json:"supportsXhigh"`
	// ThinkingLevelMap is pi's: the value sent for each level, null for a
	// level the model does not take.
	ThinkingLevelMap map[string]*string `json:"thinkingLevelMap"`
	// SamplingParams and SamplingParamsByThinkingLevel are merged into the
	// OpenAI APIs' request bodies (llm.Model.SamplingBody).
	SamplingParams                jsontext.Value            `json:"samplingParams"`
	SamplingParamsByThinkingLevel map[string]jsontext.Value `json:"samplingParamsByThinkingLevel"`
	Unknown                       jsontext.Value            `json:",embed"`
	off                           int64
}

// compatSpec is a compat block: the fields Prime acts on, and the rest
// (pi's fields for quirks Prime does not handle), which are reported.
type compatSpec struct {
	llm.OpenAICompat `json:",embed"`
	Unknown          jsontext.Value `json:",embed"`
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
	Input      *float64       `json:"input"`
	Output     *float64       `json:"output"`
	CacheRead  *float64       `json:"cacheRead"`
	CacheWrite *float64       `json:"cacheWrite"`
	Unknown    jsontext.Value `json:",embed"`
}

// piOnlyProviders are the providers built into pi 1.6 (its providers.md
// and catalog) that Prime does not have: a models.json entry that changes
// one (a proxy baseUrl, modelOverrides) is pi's, not a mistake.
var piOnlyProviders = map[string]bool{
	"amazon-bedrock": true, "ant-ling": true, "baseten": true, "cloudflare-ai-gateway": true, "cloudflare-workers-ai": true,
	"fireworks": true, "github-copilot": true, "huggingface": true, "kimi-coding": true, "meta": true, "minimax": true,
	"minimax-cn": true, "moonshotai": true, "moonshotai-cn": true, "nvidia": true, "openai-codex": true, "opencode": true,
	"opencode-go": true, "radius": true, "together": true, "typesafe": true, "vercel-ai-gateway": true, "xiaomi": true,
	"xiaomi-token-plan-ams": true, "xiaomi-token-plan-cn": true, "xiaomi-token-plan-sgp": true, "zai": true, "zai-coding-cn": true,
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
	note := func(off int64, where string, notes []string) {
		line, _ := position(data, off)
		for _, n := range notes {
			r.warnings = append(r.warnings, fmt.Sprintf("%s line %d: %s%s", r.ModelsPath, line, where, n))
		}
	}
	note(0, "", unusedNotes("", f.Unknown))
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
			return at(ps.off, "provider %q: unknown api %q (want one of %s)", name, ps.API, strings.Join(supportedList(), ", "))
		}
		p := r.providers[name]
		builtin := p != nil
		if !builtin && piOnlyProviders[name] && (ps.BaseURL == "" || ps.API == "" && !allModelsHaveAPI(ps.Models)) {
			// pi knows this provider's endpoint and API; Prime does not.
			// The rest of the file still counts.
			note(ps.off, "", []string{fmt.Sprintf("provider %q is built into pi but not Prime: give it a baseUrl and an api here to use it (its entry is left out)", name)})
			continue
		}
		if !builtin {
			if ps.BaseURL == "" {
				return at(ps.off, "provider %q: baseUrl is required for a provider Prime does not know", name)
			}
			if ps.API == "" && !allModelsHaveAPI(ps.Models) {
				return at(ps.off, "provider %q: api is required (one of %s)", name, strings.Join(supportedList(), ", "))
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
		where := fmt.Sprintf("provider %q: ", name)
		note(ps.off, where, unusedNotes("", ps.Unknown))
		if ps.Compat != nil {
			note(ps.off, where, unusedNotes("compat.", ps.Compat.Unknown))
		}
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
			e.Model.Compat = mergeCompat(e.Model.Compat, ps.Compat)
			if ov := ps.ModelOverrides[e.Model.ID]; ov != nil {
				note(ov.off, fmt.Sprintf("provider %q: modelOverrides %q: ", name, e.Model.ID), ov.notes(cmp.Or(ov.API, e.Model.API)))
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
				Headers: mergeHeaders(nil, ps.Headers), Compat: mergeCompat(nil, ps.Compat),
			}
			note(ms.off, fmt.Sprintf("provider %q: model %q: ", name, ms.ID), ms.notes(cmp.Or(ms.API, p.api)))
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
	m.Compat = mergeCompat(m.Compat, ms.Compat)
	if ms.ThinkingLevelMap != nil {
		levels := make(map[llm.ThinkingLevel]*string, len(ms.ThinkingLevelMap)+len(m.ThinkingLevelMap))
		for k, v := range m.ThinkingLevelMap {
			levels[k] = v
		}
		for k, v := range ms.ThinkingLevelMap {
			switch l := llm.ThinkingLevel(k); {
			case k == "max": // pi's level above xhigh; Prime has none (see notes)
			case slices.Contains(thinkingLevelNames, l):
				levels[l] = v
			default:
				return fmt.Errorf("thinkingLevelMap: %q is not a thinking level (%s)", k, joinLevels())
			}
		}
		m.ThinkingLevelMap = levels
	}
	if err := overrideSampling(m, ms); err != nil {
		return err
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

// overrideSampling applies ms's sampling fields to m: samplingParams
// replaces m's per key, and each level's entry merges per key with m's, as
// pi's modelOverrides merge them.
func overrideSampling(m *llm.Model, ms *modelSpec) error {
	if len(ms.SamplingParams) > 0 && ms.SamplingParams.Kind() != 'n' {
		if ms.SamplingParams.Kind() != '{' {
			return errors.New("samplingParams must be an object")
		}
		merged, err := mergeJSONObjects(m.SamplingParams, ms.SamplingParams)
		if err != nil {
			return fmt.Errorf("samplingParams: %w", err)
		}
		m.SamplingParams = merged
	}
	if len(ms.SamplingParamsByThinkingLevel) == 0 {
		return nil
	}
	levels := make(map[llm.ThinkingLevel]jsontext.Value, len(ms.SamplingParamsByThinkingLevel)+len(m.SamplingParamsByThinkingLevel))
	for k, v := range m.SamplingParamsByThinkingLevel {
		levels[k] = v
	}
	for k, v := range ms.SamplingParamsByThinkingLevel {
		l := llm.ThinkingLevel(k)
		switch {
		case k == "max":
			continue // Prime has no max level; notes() says so
		case !slices.Contains(thinkingLevelNames, l):
			return fmt.Errorf("samplingParamsByThinkingLevel: %q is not a thinking level (%s)", k, joinLevels())
		case v.Kind() != '{':
			return fmt.Errorf("samplingParamsByThinkingLevel %q must be an object", k)
		}
		merged, err := mergeJSONObjects(levels[l], v)
		if err != nil {
			return fmt.Errorf("samplingParamsByThinkingLevel %q: %w", k, err)
		}
		levels[l] = merged
	}
	m.SamplingParamsByThinkingLevel = levels
	return nil
}

// mergeJSONObjects returns the object base with over's members merged in.
func mergeJSONObjects(base, over jsontext.Value) (jsontext.Value, error) {
	if len(base) == 0 {
		return bytes.Clone(over), nil
	}
	m := llm.Model{SamplingParams: over}
	return m.SamplingBody(base, llm.ThinkingOff)
}

// thinkingLevelNames are the levels a thinkingLevelMap may name.
var thinkingLevelNames = []llm.ThinkingLevel{llm.ThinkingOff, llm.ThinkingMinimal, llm.ThinkingLow, llm.ThinkingMedium, llm.ThinkingHigh, llm.ThinkingXHigh}

func joinLevels() string {
	names := make([]string, len(thinkingLevelNames))
	for i, l := range thinkingLevelNames {
		names[i] = string(l)
	}
	return strings.Join(names, ", ")
}

// notes are the user's notes on the fields of a model entry (served over
// api) that Prime reads but does not act on.
func (ms *modelSpec) notes(api string) []string {
	out := unusedNotes("", ms.Unknown)
	if ms.Compat != nil {
		out = append(out, unusedNotes("compat.", ms.Compat.Unknown)...)
	}
	if ms.Cost != nil {
		out = append(out, unusedNotes("cost.", ms.Cost.Unknown)...)
	}
	if _, ok := ms.ThinkingLevelMap["max"]; ok {
		out = append(out, `thinkingLevelMap.max is not used: Prime's highest level is xhigh`)
	}
	if _, ok := ms.SamplingParamsByThinkingLevel["max"]; ok {
		out = append(out, `samplingParamsByThinkingLevel.max is not used: Prime's highest level is xhigh`)
	}
	if len(ms.SamplingParams) > 0 || len(ms.SamplingParamsByThinkingLevel) > 0 {
		switch api {
		case llm.APIOpenAICompletions, llm.APIOpenAIResponses, llm.APIAzureOpenAIResponses:
		default:
			out = append(out, fmt.Sprintf("samplingParams apply only to the OpenAI APIs, not %q (as in pi)", api))
		}
	}
	return out
}

// unusedNotes names each member of an object of fields Prime does not
// use (the members a spec's ",embed" field caught).
func unusedNotes(prefix string, unknown jsontext.Value) []string {
	if len(unknown) == 0 {
		return nil
	}
	var members map[string]jsontext.Value
	if err := json.Unmarshal(unknown, &members, jsonwire.ReadOptions); err != nil {
		return nil
	}
	names := make([]string, 0, len(members))
	for k := range members {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]string, len(names))
	for i, k := range names {
		out[i] = fmt.Sprintf("%s%s is not used by Prime (it is ignored)", prefix, k)
	}
	return out
}

// mergeCompat returns base with the fields over sets replaced, as pi
// merges compat blocks: a model's over its provider's, field by field.
func mergeCompat(base *llm.OpenAICompat, over *compatSpec) *llm.OpenAICompat {
	if over == nil {
		return base
	}
	var out llm.OpenAICompat
	if base != nil {
		out = *base
	}
	dst, src := reflect.ValueOf(&out).Elem(), reflect.ValueOf(over.OpenAICompat)
	for i := range src.NumField() {
		if f := src.Field(i); !f.IsZero() {
			dst.Field(i).Set(f)
		}
	}
	return &out
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
