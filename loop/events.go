package loop

import (
	"time"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/tool"
)

// Event is one step of a run, told to [Config].Emit. The concrete types are
// RunStart, RunEnd, TurnStart, TurnEnd, MessageStart, MessageUpdate,
// MessageEnd, ToolStart, ToolUpdate and ToolEnd.
type Event interface{ loopEvent() }

// RunStart begins a run.
type RunStart struct{}

// RunEnd ends a run; Messages are every message it produced, in order.
type RunEnd struct{ Messages []llm.Message }

// TurnStart begins a turn: the messages delivered before its request, then
// its reply.
type TurnStart struct{}

// TurnEnd ends a turn: its reply, and the results of the reply's tool calls
// in call order (none when the reply failed or called no tool).
type TurnEnd struct {
	Message     *llm.AssistantMessage
	ToolResults []*llm.ToolResultMessage
}

// MessageStart begins a message. For an assistant reply it comes with the
// provider's first event, Message then holding only the reply's metadata;
// for any other message it is the whole message, as at MessageEnd.
type MessageStart struct{ Message llm.Message }

// MessageUpdate is one streamed step of the assistant reply in progress:
// a text, thinking or tool-call block starting, growing by Event.Delta, or
// ending.
type MessageUpdate struct{ Event llm.Event }

// MessageEnd ends a message: Message is final and is what the caller stores.
// Err is set for a reply that failed or was aborted: the provider's
// classified error (errors.Is with llm.ErrContextOverflow, llm.ErrRateLimited,
// …; llm.IsAborted for an abort).
type MessageEnd struct {
	Message llm.Message
	Err     error
}

// ToolStart announces a tool call of the reply, before it is validated.
type ToolStart struct{ Call llm.ToolCall }

// ToolUpdate carries a partial result of a running call (bash's output so
// far).
type ToolUpdate struct {
	Call    llm.ToolCall
	Partial tool.Result
}

// ToolEnd reports a call's result. Ran is false when the tool never ran (an
// unknown tool, invalid arguments, an abort before it started, a reply cut
// by the output limit); Duration is how long it ran.
type ToolEnd struct {
	Call     llm.ToolCall
	Result   tool.Result
	IsError  bool
	Ran      bool
	Duration time.Duration
}

func (RunStart) loopEvent()      {}
func (RunEnd) loopEvent()        {}
func (TurnStart) loopEvent()     {}
func (TurnEnd) loopEvent()       {}
func (MessageStart) loopEvent()  {}
func (MessageUpdate) loopEvent() {}
func (MessageEnd) loopEvent()    {}
func (ToolStart) loopEvent()     {}
func (ToolUpdate) loopEvent()    {}
func (ToolEnd) loopEvent()       {}
