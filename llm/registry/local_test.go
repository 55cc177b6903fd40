package registry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm/registry"
)

// TestDiscover finds the models of an Ollama-like and a llama.cpp-like
// server, with the context windows they report, and nothing from a server
// that is down or answers with something else.
func TestDiscover(t *testing.T) {
	ollama := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			w.Write([]byte(`{"object":"list","data":[{"id":"qwen3:8b","object":"model"},{"id":"llama3.2:3b"}]}`))
		case "/api/show":
			if strings.Contains(readAll(r), "qwen3:8b") {
				w.Write([]byte(`{"model_info":{"qwen3.context_length":40960,"general.architecture":"qwen3"}}`))
			} else {
				w.Write([]byte(`{"model_info":{}}`))
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer ollama.Close()
	llama := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			w.Write([]byte(`{"models":[{"name":"gemma"}],"data":[{"id":"gemma-3-4b.gguf","meta":{"n_ctx_train":131072}}]}`))
		case "/props":
			w.Write([]byte(`{"default_generation_settings":{"n_ctx":8192}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer llama.Close()
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<html>not a model server</html>"))
	}))
	defer html.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()

	got := registry.Discover(context.Background(), nil, []registry.LocalServer{
		{Provider: "gone", BaseURL: down.URL + "/v1"},
		{Provider: "ollama", BaseURL: ollama.URL + "/v1"},
		{Provider: "web", BaseURL: html.URL + "/v1"},
		{Provider: "llamacpp", BaseURL: llama.URL + "/v1"},
	})
	var names []string
	for _, m := range got {
		names = append(names, m.Provider+"/"+m.ID)
		if m.API != "openai-completions" || !strings.HasSuffix(m.BaseURL, "/v1") {
			t.Errorf("%s: api %s, base %s", m.ID, m.API, m.BaseURL)
		}
	}
	want := "ollama/qwen3:8b ollama/llama3.2:3b llamacpp/gemma-3-4b.gguf"
	if strings.Join(names, " ") != want {
		t.Fatalf("found %v, want %s", names, want)
	}
	if w := []int{got[0].ContextWindow, got[1].ContextWindow, got[2].ContextWindow}; w[0] != 40960 || w[1] != 128000 || w[2] != 8192 {
		t.Errorf("windows %v, want 40960 (reported), 128000 (default), 8192 (running n_ctx)", w)
	}
}

func readAll(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	return string(b)
}
