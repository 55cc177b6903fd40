package registry_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm/registry"
)

// TestAuthJSON: a stored key comes before the environment; a key can be a
// command; other credentials survive a save; a broken file is an error
// naming it, and is not overwritten.
func TestAuthJSON(t *testing.T) {
	dir := t.TempDir()
	env := func(k string) string { return map[string]string{"ANTHROPIC_API_KEY": "from-env"}[k] }
	authFile := filepath.Join(dir, "auth.json")
	os.WriteFile(authFile, []byte(`{"github-copilot": {"type": "oauth", "access": "a", "expires": 1}}`), 0o644)
	if err := registry.SaveAPIKey(dir, "anthropic", "sk-stored"); err != nil {
		t.Fatal(err)
	}
	if err := registry.SaveAPIKey(dir, "openai", "!echo sk-from-command"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(authFile)
	want := `{
  "anthropic": {
    "type": "api_key",
    "key": "sk-stored"
  },
  "github-copilot": {
    "type": "oauth",
    "access": "a",
    "expires": 1
  },
  "openai": {
    "type": "api_key",
    "key": "!echo sk-from-command"
  }
}
`
	if fi, _ := os.Stat(authFile); string(data) != want || fi.Mode().Perm() != 0o600 {
		t.Errorf("auth.json (mode %v):\n%s\nwant\n%s", fi.Mode(), data, want)
	}
	reg, err := registry.Load(registry.Options{AgentDir: dir, Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range reg.KeyProviders() {
		if (p.Name == "anthropic" || p.Name == "openai") && (p.Key != registry.SourceAuthJSON || !p.HasKey) {
			t.Errorf("%+v: want the key from auth.json", p)
		}
	}
	// The keys themselves are checked on the wire by cmd/prime's
	// TestLoginCommand; here, that the providers build (the command runs).
	for _, ref := range []string{"anthropic/claude-haiku-4-5", "openai/gpt-5"} {
		e, err := reg.Find(ref)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := reg.ProviderFor(t.Context(), e.Model); err != nil {
			t.Errorf("%s: %v", ref, err)
		}
	}

	os.WriteFile(authFile, []byte(`{"anthropic": `), 0o600)
	if _, err := registry.Load(registry.Options{AgentDir: dir, Getenv: env}); err == nil || !strings.Contains(err.Error(), authFile) {
		t.Errorf("a broken auth.json: %v", err)
	}
	if err := registry.SaveAPIKey(dir, "anthropic", "sk-new"); err == nil || strings.Contains(err.Error(), "sk-new") {
		t.Errorf("saving over a broken auth.json: %v", err)
	}
	if data, _ := os.ReadFile(authFile); string(data) != `{"anthropic": ` {
		t.Errorf("the broken file was changed: %s", data)
	}
}

// TestRemoveAPIKey: a logout removes the provider's entry and nothing
// else (pi's OAuth logins and other keys stay, in pi's layout, mode
// 0600); then the key comes from the environment again. A provider with
// no entry, a missing file and a broken file change nothing.
func TestRemoveAPIKey(t *testing.T) {
	dir := t.TempDir()
	authFile := filepath.Join(dir, "auth.json")
	if removed, err := registry.RemoveAPIKey(dir, "anthropic"); removed || err != nil {
		t.Fatalf("no file: %v, %v", removed, err)
	}
	if _, err := os.Stat(authFile); err == nil {
		t.Fatal("a logout without a file made one")
	}
	os.WriteFile(authFile, []byte(`{"github-copilot": {"type": "oauth", "access": "a", "expires": 1}}`), 0o644)
	for _, kv := range [][2]string{{"anthropic", "sk-stored"}, {"openai", "sk-openai"}} {
		if err := registry.SaveAPIKey(dir, kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if removed, err := registry.RemoveAPIKey(dir, "anthropic"); !removed || err != nil {
		t.Fatalf("removing anthropic: %v, %v", removed, err)
	}
	data, _ := os.ReadFile(authFile)
	want := `{
  "github-copilot": {
    "type": "oauth",
    "access": "a",
    "expires": 1
  },
  "openai": {
    "type": "api_key",
    "key": "sk-openai"
  }
}
`
	if fi, _ := os.Stat(authFile); string(data) != want || fi.Mode().Perm() != 0o600 {
		t.Errorf("auth.json (mode %v):\n%s\nwant\n%s", fi.Mode(), data, want)
	}
	env := func(k string) string { return map[string]string{"ANTHROPIC_API_KEY": "from-env"}[k] }
	reg, err := registry.Load(registry.Options{AgentDir: dir, Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range reg.KeyProviders() {
		if p.Name == "anthropic" && p.Key != "$ANTHROPIC_API_KEY" {
			t.Errorf("%+v: want the key from the environment once logged out", p)
		}
	}
	if removed, err := registry.RemoveAPIKey(dir, "anthropic"); removed || err != nil {
		t.Errorf("removing it again: %v, %v", removed, err)
	}
	if again, _ := os.ReadFile(authFile); string(again) != want {
		t.Errorf("a logout of a provider without an entry rewrote the file:\n%s", again)
	}
	os.WriteFile(authFile, []byte(`{"openai": `), 0o600)
	if removed, err := registry.RemoveAPIKey(dir, "openai"); removed || err == nil || !strings.Contains(err.Error(), authFile) {
		t.Errorf("a broken auth.json: %v, %v", removed, err)
	}
	if data, _ := os.ReadFile(authFile); string(data) != `{"openai": ` {
		t.Errorf("the broken file was changed: %s", data)
	}
}
