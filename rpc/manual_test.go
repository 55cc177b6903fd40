package rpc_test

import (
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
)

// TestCompactShortConversation: with the default keepRecentTokens, compact
// after one exchange is refused with the reason; after two it summarizes
// the first and keeps the second from its user message.
func TestCompactShortConversation(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	h := start(t, srv, settingsFor(t))
	h.send(`{"id":"p1","type":"prompt","message":"one"}`)
	h.until(func(m msg) bool { return m.isEvent("agent_settled") })
	h.send(`{"id":"c1","type":"compact"}`)
	if r := h.response("c1"); r.success() || !strings.Contains(r.errText(), "the conversation is one exchange") {
		t.Errorf("compact after one exchange: %s", r.raw)
	}
	h.send(`{"id":"p2","type":"prompt","message":"two"}`)
	h.until(func(m msg) bool { return m.isEvent("agent_settled") })
	h.send(`{"id":"c2","type":"compact"}`)
	r := h.response("c2")
	if !r.success() {
		t.Fatalf("compact after two exchanges: %s", r.raw)
	}
	s, err := session.Load(h.path)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := r.data()["firstKeptEntryId"].(string)
	e := s.Entry(first)
	if e == nil {
		t.Fatalf("firstKeptEntryId %q is not in the session", first)
	}
	raw, _ := e.Raw()
	if role, _ := e.MessageRole(); role != "user" || !strings.Contains(string(raw), `"two"`) {
		t.Errorf("kept from %s, want the user message two", raw)
	}
}
