package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/internal/proctest"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/registry"
	"github.com/prime-agent/prime/llm/retry"
)

func testApp(env map[string]string) (*app, *proctest.Buffer, *proctest.Buffer) {
	out, errOut := &proctest.Buffer{}, &proctest.Buffer{}
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
	// Token counts in one format: in full, with thousands separators.
	if !strings.Contains(text, " 128,000 ") || regexp.MustCompile(`\s\d+[KM]\s|\s\d{4,}\s`).MatchString(text) {
		t.Errorf("token counts in mixed formats:\n%s", text)
	}
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

// startFakeLLM runs "prime dev fake-llm" with args, writing models.json in
// dir, and returns a registry reading it and a function that stops the
// server and checks its exit status.
func startFakeLLM(t *testing.T, dir string, args ...string) (*registry.Registry, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	a, out, errOut := testApp(nil)
	done := make(chan int)
	go func() {
		done <- run(ctx, append([]string{"dev", "fake-llm", "--models-json", filepath.Join(dir, "models.json")}, args...), a)
	}()
	stop := func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("exit %d: %s", code, errOut)
		}
	}
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	printed, _ := out.Await(wctx, func(s string) bool { return strings.Contains(s, "\n") })
	wcancel()
	url := strings.TrimSpace(printed)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		stop()
		t.Fatalf("no URL printed: %q %q", url, errOut)
	}
	reg, err := registry.Load(registry.Options{AgentDir: dir, Getenv: func(string) string { return "" }, Retry: &retry.Policy{}})
	if err != nil {
		stop()
		t.Fatal(err)
	}
	return reg, stop
}

func ask(text string) []llm.Message {
	return []llm.Message{&llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}}}
}

// TestFakeLLMCommand starts the developer fake server as the binary would,
// points a registry at it through the models.json it writes, and talks to
// it.
func TestFakeLLMCommand(t *testing.T) {
	for _, api := range []string{"anthropic", "openai", "responses", "azure", "gemini", "vertex"} {
		t.Run(api, func(t *testing.T) {
			dir := t.TempDir()
			script := filepath.Join(dir, "script.json")
			os.WriteFile(script, []byte(`{"replies": [{"parts": [{"text": "scripted"}, {"usage": {"input": 5, "output": 1}}]}]}`), 0o600)
			reg, stop := startFakeLLM(t, dir, "--api", api, "--script", script)
			defer stop()
			p, m, err := reg.Resolve(t.Context(), "fake/fake-model")
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, q := range []string{"first", "second question"} {
				msg, err := llm.Complete(t.Context(), p, &llm.Request{Model: m, Messages: ask(q)})
				if err != nil {
					t.Fatal(err)
				}
				texts = append(texts, msg.Text())
			}
			if texts[0] != "scripted" || texts[1] != "fake reply to: second question" {
				t.Errorf("replies %q", texts)
			}
		})
	}
}

// TestFakeLLMWindow: with --context-window and --token-ratio the developer
// server is a llama.cpp with that context and tokenizer: models.json
// describes the window, a prompt too large for it is refused with both
// sizes, a smaller one is answered with the server's own token count.
func TestFakeLLMWindow(t *testing.T) {
	dir := t.TempDir()
	reg, stop := startFakeLLM(t, dir, "--api", "openai", "--flavor", "llamacpp", "--context-window", "400", "--token-ratio", "2")
	defer stop()
	p, m, err := reg.Resolve(t.Context(), "fake/fake-model")
	if err != nil {
		t.Fatal(err)
	}
	if m.ContextWindow != 400 || m.MaxTokens != 100 {
		t.Errorf("models.json: window %d, output limit %d", m.ContextWindow, m.MaxTokens)
	}
	_, err = llm.Complete(t.Context(), p, &llm.Request{Model: m, Messages: ask(strings.Repeat("abcd", 250))})
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || !errors.Is(err, llm.ErrContextOverflow) || apiErr.ContextTokens != 400 || apiErr.PromptTokens != 2*250+4 {
		t.Errorf("err = %v (%+v)", err, apiErr)
	}
	msg, err := llm.Complete(t.Context(), p, &llm.Request{Model: m, Messages: ask("abcd")})
	if err != nil || msg.Text() != "fake reply to: abcd" || msg.Usage.Input != 2+4 {
		t.Errorf("%v: %q, usage %+v", err, msg.Text(), msg.Usage)
	}
}

func TestFakeLLMUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--api", "bedrock"},
		{"--api", "openai", "--context-window", "-1"},
		{"--api", "openai", "--context-window", "8192", "--token-ratio", "0"},
		{"--api", "openai", "--token-ratio", "2"},
	} {
		a, _, errOut := testApp(nil)
		if code := run(t.Context(), append([]string{"dev", "fake-llm"}, args...), a); code != exitBadUsage {
			t.Errorf("%q: exit %d: %s", args, code, errOut)
		}
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

// TestModelsWarnsOfUnusedFields: a pi user's models.json field that Prime
// does not act on is named on stderr, with the file and line, and the list
// still prints.
func TestModelsWarnsOfUnusedFields(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "models.json"), []byte(`{"providers": {"local": {"baseUrl": "http://localhost:8080/v1",
		"api": "openai-completions", "apiKey": "EMPTY",
		"models": [{"id": "v", "promptCache": {"short": 300}}]}}}`), 0o600)
	a, out, errOut := testApp(map[string]string{"PRIME_CODING_AGENT_DIR": dir})
	if code := run(t.Context(), []string{"models"}, a); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "warning: " + filepath.Join(dir, "models.json") + ` line 3: provider "local": model "v": promptCache is not used by Prime`
	if !strings.Contains(errOut.String(), want) || !strings.Contains(out.String(), "local/v") {
		t.Errorf("stderr %q lacks %q (stdout %q)", errOut, want, out)
	}
}
