package hook

import (
	"bytes"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/session"
)

// The events, by the names settings and command hooks use (pi's names).
const (
	// EventBeforeCompact fires after a compaction is prepared and before
	// anything is summarized: handlers may cancel it, reshape what is
	// summarized, or supply the summary themselves.
	EventBeforeCompact = "session_before_compact"
	// EventCompact fires after a compaction entry has been appended.
	EventCompact = "session_compact"
	// EventCompactFailed fires when a compaction fails or is cancelled
	// (nothing was appended).
	EventCompactFailed = "session_compact_failed"
	// EventBeforeTree fires before the leaf moves to another point of the
	// session tree: handlers may cancel the move, supply the branch
	// summary, or change the instructions and label.
	EventBeforeTree = "session_before_tree"
	// EventTree fires after the leaf has moved.
	EventTree = "session_tree"
)

// Events lists the events Prime emits, in the order of a session's life.
func Events() []string {
	return []string{EventBeforeCompact, EventCompact, EventCompactFailed, EventBeforeTree, EventTree}
}

func knownEvent(name string) bool {
	for _, e := range Events() {
		if e == name {
			return true
		}
	}
	return false
}

// Reason says why a compaction runs (pi's CompactionReason).
type Reason string

// The reasons.
const (
	// ReasonManual: the user asked for it (/compact, prime compact).
	ReasonManual Reason = "manual"
	// ReasonThreshold: the context grew past the window less
	// compaction.reserveTokens after a turn.
	ReasonThreshold Reason = "threshold"
	// ReasonOverflow: the provider rejected a request as too long; the
	// request is retried after the compaction (WillRetry).
	ReasonOverflow Reason = "overflow"
)

// BeforeCompactEvent is session_before_compact: a compaction has been
// prepared and nothing has been summarized or written yet.
type BeforeCompactEvent struct {
	// Preparation is what the compaction will summarize and keep. Handlers
	// see the message arrays as earlier handlers transformed them.
	Preparation *compaction.Preparation
	// BranchEntries are the entries of the current path, root to leaf.
	BranchEntries []*session.Entry
	// CustomInstructions are the user's instructions for the summary
	// (/compact TEXT); empty when there are none.
	CustomInstructions string
	Reason             Reason
	// WillRetry reports that the request that overflowed is retried after
	// the compaction.
	WillRetry bool
	// Transcript is what the compaction would summarize as text, the
	// transcript of Prime's own summary requests; nil when the caller did
	// not make it. The runner remakes it, with the same options, for the
	// handlers after one that replaced the message arrays.
	Transcript *CompactTranscript
}

// CompactTranscript is the conversation a compaction would summarize,
// serialized as Prime's summary requests hold it ([compaction.Transcript]),
// so a handler in any language can send it to a model of its choice as it
// is.
type CompactTranscript struct {
	// Options are the projection the texts were made with: those of Prime's
	// first request to its summarizer ([compaction.TranscriptOptionsFor]).
	Options compaction.TranscriptOptions
	// History is the text of the history being replaced: the preparation's
	// MessagesToSummarize, followed by its TurnPrefixMessages when the turn
	// is not split (as Prime summarizes them).
	History string
	// TurnPrefix is the text of a split turn's first part, summarized on its
	// own; "" when the turn is not split.
	TurnPrefix string
}

// NewCompactTranscript serializes what [compaction.Compact] would summarize
// for prep ([compaction.Preparation.Transcripts]) with opts.
func NewCompactTranscript(prep *compaction.Preparation, opts compaction.TranscriptOptions) *CompactTranscript {
	history, prefix := prep.Transcripts(opts)
	return &CompactTranscript{Options: opts, History: history, TurnPrefix: prefix}
}

// CompactEvent is session_compact: a compaction entry has been appended.
type CompactEvent struct {
	// CompactionEntry is the entry exactly as appended (id, parent,
	// timestamp and payload); [session.Entry.Payload] decodes it.
	CompactionEntry *session.Entry
	// FromExtension reports that a hook supplied the summary.
	FromExtension bool
	Reason        Reason
	WillRetry     bool
}

// CompactFailedEvent is session_compact_failed: a compaction failed or was
// cancelled, and nothing was appended.
type CompactFailedEvent struct {
	Reason Reason
	// ErrorMessage says what went wrong.
	ErrorMessage string
	// Aborted reports a cancellation (by the user or by a hook) rather
	// than a failure.
	Aborted   bool
	WillRetry bool
	// FromExtension reports that a hook cancelled the compaction, or that
	// a hook's summary was being stored when it failed.
	FromExtension bool
}

// TreePreparation describes a move of the leaf (pi's TreePreparation).
type TreePreparation struct {
	// TargetID is the entry navigated to, OldLeafID the leaf being left
	// ("" for an empty session), CommonAncestorID the deepest entry on both
	// paths ("" when they share none).
	TargetID, OldLeafID, CommonAncestorID string
	// EntriesToSummarize are the entries of the branch being left, oldest
	// first; empty when nothing is left behind.
	EntriesToSummarize []*session.Entry
	// UserWantsSummary reports that the user asked for a branch summary.
	UserWantsSummary bool
	// CustomInstructions, ReplaceInstructions and Label are the user's
	// options for the summary: instructions added to (or, with
	// ReplaceInstructions, replacing) the summary task, and a label for
	// the new position.
	CustomInstructions  string
	ReplaceInstructions bool
	Label               string
}

// BeforeTreeEvent is session_before_tree. It fires on every move, whether
// or not the user asked for a summary.
type BeforeTreeEvent struct {
	// Preparation is the move. Handlers see the instructions and label as
	// earlier handlers overrode them.
	Preparation TreePreparation
	// Transcript is what a branch summary would summarize as text, the
	// transcript of Prime's own summary request; nil when the caller did not
	// make it.
	Transcript *BranchTranscript
}

// BranchTranscript is the part of a branch a summary would be made from,
// serialized as Prime's summary request holds it ([compaction.Transcript]).
type BranchTranscript struct {
	// Options are the projection the text was made with: those of Prime's
	// first request to its summarizer ([compaction.TranscriptOptionsFor]).
	Options compaction.TranscriptOptions
	// Branch is the text of the branch's messages that fit the summarizer's
	// budget ([compaction.BranchPreparation].Messages), the newest of
	// EntriesToSummarize; "" when none holds a message.
	Branch string
}

// NewBranchTranscript serializes what [compaction.SummarizeBranch] would
// summarize for prep ([compaction.BranchPreparation.Transcript]) with opts.
func NewBranchTranscript(prep *compaction.BranchPreparation, opts compaction.TranscriptOptions) *BranchTranscript {
	return &BranchTranscript{Options: opts, Branch: prep.Transcript(opts)}
}

// TreeEvent is session_tree: the leaf has moved.
type TreeEvent struct {
	// NewLeafID is the leaf after the move ("" for the root position),
	// OldLeafID the leaf before it.
	NewLeafID, OldLeafID string
	// SummaryEntry is the branch summary entry appended, exactly as
	// appended; nil when none was written.
	SummaryEntry *session.Entry
	// FromExtension reports that a hook supplied the summary.
	FromExtension bool
}

// MarshalJSONTo writes the event as command hooks receive it:
// {"type", "preparation", "branchEntries", "customInstructions", "reason",
// "willRetry", "transcript"}. Entries are written as stored, messages in the
// session file's format; transcript is
// {"reasoning", "toolBodies", "history", "turnPrefix"}, or null.
func (ev *BeforeCompactEvent) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("type", EventBeforeCompact)
		w.Value("preparation", ev.Preparation)
		w.Value("branchEntries", entryList(ev.BranchEntries))
		w.Str("customInstructions", ev.CustomInstructions)
		w.Str("reason", string(ev.Reason))
		w.Bool("willRetry", ev.WillRetry)
		if ev.Transcript != nil {
			w.Value("transcript", ev.Transcript)
		} else {
			w.Null("transcript")
		}
	})
}

// MarshalJSONTo writes {"reasoning", "toolBodies", "history", "turnPrefix"}.
func (t *CompactTranscript) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		writeOptions(w, t.Options)
		w.Str("history", t.History)
		w.Str("turnPrefix", t.TurnPrefix)
	})
}

// UnmarshalJSONFrom reads the transcript as [CompactTranscript.MarshalJSONTo]
// writes it.
func (t *CompactTranscript) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*t = CompactTranscript{}
	return jsonwire.ReadObject(dec, func(name string) error {
		switch name {
		case "history":
			return readString(dec, &t.History)
		case "turnPrefix":
			return readString(dec, &t.TurnPrefix)
		}
		return readOption(dec, name, &t.Options)
	})
}

// MarshalJSONTo writes {"reasoning", "toolBodies", "branch"}.
func (t *BranchTranscript) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		writeOptions(w, t.Options)
		w.Str("branch", t.Branch)
	})
}

// UnmarshalJSONFrom reads the transcript as [BranchTranscript.MarshalJSONTo]
// writes it.
func (t *BranchTranscript) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*t = BranchTranscript{}
	return jsonwire.ReadObject(dec, func(name string) error {
		if name == "branch" {
			return readString(dec, &t.Branch)
		}
		return readOption(dec, name, &t.Options)
	})
}

// writeOptions writes a transcript's projection options as members.
func writeOptions(w *jsonwire.ObjectWriter, o compaction.TranscriptOptions) {
	w.Bool("reasoning", o.Reasoning)
	w.Int("toolBodies", int64(o.ToolBodies))
}

// readOption reads the member name of a transcript's projection options;
// other members are skipped.
func readOption(dec *jsontext.Decoder, name string, o *compaction.TranscriptOptions) error {
	switch name {
	case "reasoning":
		return readBool(dec, &o.Reasoning)
	case "toolBodies":
		n, err := jsonwire.ReadOptInt(dec)
		if n != nil {
			o.ToolBodies = *n
		}
		return err
	}
	return dec.SkipValue()
}

// UnmarshalJSONFrom reads the event as [BeforeCompactEvent.MarshalJSONTo]
// writes it, for Go programs that are command hooks themselves.
func (ev *BeforeCompactEvent) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*ev = BeforeCompactEvent{}
	return readEvent(dec, EventBeforeCompact, func(name string) error {
		switch name {
		case "preparation":
			if dec.PeekKind() == 'n' {
				ev.Preparation = nil
				return dec.SkipValue()
			}
			ev.Preparation = new(compaction.Preparation)
			return json.UnmarshalDecode(dec, ev.Preparation)
		case "branchEntries":
			return readEntryList(dec, &ev.BranchEntries)
		case "customInstructions":
			return readString(dec, &ev.CustomInstructions)
		case "reason":
			return readReason(dec, &ev.Reason)
		case "willRetry":
			return readBool(dec, &ev.WillRetry)
		case "transcript":
			return readTranscript(dec, &ev.Transcript)
		}
		return dec.SkipValue()
	})
}

// readTranscript reads a transcript object, or null.
func readTranscript[T any, P interface {
	*T
	json.UnmarshalerFrom
}](dec *jsontext.Decoder, dst *P) error {
	if dec.PeekKind() == 'n' {
		*dst = nil
		return dec.SkipValue()
	}
	t := P(new(T))
	if err := t.UnmarshalJSONFrom(dec); err != nil {
		return err
	}
	*dst = t
	return nil
}

// MarshalJSONTo writes {"type", "compactionEntry", "fromExtension",
// "reason", "willRetry"}.
func (ev *CompactEvent) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("type", EventCompact)
		w.Value("compactionEntry", entryJSON{ev.CompactionEntry})
		w.Bool("fromExtension", ev.FromExtension)
		w.Str("reason", string(ev.Reason))
		w.Bool("willRetry", ev.WillRetry)
	})
}

// UnmarshalJSONFrom reads the event as [CompactEvent.MarshalJSONTo] writes it.
func (ev *CompactEvent) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*ev = CompactEvent{}
	return readEvent(dec, EventCompact, func(name string) error {
		switch name {
		case "compactionEntry":
			return readEntry(dec, &ev.CompactionEntry)
		case "fromExtension":
			return readBool(dec, &ev.FromExtension)
		case "reason":
			return readReason(dec, &ev.Reason)
		case "willRetry":
			return readBool(dec, &ev.WillRetry)
		}
		return dec.SkipValue()
	})
}

// MarshalJSONTo writes {"type", "reason", "errorMessage", "aborted",
// "willRetry", "fromExtension"}.
func (ev *CompactFailedEvent) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("type", EventCompactFailed)
		w.Str("reason", string(ev.Reason))
		w.Str("errorMessage", ev.ErrorMessage)
		w.Bool("aborted", ev.Aborted)
		w.Bool("willRetry", ev.WillRetry)
		w.Bool("fromExtension", ev.FromExtension)
	})
}

// UnmarshalJSONFrom reads the event as [CompactFailedEvent.MarshalJSONTo]
// writes it.
func (ev *CompactFailedEvent) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*ev = CompactFailedEvent{}
	return readEvent(dec, EventCompactFailed, func(name string) error {
		switch name {
		case "reason":
			return readReason(dec, &ev.Reason)
		case "errorMessage":
			return readString(dec, &ev.ErrorMessage)
		case "aborted":
			return readBool(dec, &ev.Aborted)
		case "willRetry":
			return readBool(dec, &ev.WillRetry)
		case "fromExtension":
			return readBool(dec, &ev.FromExtension)
		}
		return dec.SkipValue()
	})
}

// MarshalJSONTo writes {"targetId", "oldLeafId", "commonAncestorId",
// "entriesToSummarize", "userWantsSummary", "customInstructions",
// "replaceInstructions", "label"}; an empty id is written as null.
func (p *TreePreparation) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		id(w, "targetId", p.TargetID)
		id(w, "oldLeafId", p.OldLeafID)
		id(w, "commonAncestorId", p.CommonAncestorID)
		w.Value("entriesToSummarize", entryList(p.EntriesToSummarize))
		w.Bool("userWantsSummary", p.UserWantsSummary)
		w.Str("customInstructions", p.CustomInstructions)
		w.Bool("replaceInstructions", p.ReplaceInstructions)
		w.Str("label", p.Label)
	})
}

// UnmarshalJSONFrom reads the preparation as
// [TreePreparation.MarshalJSONTo] writes it.
func (p *TreePreparation) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*p = TreePreparation{}
	return jsonwire.ReadObject(dec, func(name string) error {
		switch name {
		case "targetId":
			return readString(dec, &p.TargetID)
		case "oldLeafId":
			return readString(dec, &p.OldLeafID)
		case "commonAncestorId":
			return readString(dec, &p.CommonAncestorID)
		case "entriesToSummarize":
			return readEntryList(dec, &p.EntriesToSummarize)
		case "userWantsSummary":
			return readBool(dec, &p.UserWantsSummary)
		case "customInstructions":
			return readString(dec, &p.CustomInstructions)
		case "replaceInstructions":
			return readBool(dec, &p.ReplaceInstructions)
		case "label":
			return readString(dec, &p.Label)
		}
		return dec.SkipValue()
	})
}

// MarshalJSONTo writes {"type", "preparation", "transcript"}; transcript is
// {"reasoning", "toolBodies", "branch"}, or null.
func (ev *BeforeTreeEvent) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("type", EventBeforeTree)
		w.Value("preparation", &ev.Preparation)
		if ev.Transcript != nil {
			w.Value("transcript", ev.Transcript)
		} else {
			w.Null("transcript")
		}
	})
}

// UnmarshalJSONFrom reads the event as [BeforeTreeEvent.MarshalJSONTo]
// writes it.
func (ev *BeforeTreeEvent) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*ev = BeforeTreeEvent{}
	return readEvent(dec, EventBeforeTree, func(name string) error {
		switch name {
		case "preparation":
			return json.UnmarshalDecode(dec, &ev.Preparation)
		case "transcript":
			return readTranscript(dec, &ev.Transcript)
		}
		return dec.SkipValue()
	})
}

// MarshalJSONTo writes {"type", "newLeafId", "oldLeafId", "summaryEntry",
// "fromExtension"}; summaryEntry is null when no summary was written.
func (ev *TreeEvent) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("type", EventTree)
		id(w, "newLeafId", ev.NewLeafID)
		id(w, "oldLeafId", ev.OldLeafID)
		w.Value("summaryEntry", entryJSON{ev.SummaryEntry})
		w.Bool("fromExtension", ev.FromExtension)
	})
}

// UnmarshalJSONFrom reads the event as [TreeEvent.MarshalJSONTo] writes it.
func (ev *TreeEvent) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*ev = TreeEvent{}
	return readEvent(dec, EventTree, func(name string) error {
		switch name {
		case "newLeafId":
			return readString(dec, &ev.NewLeafID)
		case "oldLeafId":
			return readString(dec, &ev.OldLeafID)
		case "summaryEntry":
			return readEntry(dec, &ev.SummaryEntry)
		case "fromExtension":
			return readBool(dec, &ev.FromExtension)
		}
		return dec.SkipValue()
	})
}

// id writes an entry id, null when empty (pi's null leaf and ancestor).
func id(w *jsonwire.ObjectWriter, name, v string) {
	if v == "" {
		w.Null(name)
	} else {
		w.Str(name, v)
	}
}

// entryJSON writes an entry as its stored JSON object (null for nil).
type entryJSON struct{ e *session.Entry }

func (v entryJSON) MarshalJSONTo(enc *jsontext.Encoder) error {
	if v.e == nil {
		return enc.WriteToken(jsontext.Null)
	}
	line, err := v.e.Raw()
	if err != nil {
		return err
	}
	if len(line) == 0 {
		return enc.WriteToken(jsontext.Null)
	}
	return enc.WriteValue(line)
}

// entryList writes entries as an array of their stored JSON objects.
type entryList []*session.Entry

func (l entryList) MarshalJSONTo(enc *jsontext.Encoder) error {
	if err := enc.WriteToken(jsontext.BeginArray); err != nil {
		return err
	}
	for _, e := range l {
		if err := (entryJSON{e}).MarshalJSONTo(enc); err != nil {
			return fmt.Errorf("entry %s: %w", e.ID, err)
		}
	}
	return enc.WriteToken(jsontext.EndArray)
}

// encodeOptions write events for command hooks: text from pi files that is
// not valid UTF-8 becomes U+FFFD rather than failing the event, so a hook
// reading its input as UTF-8 text never chokes.
var encodeOptions = jsontext.AllowInvalidUTF8(true)

// encodeEvent renders an event as one line of JSON ending in a newline.
func encodeEvent(ev json.MarshalerTo) ([]byte, error) {
	var b bytes.Buffer
	enc := jsontext.NewEncoder(&b, encodeOptions)
	if err := json.MarshalEncode(enc, ev, encodeOptions); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// readEvent reads an event object, checking its "type" when present.
func readEvent(dec *jsontext.Decoder, want string, member func(name string) error) error {
	return jsonwire.ReadObject(dec, func(name string) error {
		if name != "type" {
			return member(name)
		}
		var t string
		if err := readString(dec, &t); err != nil {
			return err
		}
		if t != "" && t != want {
			return fmt.Errorf("event type is %q, want %q", t, want)
		}
		return nil
	})
}

func readString(dec *jsontext.Decoder, dst *string) (err error) {
	*dst, err = jsonwire.ReadString(dec)
	return err
}

func readBool(dec *jsontext.Decoder, dst *bool) (err error) {
	*dst, err = jsonwire.ReadBool(dec)
	return err
}

func readReason(dec *jsontext.Decoder, dst *Reason) error {
	s, err := jsonwire.ReadString(dec)
	*dst = Reason(s)
	return err
}

// readEntry reads a stored entry object, or null.
func readEntry(dec *jsontext.Decoder, dst **session.Entry) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	if v.Kind() == 'n' {
		*dst = nil
		return nil
	}
	e, err := session.NewEntry(v) // copies v, which is only valid until the next read
	if err != nil {
		return err
	}
	*dst = e
	return nil
}

func readEntryList(dec *jsontext.Decoder, dst *[]*session.Entry) error {
	if dec.PeekKind() == 'n' {
		*dst = nil
		return dec.SkipValue()
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	list := []*session.Entry{}
	for dec.PeekKind() != ']' {
		var e *session.Entry
		if err := readEntry(dec, &e); err != nil {
			return fmt.Errorf("[%d]: %w", len(list), err)
		}
		list = append(list, e)
	}
	*dst = list
	_, err := dec.ReadToken()
	return err
}
