package llm

import (
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
)

// Content is one block of a message's content: a [Text], [Thinking], [Image],
// [ToolCall] or [UnknownContent] value. User messages and tool results hold
// text and images; assistant messages hold text, thinking and tool calls.
type Content interface {
	// ContentType is the block's "type" field as stored: "text",
	// "thinking", "image", "toolCall", or the unknown type's own name.
	ContentType() string
}

// Block type names as they appear in the "type" field.
const (
	ContentText     = "text"
	ContentThinking = "thinking"
	ContentImage    = "image"
	ContentToolCall = "toolCall"
)

// Text is a block of plain text.
type Text struct {
	Text string
	// Signature is an opaque provider signature for the text (pi's
	// textSignature), passed back verbatim on the next request.
	Signature string
}

// Thinking is a block of model reasoning.
type Thinking struct {
	Thinking string
	// Signature is the provider's signature over the reasoning (Anthropic's
	// signature, or the encrypted payload of a redacted block). It must be
	// passed back unchanged for the provider to accept the block again.
	Signature string
	// Redacted marks reasoning the provider returned only in encrypted form
	// (Anthropic's redacted_thinking); Signature then holds that payload.
	Redacted bool
}

// Image is an inline image, base64-encoded.
type Image struct {
	Data     string
	MIMEType string
}

// ToolCall is the model's request to run a tool.
type ToolCall struct {
	ID        string
	Name      string
	Arguments Arguments
	// ThoughtSignature is an opaque provider signature attached to the call
	// (Gemini's thought_signature), kept for the round trip.
	ThoughtSignature string
}

// UnknownContent is a block whose type Prime does not know. It is kept so
// nothing a newer writer stored is lost; providers and estimates ignore it.
type UnknownContent struct {
	Type string
	// Raw is the whole block as read.
	Raw jsontext.Value
}

// ContentType reports "text".
func (Text) ContentType() string { return ContentText }

// ContentType reports "thinking".
func (Thinking) ContentType() string { return ContentThinking }

// ContentType reports "image".
func (Image) ContentType() string { return ContentImage }

// ContentType reports "toolCall".
func (ToolCall) ContentType() string { return ContentToolCall }

// ContentType reports the stored type name.
func (u UnknownContent) ContentType() string { return u.Type }

// blockWire is the union of every block's fields, in pi's key order per type.
type blockWire struct {
	Type              string         `json:"type"`
	Text              string         `json:"text,omitzero"`
	TextSignature     string         `json:"textSignature,omitzero"`
	Thinking          string         `json:"thinking,omitzero"`
	ThinkingSignature string         `json:"thinkingSignature,omitzero"`
	Redacted          bool           `json:"redacted,omitzero"`
	Data              string         `json:"data,omitzero"`
	MIMEType          string         `json:"mimeType,omitzero"`
	ID                string         `json:"id,omitzero"`
	Name              string         `json:"name,omitzero"`
	Arguments         jsontext.Value `json:"arguments,omitzero"`
	ThoughtSignature  string         `json:"thoughtSignature,omitzero"`
}

// MarshalJSONTo writes the block as {"type":"text","text":...}.
func (t Text) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("type", ContentText)
		w.Str("text", t.Text)
		w.OptStr("textSignature", t.Signature)
	})
}

// MarshalJSONTo writes the block as {"type":"thinking","thinking":...}.
func (t Thinking) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("type", ContentThinking)
		w.Str("thinking", t.Thinking)
		w.OptStr("thinkingSignature", t.Signature)
		if t.Redacted {
			w.Bool("redacted", true)
		}
	})
}

// MarshalJSONTo writes the block as {"type":"image","data":...,"mimeType":...}.
func (i Image) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("type", ContentImage)
		w.Str("data", i.Data)
		w.Str("mimeType", i.MIMEType)
	})
}

// MarshalJSONTo writes the block as {"type":"toolCall","id":...,"name":...,"arguments":...}.
func (c ToolCall) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("type", ContentToolCall)
		w.Str("id", c.ID)
		w.Str("name", c.Name)
		w.Raw("arguments", c.Arguments.Value())
		w.OptStr("thoughtSignature", c.ThoughtSignature)
	})
}

// MarshalJSONTo writes the block exactly as it was read.
func (u UnknownContent) MarshalJSONTo(enc *jsontext.Encoder) error {
	if len(u.Raw) == 0 {
		return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) { w.Str("type", u.Type) })
	}
	return enc.WriteValue(u.Raw)
}

// decodeContent reads one content block from dec.
func decodeContent(dec *jsontext.Decoder) (Content, error) {
	if k := dec.PeekKind(); k == '"' {
		// Not a block: a bare string inside a content array. pi never writes
		// this, but reading it as text loses nothing.
		var s string
		if err := json.UnmarshalDecode(dec, &s); err != nil {
			return nil, err
		}
		return Text{Text: s}, nil
	}
	raw, err := dec.ReadValue()
	if err != nil {
		return nil, err
	}
	if raw.Kind() != '{' {
		return nil, fmt.Errorf("content block is %v, want an object", raw.Kind())
	}
	var w blockWire
	if err := json.Unmarshal(raw, &w, jsonwire.ReadOptions); err != nil {
		return nil, err
	}
	switch w.Type {
	case ContentText:
		return Text{Text: w.Text, Signature: w.TextSignature}, nil
	case ContentThinking:
		return Thinking{Thinking: w.Thinking, Signature: w.ThinkingSignature, Redacted: w.Redacted}, nil
	case ContentImage:
		return Image{Data: w.Data, MIMEType: w.MIMEType}, nil
	case ContentToolCall:
		args, err := NewArguments(w.Arguments)
		if err != nil {
			return nil, fmt.Errorf("tool call %q arguments: %w", w.ID, err)
		}
		return ToolCall{ID: w.ID, Name: w.Name, Arguments: args, ThoughtSignature: w.ThoughtSignature}, nil
	default:
		return UnknownContent{Type: w.Type, Raw: raw.Clone()}, nil
	}
}

// DecodeContentList reads a message's "content" field: an array of blocks,
// a plain string (read as one [Text] block; an empty string gives no blocks),
// or null (no blocks).
func DecodeContentList(dec *jsontext.Decoder) ([]Content, error) {
	switch dec.PeekKind() {
	case 'n':
		_, err := dec.ReadToken()
		return nil, err
	case '"':
		var s string
		if err := json.UnmarshalDecode(dec, &s); err != nil {
			return nil, err
		}
		if s == "" {
			return []Content{}, nil
		}
		return []Content{Text{Text: s}}, nil
	case '[':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		blocks := []Content{}
		for dec.PeekKind() != ']' {
			b, err := decodeContent(dec)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, b)
		}
		_, err := dec.ReadToken()
		return blocks, err
	default:
		return nil, fmt.Errorf("content is %v, want an array or a string", dec.PeekKind())
	}
}

// TextOf concatenates the text blocks of content with no separator, which is
// how pi reads the text of a user message or tool result.
func TextOf(content []Content) string {
	switch n := countText(content); n {
	case 0:
		return ""
	case 1:
		for _, c := range content {
			if t, ok := c.(Text); ok {
				return t.Text
			}
		}
	}
	var size int
	for _, c := range content {
		if t, ok := c.(Text); ok {
			size += len(t.Text)
		}
	}
	b := make([]byte, 0, size)
	for _, c := range content {
		if t, ok := c.(Text); ok {
			b = append(b, t.Text...)
		}
	}
	return string(b)
}

func countText(content []Content) int {
	n := 0
	for _, c := range content {
		if _, ok := c.(Text); ok {
			n++
		}
	}
	return n
}
