package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiontest"
)

// TestRPCCompact: compact with instructions sends them to the summarizer,
// answers pi's result after compaction_end, and writes one entry.
func TestRPCCompact(t *testing.T) {
	s := newRPCSetup(t, map[string]any{"compaction": map[string]any{"keepRecentTokens": 1}})
	p := s.start(t)
	p.converse("first question", "second question")
	p.send(`{"id":"c","type":"compact","customInstructions":"remember both questions"}`)
	got := p.until(func(l rpcLine) bool { return l.answers("c") })
	if k := lineKinds(got); k != "compaction_start compaction_end response:c" {
		t.Errorf("compact: %s", k)
	}
	r := got[len(got)-1]
	for _, key := range []string{"summary", "firstKeptEntryId", "tokensBefore", "estimatedTokensAfter", "usage", "details"} {
		if _, ok := r.data()[key]; !ok {
			t.Errorf("no %s in %s", key, r.raw)
		}
	}
	if !strings.Contains(r.str("summary"), "remember both questions") {
		t.Errorf("summary %q", r.str("summary"))
	}
	if reqs := s.summaryRequests(); len(reqs) == 0 || !strings.Contains(reqs[0].LastUserText(), "remember both questions") {
		t.Error("the summary request lacks the instructions")
	}
	path := p.call("s", `{"id":"s","type":"get_state"}`).str("sessionFile")
	if k := sessionKinds(t, path); strings.Count(k, "compaction") != 1 || !strings.HasSuffix(k, "compaction") {
		t.Errorf("session %s", k)
	}
	loaded, _ := session.Load(path)
	pl, _ := loaded.Leaf().Payload()
	if c, ok := pl.(*session.CompactionEntry); !ok || c.CustomInstructions != "remember both questions" {
		t.Errorf("the compaction entry %s", sessiontest.Line(t, loaded.Leaf()))
	}
	tree := p.call("t", `{"id":"t","type":"get_tree"}`)
	if shape := treeShape(tree.data()["tree"].([]any)); !strings.HasSuffix(shape, "(compaction)))))))") {
		t.Errorf("tree %s", shape)
	}
	if r := p.call("c2", `{"id":"c2","type":"compact"}`); r.ok() || !strings.Contains(r.errText(), "already compacted") {
		t.Errorf("compact again: %s", r.raw)
	}
}

// TestRPCPinsAndUndo: with the real binary, a pin reaches the model after
// three compactions in a row, the session file holds it, uncompact brings
// back the messages of before the last compaction, and
// get_session_stats measures the context by kind.
func TestRPCPinsAndUndo(t *testing.T) {
	s := newRPCSetup(t, map[string]any{"compaction": map[string]any{"keepRecentTokens": 1}})
	p := s.start(t)
	p.converse("first question")
	if r := p.call("p", `{"id":"p","type":"pin","text":"never push to main"}`); !r.ok() {
		t.Fatalf("pin: %s", r.raw)
	}
	var before rpcLine
	for i := range 3 {
		p.converse(fmt.Sprintf("question %d", i+2))
		before = p.call("m", `{"id":"m","type":"get_messages"}`)
		if r := p.call("c", `{"id":"c","type":"compact"}`); !r.ok() {
			t.Fatalf("compaction %d: %s", i+1, r.raw)
		}
	}
	p.converse("after three compactions")
	var last *llmtest.Request
	for _, r := range s.srv.Requests() {
		if !strings.Contains(r.LastUserText(), "<conversation>") {
			last = r
		}
	}
	if last == nil || !strings.Contains(last.System(), "never push to main") {
		t.Errorf("the pin is not in the last request's system prompt")
	}
	path := p.call("st", `{"id":"st","type":"get_state"}`).str("sessionFile")
	stats := p.call("ss", `{"id":"ss","type":"get_session_stats"}`)
	b, _ := stats.data()["contextBreakdown"].(map[string]any)
	if parts, _ := b["parts"].([]any); len(parts) != 10 || b["total"].(float64) <= 0 || b["windowSource"] != "model" {
		t.Errorf("contextBreakdown: %v", b)
	}

	// Undo the last compaction: the messages are those before it, and the
	// exchange made since is left on its branch.
	u := p.call("u", `{"id":"u","type":"uncompact"}`)
	if !u.ok() || u.data()["left"] != 2.0 {
		t.Fatalf("uncompact: %s", u.raw)
	}
	after := p.call("m2", `{"id":"m2","type":"get_messages"}`)
	if a, b := fmt.Sprint(after.data()["messages"]), fmt.Sprint(before.data()["messages"]); a != b {
		t.Errorf("messages after the undo:\n%s\nbefore the compaction:\n%s", a, b)
	}
	if r := p.call("u2", `{"id":"u2","type":"uncompact","compactionId":"deadbeef"}`); r.ok() || r.errText() != "Entry not found: deadbeef" {
		t.Errorf("uncompact of an unknown id: %s", r.raw)
	}
	if r := p.call("g", `{"id":"g","type":"get_pins"}`); fmt.Sprint(r.data()["pins"]) == "[]" {
		t.Errorf("the pin made before the compactions is gone: %s", r.raw)
	}
	loaded, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if pins := compaction.Pins(loaded.LeafPath()); len(pins) != 1 || pins[0].Text != "never push to main" {
		t.Errorf("the file's pins: %+v", pins)
	}
}

// TestRPCAutoCompaction: a reply over the threshold compacts after the
// run, and a context overflow compacts and retries, with pi's events in
// pi's order.
func TestRPCAutoCompaction(t *testing.T) {
	// The threshold is 200,000 - 199,700 = 300 tokens.
	s := newRPCSetup(t, map[string]any{"compaction": map[string]any{"keepRecentTokens": 5, "reserveTokens": 199700}})
	s.script(
		llmtest.Stream(llmtest.Text("short"), llmtest.Usage(50, 2)),
		llmtest.Stream(llmtest.Text("a long answer"), llmtest.Usage(400, 5)),
		llmtest.Stream(llmtest.Text("short again"), llmtest.Usage(50, 2)),
		llmtest.Overflow(),
		llmtest.Stream(llmtest.Text("after the compaction"), llmtest.Usage(60, 3)),
	)
	p := s.start(t)
	p.converse("first")
	p.send(`{"id":"1","type":"prompt","message":"second, answered at length"}`)
	got := p.settle()
	if k := lineKinds(got); !strings.HasSuffix(k, "message_end turn_end agent_end compaction_start compaction_end agent_settled") {
		t.Errorf("threshold: %s", k)
	}
	for _, l := range got {
		if (l.is("compaction_start") || l.is("compaction_end")) && l.field("reason") != "threshold" {
			t.Errorf("threshold: %s", l.raw)
		}
		if l.is("compaction_end") && (l.field("willRetry") != false || l.field("result") == nil) {
			t.Errorf("threshold: %s", l.raw)
		}
	}
	p.converse("third")
	p.send(`{"id":"3","type":"prompt","message":"fourth, which overflows"}`)
	got = p.settle()
	var names []string
	for _, l := range got {
		if !l.is("message_update") {
			names = append(names, l.typ())
		}
	}
	want := "message_end turn_end agent_end entry_appended compaction_start compaction_end agent_start turn_start message_start message_end turn_end agent_end agent_settled"
	if k := strings.Join(names, " "); !strings.HasSuffix(k, want) {
		t.Errorf("overflow:\n%s\nwant it to end with\n%s", k, want)
	}
	for _, l := range got {
		switch {
		case l.is("message_end") && l.message()["role"] == "assistant" && l.message()["stopReason"] == "error":
		case l.is("agent_end") && l.field("willRetry") != false:
			t.Errorf("overflow: %s", l.raw)
		case l.is("entry_appended"):
			if e := l.field("entry").(map[string]any); e["type"] != "context_edit" {
				t.Errorf("overflow: %s", l.raw)
			}
		case l.is("compaction_start") && l.field("reason") != "overflow":
			t.Errorf("overflow: %s", l.raw)
		case l.is("compaction_end") && (l.field("reason") != "overflow" || l.field("willRetry") != true):
			t.Errorf("overflow: %s", l.raw)
		}
	}
	if text := p.call("t", `{"id":"t","type":"get_last_assistant_text"}`).str("text"); text != "after the compaction" {
		t.Errorf("last text %q", text)
	}
}

// TestRPCNavigateTree: navigate_tree back to an earlier question with a
// summary and a label: the branch-summary events, pi's result shape, the
// tree and the entries after it, and the next prompt continues from there.
func TestRPCNavigateTree(t *testing.T) {
	s := newRPCSetup(t, nil)
	p := s.start(t)
	p.converse("first question", "second question")
	second := userEntry(t, p.call("e", `{"id":"e","type":"get_entries"}`), "second question")
	p.send(fmt.Sprintf(`{"id":"n","type":"navigate_tree","targetId":%q,"summarize":true,"customInstructions":"mention the second question","label":"checkpoint"}`, second))
	got := p.until(func(l rpcLine) bool { return l.answers("n") })
	if k := lineKinds(got); k != "branch_summary_start branch_summary_end response:n" {
		t.Errorf("navigate_tree: %s", k)
	}
	r := got[len(got)-1]
	if r.str("editorText") != "second question" || r.data()["cancelled"] != false {
		t.Errorf("navigate_tree: %s", r.raw)
	}
	sum, _ := r.data()["summaryEntry"].(map[string]any)
	if sum["type"] != "branch_summary" || !strings.Contains(sum["summary"].(string), "mention the second question") {
		t.Errorf("summary entry %v", sum)
	}
	tree := p.call("t", `{"id":"t","type":"get_tree"}`)
	shape := treeShape(tree.data()["tree"].([]any))
	if !strings.HasSuffix(shape, "user(assistant(user(assistant),branch_summary[checkpoint](label))))))") {
		t.Errorf("tree %s", shape)
	}
	_, ks := entryList(p.call("e2", `{"id":"e2","type":"get_entries"}`))
	if tail := strings.Join(ks[len(ks)-2:], " "); tail != "branch_summary label" {
		t.Errorf("entries end with %s", tail)
	}
	if leaf := tree.data()["leafId"]; leaf == nil || leaf == sum["id"] {
		t.Errorf("leaf %v: the label entry is the leaf", leaf)
	}
	p.send(`{"id":"p","type":"prompt","message":"a different second question"}`)
	p.settle()
	if last := s.srv.LastRequest().Text(); !strings.Contains(last, "mention the second question") || strings.Contains(last, "reply to: second question") {
		t.Error("the next request does not continue from the summary")
	}
	if r := p.call("n2", `{"id":"n2","type":"navigate_tree","targetId":"nowhere"}`); r.ok() || r.errText() != "Entry not found: nowhere" {
		t.Errorf("unknown target: %s", r.raw)
	}
}
