package agent

import (
	"time"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/hook"
)

// Op names an operation of the agent.
type Op string

// Operations.
const (
	OpCompaction    Op = "compaction"
	OpBranchSummary Op = "branch summary"
	// OpNavigation is a move in the tree without a summary asked for
	// (named in the error when it is cancelled).
	OpNavigation Op = "navigation"
)

// Reason says why a compaction runs (pi's compaction_start reason).
type Reason string

// Reasons for a compaction.
const (
	// ReasonManual: the user asked (/compact, prime compact).
	ReasonManual Reason = "manual"
	// ReasonThreshold: the context grew past the window less reserveTokens.
	ReasonThreshold Reason = "threshold"
	// ReasonOverflow: the provider answered that the context does not fit;
	// the turn is retried after the compaction.
	ReasonOverflow Reason = "overflow"
)

// EventKind says what an [Event] announces.
type EventKind int

// Kinds of event. Start, request, text, retry, overflowRetry, fallback and
// end come in that order; hooks and hookReport whenever hooks run.
const (
	// EventStart: an operation begins (Op, and Reason for a compaction).
	// Every EventStart is followed by exactly one EventEnd.
	EventStart EventKind = iota
	// EventRequest: a summary request goes to the model (Phase; Part
	// counts the requests of a span folded over several; Attempt is 1 or 2
	// for the smaller retries after a context overflow).
	EventRequest
	// EventText: the model streamed Delta.
	EventText
	// EventRetry: the provider failed in a way worth retrying (rate limit,
	// overload, broken connection); the request is sent again after Delay
	// (Attempt counts retries from 1; Err says what failed).
	EventRetry
	// EventOverflowRetry: the request did not fit the model's context
	// window, or the context filled before the summary was finished
	// (compaction.ErrContextFilled); a smaller one follows (Err is the
	// provider's answer).
	EventOverflowRetry
	// EventFallback: no model can write the summary; code builds it
	// (Message says why, Err holds the model's failure if one failed).
	EventFallback
	// EventEnd: the operation is over. Err is nil on success; Aborted
	// reports a cancellation (nothing was written).
	EventEnd
	// EventHooks: the handlers of a hook event (HookEvent, such as
	// "session_before_compact") are about to run, in the order of
	// Handlers. Sent only when there are handlers.
	EventHooks
	// EventHookReport: a hook did not do its job, or was skipped
	// (HookReport says which, for which event, and what happened). Skipped
	// hooks are reported at the start of every operation whose events they
	// are declared for; the others as their event's dispatch ends.
	EventHookReport
)

var eventKindNames = [...]string{"start", "request", "text", "retry", "overflowRetry", "fallback", "end", "hooks", "hookReport"}

// String names the kind ("start", "request", ...).
func (k EventKind) String() string {
	if int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return "EventKind(?)"
}

// Event tells a user interface what an operation is doing while a model
// works. Which fields are set depends on Kind.
type Event struct {
	Kind   EventKind
	Op     Op
	Reason Reason
	// Summarizer is the model writing the summary ("provider/id"), empty
	// when code builds it. Set on EventStart.
	Summarizer string
	Phase      compaction.Phase
	Part       int
	Attempt    int
	Delta      string
	Delay      time.Duration
	Message    string
	Err        error
	Aborted    bool
	// HookEvent is the extension event (EventHooks, EventHookReport),
	// Handlers the handlers about to run (EventHooks), HookReport what
	// happened to one of them (EventHookReport).
	HookEvent  string
	Handlers   []string
	HookReport *hook.Report
}
