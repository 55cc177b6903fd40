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
// A provider has a baseUrl, an api ("anthropic-messages" or
// "openai-completions"; pi's other APIs are listed but cannot be called
// yet), an apiKey, headers, authHeader (also send the key as a bearer
// token), a compat block for OpenAI-compatible servers, models, and
// modelOverrides (partial changes to built-in models, by id). A model has
// an id and optionally name, api, reasoning, input, contextWindow (default
// 128000), maxTokens (default 16384), cost, headers, compat, and Prime's
// thinkingStyle and supportsXhigh. Naming a built-in provider ("anthropic",
// "openai") changes its base URL, key or headers, and adds or replaces
// models by id. Unknown fields are ignored.
//
// apiKey and header values are resolved as pi resolves them: "!command"
// runs the command with sh and uses its output; a name in capitals
// ("MY_API_KEY") is the environment variable of that name; anything else is
// the literal value. Values are resolved only when a provider is built,
// never stored in an [Entry], and never printed, logged or put in an error.
//
// # Keys of the built-in providers
//
// anthropic reads ANTHROPIC_API_KEY; openai reads OPENAI_API_KEY, and
// OPENAI_BASE_URL when set replaces its base URL.
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
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/anthropic"
	"github.com/prime-agent/prime/llm/openai"
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
}

// DefaultAgentDir returns $PRIME_CODING_AGENT_DIR, or ~/.prime/agent.
func DefaultAgentDir(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if d := getenv("PRIME_CODING_AGENT_DIR"); d != "" {
		return d, nil
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("registry: cannot find the agent directory: %w", err)
		}
	}
	return filepath.Join(home, ".prime", "agent"), nil
}

// provider is one configured provider.
type provider struct {
	name       string
	api        string
	baseURL    string
	apiKey     string // a value spec: literal, NAME or !command
	authHeader bool
}

// Registry is the set of known models. It is immutable once loaded.
type Registry struct {
	entries   []Entry
	providers map[string]*provider
	getenv    func(string) string
	client    *http.Client
	retry     *retry.Policy
	// ModelsPath is the models.json read (or looked for).
	ModelsPath string
}

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
		ModelsPath: filepath.Join(dir, "models.json"),
	}
	openaiBase := "https://api.openai.com/v1"
	if v := getenv("OPENAI_BASE_URL"); v != "" {
		openaiBase = strings.TrimSuffix(v, "/")
	}
	r.providers[llm.ProviderAnthropic] = &provider{name: llm.ProviderAnthropic, api: llm.APIAnthropicMessages,
		baseURL: anthropic.DefaultBaseURL, apiKey: "ANTHROPIC_API_KEY"}
	r.providers[llm.ProviderOpenAI] = &provider{name: llm.ProviderOpenAI, api: llm.APIOpenAICompletions,
		baseURL: openaiBase, apiKey: "OPENAI_API_KEY"}
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
		return nil, fmt.Errorf("registry: %w", err)
	default:
		if err := r.apply(data); err != nil {
			return nil, fmt.Errorf("%s: %w", r.ModelsPath, err)
		}
	}
	for i := range r.entries {
		e := &r.entries[i]
		p := r.providers[e.Model.Provider]
		e.Key, e.HasKey = r.keyStatus(p)
		e.Supported = e.Model.API == llm.APIAnthropicMessages || e.Model.API == llm.APIOpenAICompletions
	}
	slices.SortStableFunc(r.entries, func(a, b Entry) int {
		if c := strings.Compare(a.Model.Provider, b.Model.Provider); c != 0 {
			return c
		}
		return 0 // keep each provider's own order (built-ins newest first)
	})
	return r, nil
}

// envName matches a value that names an environment variable.
var envName = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// keyStatus describes where p's key comes from and whether it is there.
func (r *Registry) keyStatus(p *provider) (string, bool) {
	if p == nil || p.apiKey == "" {
		return "", false
	}
	switch v := p.apiKey; {
	case strings.HasPrefix(v, "!"):
		return "command", true
	case envName.MatchString(v):
		return "$" + v, r.getenv(v) != ""
	default:
		return SourceModelsJSON, true
	}
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
	case envName.MatchString(spec):
		return r.getenv(spec), nil
	default:
		return spec, nil
	}
}

func exitStatus(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("%s", ee.ProcessState.String())
	}
	return err
}

// Models returns every known model, grouped by provider.
func (r *Registry) Models() []Entry { return slices.Clone(r.entries) }

// Find looks a model up by "provider/id", or by id alone when only one
// provider has it.
func (r *Registry) Find(ref string) (Entry, error) {
	var matches []Entry
	for _, e := range r.entries {
		if e.Ref() == ref {
			return e, nil
		}
		if e.Model.ID == ref {
			matches = append(matches, e)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return Entry{}, fmt.Errorf("registry: %w %q (run 'prime models' for the list)", ErrUnknownModel, ref)
	default:
		refs := make([]string, len(matches))
		for i, m := range matches {
			refs[i] = m.Ref()
		}
		return Entry{}, fmt.Errorf("registry: model %q is ambiguous: %s", ref, strings.Join(refs, ", "))
	}
}

// Resolve finds a model and builds its provider. The returned model has its
// header values resolved.
func (r *Registry) Resolve(ctx context.Context, ref string) (llm.Provider, llm.Model, error) {
	e, err := r.Find(ref)
	if err != nil {
		return nil, llm.Model{}, err
	}
	return r.ProviderFor(ctx, e.Model)
}

// ProviderFor builds a provider for model m (which need not come from the
// registry: its provider's key and headers are looked up by name).
func (r *Registry) ProviderFor(ctx context.Context, m llm.Model) (llm.Provider, llm.Model, error) {
	p := r.providers[m.Provider]
	if p == nil {
		p = &provider{name: m.Provider, api: m.API, baseURL: m.BaseURL}
	}
	ref := m.Provider + "/" + m.ID
	var key string
	if p.apiKey != "" {
		v, err := r.resolve(ctx, "provider "+p.name+" apiKey", p.apiKey)
		if err != nil {
			return nil, llm.Model{}, fmt.Errorf("registry: %s: %w", ref, err)
		}
		key = v
		if key == "" && envName.MatchString(p.apiKey) {
			return nil, llm.Model{}, fmt.Errorf("registry: %s: %w: set %s", ref, ErrNoKey, p.apiKey)
		}
	}
	headers := map[string]string{}
	resolved := m
	resolved.Headers = map[string]string{}
	for k, spec := range m.Headers {
		v, err := r.resolve(ctx, "header "+k, spec)
		if err != nil {
			return nil, llm.Model{}, fmt.Errorf("registry: %s: %w", ref, err)
		}
		resolved.Headers[k] = v
	}
	if p.authHeader && key != "" {
		headers["Authorization"] = "Bearer " + key
	}
	if len(resolved.Headers) == 0 {
		resolved.Headers = nil
	}
	switch m.API {
	case llm.APIAnthropicMessages:
		return anthropic.New(anthropic.Config{APIKey: llm.Secret(key), BaseURL: p.baseURL, Headers: headers,
			HTTPClient: r.client, Retry: r.retry}), resolved, nil
	case llm.APIOpenAICompletions:
		return openai.New(openai.Config{APIKey: llm.Secret(key), BaseURL: p.baseURL, Headers: headers,
			HTTPClient: r.client, Retry: r.retry}), resolved, nil
	default:
		return nil, llm.Model{}, fmt.Errorf("registry: %s: %w %q (Prime speaks %s and %s)", ref, ErrUnsupportedAPI, m.API,
			llm.APIAnthropicMessages, llm.APIOpenAICompletions)
	}
}
