package loop

import (
	"time"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/tool"
)

// Event is one step of a run, told to [Config].Emit. The concrete types are
// RunStart, RunEnd, TurnStart, TurnEnd, MessageStart, MessageUpdate,
// MessageEnd, ToolStart, ToolUpdate, ToolEnd and Backoff.
type Event interface{ loopEvent() }

// RunStart begins a run.
type RunStart struct{}

// RunEnd ends a run; Messages are every message it produced, in order.
type RunEnd struct {
	Messages []llm.Message
	// Stopped says why the run stopped before the model was done, if a
	// bound stopped it; Turns is how many turns it had.
	Stopped Stopped
	Turns   int
}

// Stopped is why a bound stopped a run.
type Stopped string

// The bounds that stop a run.
const (
	// StoppedTurns: the run had Config.MaxTurns turns.
	StoppedTurns Stopped = "turns"
	// StoppedToolErrors: StopAfterErrors turns in a row had only failed
	// tool calls.
	StoppedToolErrors Stopped = "tool-errors"
)

// Backoff says the loop waits Delay before the next request, the model's
// tool calls having all failed Failures turns in a row.
type Backoff struct {
	Failures int
	Delay    time.Duration
}

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

// EventType names the event as pi's agent core does, for the events a
// caller passes on as they are.
func (TurnStart) EventType() string    { return "turn_start" }
func (TurnEnd) EventType() string      { return "turn_end" }
func (MessageStart) EventType() string { return "message_start" }
func (ToolStart) EventType() string    { return "tool_execution_start" }
func (ToolUpdate) EventType() string   { return "tool_execution_update" }
func (ToolEnd) EventType() string      { return "tool_execution_end" }

func (RunStart) loopEvent()      {}
func (Backoff) loopEvent()       {}
func (RunEnd) loopEvent()        {}
func (TurnStart) loopEvent()     {}
func (TurnEnd) loopEvent()       {}
func (MessageStart) loopEvent()  {}
func (MessageUpdate) loopEvent() {}
func (MessageEnd) loopEvent()    {}
func (ToolStart) loopEvent()     {}
func (ToolUpdate) loopEvent()    {}
func (ToolEnd) loopEvent()       {}
