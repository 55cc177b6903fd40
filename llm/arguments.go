package llm

import (
	"bytes"
	"fmt"
	"iter"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
)

// Arguments is a tool call's arguments: a JSON value, normally an object,
// held in exactly the text JavaScript's JSON.stringify prints for it. That
// text matters beyond display: pi estimates a tool call's size from its
// length, and Prime must reach the same numbers. The form is compact, keeps
// the original key order, escapes only what JSON requires (no HTML escaping)
// and prints numbers as JavaScript does. The zero value is the empty object.
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
	if err := v.Format(stringifyOptions...); err != nil {
		return Arguments{}, fmt.Errorf("invalid tool arguments: %w", err)
	}
	return Arguments{v: v}, nil
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

// MarshalJSONTo writes the arguments as stored.
func (a Arguments) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteValue(a.Value())
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
