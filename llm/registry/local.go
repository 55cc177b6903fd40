package registry

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/llm"
)

// LocalServer is a model server that may run on this machine without any
// configuration: an OpenAI-compatible endpoint at a well-known port.
type LocalServer struct {
	// Provider names the models it serves ("ollama", "llamacpp").
	Provider string
	// BaseURL is its OpenAI-compatible API, e.g. "http://127.0.0.1:11434/v1".
	BaseURL string
}

// LocalServers are the servers Prime looks for when nothing is configured:
// Ollama and llama.cpp's llama-server on their default ports.
var LocalServers = []LocalServer{
	{Provider: "ollama", BaseURL: "http://127.0.0.1:11434/v1"},
	{Provider: "llamacpp", BaseURL: "http://127.0.0.1:8080/v1"},
}

// localProbeTimeout bounds each probe: a server on loopback answers at once
// or is not there.
const localProbeTimeout = 1500 * time.Millisecond

// defaultLocalWindow is the context window assumed for a local model whose
// server does not report one (pi's default for a models.json model).
const defaultLocalWindow = 128000

// Discover asks each server (all at once) for the models it serves and
// returns them, in the order of servers and then of each server's list.
// A server that does not answer, or answers with something that is not a
// model list, contributes nothing. Each model's context window is what the
// server reports (llama.cpp's running n_ctx, Ollama's model context length),
// else 128,000 tokens.
func Discover(ctx context.Context, client *http.Client, servers []LocalServer) []llm.Model {
	if client == nil {
		client = http.DefaultClient
	}
	found := make([][]llm.Model, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, localProbeTimeout)
			defer cancel()
			found[i] = probe(ctx, client, s)
		})
	}
	wg.Wait()
	var out []llm.Model
	for _, ms := range found {
		out = append(out, ms...)
	}
	return out
}

// probe lists one server's models.
func probe(ctx context.Context, client *http.Client, s LocalServer) []llm.Model {
	var list struct {
		Data []struct {
			ID   string `json:"id"`
			Meta struct {
				NCtxTrain int `json:"n_ctx_train"`
			} `json:"meta"`
		} `json:"data"`
	}
	if getJSON(ctx, client, s.BaseURL+"/models", &list) != nil {
		return nil
	}
	root := strings.TrimSuffix(s.BaseURL, "/v1")
	// llama.cpp reports the context size it runs with.
	var props struct {
		Settings struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	runCtx := 0
	if getJSON(ctx, client, root+"/props", &props) == nil {
		runCtx = props.Settings.NCtx
	}
	var out []llm.Model
	for _, d := range list.Data {
		if d.ID == "" {
			continue
		}
		window := runCtx
		if window <= 0 {
			window = ollamaContext(ctx, client, root, d.ID)
		}
		if window <= 0 {
			window = d.Meta.NCtxTrain
		}
		if window <= 0 {
			window = defaultLocalWindow
		}
		out = append(out, llm.Model{
			ID: d.ID, Name: d.ID, Provider: s.Provider, API: llm.APIOpenAICompletions, BaseURL: s.BaseURL,
			Input: []string{"text"}, ContextWindow: window, MaxTokens: min(16384, window/2),
		})
	}
	return out
}

// ollamaContext asks Ollama for a model's context length (0 when the server
// is not Ollama or does not say).
func ollamaContext(ctx context.Context, client *http.Client, root, id string) int {
	var show struct {
		ModelInfo map[string]any `json:"model_info"`
	}
	body := strings.NewReader(`{"model":` + quote(id) + `}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, root+"/api/show", body)
	if err != nil {
		return 0
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || json.UnmarshalRead(resp.Body, &show) != nil {
		return 0
	}
	for k, v := range show.ModelInfo {
		if strings.HasSuffix(k, ".context_length") {
			if f, ok := v.(float64); ok && f > 0 {
				return int(f)
			}
		}
	}
	return 0
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// getJSON reads a JSON answer into v.
func getJSON(ctx context.Context, client *http.Client, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return json.UnmarshalRead(resp.Body, v, json.RejectUnknownMembers(false))
}
