package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm/llmtest"
)

// TestLogin: without a key the warning offers /login; /login asks for the
// provider and the key (shown as dots), stores it in auth.json (0600) and
// the conversation goes on with it, no restart. The key is on no screen and
// in no session file.
func TestLogin(t *testing.T) {
	h := newHarness(t, setup{apiKey: "PRIME_TUI_TEST_UNSET_KEY"})
	const secret = "sk-tui-SECRET-777"
	f := h.waitText("v0.0.0-test", "/login")
	frameGolden(t, "no-key", linesFrom(f, "Warning:"))
	h.send("/login")
	provider := h.srv.Model().Provider
	h.waitText("Log in: the provider whose API key to store", provider, "no key")
	h.enter()
	h.waitText("API key for " + provider)
	h.typeText(secret)
	f = h.waitText("•••••")
	if strings.Contains(f, secret) {
		t.Fatalf("the key is shown as it is typed:\n%s", f)
	}
	h.enter()
	f = h.waitText("✓ Key for " + provider + " stored; model: ")
	frameGolden(t, "stored", linesFrom(f, "✓ Key"))

	h.srv.Reply(llmtest.Text("Hello with a key."))
	h.send("hello")
	f = h.waitIdle("Hello with a key.")
	if strings.Contains(f, secret) {
		t.Errorf("the key is on the screen:\n%s", f)
	}
	reqs := h.srv.Requests()
	if k := reqs[len(reqs)-1].Header.Get("X-Api-Key"); k != secret {
		t.Errorf("the request's key is %q", k)
	}
	data, err := os.ReadFile(h.file)
	if err != nil || strings.Contains(string(data), secret) {
		t.Errorf("the session file holds the key (%v)", err)
	}
	fi, err := os.Stat(filepath.Join(h.agent, "auth.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("auth.json: %v %v", err, fi)
	}

	// /logout offers the providers auth.json holds a key for, removes the
	// chosen one's, and the conversation stops using it at once.
	h.send("/logout")
	h.waitText("Log out: the provider whose API key to remove", provider, "key in auth.json")
	h.enter()
	h.waitText("✓ Key for " + provider + " removed from auth.json")
	if data, _ := os.ReadFile(filepath.Join(h.agent, "auth.json")); strings.Contains(string(data), secret) {
		t.Errorf("auth.json still holds the key:\n%s", data)
	}
	h.send("/logout " + provider)
	h.waitText("No key for " + provider + " in auth.json; nothing removed")
	n := len(h.srv.Requests())
	h.send("hello again")
	h.waitText("Error: model "+provider+"/claude-test: no API key: set PRIME_TUI_TEST_UNSET_KEY;", "or type /login to store a key now")
	// Sent again (it went back into the editor), it fails the same way:
	// the error is said once.
	h.enter()
	h.send("/logout " + provider)
	f = h.waitFor("the second status", func(f string) bool { return strings.Count(f, "No key for "+provider+" in auth.json") == 2 })
	if c := strings.Count(f, "Error: model"); c != 1 {
		t.Errorf("the missing key is said %d times:\n%s", c, f)
	}
	if len(h.srv.Requests()) != n {
		t.Error("a request was sent after the logout")
	}
}
