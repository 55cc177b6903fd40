package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/numfmt"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmfake"
	"github.com/prime-agent/prime/llm/registry"
)

func modelsCommands() []*command {
	return []*command{
		{name: "models", usage: "[--json]", summary: "list the models Prime knows, where each comes from, and whether its key is set", run: runModels},
		{name: "dev fake-llm", usage: "--api anthropic|openai|responses|azure|gemini|vertex [--flavor F] [--addr A] [--script FILE] [--models-json FILE] [--context-window N [--token-ratio R]]",
			summary: "serve a scripted fake model on loopback, for running prime end to end", run: runFakeLLM},
	}
}

// modelJSON is one model in `prime models --json`: the model's metadata,
// where it comes from, and whether its key is present (never the key).
type modelJSON struct {
	Provider      string            `json:"provider"`
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	API           string            `json:"api"`
	BaseURL       string            `json:"baseUrl"`
	Source        string            `json:"source"`
	Supported     bool              `json:"supported"`
	Reasoning     bool              `json:"reasoning"`
	ThinkingStyle string            `json:"thinkingStyle,omitzero"`
	Input         []string          `json:"input"`
	ContextWindow int               `json:"contextWindow"`
	MaxTokens     int               `json:"maxTokens"`
	Cost          llm.ModelCost     `json:"cost"`
	Key           keyJSON           `json:"key"`
	Headers       []string          `json:"headers,omitzero"` // names only
	Compat        *llm.OpenAICompat `json:"compat,omitzero"`
}

type keyJSON struct {
	Source  string `json:"source"`
	Present bool   `json:"present"`
}

func runModels(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("models", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErrorf("unexpected argument %q", rest[0])
	}
	reg, err := registry.Load(registry.Options{Getenv: a.getenv})
	if err != nil {
		return badInput(err)
	}
	for _, w := range reg.Warnings() {
		fmt.Fprintf(a.stderr, "warning: %s\n", w)
	}
	entries := reg.Models()
	if *asJSON {
		out := make([]modelJSON, 0, len(entries))
		for _, e := range entries {
			m := e.Model
			j := modelJSON{
				Provider: m.Provider, ID: m.ID, Name: m.Name, API: m.API, BaseURL: m.BaseURL,
				Source: e.Source, Supported: e.Supported, Reasoning: m.Reasoning, ThinkingStyle: m.ThinkingStyle,
				Input: m.Input, ContextWindow: m.ContextWindow, MaxTokens: m.MaxTokens, Cost: m.Cost,
				Key: keyJSON{Source: e.Key, Present: e.HasKey}, Compat: m.Compat,
			}
			if j.Input == nil {
				j.Input = []string{}
			}
			for k := range m.Headers {
				j.Headers = append(j.Headers, k)
			}
			slices.Sort(j.Headers)
			out = append(out, j)
		}
		b, err := json.Marshal(out, json.Deterministic(true))
		if err != nil {
			return err
		}
		if err := (*jsontext.Value)(&b).Indent(); err != nil {
			return err
		}
		_, err = fmt.Fprintf(a.stdout, "%s\n", b)
		return err
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tCONTEXT\tMAX OUT\tREASONING\tINPUT\t$ IN/OUT PER M\tSOURCE\tKEY")
	for _, e := range entries {
		m := e.Model
		reasoning := "no"
		if m.Reasoning {
			reasoning = "yes"
			if m.ThinkingStyle != "" {
				reasoning = m.ThinkingStyle
			}
		}
		key := "none needed"
		switch {
		case e.Key != "" && e.HasKey:
			key = "set (" + e.Key + ")"
		case e.Key != "":
			key = "missing (" + e.Key + ")"
		}
		source := e.Source
		if !e.Supported {
			source += ", api " + m.API + " not supported"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s/%s\t%s\t%s\n", e.Ref(), tokens(m.ContextWindow), tokens(m.MaxTokens),
			reasoning, strings.Join(m.Input, "+"), price(m.Cost.Input), price(m.Cost.Output), source, key)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "\nmodels.json: %s\n", reg.ModelsPath)
	return nil
}

// tokens writes a token count as every listing of Prime does: in full,
// with thousands separators.
func tokens(n int) string { return numfmt.Commas(n) }

func price(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }

func runFakeLLM(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("dev fake-llm", flag.ContinueOnError)
	api := fs.String("api", "", "wire API to speak: anthropic, openai (Chat Completions), responses, azure, gemini or vertex")
	flavorName := fs.String("flavor", "openai", "for --api openai, the server to imitate: openai, ollama, vllm, llamacpp, lmstudio, openrouter, indexzero")
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on (loopback)")
	scriptPath := fs.String("script", "", "JSON script of replies (default: echo the last user message)")
	modelsJSON := fs.String("models-json", "", "also write a models.json with provider \"fake\" pointing at the server")
	var window llmfake.Window
	fs.IntVar(&window.Size, "context-window", 0, "simulate a context window of `N` tokens: refuse what does not fit as the flavour's server does (llamacpp also fills it and stops with length)")
	fs.Float64Var(&window.Ratio, "token-ratio", 1, "with --context-window, count `R` tokens per chars/4 token (about 0.9 for English, 1.3 for Go code, 4.3 for Japanese)")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErrorf("unexpected argument %q", rest[0])
	}
	switch {
	case window.Size < 0:
		return usageErrorf("--context-window must not be negative")
	case window.Ratio <= 0:
		return usageErrorf("--token-ratio must be a positive number")
	case set(fs, "token-ratio") && window.Size == 0:
		return usageErrorf("--token-ratio needs --context-window")
	}
	var wire string
	switch *api {
	case "anthropic", llm.APIAnthropicMessages:
		wire = llm.APIAnthropicMessages
	case "openai", llm.APIOpenAICompletions:
		wire = llm.APIOpenAICompletions
	case "responses", llm.APIOpenAIResponses:
		wire = llm.APIOpenAIResponses
	case "azure", llm.APIAzureOpenAIResponses:
		wire = llm.APIAzureOpenAIResponses
	case "gemini", llm.APIGoogleGenerativeAI:
		wire = llm.APIGoogleGenerativeAI
	case "vertex", llm.APIGoogleVertex:
		wire = llm.APIGoogleVertex
	default:
		return usageErrorf("--api must be anthropic, openai, responses, azure, gemini or vertex")
	}
	flavor, err := llmfake.ParseFlavor(*flavorName)
	if err != nil {
		return usageErrorf("%v", err)
	}
	var script *llmfake.Script
	if *scriptPath != "" {
		if script, err = llmfake.ReadScript(*scriptPath); err != nil {
			return badInput(err)
		}
	}
	srv, err := llmfake.NewServerAt(wire, flavor, *addr)
	if err != nil {
		return err
	}
	defer srv.Close()
	srv.SetWindow(window)
	if script != nil {
		srv.Play(script)
	}
	srv.Handle(func(r *llmfake.Request) llmfake.Reply {
		text := r.LastUserText()
		return llmfake.Stream(llmfake.Text("fake reply to: "+text), llmfake.Usage(llm.UTF16Len(r.Text())/4+1, len(text)/4+4))
	})
	base := srv.Model().BaseURL
	if *modelsJSON != "" {
		if err := writeFakeModels(*modelsJSON, wire, base, window.Size); err != nil {
			return err
		}
	}
	fmt.Fprintln(a.stdout, base)
	<-ctx.Done()
	fmt.Fprintf(a.stderr, "prime dev fake-llm: served %d requests\n", len(srv.Requests()))
	return nil
}

// writeFakeModels writes a models.json whose provider "fake" serves model
// "fake-model" from the fake server: a 200,000-token window with a
// 32,000-token output limit, or the simulated window (window > 0) with a
// quarter of it as the output limit.
func writeFakeModels(path, api, base string, window int) error {
	contextWindow, maxTokens := 200000, 32000
	if window > 0 {
		contextWindow, maxTokens = window, max(window/4, 1)
	}
	doc := map[string]any{"providers": map[string]any{"fake": map[string]any{
		"baseUrl": base, "api": api, "apiKey": "fake-key",
		"models": []any{map[string]any{
			"id": "fake-model", "name": "Fake model", "reasoning": true, "input": []string{"text", "image"},
			"contextWindow": contextWindow, "maxTokens": maxTokens,
		}},
	}}}
	b, err := json.Marshal(doc, json.Deterministic(true))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}
