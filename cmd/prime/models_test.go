package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/registry"
	"github.com/prime-agent/prime/llm/retry"
)

// syncBuffer is a bytes.Buffer safe for a command writing while the test
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func testApp(env map[string]string) (*app, *syncBuffer, *syncBuffer) {
	out, errOut := &syncBuffer{}, &syncBuffer{}
	return &app{stdin: strings.NewReader(""), stdout: out, stderr: errOut, getenv: func(k string) string { return env[k] }}, out, errOut
}

func TestModelsCommand(t *testing.T) {
	dir := t.TempDir()
	secret := "sk-do-not-print-7"
	os.WriteFile(filepath.Join(dir, "models.json"), []byte(`{"providers": {"local": {"baseUrl": "http://localhost:8080/v1",
		"api": "openai-completions", "apiKey": "`+secret+`", "headers": {"x-secret": "`+secret+`"}, "models": [{"id": "m1"}]}}}`), 0o600)
	env := map[string]string{"PRIME_CODING_AGENT_DIR": dir, "ANTHROPIC_API_KEY": secret}

	a, out, errOut := testApp(env)
	if code := run(t.Context(), []string{"models"}, a); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	text := out.String()
	for _, want := range []string{"local/m1", "models.json", "set ($ANTHROPIC_API_KEY)", "missing ($OPENAI_API_KEY)", "anthropic/claude-opus-5"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}

	a, out, _ = testApp(env)
	if code := run(t.Context(), []string{"models", "--json"}, a); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var models []modelJSON
	if err := json.Unmarshal([]byte(out.String()), &models); err != nil {
		t.Fatal(err)
	}
	var local *modelJSON
	for i := range models {
		if models[i].Provider == "local" {
			local = &models[i]
		}
	}
	if local == nil || local.Source != "models.json" || !local.Key.Present || local.Key.Source != "models.json" ||
		len(local.Headers) != 1 || local.Headers[0] != "x-secret" || local.ContextWindow != 128000 {
		t.Errorf("local model %+v", local)
	}
	if strings.Contains(text+out.String(), secret) {
		t.Error("a key was printed")
	}
}

func TestModelsCommandBrokenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "models.json")
	os.WriteFile(path, []byte("{\n  \"providers\": {\n    \"x\": {\"baseUrl\": }\n  }\n}\n"), 0o600)
	a, _, errOut := testApp(map[string]string{"PRIME_CODING_AGENT_DIR": dir})
	if code := run(t.Context(), []string{"models"}, a); code != exitBadUsage {
		t.Fatalf("exit %d, want %d", code, exitBadUsage)
	}
	if msg := errOut.String(); !strings.Contains(msg, path) || !strings.Contains(msg, "line 3, column") {
		t.Errorf("stderr %q", msg)
	}
}

// TestFakeLLMCommand starts the developer fake server as the binary would,
// points a registry at it through the models.json it writes, and talks to
// it.
func TestFakeLLMCommand(t *testing.T) {
	for _, api := range []string{"anthropic", "openai"} {
		t.Run(api, func(t *testing.T) {
			dir := t.TempDir()
			script := filepath.Join(dir, "script.json")
			os.WriteFile(script, []byte(`{"replies": [{"parts": [{"text": "scripted"}, {"usage": {"input": 5, "output": 1}}]}]}`), 0o600)
			ctx, cancel := context.WithCancel(t.Context())
			a, out, errOut := testApp(nil)
			done := make(chan int)
			go func() {
				done <- run(ctx, []string{"dev", "fake-llm", "--api", api, "--script", script, "--models-json", filepath.Join(dir, "models.json")}, a)
			}()
			var url string
			for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				url = strings.TrimSpace(out.String())
			}
			if !strings.HasPrefix(url, "http://127.0.0.1:") {
				cancel()
				t.Fatalf("no URL printed: %q %q", url, errOut)
			}
			reg, err := registry.Load(registry.Options{AgentDir: dir, Getenv: func(string) string { return "" }, Retry: &retry.Policy{}})
			if err != nil {
				t.Fatal(err)
			}
			p, m, err := reg.Resolve(ctx, "fake/fake-model")
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, q := range []string{"first", "second question"} {
				msg, err := llm.Complete(ctx, p, &llm.Request{Model: m, Messages: []llm.Message{&llm.UserMessage{Content: []llm.Content{llm.Text{Text: q}}}}})
				if err != nil {
					t.Fatal(err)
				}
				texts = append(texts, msg.Text())
			}
			if texts[0] != "scripted" || texts[1] != "fake reply to: second question" {
				t.Errorf("replies %q", texts)
			}
			cancel()
			if code := <-done; code != exitOK {
				t.Errorf("exit %d: %s", code, errOut)
			}
		})
	}
}

func TestFakeLLMUsage(t *testing.T) {
	a, _, errOut := testApp(nil)
	if code := run(t.Context(), []string{"dev", "fake-llm", "--api", "gemini"}, a); code != exitBadUsage {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// TestBinaryHasNoTestCode checks that the fake servers reach the binary
// without the testing package (and its flags) or the test helpers.
func TestBinaryHasNoTestCode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for dep := range strings.FieldsSeq(string(out)) {
		if dep == "testing" || strings.HasSuffix(dep, "/llmtest") {
			t.Errorf("prime links %s", dep)
		}
	}
}
