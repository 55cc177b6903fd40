package llm

import (
	"bytes"
	"cmp"
	"fmt"
	"iter"
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

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
	if err := v.Format(stringifyOptions...); err != nil {
		return Arguments{}, fmt.Errorf("invalid tool arguments: %w", err)
	}
	if stringified(v) {
		return Arguments{v: v}, nil
	}
	// Some form the fast check leaves to this path, or objects to
	// rearrange.
	dec := jsontext.NewDecoder(bytes.NewReader(v), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	out, err := appendJSObjects(make([]byte, 0, len(v)), dec)
	if err != nil {
		return Arguments{}, fmt.Errorf("invalid tool arguments: %w", err)
	}
	return Arguments{v: out}, nil
}

// appendJSObjects appends the next value of dec, formatted, with its
// objects as a JavaScript object parsed from it holds them: one member per
// name, where the name first occurred, with the value it last had (JSON.parse
// keeps the last); members named by array indexes first, in ascending
// order (JavaScript's property order).
func appendJSObjects(out []byte, dec *jsontext.Decoder) ([]byte, error) {
	switch dec.PeekKind() {
	case '{':
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
			name = name.Clone() // dec reuses its buffer
			key, err := jsontext.AppendUnquote(nil, name)
			if err != nil {
				return nil, err
			}
			value, err := appendJSObjects(nil, dec)
			if err != nil {
				return nil, err
			}
			if i, ok := at[string(key)]; ok {
				members[i].value = value
				continue
			}
			at[string(key)] = len(members)
			index, isIndex := arrayIndex(key)
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
	case '[':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		out = append(out, '[')
		for first := true; dec.PeekKind() != ']'; first = false {
			if !first {
				out = append(out, ',')
			}
			var err error
			if out, err = appendJSObjects(out, dec); err != nil {
				return nil, err
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		return append(out, ']'), nil
	}
	v, err := dec.ReadValue()
	if err != nil {
		return nil, err
	}
	return append(out, v...), nil
}

// arrayIndex reports whether name is an array index as ECMAScript defines
// it, the canonical decimal form of an integer from 0 to 2³²−2, and which.
func arrayIndex(name []byte) (uint32, bool) {
	if len(name) == 0 || len(name) > 10 || len(name) > 1 && name[0] == '0' {
		return 0, false
	}
	var n uint64
	for _, c := range name {
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
