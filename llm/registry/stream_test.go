package registry_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/llm/registry"
	"github.com/prime-agent/prime/llm/retry"
)

// TestStreamBounds: the registry's stream bounds reach every request its
// providers send (the agent sets them from retry.streamIdleTimeoutMs), and
// a request's own bounds win.
func TestStreamBounds(t *testing.T) {
	for _, srv := range []*llmtest.Server{llmtest.NewAnthropic(t), llmtest.NewOpenAI(t)} {
		reg, err := registry.Load(registry.Options{AgentDir: t.TempDir(), Getenv: func(string) string { return llmtest.Key },
			HTTPClient: srv.Client(), Retry: &retry.Policy{}, Stream: llm.StreamBounds{IdleTimeout: 150 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		p, m, err := reg.ProviderFor(t.Context(), srv.Model())
		if err != nil {
			t.Fatal(err)
		}
		silent := llmtest.Reply{Parts: []llmtest.Part{llmtest.Text("never")}, Delay: time.Hour}
		srv.Queue(silent)
		req := &llm.Request{Model: m, Messages: []llm.Message{&llm.UserMessage{Content: []llm.Content{llm.Text{Text: "hi"}}}}}
		if _, err := llm.Complete(t.Context(), p, req); err == nil || !strings.Contains(err.Error(), "sent nothing for 150ms") {
			t.Errorf("%s: %v, want the registry's idle timeout", m.API, err)
		}
		srv.Queue(silent)
		req.StreamBounds = llm.StreamBounds{IdleTimeout: 250 * time.Millisecond}
		if _, err := llm.Complete(t.Context(), p, req); err == nil || !strings.Contains(err.Error(), "sent nothing for 250ms") {
			t.Errorf("%s: %v, want the request's own idle timeout", m.API, err)
		}
		srv.Client().CloseIdleConnections()
	}
}
