// Package agentjson writes the agent's events and results as the JSON
// lines of pi's protocol, the form JSON mode ("prime --mode json") and RPC
// mode ("prime --mode rpc") share:
//
//	line, ok, err := agentjson.MarshalEvent(ev)
//	if err == nil && ok {
//		out.Write(append(line, '\n'))
//	}
//
// Each line is one compact object whose "type" names the event
// ("agent_start", "message_update", "tool_execution_end", ...), with pi's
// member names in pi's order. Invalid UTF-8 in a text is written as
// U+FFFD; an entry_appended line carries the entry's line as stored.
package agentjson

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
)

// MarshalEvent encodes an event as one compact JSON object in pi's shape,
// the line JSON mode and RPC mode write for it: {"type":"agent_start"},
// {"type":"message_end","message":{...}}, and so on, with pi's member names.
// A message_update carries only the step (pi's delta-only form). ok is false
// for events pi has no wire form for (progress, notices, model and session
// changes), which those modes leave out; Prime's additions that a pi client
// can ignore (branch_summary_start, branch_summary_end, background_compaction,
// pins_changed, compaction_undone) are included.
func MarshalEvent(ev agent.Event) (line []byte, ok bool, err error) {
	if p, isProgress := ev.(*agent.Progress); isProgress {
		return marshalProgress(p)
	}
	fill, ok := conversationMembers(ev)
	if !ok {
		if fill, ok, err = sessionMembers(ev); err != nil || !ok {
			return nil, false, err
		}
	}
	line, err = marshalObject(func(w *jsonwire.ObjectWriter) {
		w.Str("type", ev.EventType())
		fill(w)
	})
	return line, err == nil, err
}

// conversationMembers writes the members of a run's events: the agent's
// and its turns', the messages', the tools', the queues', the retries' and
// the user's own commands' output. ok is false for other events.
func conversationMembers(ev agent.Event) (fill func(w *jsonwire.ObjectWriter), ok bool) {
	switch e := ev.(type) {
	case agent.AgentStart, agent.TurnStart:
		fill = func(*jsonwire.ObjectWriter) {}
	case agent.AgentEnd:
		fill = func(w *jsonwire.ObjectWriter) {
			w.Value("messages", orEmpty(e.Messages))
			w.Bool("willRetry", e.WillRetry)
		}
	case agent.AgentSettled:
		fill = func(w *jsonwire.ObjectWriter) { w.Bool("aborted", e.Aborted) }
	case agent.TurnEnd:
		fill = func(w *jsonwire.ObjectWriter) {
			w.Value("message", e.Message)
			w.Value("toolResults", orEmpty(e.ToolResults))
		}
	case agent.MessageStart:
		fill = func(w *jsonwire.ObjectWriter) { w.Value("message", begunReply(e.Message)) }
	case agent.MessageEnd:
		fill = func(w *jsonwire.ObjectWriter) { w.Value("message", e.Message) }
	case agent.MessageUpdate:
		fill = func(w *jsonwire.ObjectWriter) {
			u := llm.Usage{}
			if e.Message != nil {
				u = e.Message.Usage
			}
			w.Value("usage", &u)
			w.Value("assistantMessageEvent", streamStep{e.Event})
		}
	case agent.ToolStart:
		fill = func(w *jsonwire.ObjectWriter) { callMembers(w, e.Call) }
	case agent.ToolUpdate:
		fill = func(w *jsonwire.ObjectWriter) {
			callMembers(w, e.Call)
			w.Value("partialResult", toolResult{e.Partial.Content, e.Partial.Details})
		}
	case agent.ToolEnd:
		fill = func(w *jsonwire.ObjectWriter) {
			w.Str("toolCallId", e.Call.ID)
			w.Str("toolName", e.Call.Name)
			w.Value("result", toolResult{e.Result.Content, e.Result.Details})
			w.Bool("isError", e.IsError)
			if e.Duration > 0 {
				w.Int("durationMs", max(1, e.Duration.Milliseconds()))
			}
		}
	case agent.QueueUpdate:
		fill = func(w *jsonwire.ObjectWriter) {
			w.Value("steering", orEmpty(e.Steering))
			w.Value("followUp", orEmpty(e.FollowUp))
		}
	case agent.RetryStart:
		fill = func(w *jsonwire.ObjectWriter) {
			w.Int("attempt", int64(e.Attempt))
			w.Int("maxAttempts", int64(e.MaxAttempts))
			w.Int("delayMs", e.Delay.Milliseconds())
			w.Str("errorMessage", e.ErrorMessage)
		}
	case agent.RetryEnd:
		fill = func(w *jsonwire.ObjectWriter) {
			w.Bool("success", e.Success)
			w.Int("attempt", int64(e.Attempt))
			w.OptStr("finalError", e.FinalError)
		}
	case agent.BashUpdate:
		fill = func(w *jsonwire.ObjectWriter) {
			w.OptStr("id", e.ID)
			w.Str("delta", e.Delta)
		}
	default:
		return nil, false
	}
	return fill, true
}

// sessionMembers writes the members of the events about the session:
// compactions, entries appended, the thinking level, the name, branch
// summaries and Prime's own (background summaries, pins, undone
// compactions). ok is false for events pi has no line for.
func sessionMembers(ev agent.Event) (fill func(w *jsonwire.ObjectWriter), ok bool, err error) {
	switch e := ev.(type) {
	case agent.CompactionStart:
		fill = func(w *jsonwire.ObjectWriter) { w.Str("reason", string(e.Reason)) }
	case agent.CompactionEnd:
		fill = func(w *jsonwire.ObjectWriter) {
			w.Str("reason", string(e.Reason))
			if e.Result != nil {
				w.Value("result", compactionResult{e.Result})
			}
			w.Bool("aborted", e.Aborted)
			w.Bool("willRetry", e.WillRetry)
			if e.Err != nil && !e.Aborted {
				w.Str("errorMessage", agent.CompactionErrorText(e.Reason, e.Err))
			}
		}
	case agent.EntryAppended:
		raw, err := e.Entry.Raw()
		if err != nil {
			return nil, false, err
		}
		fill = func(w *jsonwire.ObjectWriter) { w.Raw("entry", jsontext.Value(raw)) }
	case agent.ThinkingLevelChanged:
		fill = func(w *jsonwire.ObjectWriter) { w.Str("level", string(e.Level)) }
	case agent.SessionInfoChanged:
		fill = func(w *jsonwire.ObjectWriter) { w.OptStr("name", e.Name) }
	case agent.BranchSummaryStart:
		fill = func(*jsonwire.ObjectWriter) {}
	case agent.BranchSummaryEnd:
		fill = func(w *jsonwire.ObjectWriter) {
			w.Bool("aborted", e.Aborted)
			if e.Err != nil && !e.Aborted {
				w.Str("errorMessage", e.Err.Error())
			}
		}
	case agent.BackgroundCompaction:
		fill = func(w *jsonwire.ObjectWriter) {
			w.Str("kind", string(e.Kind))
			w.Str("leafId", e.LeafID)
			w.Str("firstKeptEntryId", e.FirstKeptEntryID)
			w.OptStr("summarizer", e.Summarizer)
			if e.Usage != nil {
				w.Value("usage", e.Usage)
			}
			if e.Err != nil {
				w.Str("errorMessage", e.Err.Error())
			}
			w.OptStr("why", e.Why)
		}
	case agent.PinsChanged:
		fill = func(w *jsonwire.ObjectWriter) { w.Value("pins", orEmpty(e.Pins)) }
	case agent.CompactionUndone:
		fill = func(w *jsonwire.ObjectWriter) { uncompactMembers(w, e.Result) }
	default:
		return nil, false, nil
	}
	return fill, true, nil
}

// marshalProgress writes pi's summarization_retry_scheduled for a retry of
// a summary request; other progress has no line.
func marshalProgress(e *agent.Progress) ([]byte, bool, error) {
	if e.Kind != agent.ProgressRetry {
		return nil, false, nil
	}
	// pi's summarization_retry_scheduled.
	line, err := marshalObject(func(w *jsonwire.ObjectWriter) {
		w.Str("type", "summarization_retry_scheduled")
		w.Int("attempt", int64(e.Attempt))
		w.Int("delayMs", e.Delay.Milliseconds())
		if e.Err != nil {
			w.Str("errorMessage", e.Err.Error())
		}
	})
	return line, err == nil, err
}

// stopPending is the stop reason pi gives a reply whose stream has only
// begun.
const stopPending llm.StopReason = "pending"

// begunReply is m as pi's message_start carries it: a reply that has only
// begun has stopReason "pending".
func begunReply(m llm.Message) llm.Message {
	if am, ok := m.(*llm.AssistantMessage); ok && am.StopReason == "" {
		c := *am
		c.StopReason = stopPending
		return &c
	}
	return m
}

func marshalObject(fill func(w *jsonwire.ObjectWriter)) ([]byte, error) {
	return json.Marshal(objectFunc(fill), jsontext.AllowInvalidUTF8(true))
}

// objectFunc marshals as the object fill writes.
type objectFunc func(w *jsonwire.ObjectWriter)

func (f objectFunc) MarshalJSONTo(enc *jsontext.Encoder) error { return jsonwire.WriteObject(enc, f) }

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func callMembers(w *jsonwire.ObjectWriter, c llm.ToolCall) {
	w.Str("toolCallId", c.ID)
	w.Str("toolName", c.Name)
	w.Value("args", c.Arguments)
}

// toolResult is a tool's result as pi's events carry it.
type toolResult struct {
	content []llm.Content
	details jsontext.Value
}

func (t toolResult) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Value("content", orEmpty(t.content))
		w.OptRaw("details", t.details)
	})
}

// compactionResult is a compaction's result as compaction_end and RPC's
// compact carry it.
type compactionResult struct{ r *agent.CompactionResult }

func (c compactionResult) MarshalJSONTo(enc *jsontext.Encoder) error {
	r := c.r
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		summary, kept, details := "", "", jsontext.Value(nil)
		var usage *llm.Usage
		if r.Compaction != nil {
			summary, kept, details, usage = r.Compaction.Summary, r.Compaction.FirstKeptEntryID, r.Compaction.Details, r.Compaction.Usage
		}
		w.Str("summary", summary)
		w.Str("firstKeptEntryId", kept)
		w.Int("tokensBefore", int64(r.TokensBefore))
		w.Int("estimatedTokensAfter", int64(r.TokensAfter))
		if usage != nil {
			w.Value("usage", usage)
		}
		w.OptRaw("details", details)
	})
}

// MarshalCompactionResult encodes a compaction's result as pi's compact
// command answers it: summary, firstKeptEntryId, tokensBefore,
// estimatedTokensAfter, usage, details.
func MarshalCompactionResult(r *agent.CompactionResult) ([]byte, error) {
	return json.Marshal(compactionResult{r})
}

// uncompactMembers writes an undone compaction as compaction_undone and
// RPC's uncompact carry it, with the names of "prime uncompact --json":
// the compaction, the entry appended, the leaf the conversation continues
// from (the entry before the compaction), the entries left on the side
// branch, and the context's messages and tokens (and the model's window,
// when known).
func uncompactMembers(w *jsonwire.ObjectWriter, r *agent.UncompactResult) {
	w.Str("compactionId", r.Compaction.ID)
	w.Str("entryId", r.Entry.ID)
	w.Str("leafId", r.Entry.ParentID)
	w.Int("left", int64(r.Left))
	w.Int("messages", int64(len(r.Context.Messages)))
	w.Int("tokens", int64(r.Tokens))
	if r.Window > 0 {
		w.Int("contextWindow", int64(r.Window))
	}
	if r.Migrated {
		w.Bool("migrated", true)
	}
}

// MarshalUncompactResult encodes an undone compaction as RPC's uncompact
// answers it: the members of the compaction_undone event.
func MarshalUncompactResult(r *agent.UncompactResult) ([]byte, error) {
	return marshalObject(func(w *jsonwire.ObjectWriter) { uncompactMembers(w, r) })
}

// streamStep is a step of a streamed reply in pi's assistantMessageEvent
// form (without the partial message).
type streamStep struct{ ev llm.Event }

func (s streamStep) MarshalJSONTo(enc *jsontext.Encoder) error {
	e := s.ev
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("type", e.Type.String())
		w.Int("contentIndex", int64(e.Index))
		switch e.Type {
		case llm.EventTextDelta, llm.EventThinkingDelta, llm.EventToolCallDelta:
			w.Str("delta", e.Delta)
		case llm.EventTextEnd:
			if t, ok := e.Content.(llm.Text); ok {
				w.Str("content", t.Text)
			}
		case llm.EventThinkingEnd:
			if t, ok := e.Content.(llm.Thinking); ok {
				w.Str("content", t.Thinking)
			}
		case llm.EventToolCallStart:
			if c, ok := e.Content.(llm.ToolCall); ok {
				w.Str("id", c.ID)
				w.Str("toolName", c.Name)
			}
		case llm.EventToolCallEnd:
			if c, ok := e.Content.(llm.ToolCall); ok {
				w.Value("toolCall", c)
			}
		}
	})
}
