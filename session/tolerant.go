package session

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// Reading an entry with a bad field as pi does.
//
// pi reads a session line with JSON.parse and uses its fields as they are:
// a compaction whose summary is the number 42 is summarized as "42", a
// usage count written as "5" still adds up. Prime's typed decoders refuse
// such a line, and one refused entry used to make a whole session
// unreadable. So when an entry does not decode, it is read again from a
// coerced copy of its line, with JavaScript's conversions where pi would
// apply them: a number or boolean where text belongs becomes its text, a
// number written as a string becomes the number, anything where a
// boolean belongs becomes its truthiness, and any other value of the
// wrong kind (an object where text belongs, say) is dropped, as if the
// field were absent. Each change is a [WarnCoerced] warning naming the
// line and the field. An entry that still does not decode is left out of
// the context with a [WarnUnreadable] warning (its place in the tree
// stays). The file is never changed on reading; [Repair] writes a copy.
// Values pi keeps verbatim (tool arguments, details, custom data) are
// never touched.

// fieldKind is what a known field holds.
type fieldKind uint8

const (
	fieldText fieldKind = iota + 1
	fieldNumber
	fieldBool
)

// topFields are the typed fields of an entry's own object; messageFields
// those anywhere inside its message (content blocks and usage included).
var (
	topFields = map[string]fieldKind{
		"summary": fieldText, "firstKeptEntryId": fieldText, "fromId": fieldText, "thinkingLevel": fieldText,
		"provider": fieldText, "modelId": fieldText, "customType": fieldText, "targetId": fieldText,
		"label": fieldText, "name": fieldText, "tokensBefore": fieldNumber, "fromHook": fieldBool, "display": fieldBool,
	}
	messageFields = map[string]fieldKind{
		"text": fieldText, "thinking": fieldText, "thinkingSignature": fieldText, "textSignature": fieldText,
		"api": fieldText, "provider": fieldText, "model": fieldText, "stopReason": fieldText, "errorMessage": fieldText,
		"toolCallId": fieldText, "toolName": fieldText, "responseId": fieldText, "command": fieldText, "output": fieldText,
		"mimeType": fieldText, "customType": fieldText, "summary": fieldText, "fromId": fieldText,
		"timestamp": fieldNumber, "exitCode": fieldNumber, "durationMs": fieldNumber, "tokensBefore": fieldNumber,
		"isError": fieldBool, "cancelled": fieldBool, "truncated": fieldBool, "excludeFromContext": fieldBool,
		"redacted": fieldBool, "display": fieldBool,
	}
	// usageFields are those of a usage object and its cost: numbers
	// (cost holds one more object, read the same way).
	usageFields = map[string]fieldKind{
		"input": fieldNumber, "output": fieldNumber, "cacheRead": fieldNumber, "cacheWrite": fieldNumber,
		"totalTokens": fieldNumber, "total": fieldNumber, "reasoning": fieldNumber,
	}
	// verbatim are members whose values are kept as they are, whatever
	// they hold.
	verbatim = []string{"arguments", "details", "data", "partialJson", "nestedCalls"}
)

// coerceLine returns a copy of an entry's line with its bad fields
// coerced, and a note for each change ("/summary: the number 42, read as
// the text \"42\""). changed is false when nothing needed coercing.
func coerceLine(line []byte) (out []byte, notes []string, changed bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(line), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	var buf bytes.Buffer
	enc := jsontext.NewEncoder(&buf, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	c := &coercer{dec: dec, enc: enc}
	if err := c.value(nil, false); err != nil {
		return nil, nil, false
	}
	if len(c.notes) == 0 {
		return nil, nil, false
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), c.notes, true
}

type coercer struct {
	dec   *jsontext.Decoder
	enc   *jsontext.Encoder
	notes []string
}

// value copies one value at path (member names and indices); inMessage
// says the path is inside the entry's message.
func (c *coercer) value(path []string, inMessage bool) error {
	switch c.dec.PeekKind() {
	case '{':
		return c.object(path, inMessage)
	case '[':
		tok, err := c.dec.ReadToken()
		if err != nil {
			return err
		}
		if err := c.enc.WriteToken(tok); err != nil {
			return err
		}
		for i := 0; c.dec.PeekKind() != ']'; i++ {
			if err := c.value(append(path, strconv.Itoa(i)), inMessage); err != nil {
				return err
			}
		}
		tok, err = c.dec.ReadToken()
		if err != nil {
			return err
		}
		return c.enc.WriteToken(tok)
	}
	v, err := c.dec.ReadValue()
	if err != nil {
		return err
	}
	return c.enc.WriteValue(v)
}

func (c *coercer) object(path []string, inMessage bool) error {
	tok, err := c.dec.ReadToken()
	if err != nil {
		return err
	}
	if err := c.enc.WriteToken(tok); err != nil {
		return err
	}
	for c.dec.PeekKind() != '}' {
		tok, err := c.dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String()
		tok = jsontext.String(name) // ReadToken's token lasts only until the next read
		p := append(slices.Clip(path), name)
		if slices.Contains(verbatim, name) {
			v, err := c.dec.ReadValue()
			if err != nil {
				return err
			}
			if err := c.enc.WriteToken(tok); err != nil {
				return err
			}
			if err := c.enc.WriteValue(v); err != nil {
				return err
			}
			continue
		}
		fields := messageFields
		switch {
		case !inMessage:
			fields = topFields
		case len(path) > 0 && (path[len(path)-1] == "usage" || path[len(path)-1] == "cost"):
			fields = usageFields
		}
		kind, typed := fields[name]
		if !typed || name == "content" {
			if !inMessage && len(path) == 0 && name == "message" {
				if err := c.enc.WriteToken(tok); err != nil {
					return err
				}
				if err := c.value(p, true); err != nil {
					return err
				}
				continue
			}
			if err := c.enc.WriteToken(tok); err != nil {
				return err
			}
			if err := c.value(p, inMessage); err != nil {
				return err
			}
			continue
		}
		v, err := c.dec.ReadValue()
		if err != nil {
			return err
		}
		fixed, note, keep := coerceValue(v, kind)
		if note != "" {
			c.notes = append(c.notes, "/"+strings.Join(p, "/")+": "+note)
		}
		if !keep {
			continue
		}
		if err := c.enc.WriteToken(tok); err != nil {
			return err
		}
		if err := c.enc.WriteValue(fixed); err != nil {
			return err
		}
	}
	tok, err = c.dec.ReadToken()
	if err != nil {
		return err
	}
	return c.enc.WriteToken(tok)
}

// coerceValue converts v to kind as JavaScript would where pi uses it. It
// returns the value to write (keep false: drop the member) and a note when
// it changed anything.
func coerceValue(v jsontext.Value, kind fieldKind) (jsontext.Value, string, bool) {
	k := v.Kind()
	if k == 'n' {
		return v, "", true
	}
	shown := string(v)
	if len(shown) > 40 {
		shown = shown[:39] + "…"
	}
	switch kind {
	case fieldText:
		switch k {
		case '"':
			return v, "", true
		case '0', 't', 'f':
			q, _ := jsontext.AppendQuote(nil, string(v))
			return q, fmt.Sprintf("%s is not text; read as %s", shown, q), true
		}
	case fieldNumber:
		switch k {
		case '0':
			return v, "", true
		case '"':
			var s string
			if b, err := jsontext.AppendUnquote(nil, v); err == nil {
				s = string(b)
			}
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				n := strconv.FormatFloat(f, 'f', -1, 64)
				return jsontext.Value(n), fmt.Sprintf("%s is not a number; read as %s", shown, n), true
			}
		case 't':
			return jsontext.Value("1"), fmt.Sprintf("%s is not a number; read as 1", shown), true
		case 'f':
			return jsontext.Value("0"), fmt.Sprintf("%s is not a number; read as 0", shown), true
		}
	case fieldBool:
		switch k {
		case 't', 'f':
			return v, "", true
		case '0':
			truthy := strconv.FormatBool(string(v) != "0" && string(v) != "-0" && string(v) != "0.0")
			return jsontext.Value(truthy), fmt.Sprintf("%s is not true or false; read as %s", shown, truthy), true
		case '"':
			truthy := strconv.FormatBool(string(v) != `""`)
			return jsontext.Value(truthy), fmt.Sprintf("%s is not true or false; read as %s", shown, truthy), true
		}
	}
	return nil, fmt.Sprintf("%s is of the wrong kind; left out", shown), false
}

// repairLog records, for a source, the lines read through coercion and
// those that could not be read at all, once each.
type repairLog struct {
	mu   sync.Mutex
	seen map[int]bool
	list []Warning
}

func (r *repairLog) add(w Warning) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[int]bool{}
	}
	if r.seen[w.Line] {
		return
	}
	r.seen[w.Line] = true
	r.list = append(r.list, w)
}

func (r *repairLog) warnings() []Warning {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.list)
}

// UnreadableError reports an entry that does not decode even coerced: it
// is left out of the context (see [WarnUnreadable]).
type UnreadableError struct {
	Line int
	ID   string
	Err  error
}

func (e *UnreadableError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d (entry %s): %v", e.Line, e.ID, e.Err)
	}
	return fmt.Sprintf("entry %s: %v", e.ID, e.Err)
}

func (e *UnreadableError) Unwrap() error { return e.Err }

// tolerant decodes line with decode; when that fails it decodes a coerced
// copy of the line and notes what it changed, and when that fails too it
// notes the entry as unreadable and returns an *UnreadableError.
func tolerant[T any](e *Entry, line []byte, decode func([]byte) (T, error)) (T, error) {
	v, err := decode(line)
	if err == nil {
		return v, nil
	}
	if fixed, notes, ok := coerceLine(line); ok {
		if v2, err2 := decode(fixed); err2 == nil {
			e.note(Warning{Kind: WarnCoerced, Line: e.Line, Msg: fmt.Sprintf("entry %s: %s", e.ID, strings.Join(notes, "; "))})
			return v2, nil
		}
	}
	what := "; left out of the context"
	if e.Type == TypeContextEdit {
		what = "" // pi cannot apply it either: the context fails
	}
	e.note(Warning{Kind: WarnUnreadable, Line: e.Line, Msg: fmt.Sprintf("entry %s cannot be read, even as pi reads it (%v)%s", e.ID, err, what)})
	var zero T
	return zero, &UnreadableError{Line: e.Line, ID: e.ID, Err: err}
}

// note records a warning about the entry in its session's source.
func (e *Entry) note(w Warning) {
	if e.src != nil {
		e.src.repairs.add(w)
	}
}

// isUnreadable reports whether err is an entry left out as unreadable.
func isUnreadable(err error) bool {
	var u *UnreadableError
	return errors.As(err, &u)
}
