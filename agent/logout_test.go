package agent_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/llm/registry"
	"github.com/prime-agent/prime/session"
)

// TestLoginThenLogout: a key stored by Login is used at once; Logout
// removes it from auth.json (other entries stay) and the conversation stops
// using it at once: the next prompt says the key is missing.
func TestLoginThenLogout(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	dir := t.TempDir()
	// The provider's key comes from an environment variable that is unset.
	models := `{"providers": {"fake": {"baseUrl": "` + srv.Model().BaseURL + `", "api": "openai-completions", "apiKey": "FAKE_PRIME_TEST_KEY",
		"models": [{"id": "fake-model"}]}}}`
	authFile := filepath.Join(dir, "auth.json")
	for name, data := range map[string]string{"models.json": models, "auth.json": `{"other": {"type": "oauth", "refresh": "r1", "expires": 5}}`} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, err := session.Create(filepath.Join(t.TempDir(), "s.jsonl"), session.Options{CWD: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config(dir, testSettings(t), nil)
	cfg.Model, cfg.NoContextFiles = "fake/fake-model", true
	ag := agent.New(s, cfg)
	t.Cleanup(func() { ag.Close() })

	if _, err := ag.Model(t.Context()); !errors.Is(err, registry.ErrNoKey) {
		t.Fatalf("before the login: %v", err)
	}
	if _, _, err := ag.Login(t.Context(), "fake", llmtest.Key); err != nil {
		t.Fatal(err)
	}
	srv.Reply(llmtest.Text("logged in"))
	send(t, ag, "hello")
	if text, _ := ag.LastAssistantText(); text != "logged in" {
		t.Fatalf("after the login: %q", text)
	}

	removed, err := ag.Logout(t.Context(), "fake")
	if err != nil || !removed {
		t.Fatalf("logout: %v, %v", removed, err)
	}
	data, _ := os.ReadFile(authFile)
	if strings.Contains(string(data), `"fake"`) || !strings.Contains(string(data), `"refresh": "r1"`) {
		t.Errorf("auth.json after the logout:\n%s", data)
	}
	if _, err := ag.Prompt(t.Context(), "still there?", agent.PromptOptions{}); !errors.Is(err, registry.ErrNoKey) {
		t.Errorf("a prompt after the logout: %v, want the missing key", err)
	}
	if removed, err := ag.Logout(t.Context(), "fake"); removed || err != nil {
		t.Errorf("a second logout: %v, %v", removed, err)
	}
}
