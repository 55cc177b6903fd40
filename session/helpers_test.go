package session_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// ent is one hand-made entry of a test file.
type ent struct {
	id, parent string
	p          session.Payload
}

var testStart = time.Date(2025, 12, 3, 14, 0, 0, 0, time.UTC)

// fileBytes renders a version-3 file: a header and the entries, timestamps
// one second apart.
func fileBytes(t testing.TB, ents ...ent) []byte {
	t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"type":"session","version":3,"id":"test-session","timestamp":"%s","cwd":"/tmp/project"}`+"\n", session.FormatTime(testStart))
	for i, e := range ents {
		line, err := session.EncodeEntry(e.id, e.parent, session.FormatTime(testStart.Add(time.Duration(i+1)*time.Second)), e.p)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// parse builds a session from hand-made entries.
func parse(t testing.TB, ents ...ent) *session.Session {
	t.Helper()
	s, err := session.Parse("test.jsonl", fileBytes(t, ents...))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// chain links entries test-id-1, test-id-2, ... one after the other, as
// pi's unit tests do.
func chain(payloads ...session.Payload) []ent {
	ents := make([]ent, len(payloads))
	for i, p := range payloads {
		ents[i] = ent{id: fmt.Sprintf("test-id-%d", i+1), p: p}
		if i > 0 {
			ents[i].parent = ents[i-1].id
		}
	}
	return ents
}

func user(text string) *session.MessageEntry {
	return &session.MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}, Timestamp: testStart.UnixMilli()}}
}

func assistant(text string) *session.MessageEntry {
	return assistantOf(text, "anthropic", "claude-sonnet-4-5")
}

func assistantOf(text, provider, model string) *session.MessageEntry {
	return &session.MessageEntry{Message: &llm.AssistantMessage{
		Content: []llm.Content{llm.Text{Text: text}}, API: llm.APIAnthropicMessages, Provider: provider, Model: model,
		Usage: llm.Usage{Input: 10, Output: 5, TotalTokens: 15}, StopReason: llm.StopReasonStop, Timestamp: testStart.UnixMilli(),
	}}
}

// texts returns each context message as "role:text" (summaries as
// "role:summary").
func texts(msgs []session.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		var text string
		switch m := m.(type) {
		case *llm.UserMessage:
			text = llm.TextOf(m.Content)
		case *llm.AssistantMessage:
			text = m.Text()
		case *session.CompactionSummaryMessage:
			text = m.Summary
		case *session.BranchSummaryMessage:
			text = m.Summary
		case *session.CustomMessage:
			text = llm.TextOf(m.Content)
		case *llm.ToolResultMessage:
			text = llm.TextOf(m.Content)
		case *session.SystemMessage:
			text = m.Prompt()
		}
		out[i] = m.Role() + ":" + text
	}
	return out
}

// fixedClock returns a clock that starts at testStart and advances one
// second per call.
func fixedClock() func() time.Time {
	t := testStart
	return func() time.Time {
		t = t.Add(time.Second)
		return t
	}
}

// ids returns the ids of entries.
func ids(es []*session.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

func jsonUnmarshal(data []byte, v any) error {
	return json.Unmarshal(data, v, jsonwire.ReadOptions)
}

// bytesOf returns the session as a file, failing the test when it cannot be
// read back.
func bytesOf(t testing.TB, s *session.Session) []byte {
	t.Helper()
	b, err := s.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
