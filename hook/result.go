package hook

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// BeforeCompactResult is a handler's answer to session_before_compact. A
// nil result (empty output, or null, from a command) changes nothing.
type BeforeCompactResult struct {
	// Cancel stops the compaction: no later handler runs and nothing is
	// written.
	Cancel bool
	// Preparation replaces the messages to summarize; nil changes nothing.
	Preparation *PreparationChange
	// Compaction is a summary to store instead of Prime's; nil for none.
	Compaction *CustomCompaction
}

// PreparationChange replaces the two message arrays of a compaction's
// preparation: what the summarizer (a later handler's or Prime's) sees.
// A nil slice leaves its array as it is; a non-nil one, even empty,
// replaces it. Every other preparation field is kept.
type PreparationChange struct {
	MessagesToSummarize []session.Message
	TurnPrefixMessages  []session.Message
}

// CustomCompaction is a summary a handler supplies instead of Prime's. It
// is stored as a compaction entry with fromHook true, as given: Prime
// appends no file lists to it.
type CustomCompaction struct {
	// Summary replaces everything before FirstKeptEntryID in the model's
	// context; it must not be empty.
	Summary string
	// FirstKeptEntryID is the first entry kept verbatim; it must be on
	// the current path (usually the preparation's firstKeptEntryId).
	FirstKeptEntryID string
	// TokensBefore is stored as given: a whole number from 0 to 2^53−1.
	TokensBefore int
	// Details is any JSON value, stored as given; nil for none.
	Details jsontext.Value
	// Usage is what producing the summary cost, if the handler asked a
	// model; nil for none.
	Usage *llm.Usage
}

// BeforeTreeResult is a handler's answer to session_before_tree. Nil
// fields change nothing.
type BeforeTreeResult struct {
	// Cancel stops the move: the leaf stays where it is.
	Cancel bool
	// Summary is the branch summary to store instead of Prime's. It is
	// used only when the user asked for a summary.
	Summary *BranchSummary
	// CustomInstructions, ReplaceInstructions and Label override the
	// user's options for Prime's summary and the label.
	CustomInstructions  *string
	ReplaceInstructions *bool
	Label               *string
}

// BranchSummary is a branch summary a handler supplies instead of Prime's.
type BranchSummary struct {
	// Summary must not be empty.
	Summary string
	// Details is any JSON value, stored as given; nil for none.
	Details jsontext.Value
}

// Entry returns the branch summary entry to append as a child of the new
// leaf: fromHook true, fromID the leaf navigated away from (as
// [compaction.BranchResult.Entry] does).
func (s *BranchSummary) Entry(fromID string) *session.BranchSummaryEntry {
	return &session.BranchSummaryEntry{FromID: fromID, Summary: s.Summary, Details: s.Details, FromHook: true}
}

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER: the largest
// token count pi can read back exactly.
const maxSafeInteger = 1<<53 - 1

// MarshalJSONTo writes the result as a command hook would print it:
// {"cancel"?, "preparation"?: {"messagesToSummarize"?, "turnPrefixMessages"?},
// "compaction"?: {"summary", "firstKeptEntryId", "tokensBefore", "details"?, "usage"?}}.
func (r *BeforeCompactResult) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		if r.Cancel {
			w.Bool("cancel", true)
		}
		if r.Preparation != nil {
			w.Value("preparation", r.Preparation)
		}
		if r.Compaction != nil {
			w.Value("compaction", r.Compaction)
		}
	})
}

// UnmarshalJSONFrom reads a result. Members Prime does not know are
// ignored; null stands for an absent member. A member of the wrong type, a
// message that does not decode, or a compaction without its three required
// members is an error.
func (r *BeforeCompactResult) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*r = BeforeCompactResult{}
	return jsonwire.ReadObject(dec, func(name string) error {
		switch name {
		case "cancel":
			return readStrictBool(dec, &r.Cancel)
		case "preparation":
			return readOptObject(dec, &r.Preparation)
		case "compaction":
			return readOptObject(dec, &r.Compaction)
		}
		return dec.SkipValue()
	})
}

// MarshalJSONTo writes the arrays that are set.
func (c *PreparationChange) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		if c.MessagesToSummarize != nil {
			w.Value("messagesToSummarize", c.MessagesToSummarize)
		}
		if c.TurnPrefixMessages != nil {
			w.Value("turnPrefixMessages", c.TurnPrefixMessages)
		}
	})
}

// UnmarshalJSONFrom reads {"messagesToSummarize"?, "turnPrefixMessages"?},
// each message decoded by its role as the session does. A message whose
// role Prime does not know is an error: nothing could summarize it.
func (c *PreparationChange) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*c = PreparationChange{}
	return jsonwire.ReadObject(dec, func(name string) error {
		switch name {
		case "messagesToSummarize":
			return readMessages(dec, &c.MessagesToSummarize)
		case "turnPrefixMessages":
			return readMessages(dec, &c.TurnPrefixMessages)
		}
		return dec.SkipValue()
	})
}

// MarshalJSONTo writes {"summary", "firstKeptEntryId", "tokensBefore",
// "details"?, "usage"?}.
func (c *CustomCompaction) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("summary", c.Summary)
		w.Str("firstKeptEntryId", c.FirstKeptEntryID)
		w.Int("tokensBefore", int64(c.TokensBefore))
		w.OptRaw("details", c.Details)
		if c.Usage != nil {
			w.Value("usage", c.Usage)
		}
	})
}

// UnmarshalJSONFrom reads a custom compaction. summary, firstKeptEntryId
// and tokensBefore are required; tokensBefore must be a whole number from
// 0 to 2^53−1.
func (c *CustomCompaction) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*c = CustomCompaction{}
	var haveSummary, haveFirst, haveTokens bool
	err := jsonwire.ReadObject(dec, func(name string) error {
		switch name {
		case "summary":
			return readRequiredString(dec, &c.Summary, &haveSummary)
		case "firstKeptEntryId":
			return readRequiredString(dec, &c.FirstKeptEntryID, &haveFirst)
		case "tokensBefore":
			return readTokenCount(dec, &c.TokensBefore, &haveTokens)
		case "details":
			return readDetails(dec, &c.Details)
		case "usage":
			return readOptObject(dec, &c.Usage)
		}
		return dec.SkipValue()
	})
	if err != nil {
		return err
	}
	return missing(map[string]bool{"summary": haveSummary, "firstKeptEntryId": haveFirst, "tokensBefore": haveTokens})
}

// MarshalJSONTo writes the members that are set:
// {"cancel"?, "summary"?: {"summary", "details"?}, "customInstructions"?,
// "replaceInstructions"?, "label"?}.
func (r *BeforeTreeResult) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		if r.Cancel {
			w.Bool("cancel", true)
		}
		if r.Summary != nil {
			w.Value("summary", r.Summary)
		}
		if r.CustomInstructions != nil {
			w.Str("customInstructions", *r.CustomInstructions)
		}
		if r.ReplaceInstructions != nil {
			w.Bool("replaceInstructions", *r.ReplaceInstructions)
		}
		if r.Label != nil {
			w.Str("label", *r.Label)
		}
	})
}

// UnmarshalJSONFrom reads a result; null stands for an absent member.
func (r *BeforeTreeResult) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*r = BeforeTreeResult{}
	return jsonwire.ReadObject(dec, func(name string) error {
		switch name {
		case "cancel":
			return readStrictBool(dec, &r.Cancel)
		case "summary":
			return readOptObject(dec, &r.Summary)
		case "customInstructions":
			return readOptString(dec, &r.CustomInstructions)
		case "replaceInstructions":
			if dec.PeekKind() == 'n' {
				return dec.SkipValue()
			}
			r.ReplaceInstructions = new(bool)
			return readStrictBool(dec, r.ReplaceInstructions)
		case "label":
			return readOptString(dec, &r.Label)
		}
		return dec.SkipValue()
	})
}

// MarshalJSONTo writes {"summary", "details"?}.
func (s *BranchSummary) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("summary", s.Summary)
		w.OptRaw("details", s.Details)
	})
}

// UnmarshalJSONFrom reads {"summary", "details"?}; summary is required.
func (s *BranchSummary) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*s = BranchSummary{}
	var have bool
	err := jsonwire.ReadObject(dec, func(name string) error {
		switch name {
		case "summary":
			return readRequiredString(dec, &s.Summary, &have)
		case "details":
			return readDetails(dec, &s.Details)
		}
		return dec.SkipValue()
	})
	if err != nil {
		return err
	}
	return missing(map[string]bool{"summary": have})
}

// decodeResult reads a handler's answer: nothing (only white space) or
// null is no result; otherwise exactly one JSON object, strictly (valid
// UTF-8, no repeated member names, nothing after it).
func decodeResult[R any, P interface {
	*R
	json.UnmarshalerFrom
}](out []byte) (*R, error) {
	out = bytes.TrimSpace(out)
	if len(out) == 0 || string(out) == "null" {
		return nil, nil
	}
	if out[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	r := new(R)
	if err := json.Unmarshal(out, P(r)); err != nil {
		// The decoder wraps our own error, which already says where.
		var se *json.SemanticError
		if errors.As(err, &se) && se.Err != nil {
			return nil, se.Err
		}
		return nil, err
	}
	return r, nil
}

// normalize passes an in-process handler's result through the JSON codec,
// so it obeys exactly the rules a command's output does, and so Prime
// keeps a copy the handler no longer holds.
func normalize[R any, P interface {
	*R
	json.MarshalerTo
	json.UnmarshalerFrom
}](r P) (*R, error) {
	if r == nil {
		return nil, nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("the result cannot be written as JSON: %w", err)
	}
	return decodeResult[R, P](b)
}

func readStrictBool(dec *jsontext.Decoder, dst *bool) error {
	if k := dec.PeekKind(); k != 't' && k != 'f' && k != 'n' {
		_ = dec.SkipValue()
		return fmt.Errorf("got %s, want true or false", kindName(k))
	}
	return readBool(dec, dst)
}

func readOptString(dec *jsontext.Decoder, dst **string) error {
	switch k := dec.PeekKind(); k {
	case 'n':
		return dec.SkipValue()
	case '"':
		*dst = new(string)
		return readString(dec, *dst)
	default:
		_ = dec.SkipValue()
		return fmt.Errorf("got %s, want a string", kindName(k))
	}
}

func readRequiredString(dec *jsontext.Decoder, dst *string, have *bool) error {
	if dec.PeekKind() == 'n' {
		return dec.SkipValue()
	}
	*have = true
	if k := dec.PeekKind(); k != '"' {
		_ = dec.SkipValue()
		return fmt.Errorf("got %s, want a string", kindName(k))
	}
	return readString(dec, dst)
}

// readOptObject reads an object member into a new *T, or leaves *dst nil
// for null. It calls the decoder method itself, so that errors are not
// wrapped once per level.
func readOptObject[T any, P interface {
	*T
	json.UnmarshalerFrom
}](dec *jsontext.Decoder, dst **T) error {
	switch k := dec.PeekKind(); k {
	case 'n':
		return dec.SkipValue()
	case '{':
		*dst = new(T)
		return P(*dst).UnmarshalJSONFrom(dec)
	default:
		_ = dec.SkipValue()
		return fmt.Errorf("got %s, want an object", kindName(k))
	}
}

// readTokenCount reads a whole number from 0 to 2^53−1 (1e3 and 2.0 are
// whole).
func readTokenCount(dec *jsontext.Decoder, dst *int, have *bool) error {
	if dec.PeekKind() == 'n' {
		return dec.SkipValue()
	}
	*have = true
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '0' {
		return fmt.Errorf("got %s, want a number", kindName(tok.Kind()))
	}
	f, err := tok.Float()
	if err != nil || f != math.Trunc(f) || f < 0 || f > maxSafeInteger {
		return fmt.Errorf("%s is not a whole number from 0 to 2^53-1", tok.String())
	}
	*dst = int(f)
	return nil
}

// readDetails reads any JSON value, compacted; null is no details.
func readDetails(dec *jsontext.Decoder, dst *jsontext.Value) error {
	v, err := jsonwire.ReadOptValue(dec)
	if err == nil && v != nil {
		err = v.Compact()
	}
	*dst = v
	return err
}

// readMessages reads an array of stored messages; null leaves *dst nil.
func readMessages(dec *jsontext.Decoder, dst *[]session.Message) error {
	switch k := dec.PeekKind(); k {
	case 'n':
		return dec.SkipValue()
	case '[':
	default:
		_ = dec.SkipValue()
		return fmt.Errorf("got %s, want an array of messages", kindName(k))
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	msgs := []session.Message{}
	for dec.PeekKind() != ']' {
		raw, err := dec.ReadValue()
		if err != nil {
			return err
		}
		m, err := session.DecodeMessage(raw)
		if err != nil {
			return fmt.Errorf("[%d]: %w", len(msgs), err)
		}
		if u, ok := m.(*session.UnknownMessage); ok {
			return fmt.Errorf("[%d]: role %q is not a message role Prime knows", len(msgs), u.RoleName)
		}
		msgs = append(msgs, m)
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	*dst = msgs
	return nil
}

// missing reports the required members that were absent, in a stable order.
func missing(have map[string]bool) error {
	var names []string
	for _, n := range []string{"summary", "firstKeptEntryId", "tokensBefore"} {
		if h, ok := have[n]; ok && !h {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return fmt.Errorf("missing %s", strings.Join(names, ", "))
}

// kindName names a JSON kind for messages.
func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "invalid JSON"
}
