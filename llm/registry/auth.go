package registry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/atomicfile"
)

// SourceAuthJSON is [Entry.Key] for a key stored in auth.json.
const SourceAuthJSON = "auth.json"

// auth.json holds the keys /login and prime login store, in pi's file and
// format, so a pi user's file works unchanged and pi reads Prime's:
//
//	{"anthropic": {"type": "api_key", "key": "sk-ant-..."}}
//
// one object per provider; "key" is the key, "!command" to run or "$NAME"
// to read (as in models.json). A stored key comes before models.json's apiKey and the
// environment, as in pi. Credentials of other types (pi's OAuth logins)
// are kept as they are and not used. The file is written with mode 0600
// and replaced atomically.

// authCredential is one provider's entry of auth.json.
type authCredential struct {
	Type string `json:"type"`
	Key  string `json:"key"`
}

// readAuth returns the API keys auth.json stores, by provider. A missing
// file stores none.
func readAuth(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var doc map[string]jsontext.Value
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	keys := map[string]string{}
	for provider, raw := range doc {
		var c authCredential
		if err := json.Unmarshal(raw, &c); err == nil && c.Type == "api_key" && c.Key != "" {
			keys[provider] = c.Key
		}
	}
	return keys, nil
}

// SaveAPIKey stores key as provider's API key in agentDir's auth.json (pi's
// format), keeping the file's other entries, with mode 0600, replacing the
// file atomically. The key is never part of an error.
func SaveAPIKey(agentDir, provider, key string) error {
	if provider == "" || key == "" {
		return errors.New("a provider and a key are needed")
	}
	if err := os.MkdirAll(agentDir, 0o700); err != nil {
		return err
	}
	path := filepath.Join(agentDir, "auth.json")
	doc := map[string]jsontext.Value{}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("%s is not valid JSON; fix or remove it first: %w", path, err)
		}
	}
	cred, err := json.Marshal(authCredential{Type: "api_key", Key: key})
	if err != nil {
		return errors.New("cannot encode the key")
	}
	doc[provider] = cred
	return writeAuth(path, doc)
}

// RemoveAPIKey removes provider's entry from agentDir's auth.json (what
// /logout and prime logout do; pi's logout removes a provider's entry the
// same way), keeping the file's other entries, mode 0600, replacing the
// file atomically. removed is false when the file holds no entry for the
// provider (or there is no file): nothing is written then.
func RemoveAPIKey(agentDir, provider string) (removed bool, err error) {
	if provider == "" {
		return false, errors.New("a provider is needed")
	}
	path := filepath.Join(agentDir, "auth.json")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	doc := map[string]jsontext.Value{}
	if err := json.Unmarshal(data, &doc); err != nil {
		return false, fmt.Errorf("%s is not valid JSON; fix or remove it first: %w", path, err)
	}
	if _, ok := doc[provider]; !ok {
		return false, nil
	}
	delete(doc, provider)
	if err := writeAuth(path, doc); err != nil {
		return false, err
	}
	return true, nil
}

// writeAuth writes auth.json as pi does (indented by two spaces), mode
// 0600, atomically.
func writeAuth(path string, doc map[string]jsontext.Value) error {
	out, err := json.Marshal(doc, json.Deterministic(true))
	if err != nil {
		return errors.New("cannot encode auth.json")
	}
	if err := (*jsontext.Value)(&out).Indent(jsontext.WithIndent("  ")); err != nil {
		return errors.New("cannot encode auth.json")
	}
	return atomicfile.WriteFile(path, append(out, '\n'), 0o600)
}

// resolveStored turns auth.json's key into the key, as pi 1.6 does: a
// "!command" runs, "$NAME" reads the environment, anything else is the key.
func (r *Registry) resolveStored(ctx context.Context, spec string) (string, error) {
	return r.resolve(ctx, "auth.json key", spec)
}

// KeyProvider is a provider whose models need an API key.
type KeyProvider struct {
	// Name is the provider, e.g. "anthropic".
	Name string
	// Key says where its key comes from now ("$ANTHROPIC_API_KEY",
	// "auth.json", …), never the key; HasKey whether one is there.
	Key    string
	HasKey bool
}

// KeyProviders lists the providers whose models Prime can call and need a
// key (the built-in ones and those of models.json), in the order of
// [Registry.Models]: those a login can store a key for.
func (r *Registry) KeyProviders() []KeyProvider {
	var out []KeyProvider
	seen := map[string]bool{}
	for _, e := range r.entries {
		if !e.Supported || e.Key == "" || seen[e.Model.Provider] {
			continue
		}
		seen[e.Model.Provider] = true
		out = append(out, KeyProvider{Name: e.Model.Provider, Key: e.Key, HasKey: e.HasKey})
	}
	return out
}
