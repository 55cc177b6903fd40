package llmfake_test

import (
	"context"
	"errors"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmfake"
)

// TestUnanswered checks that a request nothing answers fails as a server
// error and is reported, without any testing hook in the server itself.
func TestUnanswered(t *testing.T) {
	for _, api := range []string{llm.APIAnthropicMessages, llm.APIOpenAICompletions} {
		t.Run(api, func(t *testing.T) {
			srv := llmfake.NewServer(api, llmfake.FlavorOpenAI)
			defer srv.Close()
			var reported []int
			srv.OnUnanswered(func(r *llmfake.Request, n int) { reported = append(reported, n) })
			srv.Reply(llmfake.Text("one"))
			ask := func() (*llm.AssistantMessage, error) {
				return llm.Complete(context.Background(), srv.Provider(), &llm.Request{Model: srv.Model(),
					Messages: []llm.Message{&llm.UserMessage{Content: []llm.Content{llm.Text{Text: "hi"}}}}})
			}
			if msg, err := ask(); err != nil || msg.Text() != "one" {
				t.Fatalf("first: %v %v", msg, err)
			}
			_, err := ask()
			if !errors.Is(err, llm.ErrServer) {
				t.Errorf("unanswered request: %v, want a server error", err)
			}
			if len(reported) != 1 || reported[0] != 2 {
				t.Errorf("reported %v, want [2]", reported)
			}
		})
	}
}
