package hook

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// benchSession is a session of turns user → assistant (a read call) →
// tool result (2 KB) → assistant, about 3 KB a turn.
func benchSession(b *testing.B, turns int) *memSession {
	s := &memSession{t: b, byID: map[string]*session.Entry{}}
	body := strings.Repeat("func handler(w http.ResponseWriter, r *http.Request) { /* … */ }\n", 32)
	for i := range turns {
		call := llm.ToolCall{ID: fmt.Sprintf("call_%d", i), Name: "read"}
		call.Arguments, _ = llm.NewArguments(fmt.Appendf(nil, `{"path":"internal/server/file%d.go"}`, i))
		s.append(&session.MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: fmt.Sprintf("Look at file %d and explain the handler.", i)}}}})
		s.append(&session.MessageEntry{Message: &llm.AssistantMessage{Content: []llm.Content{llm.Text{Text: "Reading it."}, call}, StopReason: llm.StopReasonToolUse}})
		s.append(&session.MessageEntry{Message: &llm.ToolResultMessage{ToolCallID: call.ID, ToolName: "read", Content: []llm.Content{llm.Text{Text: body}}}})
		s.append(&session.MessageEntry{Message: &llm.AssistantMessage{Content: []llm.Content{llm.Text{Text: "The handler serves the file list."}}, StopReason: llm.StopReasonStop}})
	}
	return s
}

// BenchmarkBeforeCompact measures dispatching session_before_compact for a
// compaction of a 2,000-turn session (8,000 entries, ~6 MB of event JSON):
// the cost a hook adds before any summary is written.
func BenchmarkBeforeCompact(b *testing.B) {
	s := benchSession(b, 2000)
	path := s.path(s.leaf)
	prep, err := compaction.Prepare(path, compaction.DefaultSettings())
	if err != nil {
		b.Fatal(err)
	}
	ev := &BeforeCompactEvent{Preparation: prep, BranchEntries: path, Reason: ReasonThreshold}
	size, err := encodeEvent(ev)
	if err != nil {
		b.Fatal(err)
	}
	script := writeScript(b, b.TempDir(), "drain.sh", "#!/bin/sh\ncat > /dev/null\n")
	runners := []struct {
		name string
		r    *Runner
	}{
		{"no handlers", New(nil, Options{})},
		{"in-process, no answer", New(nil, Options{Hooks: &Hooks{BeforeCompact: func(context.Context, *BeforeCompactEvent) (*BeforeCompactResult, error) {
			return nil, nil
		}}})},
		{"in-process, transform", New(nil, Options{Hooks: &Hooks{BeforeCompact: func(_ context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error) {
			return &BeforeCompactResult{Preparation: &PreparationChange{MessagesToSummarize: ev.Preparation.MessagesToSummarize}}, nil
		}}})},
		{"command", New(loadSettings(b, map[string]any{"hooks": []map[string]any{hookDecl(EventBeforeCompact, script)}}, nil), Options{})},
	}
	for _, rc := range runners {
		b.Run(rc.name, func(b *testing.B) {
			b.SetBytes(int64(len(size)))
			b.ReportAllocs()
			for b.Loop() {
				d, err := rc.r.BeforeCompact(context.Background(), ev)
				if err != nil || len(d.Reports) > 0 {
					b.Fatal(err, d.Reports)
				}
			}
		})
	}
}
