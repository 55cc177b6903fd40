package session

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"

	"github.com/prime-agent/prime/llm"
)

// Message is one message of the agent conversation: a provider message of
// package llm ([*llm.UserMessage], [*llm.AssistantMessage],
// [*llm.ToolResultMessage]) or one of the agent roles defined here
// ([*SystemMessage], [*BashExecution], [*CustomMessage],
// [*BranchSummaryMessage], [*CompactionSummaryMessage], [*UnknownMessage]).
// [ToLLM] turns a conversation into what a provider is sent.
type Message interface {
	// Role is the message's "role" field, e.g. "user" or "bashExecution".
	Role() string
}

// Agent role names as stored in the "role" field.
const (
	RoleBashExecution     = "bashExecution"
	RoleCustom            = "custom"
	RoleBranchSummary     = "branchSummary"
	RoleCompactionSummary = "compactionSummary"
	// RoleHookMessage is the version-2 name of RoleCustom; migration renames it.
	RoleHookMessage = "hookMessage"
)

// BashExecution is a shell command the user ran themselves (pi's !cmd), with
// its output. The model sees it as a user message unless ExcludeFromContext
// is set (pi's !!cmd).
type BashExecution struct {
	Command string
	Output  string
	// ExitCode is nil when the command did not exit normally.
	ExitCode  *int
	Cancelled bool
	Truncated bool
	// FullOutputPath names the file holding the untruncated output, if any.
	FullOutputPath     string
	ExcludeFromContext bool
	Timestamp          int64
}

// CustomMessage is a message injected by an extension. It reaches the model
// as a user message whether or not it is displayed.
type CustomMessage struct {
	CustomType string
	Content    []llm.Content
	Display    bool
	Details    jsontext.Value
	Timestamp  int64
}

// BranchSummaryMessage is the context form of a branch_summary entry: what
// the model is told about a branch the conversation came back from. It is
// never stored as a message entry.
type BranchSummaryMessage struct {
	Summary   string
	FromID    string
	Timestamp int64
}

// CompactionSummaryMessage is the context form of a compaction entry: the
// summary that stands in for the compacted history. It is never stored as a
// message entry.
type CompactionSummaryMessage struct {
	Summary      string
	TokensBefore int
	Timestamp    int64

	// system is the compaction entry's system message, which the context
	// shows before the summary.
	system *SystemMessage
}

// UnknownMessage is a stored message whose role Prime does not know. It is
// kept verbatim, counts no tokens, and is not sent to the model.
type UnknownMessage struct {
	RoleName string
	Raw      jsontext.Value
}

// Role reports "bashExecution".
func (*BashExecution) Role() string { return RoleBashExecution }

// Role reports "custom".
func (*CustomMessage) Role() string { return RoleCustom }

// Role reports "branchSummary".
func (*BranchSummaryMessage) Role() string { return RoleBranchSummary }

// Role reports "compactionSummary".
func (*CompactionSummaryMessage) Role() string { return RoleCompactionSummary }

// Role reports the stored role name.
func (m *UnknownMessage) Role() string { return m.RoleName }

// MarshalJSONTo writes the message in pi's key order.
func (m *BashExecution) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("role", RoleBashExecution)
		w.Str("command", m.Command)
		w.Str("output", m.Output)
		if m.ExitCode != nil {
			w.Int("exitCode", int64(*m.ExitCode))
		}
		w.Bool("cancelled", m.Cancelled)
		w.Bool("truncated", m.Truncated)
		w.OptStr("fullOutputPath", m.FullOutputPath)
		if m.ExcludeFromContext {
			w.Bool("excludeFromContext", true)
		}
		w.Int("timestamp", m.Timestamp)
	})
}

// MarshalJSONTo writes the message in pi's key order.
func (m *CustomMessage) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("role", RoleCustom)
		w.Str("customType", m.CustomType)
		w.Value("content", m.Content)
		w.Bool("display", m.Display)
		if len(m.Details) > 0 {
			w.Raw("details", m.Details)
		}
		w.Int("timestamp", m.Timestamp)
	})
}

// MarshalJSONTo writes the message in pi's key order.
func (m *BranchSummaryMessage) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("role", RoleBranchSummary)
		w.Str("summary", m.Summary)
		w.Str("fromId", m.FromID)
		w.Int("timestamp", m.Timestamp)
	})
}

// MarshalJSONTo writes the message in pi's key order.
func (m *CompactionSummaryMessage) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("role", RoleCompactionSummary)
		w.Str("summary", m.Summary)
		w.Int("tokensBefore", int64(m.TokensBefore))
		w.Int("timestamp", m.Timestamp)
	})
}

// MarshalJSONTo writes the message exactly as it was read.
func (m *UnknownMessage) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteValue(m.Raw)
}

// UnmarshalJSONFrom reads a bash execution; unknown members are ignored.
func (m *BashExecution) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*m = BashExecution{}
	return jsonwire.ReadObject(dec, func(name string) error {
		var err error
		switch name {
		case "command":
			m.Command, err = jsonwire.ReadString(dec)
		case "output":
			m.Output, err = jsonwire.ReadString(dec)
		case "exitCode":
			m.ExitCode, err = jsonwire.ReadOptInt(dec)
		case "cancelled":
			m.Cancelled, err = jsonwire.ReadBool(dec)
		case "truncated":
			m.Truncated, err = jsonwire.ReadBool(dec)
		case "fullOutputPath":
			m.FullOutputPath, err = jsonwire.ReadString(dec)
		case "excludeFromContext":
			m.ExcludeFromContext, err = jsonwire.ReadBool(dec)
		case "timestamp":
			m.Timestamp, err = jsonwire.ReadMillis(dec)
		default:
			err = dec.SkipValue()
		}
		return err
	})
}

// UnmarshalJSONFrom reads a custom message; unknown members are ignored.
func (m *CustomMessage) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*m = CustomMessage{}
	return jsonwire.ReadObject(dec, func(name string) error {
		var err error
		switch name {
		case "customType":
			m.CustomType, err = jsonwire.ReadString(dec)
		case "content":
			m.Content, err = llm.DecodeContentList(dec)
		case "display":
			m.Display, err = jsonwire.ReadBool(dec)
		case "details":
			m.Details, err = jsonwire.ReadOptValue(dec)
		case "timestamp":
			m.Timestamp, err = jsonwire.ReadMillis(dec)
		default:
			err = dec.SkipValue()
		}
		return err
	})
}

// UnmarshalJSONFrom reads a branch summary message.
func (m *BranchSummaryMessage) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*m = BranchSummaryMessage{}
	return jsonwire.ReadObject(dec, func(name string) error {
		var err error
		switch name {
		case "summary":
			m.Summary, err = jsonwire.ReadString(dec)
		case "fromId":
			m.FromID, err = jsonwire.ReadString(dec)
		case "timestamp":
			m.Timestamp, err = jsonwire.ReadMillis(dec)
		default:
			err = dec.SkipValue()
		}
		return err
	})
}

// UnmarshalJSONFrom reads a compaction summary message.
func (m *CompactionSummaryMessage) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*m = CompactionSummaryMessage{}
	return jsonwire.ReadObject(dec, func(name string) error {
		var err error
		switch name {
		case "summary":
			m.Summary, err = jsonwire.ReadString(dec)
		case "tokensBefore":
			var n *int
			n, err = jsonwire.ReadOptInt(dec)
			if n != nil {
				m.TokensBefore = *n
			}
		case "timestamp":
			m.Timestamp, err = jsonwire.ReadMillis(dec)
		default:
			err = dec.SkipValue()
		}
		return err
	})
}

// DecodeMessage decodes a stored message by its "role". The version-2 role
// hookMessage is read as custom. An unknown role gives an [*UnknownMessage],
// not an error, so a newer writer's messages do not make a file unreadable.
func DecodeMessage(raw []byte) (Message, error) {
	if m, ok := decodeFast(raw); ok {
		return m, nil
	}
	return decodeMessage(raw)
}

// decodeStored is DecodeMessage for bytes that are never modified (an
// entry's): the message may share their memory (see [sharedString]).
func decodeStored(raw []byte) (Message, error) {
	if m, ok := decodeFastShared(raw); ok {
		return m, nil
	}
	return decodeMessage(raw)
}

// decodeMessage is DecodeMessage with the general decoder only.
func decodeMessage(raw []byte) (Message, error) {
	role, ok := fastRole(raw)
	if !ok {
		var err error
		if role, err = llm.PeekRole(raw); err != nil {
			return nil, err
		}
	}
	var m Message
	switch role {
	case llm.RoleUser:
		m = new(llm.UserMessage)
	case llm.RoleAssistant:
		m = new(llm.AssistantMessage)
	case llm.RoleToolResult:
		m = new(llm.ToolResultMessage)
	case RoleBashExecution:
		m = new(BashExecution)
	case RoleCustom, RoleHookMessage:
		m = new(CustomMessage)
	case RoleBranchSummary:
		m = new(BranchSummaryMessage)
	case RoleCompactionSummary:
		m = new(CompactionSummaryMessage)
	case RoleSystem:
		m = new(SystemMessage)
	default:
		return &UnknownMessage{RoleName: role, Raw: jsontext.Value(raw).Clone()}, nil
	}
	if err := json.Unmarshal(raw, m, jsonwire.ReadOptions); err != nil {
		return nil, fmt.Errorf("%s message: %w", role, err)
	}
	return m, nil
}

// fastRole reads the role of a message written by pi or Prime, which put it
// first: {"role":"user",... ok is false for any other shape, and the caller
// then reads the role with the tokenizer.
func fastRole(raw []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(raw, []byte(`{"role":"`))
	if !ok {
		return "", false
	}
	role, rest, ok := plainString(rest)
	if !ok || len(rest) == 0 || rest[0] != ',' && rest[0] != '}' {
		return "", false
	}
	switch string(role) {
	case llm.RoleUser:
		return llm.RoleUser, true
	case llm.RoleAssistant:
		return llm.RoleAssistant, true
	case llm.RoleToolResult:
		return llm.RoleToolResult, true
	}
	return string(role), true
}

// Prime's wording around summaries in the model's context. The layout
// follows pi (a sentence, then the summary inside <summary> tags); the words
// are Prime's.
const (
	compactionSummaryPrefix = "Earlier parts of this conversation were condensed to fit the context window. " +
		"This summary stands in for them:\n\n<summary>\n"
	compactionSummarySuffix = "\n</summary>"
	branchSummaryPrefix     = "Before returning to this point, the conversation followed another branch. " +
		"This summary records what happened there:\n\n<summary>\n"
	branchSummarySuffix = "\n</summary>"
)

// ToLLM converts an agent conversation to the messages a provider is sent:
// provider roles pass through, bash executions become user text (or vanish
// when excluded from context), custom messages become user messages, and
// summaries become user text in Prime's summary wrappers. System messages
// are left out (a request carries the replayed prompt and tools instead:
// [Context.System], [Context.Tools]), and so are unknown roles. Timestamps
// are kept.
func ToLLM(messages []Message) []llm.Message {
	out := make([]llm.Message, 0, len(messages))
	for _, m := range messages {
		if lm, ok := ToLLMMessage(m); ok {
			out = append(out, lm)
		}
	}
	return out
}

// ToLLMMessage converts one agent message as [ToLLM] does; ok is false when
// the message does not reach the model.
func ToLLMMessage(m Message) (msg llm.Message, ok bool) {
	switch m := m.(type) {
	case *llm.UserMessage, *llm.AssistantMessage, *llm.ToolResultMessage:
		return m.(llm.Message), true
	case *BashExecution:
		if m.ExcludeFromContext {
			return nil, false
		}
		return userText(BashExecutionText(m), m.Timestamp), true
	case *CustomMessage:
		return &llm.UserMessage{Content: m.Content, Timestamp: m.Timestamp}, true
	case *BranchSummaryMessage:
		return userText(branchSummaryPrefix+m.Summary+branchSummarySuffix, m.Timestamp), true
	case *CompactionSummaryMessage:
		return userText(compactionSummaryPrefix+m.Summary+compactionSummarySuffix, m.Timestamp), true
	default:
		return nil, false
	}
}

func userText(text string, ts int64) *llm.UserMessage {
	return &llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}, Timestamp: ts}
}

// BashExecutionText is the text the model sees for a user's shell command:
// the command, its output in a fence (or "(no output)"), and how it ended.
func BashExecutionText(m *BashExecution) string {
	var b strings.Builder
	b.WriteString("Ran `")
	b.WriteString(m.Command)
	b.WriteString("`\n")
	if m.Output != "" {
		b.WriteString("```\n")
		b.WriteString(m.Output)
		b.WriteString("\n```")
	} else {
		b.WriteString("(no output)")
	}
	switch {
	case m.Cancelled:
		b.WriteString("\n\n(command cancelled)")
	case m.ExitCode != nil && *m.ExitCode != 0:
		b.WriteString("\n\nCommand exited with code ")
		b.WriteString(strconv.Itoa(*m.ExitCode))
	}
	if m.Truncated && m.FullOutputPath != "" {
		b.WriteString("\n\n[Output truncated. Full output: ")
		b.WriteString(m.FullOutputPath)
		b.WriteString("]")
	}
	return b.String()
}

// MessageTimestamp returns a message's timestamp in Unix milliseconds, or 0
// when it has none.
func MessageTimestamp(m Message) int64 {
	switch m := m.(type) {
	case *llm.UserMessage:
		return m.Timestamp
	case *llm.AssistantMessage:
		return m.Timestamp
	case *llm.ToolResultMessage:
		return m.Timestamp
	case *BashExecution:
		return m.Timestamp
	case *CustomMessage:
		return m.Timestamp
	case *BranchSummaryMessage:
		return m.Timestamp
	case *CompactionSummaryMessage:
		return m.Timestamp
	case *SystemMessage:
		return m.Timestamp
	}
	return 0
}
