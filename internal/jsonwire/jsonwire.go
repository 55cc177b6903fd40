// Package jsonwire holds the small JSON reading and writing helpers that
// Prime's hand-written codecs share: they read pi's files tolerantly and
// write objects member by member in pi's key order.
package jsonwire

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ReadOptions are the options for reading JSON written by pi or by hand:
// JavaScript may emit lone surrogates and a hand-edited file may repeat a
// key, and neither should make a whole entry unreadable.
var ReadOptions = json.JoinOptions(
	jsontext.AllowInvalidUTF8(true),
	jsontext.AllowDuplicateNames(true),
)

// NewDecoder returns a decoder over b with [ReadOptions]. It reads b in
// place, without copying it, so the values it returns (ReadValue) are
// slices of b that stay valid after later reads.
func NewDecoder(b []byte) *jsontext.Decoder {
	return jsontext.NewDecoder(bytes.NewBuffer(b), ReadOptions)
}

// ObjectWriter writes the members of one JSON object and remembers the first
// error, so a marshaler reads as a list of fields.
type ObjectWriter struct {
	enc *jsontext.Encoder
	err error
}

// WriteObject writes {, the members written by fill, and }.
func WriteObject(enc *jsontext.Encoder, fill func(w *ObjectWriter)) error {
	w := &ObjectWriter{enc: enc}
	w.token(jsontext.BeginObject)
	fill(w)
	w.token(jsontext.EndObject)
	return w.err
}

func (w *ObjectWriter) token(t jsontext.Token) {
	if w.err == nil {
		w.err = w.enc.WriteToken(t)
	}
}

// Str writes a string member.
func (w *ObjectWriter) Str(name, v string) {
	w.token(jsontext.String(name))
	w.token(jsontext.String(v))
}

// OptStr writes a string member unless v is empty.
func (w *ObjectWriter) OptStr(name, v string) {
	if v != "" {
		w.Str(name, v)
	}
}

// Bool writes a boolean member.
func (w *ObjectWriter) Bool(name string, v bool) {
	w.token(jsontext.String(name))
	w.token(jsontext.Bool(v))
}

// Int writes an integer member.
func (w *ObjectWriter) Int(name string, v int64) {
	w.token(jsontext.String(name))
	w.token(jsontext.Int(v))
}

// Null writes a null member.
func (w *ObjectWriter) Null(name string) {
	w.token(jsontext.String(name))
	w.token(jsontext.Null)
}

// Raw writes a member whose value is already JSON text.
func (w *ObjectWriter) Raw(name string, v jsontext.Value) {
	w.token(jsontext.String(name))
	if w.err == nil {
		w.err = w.enc.WriteValue(v)
	}
}

// OptRaw writes a raw member unless v is empty.
func (w *ObjectWriter) OptRaw(name string, v jsontext.Value) {
	if len(v) > 0 {
		w.Raw(name, v)
	}
}

// Value writes a member by marshaling v.
func (w *ObjectWriter) Value(name string, v any) {
	w.token(jsontext.String(name))
	if w.err == nil {
		w.err = json.MarshalEncode(w.enc, v)
	}
}

// ReadObject reads a JSON object from dec, calling member for each member
// name; member must consume the member's value.
func ReadObject(dec *jsontext.Decoder, member func(name string) error) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '{' {
		return fmt.Errorf("got %v, want an object", tok.Kind())
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		// The token is only valid until the next read, which member does.
		name := tok.String()
		if err := member(name); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	_, err = dec.ReadToken()
	return err
}

// ReadString reads a JSON string; null reads as "".
func ReadString(dec *jsontext.Decoder) (string, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return "", err
	}
	switch tok.Kind() {
	case '"':
		return tok.String(), nil
	case 'n':
		return "", nil
	default:
		return "", fmt.Errorf("got %v, want a string", tok.Kind())
	}
}

// ReadBool reads a JSON boolean; null reads as false.
func ReadBool(dec *jsontext.Decoder) (bool, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return false, err
	}
	switch tok.Kind() {
	case 't', 'f':
		return tok.Bool(), nil
	case 'n':
		return false, nil
	default:
		return false, fmt.Errorf("got %v, want a boolean", tok.Kind())
	}
}

// ReadOptInt reads a JSON number as an int (fractions truncated); null
// reads as nil.
func ReadOptInt(dec *jsontext.Decoder) (*int, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case '0':
		f, err := tok.Float()
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, nil
		}
		n := int(f)
		return &n, nil
	case 'n':
		return nil, nil
	default:
		return nil, fmt.Errorf("got %v, want a number", tok.Kind())
	}
}

// ReadOptValue reads any JSON value and returns a copy of it, or nil for null.
func ReadOptValue(dec *jsontext.Decoder) (jsontext.Value, error) {
	v, err := dec.ReadValue()
	if err != nil || v.Kind() == 'n' {
		return nil, err
	}
	return v.Clone(), nil
}

// ReadMillis reads a timestamp in Unix milliseconds. A number is truncated
// to an integer; an ISO-8601 string (some hand-written files use one) is
// converted; null and unparsable strings read as 0.
func ReadMillis(dec *jsontext.Decoder) (int64, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return 0, err
	}
	switch tok.Kind() {
	case '0':
		f, err := tok.Float()
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, nil
		}
		return int64(f), nil
	case '"':
		return ISOMillis(tok.String()), nil
	case 'n':
		return 0, nil
	default:
		return 0, fmt.Errorf("got %v, want a number", tok.Kind())
	}
}

// ISOMillis converts an ISO-8601 timestamp to Unix milliseconds, or 0 when
// it does not parse.
func ISOMillis(ts string) int64 {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

// PositionError is a JSON decoding error located in its input.
type PositionError struct {
	Line, Column int    // 1-based
	Pointer      string // JSON pointer to the value, when known
	Err          error
}

// Error formats the error as "line L, column C: ...".
func (e *PositionError) Error() string {
	return fmt.Sprintf("line %d, column %d: %v", e.Line, e.Column, e.Err)
}

// Unwrap returns the decoding error.
func (e *PositionError) Unwrap() error { return e.Err }

// Located turns a decoding error from json.Unmarshal(data, ...) into a
// [*PositionError] naming the line and column where it occurred, so a user
// can find the mistake in a hand-edited file. Errors without a position are
// returned unchanged.
func Located(data []byte, err error) error {
	var off int64 = -1
	var ptr jsontext.Pointer
	var se *json.SemanticError
	var xe *jsontext.SyntacticError
	switch {
	case errors.As(err, &xe):
		off, ptr = xe.ByteOffset, xe.JSONPointer
	case errors.As(err, &se):
		off, ptr = se.ByteOffset, se.JSONPointer
	}
	if off < 0 {
		return err
	}
	off = min(off, int64(len(data)))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := int(off) - bytes.LastIndexByte(data[:off], '\n')
	return &PositionError{Line: line, Column: col, Pointer: string(ptr), Err: err}
}

// ArrayIndex reports whether name is an array index as ECMAScript defines
// it, the canonical decimal form of an integer from 0 to 2³²−2, and which.
// A JavaScript object holds members with such names first, in ascending
// order, before the others in the order they were added; JSON.stringify
// writes them so.
func ArrayIndex[T ~string | ~[]byte](name T) (uint32, bool) {
	if len(name) == 0 || len(name) > 10 || len(name) > 1 && name[0] == '0' {
		return 0, false
	}
	var n uint64
	for i := range len(name) {
		c := name[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if n > 1<<32-2 {
		return 0, false
	}
	return uint32(n), true
}
