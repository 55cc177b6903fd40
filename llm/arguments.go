package llm

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"iter"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonscan"
	"github.com/prime-agent/prime/internal/jsonwire"
)

// Arguments is a tool call's arguments: a JSON value, normally an object,
// held in exactly the text JavaScript's JSON.stringify prints for it. That
// text matters beyond display: pi estimates a tool call's size from its
// length, and Prime must reach the same numbers. The form is compact, keeps
// the original key order (except that, as in a JavaScript object, array
// index names come first and a repeated name keeps its first place and its
// last value), escapes only what JSON requires (no HTML escaping) and
// prints numbers as JavaScript does. The zero value is the empty object.
type Arguments struct {
	v jsontext.Value
}

// stringifyOptions reformat a JSON value the way JSON.stringify(JSON.parse(v))
// would: compact, minimal string escapes, ECMAScript number formatting.
var stringifyOptions = []jsontext.Options{
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
	jsontext.CanonicalizeRawInts(true),
	jsontext.CanonicalizeRawFloats(true),
}

// NewArguments reads raw JSON text as tool-call arguments, normalizing it to
// JSON.stringify's form. Empty input gives the empty object. raw is copied.
func NewArguments(raw []byte) (Arguments, error) {
	if len(raw) == 0 {
		return Arguments{}, nil
	}
	if stringified(raw) {
		return Arguments{v: bytes.Clone(raw)}, nil
	}
	return reformatArguments(jsontext.Value(raw).Clone())
}

// AdoptArguments is [NewArguments] without the copy: when raw is already in
// JSON.stringify's form (as every tool call pi and Prime store is), the
// arguments keep raw itself as their text. The caller hands raw over and
// must never modify it afterwards. Decoding a large session this way keeps
// one copy of each call's arguments, the one in the file's bytes.
func AdoptArguments(raw []byte) (Arguments, error) {
	if len(raw) == 0 {
		return Arguments{}, nil
	}
	if stringified(raw) {
		// Capped, so that an append to Value's result cannot write into
		// the bytes after raw.
		return Arguments{v: raw[:len(raw):len(raw)]}, nil
	}
	return reformatArguments(jsontext.Value(raw).Clone())
}

// reformatArguments normalizes v, which it may modify, to JSON.stringify's
// form.
func reformatArguments(v jsontext.Value) (Arguments, error) {
	out, err := stringify(v)
	if err != nil {
		return Arguments{}, fmt.Errorf("invalid tool arguments: %w", err)
	}
	return Arguments{v: out}, nil
}

// Stringify returns raw, any JSON value, in the form
// JSON.stringify(JSON.parse(raw)) prints it (see [Arguments] for what that
// is). pi sizes some values by the length of that form: tool-call arguments,
// and the tool declarations of a system message. raw is not modified.
func Stringify(raw []byte) (jsontext.Value, error) {
	if stringified(raw) {
		return bytes.Clone(raw), nil
	}
	return stringify(jsontext.Value(raw).Clone())
}

// stringify is Stringify for a value it may modify and return.
func stringify(v jsontext.Value) (jsontext.Value, error) {
	if loneSurrogates(v) {
		// The formatter would read a lone surrogate as U+FFFD; JavaScript
		// keeps it and JSON.stringify writes it as an escape, six units
		// long. So every string is written by hand.
		dec := jsontext.NewDecoder(bytes.NewReader(v), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
		out, err := appendJSObjects(make([]byte, 0, len(v)), dec, true)
		if err != nil {
			return nil, err
		}
		if _, err := dec.ReadToken(); err != io.EOF {
			return nil, fmt.Errorf("unexpected data after the value at offset %d", dec.InputOffset())
		}
		return out, nil
	}
	if err := v.Format(stringifyOptions...); err != nil {
		return nil, err
	}
	if stringified(v) {
		return v, nil
	}
	// Some form the fast check leaves to this path, or objects to
	// rearrange.
	dec := jsontext.NewDecoder(bytes.NewReader(v), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	return appendJSObjects(make([]byte, 0, len(v)), dec, false)
}

// appendJSObjects appends the next value of dec, formatted, with its
// objects as a JavaScript object parsed from it holds them: one member per
// name, where the name first occurred, with the value it last had (JSON.parse
// keeps the last); members named by array indexes first, in ascending
// order (JavaScript's property order). With raw set, the input is not
// formatted yet: strings are written as JSON.stringify writes them
// (lone surrogates as escapes) and numbers formatted one by one.
func appendJSObjects(out []byte, dec *jsontext.Decoder, raw bool) ([]byte, error) {
	switch dec.PeekKind() {
	case '{':
		return appendJSObject(out, dec, raw)
	case '[':
		return appendJSArray(out, dec, raw)
	}
	v, err := dec.ReadValue()
	if err != nil {
		return nil, err
	}
	if raw {
		switch v.Kind() {
		case '"':
			return appendJSString(out, v), nil
		case '0':
			v = v.Clone()
			if err := v.Format(stringifyOptions...); err != nil {
				return nil, err
			}
		}
	}
	return append(out, v...), nil
}

// appendJSObject appends the object dec is at as [appendJSObjects] does.
func appendJSObject(out []byte, dec *jsontext.Decoder, raw bool) ([]byte, error) {
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	type member struct {
		name    jsontext.Value
		value   []byte
		index   uint32
		isIndex bool
	}
	var members []member
	at := map[string]int{}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		if raw {
			name = appendJSString(nil, name)
		} else {
			name = name.Clone() // dec reuses its buffer
		}
		// Equal names have equal text once formatted; a lone surrogate
		// stays distinct from U+FFFD only in that text.
		key := name
		if !raw {
			if key, err = jsontext.AppendUnquote(nil, name); err != nil {
				return nil, err
			}
		}
		value, err := appendJSObjects(nil, dec, raw)
		if err != nil {
			return nil, err
		}
		if i, ok := at[string(key)]; ok {
			members[i].value = value
			continue
		}
		at[string(key)] = len(members)
		index, isIndex := jsonwire.ArrayIndex(key)
		members = append(members, member{name, value, index, isIndex})
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	slices.SortStableFunc(members, func(a, b member) int {
		switch {
		case a.isIndex && b.isIndex:
			return cmp.Compare(a.index, b.index)
		case a.isIndex:
			return -1
		case b.isIndex:
			return 1
		}
		return 0
	})
	out = append(out, '{')
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, m.name...)
		out = append(out, ':')
		out = append(out, m.value...)
	}
	return append(out, '}'), nil
}

// appendJSArray appends the array dec is at, its elements as
// [appendJSObjects] writes them.
func appendJSArray(out []byte, dec *jsontext.Decoder, raw bool) ([]byte, error) {
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	out = append(out, '[')
	for first := true; dec.PeekKind() != ']'; first = false {
		if !first {
			out = append(out, ',')
		}
		var err error
		if out, err = appendJSObjects(out, dec, raw); err != nil {
			return nil, err
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	return append(out, ']'), nil
}

// loneSurrogates reports whether a string of the JSON text b holds a \u
// escape of a surrogate that is not half of a pair.
func loneSurrogates(b []byte) bool {
	for i := 0; i < len(b); i++ {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 {
			return false
		}
		if i += j; i+1 >= len(b) {
			return false
		}
		if b[i+1] != 'u' {
			i++ // an escaped character, perhaps a backslash
			continue
		}
		r, ok := jsonscan.Hex4(b, i+2)
		i += 5
		switch {
		case !ok || !utf16.IsSurrogate(r):
		case r >= 0xDC00:
			return true
		default:
			r2, ok := lowAt(b, i+1)
			if !ok || r2 < 0xDC00 || r2 > 0xDFFF {
				return true
			}
			i += 6
		}
	}
	return false
}

// lowAt reads a \u escape at b[i:], if there is one.
func lowAt(b []byte, i int) (rune, bool) {
	if i+1 >= len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return 0, false
	}
	return jsonscan.Hex4(b, i+2)
}

// appendJSString appends the JSON string literal q (quotes included, as the
// decoder read it) as JSON.stringify writes the string JSON.parse reads from
// it: the escapes \" \\ \b \f \n \r \t, \u00xx for other control
// characters and \udxxx for a lone surrogate; every other character as
// itself, and an invalid byte as U+FFFD.
func appendJSString(out, q []byte) []byte {
	out = append(out, '"')
	b := q[1 : len(q)-1]
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\\' && i+1 < len(b):
			e := b[i+1]
			i += 2
			switch e {
			case 'b':
				out = appendJSRune(out, '\b')
			case 'f':
				out = appendJSRune(out, '\f')
			case 'n':
				out = appendJSRune(out, '\n')
			case 'r':
				out = appendJSRune(out, '\r')
			case 't':
				out = appendJSRune(out, '\t')
			case 'u':
				r, _ := jsonscan.Hex4(b, i)
				i += 4
				if utf16.IsSurrogate(r) {
					if r2, ok := lowAt(b, i); ok && r < 0xDC00 && r2 >= 0xDC00 && r2 <= 0xDFFF {
						out = utf8.AppendRune(out, utf16.DecodeRune(r, r2))
						i += 6
						continue
					}
					out = append(out, '\\', 'u')
					out = strconv.AppendUint(out, uint64(r), 16)
					continue
				}
				out = appendJSRune(out, r)
			default: // " \\ /
				out = appendJSRune(out, rune(e))
			}
		case c < utf8.RuneSelf:
			out = appendJSRune(out, rune(c))
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			out = utf8.AppendRune(out, r) // U+FFFD for an invalid byte
			i += n
		}
	}
	return append(out, '"')
}

// appendJSRune appends r as JSON.stringify writes it inside a string.
func appendJSRune(out []byte, r rune) []byte {
	switch r {
	case '"', '\\':
		return append(out, '\\', byte(r))
	case '\b':
		return append(out, '\\', 'b')
	case '\f':
		return append(out, '\\', 'f')
	case '\n':
		return append(out, '\\', 'n')
	case '\r':
		return append(out, '\\', 'r')
	case '\t':
		return append(out, '\\', 't')
	}
	if r < 0x20 {
		const hex = "0123456789abcdef"
		return append(out, '\\', 'u', '0', '0', hex[r>>4], hex[r&15])
	}
	return utf8.AppendRune(out, r)
}

// ArgumentsOf marshals a Go value as tool-call arguments. Struct fields keep
// their declaration order; map keys are sorted, as Go marshals them.
func ArgumentsOf(v any) (Arguments, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Arguments{}, err
	}
	return NewArguments(b)
}

// Value returns the arguments as JSON text. It must not be modified.
func (a Arguments) Value() jsontext.Value {
	if len(a.v) == 0 {
		return jsontext.Value("{}")
	}
	return a.v
}

// String returns the arguments as JSON.stringify prints them.
func (a Arguments) String() string { return string(a.Value()) }

// Len returns the length of String in UTF-16 code units, JavaScript's length.
func (a Arguments) Len() int { return utf16Len([]byte(a.Value())) }

// Members yields the name and raw value of each member of an arguments
// object, in stored order. It yields nothing when the arguments are not an
// object.
func (a Arguments) Members() iter.Seq2[string, jsontext.Value] {
	return func(yield func(string, jsontext.Value) bool) {
		v := a.Value()
		if v.Kind() != '{' {
			return
		}
		dec := jsontext.NewDecoder(bytesReader(v), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
		if _, err := dec.ReadToken(); err != nil {
			return
		}
		for dec.PeekKind() == '"' {
			tok, err := dec.ReadToken()
			if err != nil {
				return
			}
			name := tok.String() // the token is void after the next read
			val, err := dec.ReadValue()
			if err != nil {
				return
			}
			if !yield(name, val) {
				return
			}
		}
	}
}

// Get returns the raw value of the named member of an arguments object.
func (a Arguments) Get(name string) (jsontext.Value, bool) {
	for n, v := range a.Members() {
		if n == name {
			return v, true
		}
	}
	return nil, false
}

// StringArg returns the named member when it is a JSON string.
func (a Arguments) StringArg(name string) (string, bool) {
	v, ok := a.Get(name)
	if !ok || v.Kind() != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(v, &s, jsonwire.ReadOptions); err != nil {
		return "", false
	}
	return s, true
}

// MarshalJSONTo writes the arguments as stored (see [WriteStringified]).
func (a Arguments) MarshalJSONTo(enc *jsontext.Encoder) error {
	return WriteStringified(enc, a.Value())
}

// WriteStringified writes v, a value in JSON.stringify's form, to enc. A
// lone surrogate in it, which JSON.stringify writes as an escape, is kept
// when enc both allows invalid UTF-8 and preserves raw strings (the session
// package writes entries so, to write what pi writes), and is written as
// U+FFFD otherwise, the form a strict encoder (and a provider's API) takes.
func WriteStringified(enc *jsontext.Encoder, v jsontext.Value) error {
	if loneSurrogates(v) {
		opts := enc.Options()
		invalid, _ := json.GetOption(opts, jsontext.AllowInvalidUTF8)
		raw, _ := json.GetOption(opts, jsontext.PreserveRawStrings)
		if !invalid || !raw {
			v = v.Clone()
			if err := v.Format(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)); err != nil {
				return err
			}
		}
	}
	return enc.WriteValue(v)
}

// UnmarshalJSONFrom reads any JSON value as arguments.
func (a *Arguments) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	args, err := NewArguments(v)
	if err != nil {
		return err
	}
	*a = args
	return nil
}
