package session

import (
	"bytes"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
)

// Entry types as stored in the "type" field.
const (
	TypeSession             = "session" // the header line, not an entry of the tree
	TypeMessage             = "message"
	TypeThinkingLevelChange = "thinking_level_change"
	TypeModelChange         = "model_change"
	TypeCompaction          = "compaction"
	TypeBranchSummary       = "branch_summary"
	TypeCustom              = "custom"
	TypeCustomMessage       = "custom_message"
	TypeLabel               = "label"
	TypeSessionInfo         = "session_info"
	TypeContextEdit         = "context_edit"
)

// Entry is one line of a session file after the header: a node of the
// session tree. The four common fields are decoded when the file is read;
// the rest of the line stays in the file and is read back and decoded on
// demand with [Entry.Payload] or [Entry.Message] (checked against the
// checksum taken when it was indexed), so opening a large session costs
// little more than indexing it, holding a session costs no memory for its
// lines, and writing an entry back reproduces its bytes.
//
// An Entry is immutable once created and safe for concurrent use. The
// message decoded from it is remembered while something still uses it:
// building a context and then preparing a compaction of the same path
// decodes each message once. Such messages are shared between callers and
// must not be modified.
type Entry struct {
	Type string
	ID   string
	// ParentID is the id of the entry this one follows, or "" for a root.
	ParentID string
	// Timestamp is the ISO-8601 time the entry was appended, as stored.
	Timestamp string
	// Line is the 1-based line number in the file the entry was read from,
	// or 0 for an entry that has not been read from a file.
	Line int

	// src holds the entry's line: n bytes at off, whose CRC-32C is crc.
	src *source
	off int64
	n   uint32
	crc uint32
	// idx is the entry's index in its session, or -1 (NewEntry).
	idx int32
	// head is the offset in the line just after the timestamp when the
	// line starts with the four common members in pi's order, else 0.
	head uint32
	// role is a message entry's role code when the index read it.
	role uint8
	// decoded refers weakly to the message last decoded from the entry
	// (see [Entry.Message]).
	decoded atomic.Pointer[messageRef]
	// kept caches, for a compaction entry, where its first kept entry
	// lies on its path (nil: not computed). An entry's ancestors never
	// change, so neither does this.
	kept atomic.Pointer[keptAt]
}

// NewEntry makes an entry from one JSON line (without its newline),
// decoding the common fields. The line is copied. It fails if the line is
// not valid JSON or not an object with a string "type".
func NewEntry(line []byte) (*Entry, error) {
	return entryOfLine(bytes.Clone(line))
}

// entryOfLine makes an entry of its own from line, which it keeps.
func entryOfLine(line []byte) (*Entry, error) {
	x, err := indexLine(line, 0, 0)
	if err != nil {
		return nil, err
	}
	s := &Session{recs: []rec{x.r}, src: memorySource(line)}
	if x.odd != nil {
		s.odd = map[int32]*oddRec{0: x.odd}
	}
	e := new(Entry)
	s.fill(new(entryBlock), e, 0)
	e.idx = -1
	return e, nil
}

// span locates the entry's line.
func (e *Entry) span() span { return span{off: e.off, n: e.n, crc: e.crc, e: e} }

// line reads the entry's line back.
func (e *Entry) line() ([]byte, error) {
	if e.src == nil {
		return nil, e.errorf("entry has no line")
	}
	b, err := e.src.read(e.span())
	if err != nil {
		return nil, e.errorf("%w", err)
	}
	return b, nil
}

// readID reads an id member: a string, or null (read as ""). Numbers are
// accepted in their decimal form, since hand-written files use them.
func readID(dec *jsontext.Decoder) (string, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return "", err
	}
	switch tok.Kind() {
	case '"':
		return tok.String(), nil
	case 'n':
		return "", nil
	case '0':
		return tok.String(), nil
	default:
		return "", fmt.Errorf("got %v, want a string", tok.Kind())
	}
}

// readTimestamp reads an entry timestamp: an ISO string, or a number of
// Unix milliseconds, which is converted to ISO form.
func readTimestamp(dec *jsontext.Decoder) (string, error) {
	if dec.PeekKind() == '0' {
		ms, err := jsonwire.ReadMillis(dec)
		if err != nil {
			return "", err
		}
		return FormatTime(time.UnixMilli(ms)), nil
	}
	return jsonwire.ReadString(dec)
}

// Raw returns the entry's JSON line as stored, without the newline, read
// back from the file (see [ErrFileChanged]). It must not be modified.
func (e *Entry) Raw() ([]byte, error) { return e.line() }

// Millis returns the entry's timestamp in Unix milliseconds, or 0 when it
// does not parse.
func (e *Entry) Millis() int64 { return jsonwire.ISOMillis(e.Timestamp) }

// FormatTime formats t as entries store it: ISO-8601 UTC with milliseconds,
// e.g. 2025-12-03T14:00:00.000Z (JavaScript's toISOString).
func FormatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// Payload is the type-specific part of an entry. Each entry type has one:
// [*MessageEntry], [*CompactionEntry], and so on; [*UnknownEntry] stands for
// types Prime does not know.
type Payload interface {
	// EntryType is the "type" the payload is stored under.
	EntryType() string
}

// MessageEntry is a stored conversation message.
type MessageEntry struct {
	Message Message
}

// ThinkingLevelChangeEntry records a change of the reasoning level.
type ThinkingLevelChangeEntry struct {
	ThinkingLevel llm.ThinkingLevel `json:"thinkingLevel"`
}

// ModelChangeEntry records a switch to another model.
type ModelChangeEntry struct {
	Provider string `json:"provider"`
	ModelID  string `json:"modelId"`
}

// CompactionEntry replaces the history before it with a summary. The model
// sees the summary, then the entries from FirstKeptEntryID up to the
// compaction, then everything after it.
type CompactionEntry struct {
	Summary          string `json:"summary"`
	FirstKeptEntryID string `json:"firstKeptEntryId"`
	TokensBefore     int    `json:"tokensBefore"`
	// Details is implementation data: for Prime's and pi's own summaries
	// {"readFiles": [...], "modifiedFiles": [...]}; a hook's own data
	// otherwise. Nil when absent.
	Details jsontext.Value `json:"details,omitzero"`
	// FromHook reports that an extension, not the built-in summarizer,
	// produced the summary.
	FromHook bool `json:"fromHook"`
	// CustomInstructions are the user's /compact instructions, if any.
	CustomInstructions string `json:"customInstructions,omitzero"`
	// Usage is what the summary requests cost, when a model made them.
	Usage *llm.Usage `json:"usage,omitzero"`
	// SystemMessage is the system state in force when the compaction was
	// made ([ReplaySystem] of the context at its parent; pi 1.6's
	// appendCompaction), nil when there was none. The model's context
	// starts with it, since the system messages before the compaction are
	// no longer part of the context. [Session.Append] and [Session.AppendAt]
	// set its timestamp to the entry's, as pi does.
	SystemMessage *SystemMessage `json:"systemMessage,omitzero"`
}

// ContextEditEntry changes what the model sees of an earlier entry of the
// same branch, from the edit on: with a Replacement, the entry's message
// shows that content instead of its own (for user, assistant, tool-result
// and custom messages; other messages are shown as they are); without one,
// the entry is hidden. pi 1.6 hides a failed attempt this way (a reply
// that was retried, with its tool results). The latest edit of an entry
// wins.
type ContextEditEntry struct {
	TargetID string
	// Replacement is nil when the target is hidden (JSON null).
	Replacement *ContextReplacement
}

// ContextReplacement is the content that replaces a message's.
//
// pi accepts a string as the content. For assistant and tool-result targets
// pi stores it as one text block; for user and custom targets it keeps the
// string, which the model reads and pi estimates exactly as that text
// block. Prime reads a string as one text block (none when it is empty) in
// either case; the entry keeps its bytes.
type ContextReplacement struct {
	Content []llm.Content
}

// BranchSummaryEntry carries a summary of a branch the user navigated away
// from, placed where the conversation continues.
type BranchSummaryEntry struct {
	// FromID is the entry the user navigated away from (the old leaf).
	FromID  string         `json:"fromId"`
	Summary string         `json:"summary"`
	Details jsontext.Value `json:"details,omitzero"`
	// FromHook reports that an extension produced the summary.
	FromHook bool       `json:"fromHook"`
	Usage    *llm.Usage `json:"usage,omitzero"`
}

// CustomEntry is extension state. It never reaches the model.
type CustomEntry struct {
	CustomType string         `json:"customType"`
	Data       jsontext.Value `json:"data,omitzero"`
}

// CustomMessageEntry is an extension's message. The model sees it as a user
// message even when it is not displayed.
type CustomMessageEntry struct {
	CustomType string
	Content    []llm.Content
	Display    bool
	Details    jsontext.Value
}

// LabelEntry sets (or, with an empty Label, clears) a bookmark on an entry.
type LabelEntry struct {
	TargetID string `json:"targetId"`
	Label    string `json:"label,omitzero"`
}

// SessionInfoEntry names the session.
type SessionInfoEntry struct {
	Name string `json:"name,omitzero"`
}

// UnknownEntry is the payload of an entry type Prime does not know; the
// entry's raw line keeps everything it holds.
type UnknownEntry struct {
	Type string
}

// EntryType reports "message".
func (*MessageEntry) EntryType() string { return TypeMessage }

// EntryType reports "thinking_level_change".
func (*ThinkingLevelChangeEntry) EntryType() string { return TypeThinkingLevelChange }

// EntryType reports "model_change".
func (*ModelChangeEntry) EntryType() string { return TypeModelChange }

// EntryType reports "compaction".
func (*CompactionEntry) EntryType() string { return TypeCompaction }

// EntryType reports "branch_summary".
func (*BranchSummaryEntry) EntryType() string { return TypeBranchSummary }

// EntryType reports "custom".
func (*CustomEntry) EntryType() string { return TypeCustom }

// EntryType reports "custom_message".
func (*CustomMessageEntry) EntryType() string { return TypeCustomMessage }

// EntryType reports "label".
func (*LabelEntry) EntryType() string { return TypeLabel }

// EntryType reports "session_info".
func (*SessionInfoEntry) EntryType() string { return TypeSessionInfo }

// EntryType reports "context_edit".
func (*ContextEditEntry) EntryType() string { return TypeContextEdit }

// EntryType reports the stored type.
func (u *UnknownEntry) EntryType() string { return u.Type }

// MarshalJSONTo writes {"message": ...}.
func (p *MessageEntry) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Value("message", p.Message)
	})
}

// MarshalJSONTo writes the payload in pi's key order.
func (p *CustomMessageEntry) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("customType", p.CustomType)
		w.Value("content", p.Content)
		w.Bool("display", p.Display)
		w.OptRaw("details", p.Details)
	})
}

// UnmarshalJSONFrom reads a custom_message payload.
func (p *CustomMessageEntry) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*p = CustomMessageEntry{}
	return jsonwire.ReadObject(dec, func(name string) error {
		var err error
		switch name {
		case "customType":
			p.CustomType, err = jsonwire.ReadString(dec)
		case "content":
			p.Content, err = llm.DecodeContentList(dec)
		case "display":
			p.Display, err = jsonwire.ReadBool(dec)
		case "details":
			p.Details, err = jsonwire.ReadOptValue(dec)
		default:
			err = dec.SkipValue()
		}
		return err
	})
}

// MarshalJSONTo writes the payload in pi's key order, the replacement
// null when there is none.
func (p *ContextEditEntry) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("targetId", p.TargetID)
		if p.Replacement == nil {
			w.Null("replacement")
			return
		}
		content := p.Replacement.Content
		if content == nil {
			content = []llm.Content{}
		}
		w.Value("replacement", struct {
			Content []llm.Content `json:"content"`
		}{content})
	})
}

// UnmarshalJSONFrom reads a context_edit payload. The replacement must be
// null or an object with a content (a string or an array of blocks): pi
// cannot build a context from anything else either.
func (p *ContextEditEntry) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*p = ContextEditEntry{}
	seen := false
	err := jsonwire.ReadObject(dec, func(name string) error {
		switch name {
		case "targetId":
			var err error
			p.TargetID, err = readID(dec)
			return err
		case "replacement":
			seen = true
			if dec.PeekKind() == 'n' {
				p.Replacement = nil
				return dec.SkipValue()
			}
			r := new(ContextReplacement)
			hasContent := false
			err := jsonwire.ReadObject(dec, func(name string) error {
				if name != "content" {
					return dec.SkipValue()
				}
				if k := dec.PeekKind(); k != '"' && k != '[' {
					return fmt.Errorf("got %v, want a string or an array", k)
				}
				hasContent = true
				var err error
				r.Content, err = llm.DecodeContentList(dec)
				return err
			})
			if err == nil && !hasContent {
				err = errors.New("no content")
			}
			p.Replacement = r
			return err
		}
		return dec.SkipValue()
	})
	if err == nil && !seen {
		err = errors.New("no replacement member")
	}
	return err
}

// Payload decodes the entry's type-specific fields.
func (e *Entry) Payload() (Payload, error) {
	if e.Type == TypeMessage {
		m, err := e.Message()
		if err != nil {
			return nil, err
		}
		return &MessageEntry{Message: m}, nil
	}
	if knownPayload(e.Type) == nil {
		return &UnknownEntry{Type: e.Type}, nil
	}
	line, err := e.line()
	if err != nil {
		return nil, err
	}
	p, err := tolerant(e, line, func(l []byte) (Payload, error) { return decodePayload(e.Type, l) })
	if err != nil {
		return nil, err
	}
	return p, nil
}

// knownPayload returns a new payload of a type Prime knows (message
// excepted), or nil.
func knownPayload(typ string) Payload {
	switch typ {
	case TypeThinkingLevelChange:
		return new(ThinkingLevelChangeEntry)
	case TypeModelChange:
		return new(ModelChangeEntry)
	case TypeCompaction:
		return new(CompactionEntry)
	case TypeBranchSummary:
		return new(BranchSummaryEntry)
	case TypeCustom:
		return new(CustomEntry)
	case TypeCustomMessage:
		return new(CustomMessageEntry)
	case TypeLabel:
		return new(LabelEntry)
	case TypeSessionInfo:
		return new(SessionInfoEntry)
	case TypeContextEdit:
		return new(ContextEditEntry)
	}
	return nil
}

// decodePayload decodes the payload of a line of a type Prime knows, other
// than message.
func decodePayload(typ string, line []byte) (Payload, error) {
	p := knownPayload(typ)
	if p == nil {
		return &UnknownEntry{Type: typ}, nil
	}
	if err := json.Unmarshal(line, p, jsonwire.ReadOptions); err != nil {
		return nil, fmt.Errorf("%s entry: %w", typ, err)
	}
	return p, nil
}

// MessageRole returns the role of a "message" entry's message without
// decoding the rest of it.
func (e *Entry) MessageRole() (string, error) {
	if e.Type != TypeMessage {
		return "", e.errorf("entry is a %s, not a message", e.Type)
	}
	if e.role != roleUnknown {
		return roleNames[e.role], nil
	}
	line, err := e.line()
	if err != nil {
		return "", err
	}
	raw := messageBytes(line, e.head)
	if raw == nil {
		return "", e.errorf("message entry has no message")
	}
	role, err := DecodeMessageRole(raw)
	if err != nil {
		return "", e.errorf("%w", err)
	}
	return role, nil
}

// Message decodes the message of a "message" entry. While the message is
// in use, later calls return the same one: it must not be modified.
func (e *Entry) Message() (Message, error) {
	if e.Type != TypeMessage {
		return nil, e.errorf("entry is a %s, not a message", e.Type)
	}
	if m := e.remembered(); m != nil {
		return m, nil
	}
	line, err := e.line()
	if err != nil {
		return nil, err
	}
	m, err := e.decodeMessage(line)
	if err != nil {
		return nil, err
	}
	e.remember(m)
	return m, nil
}

// decodeMessage decodes the message of the entry's line; the message may
// share the line's memory, which must never be modified.
func (e *Entry) decodeMessage(line []byte) (Message, error) {
	return tolerant(e, line, e.decodeMessageStrict)
}

// decodeMessageStrict is decodeMessage without coercion.
func (e *Entry) decodeMessageStrict(line []byte) (Message, error) {
	if raw, ok := lastMember(line, e.head, `,"message":`); ok {
		// The message is normally the last member. If it is not, the
		// candidate is not one JSON value and decoding fails; then the
		// line is read member by member below.
		if m, err := decodeStored(raw); err == nil {
			return m, nil
		}
	}
	raw, err := memberOf(line, "message")
	if err != nil {
		return nil, fmt.Errorf("message entry: %w", err)
	}
	m, err := decodeStored(raw)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// memberOf returns the raw value of a top-level member of a line.
func memberOf(line []byte, name string) (jsontext.Value, error) {
	dec := jsonwire.NewDecoder(line)
	var v jsontext.Value
	err := jsonwire.ReadObject(dec, func(n string) error {
		if n == name && v == nil {
			var err error
			v, err = dec.ReadValue()
			// ReadValue's bytes are only valid until the next read; the
			// rest of the object is still to be read.
			v = v.Clone()
			return err
		}
		return dec.SkipValue()
	})
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, fmt.Errorf("no %q member", name)
	}
	return v, nil
}

// errorf wraps an error with the entry's position: "line 412 (entry 3f2a9c1d): ...".
func (e *Entry) errorf(format string, args ...any) error {
	where := "entry " + e.ID
	if e.Line > 0 {
		where = fmt.Sprintf("line %d (entry %s)", e.Line, e.ID)
	}
	return fmt.Errorf(where+": "+format, args...)
}

// writeOptions are the options entries are written with: raw values (tool
// arguments, details, whatever Prime keeps verbatim) are written as they
// are, lone surrogates and repeated member names included, as they were
// read; a string of invalid UTF-8 becomes U+FFFD, as it does in pi.
var writeOptions = json.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.PreserveRawStrings(true), jsontext.AllowDuplicateNames(true))

// EncodeEntry renders an entry line (without the newline): the common fields
// in pi's order, then the payload's fields. parentID "" is written as null.
func EncodeEntry(id, parentID, timestamp string, p Payload) ([]byte, error) {
	body, err := json.Marshal(p, writeOptions)
	if err != nil {
		return nil, fmt.Errorf("encoding %s entry: %w", p.EntryType(), err)
	}
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("encoding %s entry: payload is not an object", p.EntryType())
	}
	var head bytes.Buffer
	enc := jsontext.NewEncoder(&head)
	err = jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("type", p.EntryType())
		w.Str("id", id)
		if parentID == "" {
			w.Null("parentId")
		} else {
			w.Str("parentId", parentID)
		}
		w.Str("timestamp", timestamp)
	})
	if err != nil {
		return nil, err
	}
	line := bytes.TrimRight(head.Bytes(), "\n")
	line = line[:len(line)-1] // drop the closing brace
	if len(body) > 2 {
		line = append(line, ',')
	}
	return append(line, body[1:]...), nil
}
