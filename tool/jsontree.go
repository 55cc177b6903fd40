package tool

import (
	"bytes"
	"errors"
	"io"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// node is a parsed JSON value that keeps its members in order, so that
// arguments come back from validation and repair as the model wrote them.
type node struct {
	kind jsontext.Kind // 'n', 't', 'f', '"', '0', '{', '['
	str  string        // a string's value, or a number's text
	arr  []node
	obj  []member
}

type member struct {
	name string
	val  node
}

// parseNode reads one JSON value. Repeated member names keep the last
// value in the first place, as JSON.parse does.
func parseNode(v []byte) (node, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(v), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	n, err := readNode(dec)
	if err != nil {
		return node{}, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		if err == nil {
			err = errors.New("more than one JSON value")
		}
		return node{}, err
	}
	return n, nil
}

func readNode(dec *jsontext.Decoder) (node, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return node{}, err
	}
	n := node{kind: tok.Kind()}
	switch n.kind {
	case '"':
		n.str = tok.String()
	case '0':
		n.str = tok.String()
	case '[':
		for dec.PeekKind() != ']' {
			item, err := readNode(dec)
			if err != nil {
				return node{}, err
			}
			n.arr = append(n.arr, item)
		}
		if _, err := dec.ReadToken(); err != nil {
			return node{}, err
		}
	case '{':
		for dec.PeekKind() != '}' {
			name, err := dec.ReadToken()
			if err != nil {
				return node{}, err
			}
			key := name.String()
			val, err := readNode(dec)
			if err != nil {
				return node{}, err
			}
			n.set(key, val)
		}
		if _, err := dec.ReadToken(); err != nil {
			return node{}, err
		}
	}
	return n, nil
}

// get returns the member called name.
func (n *node) get(name string) (*node, bool) {
	for i := range n.obj {
		if n.obj[i].name == name {
			return &n.obj[i].val, true
		}
	}
	return nil, false
}

// set replaces the member called name, or appends it.
func (n *node) set(name string, val node) {
	if v, ok := n.get(name); ok {
		*v = val
		return
	}
	n.obj = append(n.obj, member{name, val})
}

// del removes the member called name.
func (n *node) del(name string) {
	for i := range n.obj {
		if n.obj[i].name == name {
			n.obj = append(n.obj[:i:i], n.obj[i+1:]...)
			return
		}
	}
}

func stringNode(s string) node { return node{kind: '"', str: s} }

// float returns a number's value.
func (n node) float() float64 {
	f, _ := strconv.ParseFloat(n.str, 64)
	return f
}

func (n node) encode(enc *jsontext.Encoder) error {
	switch n.kind {
	case 'n':
		return enc.WriteToken(jsontext.Null)
	case 't':
		return enc.WriteToken(jsontext.True)
	case 'f':
		return enc.WriteToken(jsontext.False)
	case '"':
		return enc.WriteToken(jsontext.String(n.str))
	case '0':
		return enc.WriteValue(jsontext.Value(n.str))
	case '[':
		if err := enc.WriteToken(jsontext.BeginArray); err != nil {
			return err
		}
		for _, item := range n.arr {
			if err := item.encode(enc); err != nil {
				return err
			}
		}
		return enc.WriteToken(jsontext.EndArray)
	case '{':
		if err := enc.WriteToken(jsontext.BeginObject); err != nil {
			return err
		}
		for _, m := range n.obj {
			if err := enc.WriteToken(jsontext.String(m.name)); err != nil {
				return err
			}
			if err := m.val.encode(enc); err != nil {
				return err
			}
		}
		return enc.WriteToken(jsontext.EndObject)
	}
	return errors.New("invalid JSON node")
}

// value returns the node as compact JSON text.
func (n node) value() jsontext.Value {
	var buf bytes.Buffer
	enc := jsontext.NewEncoder(&buf, jsontext.AllowInvalidUTF8(true))
	if err := n.encode(enc); err != nil {
		// Only a node built wrongly by this package can fail.
		panic("tool: encoding a parsed JSON value: " + err.Error())
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
