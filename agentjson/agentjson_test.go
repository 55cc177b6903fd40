package agentjson_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/agentjson"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// TestMarshalPrimeEvents: the wire forms of Prime's own events, which pi
// has none of: background_compaction, pins_changed, compaction_undone.
func TestMarshalPrimeEvents(t *testing.T) {
	undone := &agent.UncompactResult{
		Compaction: &session.Entry{ID: "c1", ParentID: "a9"},
		Entry:      &session.Entry{ID: "u1", ParentID: "a9"},
		Left:       2,
		Context:    session.Context{Messages: make([]session.Message, 3)},
		Tokens:     1234,
	}
	withWindow := *undone
	withWindow.Window, withWindow.Migrated = 200000, true
	for _, c := range []struct {
		name string
		ev   agent.Event
		want string
	}{
		{"started", agent.BackgroundCompaction{Kind: agent.BackgroundStarted, LeafID: "l1", FirstKeptEntryID: "k1", Summarizer: "anthropic/claude-test"},
			`{"type":"background_compaction","kind":"started","leafId":"l1","firstKeptEntryId":"k1","summarizer":"anthropic/claude-test"}`},
		{"ready", agent.BackgroundCompaction{Kind: agent.BackgroundReady, LeafID: "l1", FirstKeptEntryID: "k1", Summarizer: "a/b", Usage: &llm.Usage{Input: 10, Output: 2}},
			`{"type":"background_compaction","kind":"ready","leafId":"l1","firstKeptEntryId":"k1","summarizer":"a/b","usage":{"input":10,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}`},
		{"failed", agent.BackgroundCompaction{Kind: agent.BackgroundFailed, LeafID: "l1", FirstKeptEntryID: "k1", Err: errors.New("the summarizer broke")},
			`{"type":"background_compaction","kind":"failed","leafId":"l1","firstKeptEntryId":"k1","errorMessage":"the summarizer broke"}`},
		{"overtaken", agent.BackgroundCompaction{Kind: agent.BackgroundOvertaken, LeafID: "l1", FirstKeptEntryID: "k1", Why: "the conversation was compacted since"},
			`{"type":"background_compaction","kind":"overtaken","leafId":"l1","firstKeptEntryId":"k1","why":"the conversation was compacted since"}`},
		{"pins", agent.PinsChanged{Pins: []compaction.Pin{{ID: "p1", Text: "never push", Millis: 5}, {ID: "p2", Text: "from a message", MessageID: "m1", Millis: 6}}},
			`{"type":"pins_changed","pins":[{"id":"p1","text":"never push","timestamp":5},{"id":"p2","text":"from a message","messageId":"m1","timestamp":6}]}`},
		{"no pins", agent.PinsChanged{}, `{"type":"pins_changed","pins":[]}`},
		{"undone", agent.CompactionUndone{Result: undone},
			`{"type":"compaction_undone","compactionId":"c1","entryId":"u1","leafId":"a9","left":2,"messages":3,"tokens":1234}`},
		{"undone, window known", agent.CompactionUndone{Result: &withWindow},
			`{"type":"compaction_undone","compactionId":"c1","entryId":"u1","leafId":"a9","left":2,"messages":3,"tokens":1234,"contextWindow":200000,"migrated":true}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			line, ok, err := agentjson.MarshalEvent(c.ev)
			if err != nil || !ok || string(line) != c.want {
				t.Errorf("got %s (ok %v, err %v)\nwant %s", line, ok, err, c.want)
			}
		})
	}
	got, err := agentjson.MarshalUncompactResult(undone)
	if want := `{"compactionId":"c1","entryId":"u1","leafId":"a9","left":2,"messages":3,"tokens":1234}`; err != nil || string(got) != want {
		t.Errorf("MarshalUncompactResult: %s %v, want %s", got, err, want)
	}
}

func TestMarshalBashUpdate(t *testing.T) {
	for _, c := range []struct {
		ev   agent.BashUpdate
		want string
	}{
		{agent.BashUpdate{ID: "r1", Delta: "out\n"}, `{"type":"bash_execution_update","id":"r1","delta":"out\n"}`},
		{agent.BashUpdate{Delta: "x"}, `{"type":"bash_execution_update","delta":"x"}`},
	} {
		line, ok, err := agentjson.MarshalEvent(c.ev)
		if err != nil || !ok || string(line) != c.want {
			t.Errorf("%+v: %s %v %v, want %s", c.ev, line, ok, err, c.want)
		}
	}
}

// TestMarshalReplyStart: a reply that has only begun is "pending", as pi
// writes it.
func TestMarshalReplyStart(t *testing.T) {
	line, ok, err := agentjson.MarshalEvent(agent.MessageStart{Message: &llm.AssistantMessage{Model: "m"}})
	if err != nil || !ok || !strings.Contains(string(line), `"stopReason":"pending"`) {
		t.Errorf("%s %v %v", line, ok, err)
	}
	done := &llm.AssistantMessage{Model: "m", StopReason: llm.StopReasonStop}
	if line, _, _ := agentjson.MarshalEvent(agent.MessageStart{Message: done}); !strings.Contains(string(line), `"stopReason":"stop"`) {
		t.Errorf("%s", line)
	}
}

// FuzzEventLines: whatever text an event carries, its line is one valid
// JSON object in valid UTF-8 whose "type" is the event's.
func FuzzEventLines(f *testing.F) {
	f.Add("hello", "call_1", `{"a":1}`)
	f.Add("\xff\xfe \u2028 \"quoted\" \\", "", "not json")
	f.Fuzz(func(t *testing.T, text, id, delta string) {
		msg := &llm.AssistantMessage{Content: []llm.Content{llm.Text{Text: text}, llm.Thinking{Thinking: delta}}, ErrorMessage: text, StopReason: llm.StopReasonError}
		for _, ev := range []agent.Event{
			agent.MessageEnd{Message: msg},
			agent.MessageUpdate{Message: msg, Event: llm.Event{Type: llm.EventTextDelta, Delta: delta}},
			agent.MessageUpdate{Event: llm.Event{Type: llm.EventToolCallStart, Content: llm.ToolCall{ID: id, Name: text}}},
			agent.ToolEnd{Call: llm.ToolCall{ID: id, Name: text}},
			agent.QueueUpdate{Steering: []string{text}, FollowUp: []string{delta}},
			agent.RetryStart{ErrorMessage: text},
			agent.RetryEnd{FinalError: text},
			agent.SessionInfoChanged{Name: text},
			agent.BashUpdate{ID: id, Delta: delta},
			agent.BranchSummaryEnd{Err: errors.New(text)},
			agent.BackgroundCompaction{LeafID: id, Why: text, Err: errors.New(delta)},
		} {
			line, ok, err := agentjson.MarshalEvent(ev)
			if err != nil || !ok {
				t.Fatalf("%T: ok %v, err %v", ev, ok, err)
			}
			if !utf8.Valid(line) {
				t.Fatalf("%T: invalid UTF-8 in %q", ev, line)
			}
			var obj map[string]any
			if err := json.Unmarshal(line, &obj); err != nil {
				t.Fatalf("%T: %v in %s", ev, err, line)
			}
			if obj["type"] != ev.EventType() {
				t.Fatalf("%T: type %v", ev, obj["type"])
			}
		}
	})
}
