package llm

import (
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
)

// Message is one message of a conversation. Package llm defines the three a
// provider understands, [*UserMessage], [*AssistantMessage] and
// [*ToolResultMessage]; packages above it (the session's agent roles) add
// their own types that satisfy the same interface.
type Message interface {
	// Role is the message's "role" field as stored.
	Role() string
}

// Role names as stored in the "role" field.
const (
	RoleUser       = "user"
	RoleAssistant  = "assistant"
	RoleToolResult = "toolResult"
)

// StopReason says why an assistant turn ended.
type StopReason string

// The stop reasons pi stores.
const (
	StopReasonStop    StopReason = "stop"    // the model finished its answer
	StopReasonLength  StopReason = "length"  // the output limit cut it off
	StopReasonToolUse StopReason = "toolUse" // the model wants tool results
	StopReasonError   StopReason = "error"   // the request failed; see ErrorMessage
	StopReasonAborted StopReason = "aborted" // the request was cancelled
)

// UserMessage is a message from the user: text and images.
type UserMessage struct {
	Content []Content
	// Timestamp is when the message was sent, in Unix milliseconds.
	Timestamp int64
}

// AssistantMessage is one complete model turn, exactly as a session stores it.
type AssistantMessage struct {
	Content  []Content
	API      string // wire API, e.g. "anthropic-messages"
	Provider string // e.g. "anthropic"
	Model    string // model id, e.g. "claude-sonnet-4-5"
	// ResponseID is the provider's id for the response, when it gives one.
	ResponseID   string
	Usage        Usage
	StopReason   StopReason
	ErrorMessage string
	// Timestamp is when the turn started, in Unix milliseconds.
	Timestamp int64
	// DurationMs is how long the turn took, in milliseconds; 0 when not
	// measured.
	DurationMs int64
	// ThinkingLevel is the reasoning level the turn was requested with
	// (pi 1.6 records it; "off" when none was asked for), empty when not
	// recorded.
	ThinkingLevel ThinkingLevel
}

// ToolResultMessage carries the result of one tool call back to the model.
type ToolResultMessage struct {
	ToolCallID string
	ToolName   string
	Content    []Content
	// Details is tool-specific data for user interfaces (a diff, say);
	// it is never sent to the model. Nil when absent.
	Details jsontext.Value
	IsError bool
	// DurationMs is how long the tool ran, in milliseconds; 0 when it
	// never ran (an unknown tool, invalid arguments, an abort).
	DurationMs int64
	// Timestamp is when the result was produced, in Unix milliseconds.
	Timestamp int64
	// NestedCalls is the record of the tools a tool called while it ran
	// (pi 1.6's code-mode scripts), as pi stores it: {"calls": [{"name",
	// "arguments", ...}], "complete": bool}. It is never sent to the model;
	// compactions take file operations from it. Nil when absent.
	NestedCalls jsontext.Value
}

// Role reports "user".
func (*UserMessage) Role() string { return RoleUser }

// Role reports "assistant".
func (*AssistantMessage) Role() string { return RoleAssistant }

// Role reports "toolResult".
func (*ToolResultMessage) Role() string { return RoleToolResult }

// ToolCalls returns the tool-call blocks of the message in order.
func (m *AssistantMessage) ToolCalls() []ToolCall {
	var calls []ToolCall
	for _, c := range m.Content {
		if tc, ok := c.(ToolCall); ok {
			calls = append(calls, tc)
		}
	}
	return calls
}

// Text returns the message's text blocks joined with newlines, the way pi
// reads a summary out of a model's answer (thinking is left out).
func (m *AssistantMessage) Text() string {
	var out []byte
	first := true
	for _, c := range m.Content {
		if t, ok := c.(Text); ok {
			if !first {
				out = append(out, '\n')
			}
			out = append(out, t.Text...)
			first = false
		}
	}
	return string(out)
}

// MarshalJSONTo writes {"role":"user","content":[...],"timestamp":...}.
func (m *UserMessage) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("role", RoleUser)
		w.Value("content", m.Content)
		w.Int("timestamp", m.Timestamp)
	})
}

// MarshalJSONTo writes the message in pi's key order.
func (m *AssistantMessage) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("role", RoleAssistant)
		w.Value("content", m.Content)
		w.Str("api", m.API)
		w.Str("provider", m.Provider)
		w.Str("model", m.Model)
		w.OptStr("responseId", m.ResponseID)
		w.Value("usage", &m.Usage)
		w.Str("stopReason", string(m.StopReason))
		w.Int("timestamp", m.Timestamp)
		w.OptStr("errorMessage", m.ErrorMessage)
		if m.DurationMs > 0 {
			w.Int("durationMs", m.DurationMs)
		}
		w.OptStr("thinkingLevel", string(m.ThinkingLevel))
	})
}

// MarshalJSONTo writes the message in pi's key order.
func (m *ToolResultMessage) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("role", RoleToolResult)
		w.Str("toolCallId", m.ToolCallID)
		w.Str("toolName", m.ToolName)
		w.Value("content", m.Content)
		if len(m.Details) > 0 {
			w.Raw("details", m.Details)
		}
		w.Bool("isError", m.IsError)
		if m.DurationMs > 0 {
			w.Int("durationMs", m.DurationMs)
		}
		w.Int("timestamp", m.Timestamp)
		if len(m.NestedCalls) > 0 {
			w.Raw("nestedCalls", m.NestedCalls)
		}
	})
}

// UnmarshalJSONFrom reads a user message; unknown members are ignored.
func (m *UserMessage) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*m = UserMessage{}
	return jsonwire.ReadObject(dec, func(name string) error {
		var err error
		switch name {
		case "content":
			m.Content, err = DecodeContentList(dec)
		case "timestamp":
			m.Timestamp, err = jsonwire.ReadMillis(dec)
		default:
			err = dec.SkipValue()
		}
		return err
	})
}

// UnmarshalJSONFrom reads an assistant message; unknown members are ignored.
func (m *AssistantMessage) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*m = AssistantMessage{}
	return jsonwire.ReadObject(dec, func(name string) error {
		var err error
		switch name {
		case "content":
			m.Content, err = DecodeContentList(dec)
		case "api":
			m.API, err = jsonwire.ReadString(dec)
		case "provider":
			m.Provider, err = jsonwire.ReadString(dec)
		case "model":
			m.Model, err = jsonwire.ReadString(dec)
		case "responseId":
			m.ResponseID, err = jsonwire.ReadString(dec)
		case "usage":
			if dec.PeekKind() == 'n' {
				_, err = dec.ReadToken()
			} else {
				err = json.UnmarshalDecode(dec, &m.Usage)
			}
		case "stopReason":
			var s string
			s, err = jsonwire.ReadString(dec)
			m.StopReason = StopReason(s)
		case "errorMessage":
			m.ErrorMessage, err = jsonwire.ReadString(dec)
		case "timestamp":
			m.Timestamp, err = jsonwire.ReadMillis(dec)
		case "durationMs":
			m.DurationMs, err = jsonwire.ReadMillis(dec)
		case "thinkingLevel":
			var s string
			s, err = jsonwire.ReadString(dec)
			m.ThinkingLevel = ThinkingLevel(s)
		default:
			err = dec.SkipValue()
		}
		return err
	})
}

// UnmarshalJSONFrom reads a tool result; unknown members are ignored.
func (m *ToolResultMessage) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*m = ToolResultMessage{}
	return jsonwire.ReadObject(dec, func(name string) error {
		var err error
		switch name {
		case "toolCallId":
			m.ToolCallID, err = jsonwire.ReadString(dec)
		case "toolName":
			m.ToolName, err = jsonwire.ReadString(dec)
		case "content":
			m.Content, err = DecodeContentList(dec)
		case "details":
			var v jsontext.Value
			v, err = dec.ReadValue()
			if err == nil && v.Kind() != 'n' {
				m.Details = v.Clone()
			}
		case "isError":
			m.IsError, err = jsonwire.ReadBool(dec)
		case "durationMs":
			m.DurationMs, err = jsonwire.ReadMillis(dec)
		case "timestamp":
			m.Timestamp, err = jsonwire.ReadMillis(dec)
		case "nestedCalls":
			var v jsontext.Value
			v, err = dec.ReadValue()
			if err == nil && v.Kind() != 'n' {
				m.NestedCalls = v.Clone()
			}
		default:
			err = dec.SkipValue()
		}
		return err
	})
}

// DecodeMessage decodes one provider message from JSON by its "role".
// Roles other than user, assistant and toolResult are an error here; the
// session package decodes the agent roles.
func DecodeMessage(raw []byte) (Message, error) {
	role, err := PeekRole(raw)
	if err != nil {
		return nil, err
	}
	var m Message
	switch role {
	case RoleUser:
		m = new(UserMessage)
	case RoleAssistant:
		m = new(AssistantMessage)
	case RoleToolResult:
		m = new(ToolResultMessage)
	default:
		return nil, fmt.Errorf("unknown message role %q", role)
	}
	if err := json.Unmarshal(raw, m, jsonwire.ReadOptions); err != nil {
		return nil, fmt.Errorf("%s message: %w", role, err)
	}
	return m, nil
}

// PeekRole returns the "role" member of a JSON message object without
// decoding the rest of it.
func PeekRole(raw []byte) (string, error) {
	dec := jsonwire.NewDecoder(raw)
	var role string
	found := false
	err := jsonwire.ReadObject(dec, func(name string) error {
		if name == "role" && !found {
			found = true
			var err error
			role, err = jsonwire.ReadString(dec)
			return err
		}
		return dec.SkipValue()
	})
	if err != nil {
		return "", fmt.Errorf("not a message: %w", err)
	}
	if !found {
		return "", errors.New("message has no role")
	}
	return role, nil
}
