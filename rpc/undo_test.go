package rpc_test

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/llm/llmtest"
)

// prompts sends each text as a prompt and waits for the agent to settle.
func (h *harness) prompts(texts ...string) {
	h.t.Helper()
	for _, p := range texts {
		h.send(`{"id":"p","type":"prompt","message":"` + p + `"}`)
		h.until(func(m msg) bool { return m.isEvent("agent_settled") })
	}
}

// messages returns get_messages's list as its raw JSON lines' data.
func (h *harness) messages() []any {
	h.t.Helper()
	h.send(`{"id":"gm","type":"get_messages"}`)
	list, _ := h.response("gm").data()["messages"].([]any)
	return list
}

// TestUncompact: compact, read the receipt, undo: the messages are those
// before the compaction; the compaction stays and its receipt can still
// be read; a second undo finds nothing to undo.
func TestUncompact(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	h := start(t, srv, settingsFor(t, "compaction.keepRecentTokens", "1"))
	h.prompts("one", "two")
	before := h.messages()

	h.send(`{"id":"s","type":"get_session_stats"}`)
	b, _ := h.response("s").data()["contextBreakdown"].(map[string]any)
	if parts, _ := b["parts"].([]any); len(parts) == 0 || b["total"].(float64) <= 0 || b["compaction"] == nil {
		t.Errorf("contextBreakdown before compacting: %v", b)
	}

	h.send(`{"id":"c","type":"compact"}`)
	h.response("c")
	if after := h.messages(); len(after) >= len(before) {
		t.Fatalf("compaction kept %d of %d messages", len(after), len(before))
	}
	h.send(`{"id":"r","type":"get_compaction_receipt"}`)
	r := h.response("r").data()
	receipt, _ := r["receipt"].(map[string]any)
	id, _ := r["entryId"].(string)
	if id == "" || r["tokensBefore"].(float64) <= 0 || receipt["reason"] != "manual" || receipt["messages"].(float64) <= 0 ||
		receipt["model"] != srv.Model().Provider+"/"+srv.Model().ID || r["deterministic"] != false {
		t.Errorf("receipt: %v", r)
	}

	h.send(`{"id":"u","type":"uncompact"}`)
	got := without("entry_appended", h.until(func(m msg) bool { return m.isResponse("u") }))
	if n := names(got); n != "compaction_undone response:u" {
		t.Errorf("uncompact: %s", n)
	}
	undone, d := got[0].m, got[1].data()
	for _, k := range []string{"compactionId", "entryId", "leafId", "left", "messages", "tokens"} {
		if undone[k] != d[k] {
			t.Errorf("%s: the event has %v, the answer %v", k, undone[k], d[k])
		}
	}
	if d["compactionId"] != id || d["left"] != 0.0 || d["messages"] != float64(len(before)) || d["tokens"].(float64) <= 0 {
		t.Errorf("uncompact answered %v (compaction %s, %d messages before it)", d, id, len(before))
	}
	if after := h.messages(); !sameJSON(t, after, before) {
		t.Errorf("messages after the undo differ from those before the compaction:\n%v\n%v", after, before)
	}
	h.send(`{"id":"u2","type":"uncompact"}`, `{"id":"r2","type":"get_compaction_receipt","compactionId":"`+id+`"}`)
	if r := h.response("u2"); r.success() || !strings.Contains(r.errText(), "no compaction on the current path") {
		t.Errorf("second uncompact: %s", r.raw)
	}
	if r := h.response("r2"); !r.success() || r.data()["entryId"] != id {
		t.Errorf("receipt of the undone compaction: %s", r.raw)
	}
}

// TestUncompactDuringRun: uncompact aborts the run under way, which
// settles before the answer; the entries made since the compaction are
// counted as left on its branch.
func TestUncompactDuringRun(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		if r.LastUserText() == "wait" {
			return llmtest.Stream(llmtest.ToolCall("c1", "gate", `{}`))
		}
		return echo(r)
	})
	g := newGate(true)
	h := start(t, srv, settingsFor(t, "compaction.keepRecentTokens", "1"), g)
	h.prompts("one", "two")
	h.send(`{"id":"c","type":"compact"}`)
	h.response("c")
	h.send(`{"id":"w","type":"prompt","message":"wait"}`)
	g.wait(t)
	h.send(`{"id":"u","type":"uncompact"}`)
	got := without("entry_appended", h.until(func(m msg) bool { return m.isResponse("u") }))
	if n := names(got); !strings.HasSuffix(n, "agent_settled compaction_undone response:u") {
		t.Errorf("uncompact during a run: %s", n)
	}
	// The user message, the reply calling the tool and its result.
	if d := got[len(got)-1].data(); d["left"] != 3.0 {
		t.Errorf("uncompact answered %v, want 3 entries left", d)
	}
}

// TestUncompactErrors: a bad uncompact or get_compaction_receipt is refused
// with a reason, writes nothing and aborts nothing.
func TestUncompactErrors(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	h := start(t, srv, settingsFor(t))
	h.prompts("hello")
	user := h.forkable("hello")
	for _, c := range []struct{ line, err string }{
		{`{"type":"uncompact"}`, "no compaction on the current path"},
		{`{"type":"uncompact","compactionId":"deadbeef"}`, "Entry not found: deadbeef"},
		{`{"type":"uncompact","compactionId":"` + user + `"}`, "entry " + user + " is a message: not a compaction entry"},
		{`{"type":"uncompact","compactionId":5}`, `"compactionId" must be a string, not a number`},
		{`{"type":"get_compaction_receipt"}`, "no compaction on the current path"},
		{`{"type":"get_compaction_receipt","compactionId":"deadbeef"}`, "Entry not found: deadbeef"},
		{`{"type":"get_compaction_receipt","compactionId":"` + user + `"}`, "not a compaction entry"},
	} {
		t.Run(c.line, func(t *testing.T) { h.refused(t, c.line, c.err) })
	}
}

// sameJSON reports whether a and b encode to the same JSON.
func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}

// TestBackgroundCompactionEvents: a context past the background mark
// starts a summary in the background (background_compaction started);
// past the threshold it is reported ready and used at once.
func TestBackgroundCompactionEvents(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	usage := map[string]int{"first": 1000, "second": 2500, "third": 4500}
	srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		text := r.LastUserText()
		if strings.Contains(text, "<conversation>") {
			return echo(r)
		}
		word := strings.Fields(text)[0]
		return llmtest.Stream(llmtest.Text("answer to "+word), llmtest.Usage(usage[word], 10))
	})
	// The fake's window is 200,000 tokens: the threshold is at 4,000, the
	// background mark at 2,000.
	h := start(t, srv, settingsFor(t, "compaction.reserveTokens", "196000", "compaction.keepRecentTokens", "200",
		"compaction.backgroundThreshold", "50"))
	var got []msg
	for _, p := range []string{"first question", "second " + strings.Repeat("a long explanation of the planner. ", 40), "third thanks"} {
		h.send(`{"id":"p","type":"prompt","message":"` + p + `"}`)
		got = append(got, h.until(func(m msg) bool { return m.isEvent("agent_settled") })...)
	}
	var seq []string
	for _, m := range got {
		switch {
		case m.isEvent("background_compaction"):
			seq = append(seq, m.m["kind"].(string))
			if m.m["leafId"] == "" || m.m["firstKeptEntryId"] == "" || m.m["summarizer"] != srv.Model().Provider+"/"+srv.Model().ID {
				t.Errorf("background_compaction: %s", m.raw)
			}
		case m.isEvent("compaction_start"), m.isEvent("compaction_end"), m.isEvent("agent_settled"):
			seq = append(seq, m.typ())
		}
	}
	want := "agent_settled started agent_settled ready used compaction_start compaction_end agent_settled"
	if strings.Join(seq, " ") != want {
		t.Errorf("events:\n got %s\nwant %s", strings.Join(seq, " "), want)
	}
}
