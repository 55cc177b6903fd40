// Package loop runs the conversation between a model and its tools: a run of
// turns, each streaming one assistant reply and running the tool calls it
// makes, until a reply calls no tool and no queued message waits (the loop of
// pi's agent-core).
//
// The loop keeps no conversation of its own. Before every request it asks the
// caller what to send ([Config].Request), and it hands every message it
// produces to the caller at the message's end event ([Config].Emit), before
// going on. So the caller's store — for Prime, the session file — is the one
// record of the conversation, and the context of each request is whatever the
// store makes of it then (compacted, with failed attempts hidden). The loop
// knows nothing of sessions; it depends only on packages llm and tool.
//
// A run:
//
//	RunStart, TurnStart, the starting messages (MessageStart, MessageEnd each)
//	turn:  steering queued before the first request joins it
//	       MessageStart, MessageUpdate…, MessageEnd   the assistant reply
//	       ToolStart each call (in call order); ToolUpdate…, ToolEnd (in completion order)
//	       MessageStart, MessageEnd                   each tool result, in call order
//	       TurnEnd
//	between turns: Config.BetweenTurns (the caller compacts, patches the system
//	       prompt, switches model), then TurnStart, the messages it returned and
//	       the steering delivered now, the next reply …
//	RunEnd
//
// The run goes on while a reply called tools or a steering message waits; when
// neither holds, queued follow-ups start another turn; otherwise it ends. A reply
// that failed or was aborted ends the run.
//
// Invariants:
//   - Events come one at a time and in the order above; Emit is never called
//     concurrently, even from tools running in parallel.
//   - Every tool call of a reply gets exactly one result, emitted and returned in
//     call order: unknown tools, invalid arguments, tools that fail or panic, and
//     calls cancelled by an abort all become error results. A reply cut off by
//     the output limit has none of its calls run (their arguments may be
//     truncated); each gets an error result asking the model to send it again,
//     and the run continues.
//   - Calls run in parallel, except that calls touching the same file
//     ([tool.PathTool]) run one after another, in call order.
//   - After ctx is cancelled the loop sends no new request: running tools are
//     stopped through ctx, their results recorded, and the run ends. (pi sends
//     one more request with the cancelled signal and records the empty aborted
//     reply it gets; Prime does not.)
//   - A queued message is taken from the [Queue] only at the moment it is
//     delivered, so an abort never loses one.
package loop
