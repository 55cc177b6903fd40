package agent

import (
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm/registry"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/tool"
)

// The types below are those the agent's methods, events and read models
// hand to front ends, named here so that a front end depends on the agent
// alone (see internal/layering): what they are is decided where they are
// made.
type (
	// Pin is a text kept in the system prompt across compactions.
	Pin = compaction.Pin
	// ContextKind is one kind of what fills a context (/context's rows).
	ContextKind = compaction.ContextKind
	// ContextHistoryPoints is the context measured along the path, reply by
	// reply, with the compactions' drops (see [Agent.ContextHistory]).
	ContextHistoryPoints = compaction.History
	// NotCompactableError says why there is nothing to compact.
	NotCompactableError = compaction.NotCompactableError
	// SessionInfo summarizes a session file for a listing.
	SessionInfo = session.Info
	// Message is a message of the session: an llm message, or one of the
	// session's own (a user's shell command, an extension's message, a
	// summary, the system prompt).
	Message = session.Message
	// BashExecution is a shell command the user ran with !.
	BashExecution = session.BashExecution
	// ModelEntry is a model the registry knows, with where its key is.
	ModelEntry = registry.Entry
	// KeyProvider is a provider /login can store a key for.
	KeyProvider = registry.KeyProvider
	// ToolResult is what a tool call returned.
	ToolResult = tool.Result
	// ToolTruncation says how a tool's output was cut.
	ToolTruncation = tool.Truncation
)

// KeyInAuthFile is a KeyProvider's Key when its key is stored in the
// agent directory's auth.json (the one /logout can remove).
const KeyInAuthFile = registry.SourceAuthJSON

// The kinds of what fills a context, in /context's order.
const (
	KindSystem      = compaction.KindSystem
	KindTools       = compaction.KindTools
	KindSummaries   = compaction.KindSummaries
	KindUser        = compaction.KindUser
	KindAssistant   = compaction.KindAssistant
	KindThinking    = compaction.KindThinking
	KindToolCalls   = compaction.KindToolCalls
	KindToolResults = compaction.KindToolResults
	KindImages      = compaction.KindImages
	KindOther       = compaction.KindOther
)

// ContextKindName is a kind's name in /context's rows ("tool results").
func ContextKindName(k ContextKind) string { return compaction.KindName(k) }

// ContextKindLetter is a kind's letter in /context's bar.
func ContextKindLetter(k ContextKind) byte { return compaction.KindLetter(k) }

// ErrNoKey is returned when a model's provider has no key configured.
var ErrNoKey = registry.ErrNoKey
