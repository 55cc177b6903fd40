package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm/llmtest"
)

// TestLoginCommand: prime login stores a key read from standard input in
// auth.json (pi's format, mode 0600), keeps the file's other entries, and
// the agent uses the key at once; the key is printed nowhere and written
// into no session file.
func TestLoginCommand(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	e := newAgentEnv(t, srv, 0, "")
	// The provider's key comes from an environment variable that is unset.
	models := `{"providers": {"fake": {"baseUrl": "` + srv.Model().BaseURL + `", "api": "openai-completions", "apiKey": "FAKE_PRIME_TEST_KEY",
		"models": [{"id": "fake-model"}]}}}`
	writeFile(t, filepath.Join(e.agentDir, "models.json"), models)
	writeFile(t, filepath.Join(e.agentDir, "auth.json"), `{"other": {"type": "oauth", "refresh": "r1", "expires": 5}}`)
	const secret = "sk-test-SECRET-4242"

	out, errOut, code := e.run(t, "", "-p", "hello")
	if code != 1 || !strings.Contains(errOut, "no API key: set FAKE_PRIME_TEST_KEY") {
		t.Fatalf("before login: exit %d %q %q", code, out, errOut)
	}
	out, errOut, code = e.sub(t, "login", "nope")
	if code != exitBadUsage || !strings.Contains(errOut, "name the provider whose key to store: ") {
		t.Errorf("unknown provider: exit %d %q", code, errOut)
	}
	cmd := e.command()
	cmd.Args = []string{e.bin, "login", "fake"}
	cmd.Stdin = strings.NewReader(secret + "\n")
	got, err := cmd.CombinedOutput()
	authFile := filepath.Join(e.agentDir, "auth.json")
	if err != nil || string(got) != "stored the key for fake in "+authFile+" (mode 0600)\n" {
		t.Fatalf("prime login: %v %q", err, got)
	}
	fi, err := os.Stat(authFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("auth.json: %v, mode %v", err, fi.Mode())
	}
	data, _ := os.ReadFile(authFile)
	if !strings.Contains(string(data), `"fake": {`) || !strings.Contains(string(data), `"key": "`+secret+`"`) ||
		!strings.Contains(string(data), `"type": "api_key"`) || !strings.Contains(string(data), `"refresh": "r1"`) {
		t.Errorf("auth.json:\n%s", data)
	}

	srv.Reply(llmtest.Text("logged in"))
	out, errOut, code = e.run(t, "", "-p", "hello")
	if code != 0 || out != "logged in\n" || strings.Contains(out+errOut, secret) {
		t.Fatalf("after login: exit %d %q %q", code, out, errOut)
	}
	reqs := srv.Requests()
	if auth := reqs[len(reqs)-1].Header.Get("Authorization"); auth != "Bearer "+secret {
		t.Errorf("the request's Authorization is %q", auth)
	}
	session, _ := os.ReadFile(e.sessionFile(t))
	if strings.Contains(string(session), secret) {
		t.Error("the key is in the session file")
	}
	out, _, _ = e.sub(t, "models")
	if strings.Contains(out, secret) || !strings.Contains(out, "set (auth.json)") {
		t.Errorf("prime models after login:\n%s", out)
	}

	// prime logout removes it again, and only it.
	if _, errOut, code := e.sub(t, "logout"); code != exitBadUsage || !strings.Contains(errOut, "name the provider whose key to remove: fake") {
		t.Errorf("logout without a provider: exit %d %q", code, errOut)
	}
	out, errOut, code = e.sub(t, "logout", "fake")
	if code != 0 || out != "removed the key for fake from "+authFile+"\n" {
		t.Fatalf("prime logout: exit %d %q %q", code, out, errOut)
	}
	data, _ = os.ReadFile(authFile)
	if strings.Contains(string(data), secret) || strings.Contains(string(data), `"fake"`) || !strings.Contains(string(data), `"refresh": "r1"`) {
		t.Errorf("auth.json after logout:\n%s", data)
	}
	if fi, err := os.Stat(authFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("auth.json after logout: %v, mode %v", err, fi.Mode())
	}
	out, errOut, code = e.run(t, "", "-p", "hello")
	if code != 1 || !strings.Contains(errOut, "no API key: set FAKE_PRIME_TEST_KEY") {
		t.Errorf("after logout: exit %d %q %q", code, out, errOut)
	}
	out, _, code = e.sub(t, "logout", "fake")
	if code != 0 || out != "no key for fake in "+authFile+"; nothing removed\n" {
		t.Errorf("a second logout: exit %d %q", code, out)
	}
}
