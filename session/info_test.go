package session_test

import (
	"path/filepath"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// TestInfoOwnWords: a listing counts the conversation's messages, not the
// system prompt, and titles a session from the user's own words, not the
// files an @file argument attached (their names when nothing else is
// there).
func TestInfoOwnWords(t *testing.T) {
	dir := t.TempDir()
	user := func(text string) session.Payload {
		return &session.MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}, Timestamp: 1000}}
	}
	system := &session.MessageEntry{Message: &session.SystemMessage{Sections: []session.SystemSection{{Name: "prompt", Text: "You are Prime."}}, Timestamp: 900}}
	reply := &session.MessageEntry{Message: &llm.AssistantMessage{Content: []llm.Content{llm.Text{Text: "It adds."}}, StopReason: llm.StopReasonStop, Timestamp: 2000}}
	for name, tc := range map[string]struct {
		first session.Payload
		title string
	}{
		"words.jsonl": {user("<file name=\"/tmp/x/calc.go\">\npackage calc\n\nfunc Add(a, b int) int { return a + b }\n</file>\n\nwhat does   it do?"), "what does it do?"},
		"files.jsonl": {user("<file name=\"/tmp/x/calc.go\">\npackage calc\n</file>\n\n<file name=\"/tmp/x/notes.txt\"></file>"), "@calc.go @notes.txt"},
	} {
		s, err := session.Create(filepath.Join(dir, name), session.Options{CWD: "/tmp/x"})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []session.Payload{system, tc.first, reply} {
			if _, err := s.Append(p); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		info, err := session.ReadInfo(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if info.Title() != tc.title || info.MessageCount != 2 {
			t.Errorf("%s: title %q, %d messages; want %q, 2", name, info.Title(), info.MessageCount, tc.title)
		}
	}
}
