// Package registry turns a model reference such as "anthropic/claude-opus-5"
// into a configured [llm.Provider] and [llm.Model]: the built-in models
// ([llm.BuiltinModels]) plus the user's own from models.json.
//
// # models.json
//
// The file is ~/.prime/agent/models.json (the agent directory can be moved
// with PRIME_CODING_AGENT_DIR). Its format is pi's, so a pi user can copy
// ~/.pi/agent/models.json unchanged:
//
//	{
//	  "providers": {
//	    "ollama": {
//	      "baseUrl": "http://localhost:11434/v1",
//	      "api": "openai-completions",
//	      "apiKey": "ollama",
//	      "models": [{"id": "qwen3:8b", "reasoning": true, "contextWindow": 40960}]
//	    },
//	    "anthropic": {"baseUrl": "https://proxy.example.com", "headers": {"x-team": "TEAM_HEADER"}}
//	  }
//	}
//
// A provider has a baseUrl, an api ("anthropic-messages",
// "openai-completions", "openai-responses", "azure-openai-responses",
// "google-generative-ai" or "google-vertex"; pi's other APIs, such as
// "bedrock-converse-stream", are read but cannot be called), an apiKey, headers, authHeader (also send the key as a bearer
// token), a compat block for OpenAI-compatible servers, models, and
// modelOverrides (partial changes to built-in models, by id). A model has
// an id and optionally name, api, baseUrl, reasoning, input, contextWindow
// (default 128000), maxTokens (default 16384), cost, headers, compat (a
// model's fields over its provider's, field by field, as pi merges them),
// thinkingLevelMap (null: a level the model does not take), samplingParams
// and samplingParamsByThinkingLevel (merged into the OpenAI APIs' request
// bodies), and Prime's thinkingStyle and supportsXhigh. Naming a built-in
// provider ("anthropic", "openai") changes its base URL, key, headers or
// compat, and adds or replaces models by id. pi's other fields
// (inputLimits, promptCache, cost.tiers, oauth, compat fields for quirks
// Prime does not handle, …) are read and not used, and [Registry.Warnings]
// names each one with its line: nothing is ignored in silence.
//
// apiKey and header values are resolved as pi 1.6 resolves them (see
// value.go): "!command" runs the command with sh and uses its output;
// "$NAME" and "${NAME}" are environment variables, also inside text
// ("Bearer ${TOKEN}"), "$$" and "$!" a literal "$" and "!"; anything else
// is literal. A bare name in capitals with an underscore ("MY_API_KEY",
// what pi read before 1.6) is still that variable. Values are resolved only when a
// provider is built,
// never stored in an [Entry], and never printed, logged or put in an error.
//
// # Keys of the built-in providers
//
// anthropic reads ANTHROPIC_API_KEY; openai reads OPENAI_API_KEY, and
// OPENAI_BASE_URL when set replaces its base URL; google reads
// GEMINI_API_KEY or GOOGLE_API_KEY; google-vertex an OAuth access token
// from GOOGLE_CLOUD_ACCESS_TOKEN, with GOOGLE_CLOUD_PROJECT (or
// GCLOUD_PROJECT) and GOOGLE_CLOUD_LOCATION; azure reads
// AZURE_OPENAI_API_KEY, AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME,
// AZURE_OPENAI_API_VERSION and AZURE_OPENAI_DEPLOYMENT_NAME_MAP; xai,
// groq, deepseek, cerebras, mistral and openrouter read
// XAI_API_KEY, GROQ_API_KEY and so on (see builtinProviders).
// A key stored in auth.json (see [SaveAPIKey]) comes first, as in pi.
package registry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prime-agent/prime/internal/agentdir"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/retry"
)

// Where an entry comes from.
const (
	SourceBuiltin    = "built-in"
	SourceModelsJSON = "models.json"
)

// Errors callers branch on.
var (
	// ErrUnknownModel means no model matches the reference.
	ErrUnknownModel = errors.New("unknown model")
	// ErrNoKey means the model's provider needs a key and none is set.
	ErrNoKey = errors.New("no API key")
	// ErrUnsupportedAPI means the model is served over an API Prime does
	// not speak yet (e.g. pi's "openai-responses").
	ErrUnsupportedAPI = errors.New("unsupported API")
)

// Entry is one model the registry knows.
type Entry struct {
	// Model is the model's metadata. Header values are as configured
	// (possibly variable names or commands), not resolved.
	Model llm.Model
	// Source is SourceBuiltin or SourceModelsJSON.
	Source string
	// Key describes where the provider's key comes from, never the key
	// itself: "$ANTHROPIC_API_KEY", "models.json", "command", or "" for
	// none.
	Key string
	// HasKey reports whether a key is available (a command is assumed to
	// produce one; it is not run just to list models).
	HasKey bool
	// Supported reports whether Prime can call the model's API.
	Supported bool
}

// Ref returns "provider/id".
func (e Entry) Ref() string { return e.Model.Provider + "/" + e.Model.ID }

// Options configures [Load].
type Options struct {
	// AgentDir holds models.json; default [DefaultAgentDir].
	AgentDir string
	// Getenv reads the environment; default os.Getenv.
	Getenv func(string) string
	// HTTPClient is given to the providers; default http.DefaultClient.
	HTTPClient *http.Client
	// Retry is given to the providers; nil means retry.DefaultPolicy.
	Retry *retry.Policy
	// Stream bounds every request the providers send that sets no bounds
	// of its own (see [llm.StreamBounds]).
	Stream llm.StreamBounds
}

// DefaultAgentDir returns $PRIME_CODING_AGENT_DIR (a leading ~ is the
// home directory), or ~/.prime/agent.
func DefaultAgentDir(getenv func(string) string) (string, error) {
	return agentdir.Find(getenv)
}

// provider is one configured provider.
type provider struct {
	name    string
	api     string
	baseURL string
	apiKey  string // a value spec (value.go): literal, $NAME or !command
	// altKeys are further environment variables read, in order, when the
	// variable apiKey names is empty (Gemini's GOOGLE_API_KEY).
	altKeys    []string
	authHeader bool
}

// Registry is the set of known models. It is immutable once loaded.
type Registry struct {
	entries   []Entry
	providers map[string]*provider
	getenv    func(string) string
	client    *http.Client
	retry     *retry.Policy
	stream    llm.StreamBounds
	// ModelsPath is the models.json read (or looked for).
	ModelsPath string
	// AuthPath is the auth.json read (or looked for); auth its API keys
	// by provider (auth.go).
	AuthPath string
	auth     map[string]string
	// warnings are models.json's fields read but not used.
	warnings []string
}

// Warnings are the user's notes on models.json: each field Prime reads but
// does not act on (pi's fields for things Prime does not do), by line, so
// that nothing in the file is ignored in silence.
func (r *Registry) Warnings() []string { return slices.Clone(r.warnings) }

// Load builds the registry: built-in models, then models.json if present.
// A malformed models.json is an error naming the file, line and column; a
// missing one is not an error.
func Load(opts Options) (*Registry, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	dir := opts.AgentDir
	if dir == "" {
		var err error
		if dir, err = DefaultAgentDir(getenv); err != nil {
			return nil, err
		}
	}
	r := &Registry{
		providers:  map[string]*provider{},
		getenv:     getenv,
		client:     opts.HTTPClient,
		retry:      opts.Retry,
		stream:     opts.Stream,
		ModelsPath: filepath.Join(dir, "models.json"),
		AuthPath:   filepath.Join(dir, "auth.json"),
	}
	openaiBase := "https://api.openai.com/v1"
	if v := getenv("OPENAI_BASE_URL"); v != "" {
		openaiBase = strings.TrimSuffix(v, "/")
	}
	for _, p := range builtinProviders(getenv, openaiBase) {
		r.providers[p.name] = p
	}
	for _, m := range llm.BuiltinModels() {
		if m.Provider == llm.ProviderOpenAI {
			m.BaseURL = openaiBase
		}
		r.entries = append(r.entries, Entry{Model: m, Source: SourceBuiltin})
	}
	data, err := os.ReadFile(r.ModelsPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if err := r.apply(data); err != nil {
			return nil, fmt.Errorf("%s: %w", r.ModelsPath, err)
		}
	}
	if r.auth, err = readAuth(r.AuthPath); err != nil {
		return nil, err
	}
	for i := range r.entries {
		e := &r.entries[i]
		p := r.providers[e.Model.Provider]
		e.Key, e.HasKey = r.keyStatus(p)
		e.Supported = supportedAPIs[e.Model.API]
	}
	rank := func(provider string) int {
		if i := slices.Index(llm.ProviderOrder, provider); i >= 0 {
			return i
		}
		return len(llm.ProviderOrder)
	}
	slices.SortStableFunc(r.entries, func(a, b Entry) int {
		if c := rank(a.Model.Provider) - rank(b.Model.Provider); c != 0 {
			return c
		}
		if c := strings.Compare(a.Model.Provider, b.Model.Provider); c != 0 {
			return c
		}
		return 0 // keep each provider's own order (its default first)
	})
	return r, nil
}

// keyStatus describes where p's key comes from and whether it is there.
func (r *Registry) keyStatus(p *provider) (string, bool) {
	if p != nil && r.auth[p.name] != "" {
		return SourceAuthJSON, true
	}
	if p == nil || p.apiKey == "" {
		return "", false
	}
	v := p.apiKey
	if strings.HasPrefix(v, "!") {
		return "command", true
	}
	if name := onlyVar(v); name != "" {
		if r.getenv(name) == "" {
			for _, alt := range p.altKeys {
				if r.getenv(alt) != "" {
					return "$" + alt, true
				}
			}
		}
		return "$" + name, r.getenv(name) != ""
	}
	for _, name := range valueVars(v) {
		if r.getenv(name) == "" {
			return "$" + name, false
		}
	}
	return SourceModelsJSON, true
}

// KeyVariables are the environment variables providers read their keys
// from (ANTHROPIC_API_KEY, models.json's "apiKey": "$MY_KEY"), so that
// the tools' commands can be kept from inheriting them.
func (r *Registry) KeyVariables() []string {
	var names []string
	for _, p := range r.providers {
		names = append(names, valueVars(p.apiKey)...)
		names = append(names, p.altKeys...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// resolve turns a value spec into its value.
func (r *Registry) resolve(ctx context.Context, what, spec string) (string, error) {
	switch {
	case strings.HasPrefix(spec, "!"):
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "sh", "-c", spec[1:]).Output()
		if err != nil {
			// Neither the command nor its output is shown: either may hold
			// the secret.
			return "", fmt.Errorf("%s: its command failed: %v", what, exitStatus(err))
		}
		return strings.TrimSpace(string(out)), nil
	default:
		return expandValue(what, spec, r.getenv)
	}
}

func exitStatus(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("%s", ee.ProcessState.String())
	}
	return err
}

// Models returns every known model, grouped by provider: the built-in
// providers in [llm.ProviderOrder], then the others by name; each
// provider's default model first.
func (r *Registry) Models() []Entry { return slices.Clone(r.entries) }

// Find looks a model up by "provider/id", or by id alone when only one
// provider has it (an id that begins with a provider's name and a slash,
// as OpenRouter's do, is found by id only when that provider does not
// exist).
func (r *Registry) Find(ref string) (Entry, error) {
	var matches []Entry
	// "openai/gpt-x" names OpenAI's model even where OpenRouter has a model
	// whose id is "openai/gpt-x": a ref that starts with a known provider is
	// looked up only as provider/id.
	prefix, _, _ := strings.Cut(ref, "/")
	_, providerRef := r.providers[prefix]
	for _, e := range r.entries {
		if e.Ref() == ref {
			return e, nil
		}
		if e.Model.ID == ref && !providerRef {
			matches = append(matches, e)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return Entry{}, fmt.Errorf("%w %q (run 'prime models' for the list)", ErrUnknownModel, ref)
	default:
		refs := make([]string, len(matches))
		for i, m := range matches {
			refs[i] = m.Ref()
		}
		return Entry{}, fmt.Errorf("model %q is ambiguous: %s", ref, strings.Join(refs, ", "))
	}
}

// Resolve finds a model and builds its provider. The returned model has its
// header values resolved.
func (r *Registry) Resolve(ctx context.Context, ref string) (llm.Provider, llm.Model, error) {
	e, err := r.Find(ref)
	if err != nil {
		return nil, llm.Model{}, err
	}
	p, m, err := r.ProviderFor(ctx, e.Model)
	if err != nil {
		return nil, llm.Model{}, fmt.Errorf("%s: %w", e.Ref(), err)
	}
	return p, m, nil
}

// ProviderFor builds a provider for model m (which need not come from the
// registry: its provider's key and headers are looked up by name). Its
// requests carry the registry's stream bounds. Its errors do not name
// the model: the caller says which it asked for.
func (r *Registry) ProviderFor(ctx context.Context, m llm.Model) (llm.Provider, llm.Model, error) {
	p, resolved, err := r.providerFor(ctx, m)
	if err != nil || r.stream == (llm.StreamBounds{}) {
		return p, resolved, err
	}
	return llm.Bounded(p, r.stream), resolved, nil
}

func (r *Registry) providerFor(ctx context.Context, m llm.Model) (llm.Provider, llm.Model, error) {
	p := r.providers[m.Provider]
	if p == nil {
		p = &provider{name: m.Provider, api: m.API, baseURL: m.BaseURL}
	}
	var key string
	if spec, ok := r.auth[p.name]; ok {
		v, err := r.resolveStored(ctx, spec)
		if err != nil {
			return nil, llm.Model{}, err
		}
		key = v
	} else if p.apiKey != "" {
		v, err := r.resolve(ctx, "provider "+p.name+" apiKey", p.apiKey)
		if only := onlyVar(p.apiKey); only != "" && (v == "" || errors.As(err, new(*MissingVarsError))) {
			for _, alt := range p.altKeys {
				if v = r.getenv(alt); v != "" {
					err = nil
					break
				}
			}
			if v == "" {
				return nil, llm.Model{}, fmt.Errorf("%w: set %s", ErrNoKey, strings.Join(append([]string{only}, p.altKeys...), " or "))
			}
		}
		if err != nil {
			return nil, llm.Model{}, err
		}
		key = v
	}
	headers := map[string]string{}
	resolved := m
	resolved.Headers = map[string]string{}
	for k, spec := range m.Headers {
		v, err := r.resolve(ctx, "header "+k, spec)
		if err != nil {
			return nil, llm.Model{}, err
		}
		resolved.Headers[k] = v
	}
	if p.authHeader && key != "" {
		headers["Authorization"] = "Bearer " + key
	}
	if len(resolved.Headers) == 0 {
		resolved.Headers = nil
	}
	if !supportedAPIs[m.API] {
		return nil, llm.Model{}, fmt.Errorf("%w %q (Prime speaks %s)", ErrUnsupportedAPI, m.API, strings.Join(supportedList(), ", "))
	}
	if m.API == llm.APIAzureOpenAIResponses && m.BaseURL == "" && p.baseURL == "" {
		return nil, llm.Model{}, errors.New("no Azure OpenAI endpoint: set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME, or the provider's baseUrl in models.json")
	}
	return r.build(m, p, key, headers), resolved, nil
}
