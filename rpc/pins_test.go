package rpc_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm/llmtest"
)

// forkable returns the entry id of the user message with text, from
// get_fork_messages.
func (h *harness) forkable(text string) string {
	h.t.Helper()
	h.send(`{"id":"fm","type":"get_fork_messages"}`)
	list, _ := h.response("fm").data()["messages"].([]any)
	for _, m := range list {
		if m, _ := m.(map[string]any); m["text"] == text {
			id, _ := m["entryId"].(string)
			return id
		}
	}
	h.t.Fatalf("no user message %q in get_fork_messages", text)
	return ""
}

// without returns the lines that are not of type typ.
func without(typ string, ms []msg) []msg {
	var out []msg
	for _, m := range ms {
		if !m.isEvent(typ) {
			out = append(out, m)
		}
	}
	return out
}

// refused sends a command (given an id of its own) and checks that it is
// refused with a text holding want, and that nothing else was written.
func (h *harness) refused(t *testing.T, line, want string) {
	t.Helper()
	h.send(strings.Replace(line, `{`, `{"id":"e",`, 1))
	got := h.until(func(m msg) bool { return m.isResponse("e") })
	if r := got[len(got)-1]; r.success() || !strings.Contains(r.errText(), want) {
		t.Errorf("got %.300s\nwant a failure saying %q", r.raw, want)
	}
	if n := names(got); n != "response:e" {
		t.Errorf("a refused command emitted events: %s", n)
	}
}

// pinTexts returns the texts of a list of pins as the wire has them.
func pinTexts(v any) []string {
	list, _ := v.([]any)
	texts := []string{}
	for _, p := range list {
		p, _ := p.(map[string]any)
		s, _ := p["text"].(string)
		texts = append(texts, s)
	}
	return texts
}

// TestPins: pin by text and by message, get_pins, unpin by id and by
// text; each change emits pins_changed before its answer, and the model
// sees the pins in the next request. (The pin's entry, and the system
// prompt's patch that shows it to the model, go out as entry_appended.)
func TestPins(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	h := start(t, srv, settingsFor(t))
	h.prompts("the tests run with make check")
	msgID := h.forkable("the tests run with make check")

	h.send(`{"id":"1","type":"pin","text":"  never push to main  "}`)
	got := without("entry_appended", h.until(func(m msg) bool { return m.isResponse("1") }))
	if n := names(got); n != "pins_changed response:1" {
		t.Errorf("pin: %s", n)
	}
	if texts := pinTexts(got[0].m["pins"]); fmt.Sprint(texts) != "[never push to main]" {
		t.Errorf("pins_changed: %s", got[0].raw)
	}
	first, _ := got[1].data()["pin"].(map[string]any)
	if first["text"] != "never push to main" || first["id"] == "" || first["timestamp"] == nil || first["messageId"] != nil {
		t.Errorf("pin answer: %s", got[1].raw)
	}

	h.send(`{"id":"2","type":"pin","entryId":"` + msgID + `"}`)
	second, _ := h.response("2").data()["pin"].(map[string]any)
	if second["text"] != "the tests run with make check" || second["messageId"] != msgID {
		t.Errorf("pin a message: %v", second)
	}

	h.send(`{"id":"3","type":"get_pins"}`)
	if texts := pinTexts(h.response("3").data()["pins"]); fmt.Sprint(texts) != "[never push to main the tests run with make check]" {
		t.Errorf("get_pins: %q", texts)
	}

	h.send(`{"id":"p2","type":"prompt","message":"go on"}`)
	h.until(func(m msg) bool { return m.isEvent("agent_settled") })
	reqs := srv.Requests()
	if sys := reqs[len(reqs)-1].System(); !strings.Contains(sys, "never push to main") || !strings.Contains(sys, "the tests run with make check") {
		t.Errorf("the model does not see the pins:\n%s", sys)
	}

	h.send(`{"id":"4","type":"unpin","pinId":"`+first["id"].(string)+`"}`, `{"id":"5","type":"unpin","text":" the tests run with make check "}`)
	got = without("entry_appended", h.until(func(m msg) bool { return m.isResponse("5") }))
	if n := names(got); n != "pins_changed response:4 pins_changed response:5" {
		t.Errorf("unpin: %s", n)
	}
	if p, _ := got[1].data()["pin"].(map[string]any); p["id"] != first["id"] {
		t.Errorf("unpin by id answered %s", got[1].raw)
	}
	if texts := pinTexts(got[2].m["pins"]); len(texts) != 0 {
		t.Errorf("pins after unpinning both: %s", got[2].raw)
	}
	h.send(`{"id":"6","type":"get_pins"}`)
	if r := h.response("6"); r.raw != `{"id":"6","type":"response","command":"get_pins","success":true,"data":{"pins":[]}}` {
		t.Errorf("get_pins without pins: %s", r.raw)
	}
}

// TestPinErrors: bad pin and unpin commands are refused with a reason and
// change nothing.
func TestPinErrors(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	h := start(t, srv, settingsFor(t))
	h.prompts("hello")
	h.send(`{"id":"k","type":"pin","text":"keep me"}`)
	h.response("k")
	for _, c := range []struct{ line, err string }{
		{`{"type":"pin"}`, `missing "text" (the text to pin) or "entryId" (the message to pin)`},
		{`{"type":"pin","text":"   "}`, "nothing to pin: the text is empty"},
		{`{"type":"pin","text":7}`, `"text" must be a string, not a number`},
		{`{"type":"pin","text":"a","entryId":"b"}`, "not both"},
		{`{"type":"pin","entryId":"deadbeef"}`, "Entry not found: deadbeef"},
		{`{"type":"pin","text":"` + strings.Repeat("long ", 4000) + `"}`, "the pins would take more than their room"},
		{`{"type":"unpin"}`, `give "pinId" (get_pins lists them) or "text" (the pinned text), one of them`},
		{`{"type":"unpin","pinId":"a","text":"b"}`, "one of them"},
		{`{"type":"unpin","text":" "}`, `nothing to unpin: "text" is empty`},
		{`{"type":"unpin","pinId":"deadbeef"}`, `no such pin with id "deadbeef" on the current branch`},
		{`{"type":"unpin","text":"forget me"}`, `no such pin with the text "forget me" on the current branch`},
		{`{"type":"unpin","pinId":false}`, `"pinId" must be a string, not a boolean`},
	} {
		t.Run(c.line[:min(len(c.line), 60)], func(t *testing.T) { h.refused(t, c.line, c.err) })
	}
	h.send(`{"id":"g","type":"get_pins"}`)
	if texts := pinTexts(h.response("g").data()["pins"]); fmt.Sprint(texts) != "[keep me]" {
		t.Errorf("pins after the refusals: %q", texts)
	}
}
