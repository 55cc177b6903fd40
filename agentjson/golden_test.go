package agentjson_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/agentjson"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/hook"
	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/tool"
)

// TestEventLines pins the line of every event kind, byte for byte, in
// testdata/events.golden: JSON mode and RPC mode write these lines and pi
// clients read them (go test -update rewrites the file).
func TestEventLines(t *testing.T) {
	s, err := session.Create("", session.Options{CWD: "/work"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	entry, err := s.Append(&session.ThinkingLevelChangeEntry{ThinkingLevel: "high"})
	if err != nil {
		t.Fatal(err)
	}
	// The entry's id and time are the session's own; the line is pinned
	// with them replaced.
	args, err := llm.NewArguments([]byte(`{"path":"a.go"}`))
	if err != nil {
		t.Fatal(err)
	}
	call := llm.ToolCall{ID: "call_1", Name: "read", Arguments: args}
	user := &llm.UserMessage{Content: []llm.Content{llm.Text{Text: "hi \xff there"}}, Timestamp: 1700000000000}
	reply := &llm.AssistantMessage{
		Content: []llm.Content{llm.Thinking{Thinking: "think", Signature: "sig"}, llm.Text{Text: "hello"}, call},
		API:     "anthropic-messages", Provider: "anthropic", Model: "claude-test",
		Usage:      llm.Usage{Input: 10, Output: 5, TotalTokens: 15, Cost: llm.Cost{Input: 0.5, Total: 0.5}},
		StopReason: llm.StopReasonToolUse, Timestamp: 1700000000001, DurationMs: 12,
	}
	result := &llm.ToolResultMessage{ToolCallID: "call_1", ToolName: "read", Content: []llm.Content{llm.Text{Text: "package a"}}, Details: jsontext.Value(`{"lines":1}`), DurationMs: 3}
	toolRes := tool.Result{Content: []llm.Content{llm.Text{Text: "package a"}}, Details: jsontext.Value(`{"lines":1}`)}
	compacted := &agent.CompactionResult{
		Compaction:   &compaction.Result{Summary: "the summary", FirstKeptEntryID: "k1", Details: jsontext.Value(`{"readFiles":["a.go"]}`), Usage: &llm.Usage{Input: 100, Output: 20}},
		TokensBefore: 50000, TokensAfter: 4000,
	}
	undone := &agent.UncompactResult{
		Compaction: &session.Entry{ID: "c1", ParentID: "a9"},
		Entry:      &session.Entry{ID: "u1", ParentID: "a9"},
		Left:       2, Context: session.Context{Messages: make([]session.Message, 3)}, Tokens: 1234, Window: 200000,
	}
	events := []agent.Event{
		agent.AgentStart{},
		agent.TurnStart{},
		agent.MessageStart{Message: user},
		agent.MessageEnd{Message: user},
		agent.MessageStart{Message: &llm.AssistantMessage{Provider: "anthropic", Model: "claude-test"}},
		agent.MessageUpdate{Message: &llm.AssistantMessage{Model: "claude-test", Usage: llm.Usage{Input: 10}}, Event: llm.Event{Type: llm.EventStart}},
		agent.MessageUpdate{Event: llm.Event{Type: llm.EventThinkingStart}},
		agent.MessageUpdate{Event: llm.Event{Type: llm.EventThinkingDelta, Delta: "think"}},
		agent.MessageUpdate{Event: llm.Event{Type: llm.EventThinkingEnd, Content: llm.Thinking{Thinking: "think"}}},
		agent.MessageUpdate{Event: llm.Event{Type: llm.EventTextStart, Index: 1}},
		agent.MessageUpdate{Event: llm.Event{Type: llm.EventTextDelta, Index: 1, Delta: "hel\"lo"}},
		agent.MessageUpdate{Event: llm.Event{Type: llm.EventTextEnd, Index: 1, Content: llm.Text{Text: "hello"}}},
		agent.MessageUpdate{Event: llm.Event{Type: llm.EventToolCallStart, Index: 2, Content: llm.ToolCall{ID: "call_1", Name: "read"}}},
		agent.MessageUpdate{Event: llm.Event{Type: llm.EventToolCallDelta, Index: 2, Delta: `{"path":`}},
		agent.MessageUpdate{Event: llm.Event{Type: llm.EventToolCallEnd, Index: 2, Content: call}},
		agent.MessageUpdate{Event: llm.Event{Type: llm.EventDone, Message: reply}},
		agent.MessageEnd{Message: reply},
		agent.ToolStart{Call: call},
		agent.ToolUpdate{Call: call, Partial: tool.Result{Content: []llm.Content{llm.Text{Text: "pack"}}}},
		agent.ToolEnd{Call: call, Result: toolRes, Duration: 3 * time.Millisecond},
		agent.ToolEnd{Call: call, Result: tool.Result{}, IsError: true},
		agent.ToolEnd{Call: call, Result: toolRes, Duration: time.Microsecond},
		agent.MessageStart{Message: result},
		agent.MessageEnd{Message: result},
		agent.TurnEnd{Message: reply, ToolResults: []*llm.ToolResultMessage{result}},
		agent.TurnEnd{Message: reply},
		agent.QueueUpdate{Steering: []string{"now"}},
		agent.QueueUpdate{},
		agent.RetryStart{Attempt: 1, MaxAttempts: 3, Delay: 2 * time.Second, ErrorMessage: "overloaded"},
		agent.RetryEnd{Success: true, Attempt: 1},
		agent.RetryEnd{Attempt: 3, FinalError: "overloaded"},
		agent.CompactionStart{Reason: agent.ReasonThreshold, Summarizer: "anthropic/claude-test"},
		agent.CompactionEnd{Reason: agent.ReasonThreshold, Result: compacted},
		agent.CompactionEnd{Reason: agent.ReasonManual, Result: &agent.CompactionResult{TokensBefore: 10}},
		agent.CompactionEnd{Reason: agent.ReasonOverflow, Err: errors.New("the model is down"), WillRetry: true},
		agent.CompactionEnd{Reason: agent.ReasonManual, Err: &compaction.NotCompactableError{Err: compaction.ErrNothingToCompact, Reason: "nothing before the latest exchange"}},
		agent.CompactionEnd{Reason: agent.ReasonManual, Aborted: true, Err: errors.New("cancelled")},
		agent.EntryAppended{Entry: entry},
		agent.ThinkingLevelChanged{Level: llm.ThinkingLevel("high")},
		agent.SessionInfoChanged{Name: "work"},
		agent.SessionInfoChanged{},
		agent.BashUpdate{ID: "r1", Delta: "out\n"},
		agent.BranchSummaryStart{Summarizer: "a/b"},
		agent.BranchSummaryEnd{},
		agent.BranchSummaryEnd{Err: errors.New("no model")},
		agent.BranchSummaryEnd{Aborted: true, Err: errors.New("cancelled")},
		agent.BackgroundCompaction{Kind: agent.BackgroundReady, LeafID: "l1", FirstKeptEntryID: "k1", Summarizer: "a/b", Usage: &llm.Usage{Input: 10}},
		agent.PinsChanged{Pins: []compaction.Pin{{ID: "p1", Text: "never push", Millis: 5}}},
		agent.CompactionUndone{Result: undone},
		&agent.Progress{Kind: agent.ProgressRetry, Attempt: 2, Delay: 1500 * time.Millisecond, Err: errors.New("rate limited")},
		&agent.Progress{Kind: agent.ProgressRetry, Attempt: 1},
		agent.AgentEnd{Messages: []llm.Message{user, reply, result}, WillRetry: true},
		agent.AgentEnd{},
		agent.AgentSettled{Aborted: true},
		// No wire form: these write nothing.
		agent.Notice{Level: agent.NoticeWarning, Text: "careful"},
		agent.ModelChanged{Model: llm.Model{ID: "m"}},
		agent.SessionChanged{File: "/x.jsonl"},
		&agent.Progress{Kind: agent.ProgressText, Delta: "x"},
		&agent.Progress{Kind: agent.ProgressHookReport, HookReport: &hook.Report{}},
	}
	var out bytes.Buffer
	for _, e := range events {
		line, ok, err := agentjson.MarshalEvent(e)
		if err != nil {
			t.Fatalf("%T: %v", e, err)
		}
		if !ok {
			if line != nil {
				t.Errorf("%T: no wire form, yet %s", e, line)
			}
			out.WriteString("(none: " + e.EventType() + ")\n")
			continue
		}
		line = bytes.ReplaceAll(line, []byte(entry.ID), []byte("ENTRY-ID"))
		line = bytes.ReplaceAll(line, []byte(entry.Timestamp), []byte("ENTRY-TIME"))
		out.Write(line)
		out.WriteByte('\n')
	}
	golden.Check(t, "events.golden", out.Bytes())
}
