package agent_test

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
)

// pngBytes is a 1×1 PNG.
var pngBytes, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")

// imageAgent is an agent on srv's model, in a fresh directory holding
// shot.png, a text file named fake.png, and a quoted "my shot.png"; text
// only makes the model take text alone.
func imageAgent(t *testing.T, srv *llmtest.Server, textOnly bool) (*agent.Agent, string, string) {
	t.Helper()
	m := srv.Model()
	input := []string{"text", "image"}
	if textOnly {
		input = []string{"text"}
	}
	dir := t.TempDir()
	models, _ := json.Marshal(map[string]any{"providers": map[string]any{m.Provider: map[string]any{
		"baseUrl": m.BaseURL, "api": m.API, "apiKey": llmtest.Key,
		"models": []any{map[string]any{"id": m.ID, "input": input, "contextWindow": m.ContextWindow, "maxTokens": m.MaxTokens}},
	}}})
	if err := os.WriteFile(filepath.Join(dir, "models.json"), models, 0o600); err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	os.WriteFile(filepath.Join(cwd, "shot.png"), pngBytes, 0o600)
	os.WriteFile(filepath.Join(cwd, "my shot.png"), pngBytes, 0o600)
	os.WriteFile(filepath.Join(cwd, "fake.png"), []byte("not an image"), 0o600)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s, err := session.Create(path, session.Options{CWD: cwd})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config(dir, testSettings(t), nil)
	cfg.Model, cfg.CWD, cfg.NoContextFiles = m.Provider+"/"+m.ID, cwd, true
	ag := agent.New(s, cfg)
	t.Cleanup(func() { ag.Close() })
	return ag, path, cwd
}

// TestImageReferences: @path attaches the image in every wire API (the
// request carries it, the session stores it, estimated as pi does); a
// quoted path with a space works; a missing file stays text; a file that
// is not an image is refused, as are images for a text-only model — before
// anything is written or sent.
func TestImageReferences(t *testing.T) {
	data := base64.StdEncoding.EncodeToString(pngBytes)
	for _, v := range llmtest.Vendors() {
		t.Run(v.Name, func(t *testing.T) {
			srv := v.New(t)
			srv.Handle(echo)
			ag, path, _ := imageAgent(t, srv, false)
			send(t, ag, `What is in @shot.png and @"my shot.png"? Not @missing.png.`)
			if body := string(srv.LastRequest().Body); strings.Count(body, data) != 2 {
				t.Errorf("the request carries the image %d times:\n%.400s", strings.Count(body, data), body)
			}
			msgs, _ := ag.Messages()
			var u *llm.UserMessage
			for _, m := range msgs {
				if um, ok := m.(*llm.UserMessage); ok && u == nil {
					u = um
				}
			}
			if u == nil || len(u.Content) != 3 {
				t.Fatalf("user message %#v", u)
			}
			if img, ok := u.Content[1].(llm.Image); !ok || img.MIMEType != "image/png" || img.Data != data {
				t.Errorf("stored %#v", u.Content[1])
			}
			if est := session.EstimateTokens(u); est < 2*session.ImageChars/4 {
				t.Errorf("estimate %d leaves the images out", est)
			}
			before, kinds := len(srv.Requests()), entryKinds(t, path)
			if _, err := ag.Prompt(t.Context(), "and @fake.png?", agent.PromptOptions{}); err == nil || !strings.Contains(err.Error(), "fake.png: not a PNG") {
				t.Errorf("a text file as an image: %v", err)
			}
			if len(srv.Requests()) != before || entryKinds(t, path) != kinds {
				t.Errorf("the refused prompt was sent or written: %s", entryKinds(t, path))
			}
		})
	}
	srv := llmtest.NewResponses(t)
	ag, path, _ := imageAgent(t, srv, true)
	if _, err := ag.Prompt(t.Context(), "What is in @shot.png?", agent.PromptOptions{}); !errors.Is(err, agent.ErrNoImageInput) {
		t.Fatalf("a text-only model: %v", err)
	}
	if _, err := ag.Prompt(t.Context(), "this", agent.PromptOptions{Images: []llm.Image{{Data: data, MIMEType: "image/png"}}}); !errors.Is(err, agent.ErrNoImageInput) {
		t.Errorf("RPC-style images to a text-only model: %v", err)
	}
	if _, err := os.Stat(path); len(srv.Requests()) != 0 || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("refused prompts were sent or written: %d requests, file %v", len(srv.Requests()), err)
	}
}
