package sessiontest_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiontest"
)

func TestKindsAndTexts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s, err := session.Create(path, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []session.Payload{
		&session.ModelChangeEntry{Provider: "p", ModelID: "m"},
		&session.MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: "hi"}}, Timestamp: 1}},
		&session.MessageEntry{Message: &llm.AssistantMessage{Content: []llm.Content{llm.Text{Text: "hello"}}, StopReason: llm.StopReasonStop, Timestamp: 2}},
	} {
		if _, err := s.Append(p); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if got := sessiontest.Kinds(t, path); !slices.Equal(got, []string{"model_change", "user", "assistant"}) {
		t.Errorf("kinds %q", got)
	}
	if got := sessiontest.UserTexts(t, path); !slices.Equal(got, []string{"hi"}) {
		t.Errorf("texts %q", got)
	}
}
