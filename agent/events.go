package agent

import (
	"time"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/hook"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/loop"
	"github.com/prime-agent/prime/session"
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

// Event is one thing the agent tells its front ends ([Config].Events), in the
// order it happens. EventType is pi's name for the event (what JSON and RPC
// modes write as "type"; see [MarshalEvent]).
//
// A conversation's events: AgentStart, TurnStart, MessageStart, MessageUpdate,
// MessageEnd, ToolStart, ToolUpdate, ToolEnd, TurnEnd, AgentEnd, and once the
// agent is done with a prompt (retries and compactions included) AgentSettled.
// Around them: QueueUpdate, RetryStart, RetryEnd, EntryAppended,
// ThinkingLevelChanged, ModelChanged, SessionInfoChanged, Notice. A compaction
// is CompactionStart, Progress…, CompactionEnd; a branch summary
// BranchSummaryStart, Progress…, BranchSummaryEnd.
type Event interface{ EventType() string }

// AgentStart begins a run of the model: a prompt's, or a retry's.
type AgentStart struct{}

// AgentEnd ends a run. Messages are the messages it produced; WillRetry says
// an automatic retry of a failed reply follows (RetryStart).
type AgentEnd struct {
	Messages  []llm.Message
	WillRetry bool
}

// AgentSettled says the agent is done with a prompt: every run, retry and
// compaction it caused is over. Aborted reports that the user aborted.
type AgentSettled struct{ Aborted bool }

// The events of a run that the agent passes on as the loop tells them
// (the loop's own types, so the two cannot drift apart).
type (
	// TurnStart begins a turn: one reply and the tool calls it makes.
	TurnStart = loop.TurnStart
	// TurnEnd ends a turn: its reply and its tool results.
	TurnEnd = loop.TurnEnd
	// MessageStart begins a message. An assistant reply starts when its
	// stream does (Message holds only its metadata); other messages are
	// complete.
	MessageStart = loop.MessageStart
	// ToolStart announces a tool call.
	ToolStart = loop.ToolStart
	// ToolUpdate carries a running call's partial result.
	ToolUpdate = loop.ToolUpdate
	// ToolEnd reports a call's result; Duration is 0, and Ran false, when
	// the tool never ran.
	ToolEnd = loop.ToolEnd
)

// MessageUpdate is one streamed step of the reply in progress (Event: a
// block's start, delta or end).
type MessageUpdate struct {
	// Message is the reply's metadata as the stream began.
	Message *llm.AssistantMessage
	Event   llm.Event
}

// MessageEnd ends a message. Message is final and Entry is the session entry
// it was stored as (nil when it could not be stored; a Notice says why).
// Err is the provider's classified error for a reply that failed.
type MessageEnd struct {
	Message llm.Message
	Entry   *session.Entry
	Err     error
}

// QueueUpdate gives the texts of both queues, whole, after every change.
type QueueUpdate struct{ Steering, FollowUp []string }

// RetryStart says a failed reply will be sent again after Delay (Attempt of
// MaxAttempts); ErrorMessage is the failure.
type RetryStart struct {
	Attempt, MaxAttempts int
	Delay                time.Duration
	ErrorMessage         string
}

// RetryEnd ends a series of retries: with a reply that succeeded, or with
// FinalError when the attempts ran out or the wait was cancelled.
type RetryEnd struct {
	Success    bool
	Attempt    int
	FinalError string
}

// EntryAppended reports a session entry written for the agent's own
// bookkeeping (a context_edit hiding a failed attempt, a label, a model or
// thinking-level change), not a message.
type EntryAppended struct{ Entry *session.Entry }

// ThinkingLevelChanged reports the thinking level now in force.
type ThinkingLevelChanged struct{ Level llm.ThinkingLevel }

// ModelChanged reports the model now in use.
type ModelChanged struct{ Model llm.Model }

// SessionInfoChanged reports the session's name (empty: cleared).
type SessionInfoChanged struct{ Name string }

// SessionChanged reports that the agent now works on another session (a new
// one, one switched to, a fork or a clone): front ends redraw from it.
type SessionChanged struct{ File string }

// Notice is something the user should know that is not part of the
// conversation: a warning (a setting ignored, a hook skipped, a session entry
// that could not be written) or an error outside a reply.
type Notice struct {
	Level NoticeLevel
	Text  string
}

// NoticeLevel grades a Notice.
type NoticeLevel string

// Notice levels.
const (
	NoticeInfo    NoticeLevel = "info"
	NoticeWarning NoticeLevel = "warning"
	NoticeError   NoticeLevel = "error"
)

// CompactionStart begins a compaction. Summarizer is the model writing the
// summary ("provider/id"), empty when code builds it.
type CompactionStart struct {
	Reason     Reason
	Summarizer string
}

// CompactionEnd ends a compaction: Result on success; otherwise Err (nil
// when Aborted, a cancel by the user or a hook). WillRetry says the failed
// reply that caused an overflow compaction is sent again.
type CompactionEnd struct {
	Reason    Reason
	Result    *CompactionResult
	Aborted   bool
	WillRetry bool
	Err       error
}

// BranchSummaryStart begins the summary of a branch being left.
type BranchSummaryStart struct{ Summarizer string }

// BranchSummaryEnd ends it; Err and Aborted as in CompactionEnd.
type BranchSummaryEnd struct {
	Err     error
	Aborted bool
}

// ProgressKind says what a [Progress] event announces.
type ProgressKind int

// Kinds of progress, while a summary is written.
const (
	// ProgressRequest: a summary request goes to the model (Phase; Part
	// counts the requests of a span folded over several; Attempt is 1 or 2
	// for the smaller retries after a context overflow).
	ProgressRequest ProgressKind = iota
	// ProgressText: the model streamed Delta.
	ProgressText
	// ProgressRetry: the provider failed in a way worth retrying (rate
	// limit, overload, broken connection); the request is sent again after
	// Delay (Attempt counts retries from 1; Err says what failed).
	ProgressRetry
	// ProgressOverflowRetry: the request did not fit the model's context
	// window, or the context filled before the summary was finished
	// (compaction.ErrContextFilled); a smaller one follows (Err is the
	// provider's answer).
	ProgressOverflowRetry
	// ProgressFallback: no model can write the summary; code builds it
	// (Message says why, Err holds the model's failure if one failed).
	ProgressFallback
	// ProgressHooks: the handlers of a hook event (HookEvent, such as
	// "session_before_compact") are about to run, in the order of
	// Handlers. Sent only when there are handlers.
	ProgressHooks
	// ProgressHookReport: a hook did not do its job, or was skipped
	// (HookReport says which, for which event, and what happened). Skipped
	// hooks are reported at the start of every operation whose events they
	// are declared for; the others as their event's dispatch ends.
	ProgressHookReport
	// ProgressPlanned: a compaction is about to summarize Messages
	// messages of Tokens tokens (sent once, before the first request).
	ProgressPlanned
)

var progressKindNames = [...]string{"request", "text", "retry", "overflowRetry", "fallback", "hooks", "hookReport", "planned"}

// String names the kind ("request", "text", ...).
func (k ProgressKind) String() string {
	if int(k) < len(progressKindNames) {
		return progressKindNames[k]
	}
	return "ProgressKind(?)"
}

// Progress tells a user interface what a compaction or a branch summary is
// doing while a model works. Which fields are set depends on Kind.
type Progress struct {
	Kind    ProgressKind
	Op      Op
	Reason  Reason
	Phase   compaction.Phase
	Part    int
	Attempt int
	Delta   string
	Delay   time.Duration
	Message string
	Err     error
	// HookEvent is the extension event (ProgressHooks, ProgressHookReport),
	// Handlers the handlers about to run (ProgressHooks), HookReport what
	// happened to one of them (ProgressHookReport).
	HookEvent  string
	Handlers   []string
	HookReport *hook.Report
	// Tokens and Messages are what a compaction summarizes
	// (ProgressPlanned).
	Tokens, Messages int
}

// EventType names the event as pi does.
func (AgentStart) EventType() string           { return "agent_start" }
func (AgentEnd) EventType() string             { return "agent_end" }
func (AgentSettled) EventType() string         { return "agent_settled" }
func (MessageUpdate) EventType() string        { return "message_update" }
func (MessageEnd) EventType() string           { return "message_end" }
func (QueueUpdate) EventType() string          { return "queue_update" }
func (RetryStart) EventType() string           { return "auto_retry_start" }
func (RetryEnd) EventType() string             { return "auto_retry_end" }
func (EntryAppended) EventType() string        { return "entry_appended" }
func (ThinkingLevelChanged) EventType() string { return "thinking_level_changed" }
func (ModelChanged) EventType() string         { return "model_changed" }
func (SessionInfoChanged) EventType() string   { return "session_info_changed" }
func (SessionChanged) EventType() string       { return "session_changed" }
func (Notice) EventType() string               { return "notice" }
func (CompactionStart) EventType() string      { return "compaction_start" }
func (CompactionEnd) EventType() string        { return "compaction_end" }
func (BranchSummaryStart) EventType() string   { return "branch_summary_start" }
func (BranchSummaryEnd) EventType() string     { return "branch_summary_end" }
func (*Progress) EventType() string            { return "progress" }
