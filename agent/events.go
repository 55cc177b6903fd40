package agent

import (
	"time"

	"github.com/prime-agent/prime/compaction"
)

// Op names an operation of the agent.
type Op string

// Operations.
const (
	OpCompaction    Op = "compaction"
	OpBranchSummary Op = "branch summary"
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

// Kinds of event, in the order an operation sends them.
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
	// window; a smaller one follows (Err is the provider's answer).
	EventOverflowRetry
	// EventFallback: no model can write the summary; code builds it
	// (Message says why, Err holds the model's failure if one failed).
	EventFallback
	// EventEnd: the operation is over. Err is nil on success; Aborted
	// reports a cancellation (nothing was written).
	EventEnd
)

var eventKindNames = [...]string{"start", "request", "text", "retry", "overflowRetry", "fallback", "end"}

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
}
