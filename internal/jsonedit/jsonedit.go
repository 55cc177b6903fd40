// Package jsonedit reads JSON text into a tree that remembers where each
// value lies in the text, and edits that text in place: setting or deleting
// one object member rewrites only that member's bytes, so the rest of a
// hand-edited file keeps its key order, spacing, line endings and every key
// the editor knows nothing about.
//
// Parsing follows JavaScript's JSON.parse as pi uses it: one value, strict
// JSON (no comments, no trailing commas), a leading UTF-8 byte order mark
// ignored, duplicate member names allowed (the last one wins, so edits and
// lookups use the last one), invalid UTF-8 tolerated. A syntax error reports
// its line and column.
//
// New members are written in the style of the surrounding text: an object
// laid out one member per line gets the new member on its own line with the
// same indentation, an object written on one line stays on one line, and
// the file's indentation unit, colon spacing and line ending are reused.
package jsonedit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
)

// Node is one JSON value and where it lies in the source text.
type Node struct {
	// Kind is the value's kind: '{', '[', '"', '0', 't', 'f' or 'n'.
	Kind jsontext.Kind
	// Start and End are the byte offsets of the value's text in the source.
	Start, End int
	// Members are an object's members in source order, duplicates included.
	Members []Member
	// Elems are an array's elements.
	Elems []*Node
}

// Member is one name/value pair of an object.
type Member struct {
	Name string
	// NameStart and NameEnd are the byte offsets of the quoted name.
	NameStart, NameEnd int
	Value              *Node
}

// Get returns the value of the last member called name (the one
// JSON.parse keeps), or nil when n is not an object or has no such member.
func (n *Node) Get(name string) *Node {
	if i := n.index(name); i >= 0 {
		return n.Members[i].Value
	}
	return nil
}

// index returns the index of the last member called name, or -1.
func (n *Node) index(name string) int {
	if n == nil || n.Kind != '{' {
		return -1
	}
	for i := len(n.Members) - 1; i >= 0; i-- {
		if n.Members[i].Name == name {
			return i
		}
	}
	return -1
}

// Doc is a parsed JSON text.
type Doc struct {
	src []byte
	// off is where the JSON text starts: 3 after a byte order mark, else 0.
	off int
	// Root is the top-level value, or nil when the text is empty or only
	// white space (JSON.parse rejects that; pi treats an empty settings file
	// as {} and so does Prime).
	Root *Node
}

// SyntaxError reports JSON text that does not parse.
type SyntaxError struct {
	// Offset is the byte offset of the error in the source.
	Offset int
	// Line and Column are 1-based; Column counts characters, not bytes.
	Line, Column int
	// Msg says what is wrong.
	Msg string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

var bom = []byte("\ufeff")

// Parse parses src. The tree refers to src, which must not change while the
// Doc is in use.
func Parse(src []byte) (*Doc, error) {
	d := &Doc{src: src}
	if bytes.HasPrefix(src, bom) {
		d.off = len(bom)
	}
	body := src[d.off:]
	if isBlank(body) {
		return d, nil
	}
	p := parser{dec: jsontext.NewDecoder(bytes.NewReader(body), jsonwire.ReadOptions), src: body, base: d.off}
	root, err := p.value()
	if err == nil {
		// JSON.parse takes exactly one value; the decoder would read a stream.
		start := p.next()
		if _, err = p.dec.ReadToken(); err == nil {
			return nil, d.syntaxError(d.off+start, "unexpected text after the top-level value")
		}
		if err == io.EOF {
			d.Root = root
			return d, nil
		}
	}
	off, msg := len(body), err.Error()
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		off = int(se.ByteOffset)
		if se.Err != nil {
			msg = se.Err.Error()
		}
		if ptr := string(se.JSONPointer); ptr != "" {
			msg += " (in " + ptr + ")"
		}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		off, msg = len(body), "unexpected end of file"
	}
	off = min(off, len(body))
	if comma, ok := trailingComma(body, off); ok {
		off, msg = comma, "trailing comma (JSON allows none before a closing bracket)"
	}
	return nil, d.syntaxError(d.off+off, msg)
}

// trailingComma reports whether the error at off is a comma followed by a
// closing bracket, the commonest slip in a hand-edited file, and where the
// comma is.
func trailingComma(b []byte, off int) (int, bool) {
	if off >= len(b) || b[off] != ',' {
		return 0, false
	}
	i := off + 1
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return off, i < len(b) && (b[i] == '}' || b[i] == ']')
}

func (d *Doc) syntaxError(offset int, msg string) *SyntaxError {
	line, col := d.Position(offset)
	return &SyntaxError{Offset: offset, Line: line, Column: col, Msg: msg}
}

// Position converts a byte offset in the source to a 1-based line and
// column (in characters, not counting a byte order mark).
func (d *Doc) Position(offset int) (line, col int) {
	offset = max(d.off, min(offset, len(d.src)))
	before := d.src[d.off:offset]
	line = 1 + bytes.Count(before, []byte("\n"))
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return line, 1 + utf8.RuneCount(before[lineStart:])
}

// Source returns the text the Doc was parsed from.
func (d *Doc) Source() []byte { return d.src }

// Raw returns the text of n.
func (d *Doc) Raw(n *Node) []byte { return d.src[n.Start:n.End] }

// Lookup returns the node at path (a list of member names from the root),
// or nil.
func (d *Doc) Lookup(path []string) *Node {
	n := d.Root
	for _, name := range path {
		if n = n.Get(name); n == nil {
			return nil
		}
	}
	return n
}

// parser builds the tree while a jsontext.Decoder checks the grammar. The
// decoder reports where each token ends; a token starts after the white
// space and the one ':' or ',' that follow the previous token.
type parser struct {
	dec  *jsontext.Decoder
	src  []byte
	base int
}

// next returns the offset in src of the next token.
func (p *parser) next() int {
	i := int(p.dec.InputOffset())
	for i < len(p.src) {
		switch p.src[i] {
		case ' ', '\t', '\n', '\r', ':', ',':
			i++
		default:
			return i
		}
	}
	return i
}

func (p *parser) value() (*Node, error) {
	start := p.next()
	switch kind := p.dec.PeekKind(); kind {
	case '{', '[':
		if _, err := p.dec.ReadToken(); err != nil {
			return nil, err
		}
		n := &Node{Kind: kind, Start: p.base + start}
		end := kind + 2 // '{'+2 == '}', '['+2 == ']'
		for p.dec.PeekKind() != end {
			if kind == '[' {
				v, err := p.value()
				if err != nil {
					return nil, err
				}
				n.Elems = append(n.Elems, v)
				continue
			}
			nameStart := p.next()
			tok, err := p.dec.ReadToken()
			if err != nil {
				return nil, err
			}
			name := tok.String() // before the next read voids tok
			nameEnd := int(p.dec.InputOffset())
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			n.Members = append(n.Members, Member{Name: name, NameStart: p.base + nameStart, NameEnd: p.base + nameEnd, Value: v})
		}
		if _, err := p.dec.ReadToken(); err != nil {
			return nil, err
		}
		n.End = p.base + int(p.dec.InputOffset())
		return n, nil
	default:
		if _, err := p.dec.ReadValue(); err != nil {
			return nil, err
		}
		return &Node{Kind: kind, Start: p.base + start, End: p.base + int(p.dec.InputOffset())}, nil
	}
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// ErrNotObject reports an edit whose path runs through a value that is not
// an object. The edit is refused rather than replacing that value.
var ErrNotObject = errors.New("not an object")

// PathError is an edit refused because of what is at Path.
type PathError struct {
	Path []string
	Kind jsontext.Kind
	Err  error
}

func (e *PathError) Error() string {
	where := "the top-level value"
	if len(e.Path) > 0 {
		where = strings.Join(e.Path, ".")
	}
	return fmt.Sprintf("%s is %s, %v", where, KindName(e.Kind), e.Err)
}

func (e *PathError) Unwrap() error { return e.Err }

// KindName names a JSON kind for messages: "an object", "a number", ...
func KindName(k jsontext.Kind) string {
	switch k {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "nothing"
}

// Set returns the source with the member at path set to value (any valid
// JSON text), creating the member and any missing objects on the way. An
// existing member is changed in place (the last one, when a name repeats);
// a new one is appended to its object. A null on the way is replaced by an
// object; any other non-object is a *PathError and nothing changes.
func (d *Doc) Set(path []string, value []byte) ([]byte, error) {
	if len(path) == 0 {
		return nil, errors.New("empty path")
	}
	v := jsontext.Value(bytes.Clone(value))
	if err := v.Compact(jsonwire.ReadOptions); err != nil {
		return nil, fmt.Errorf("value: %w", err)
	}
	st := d.style()
	var out []byte
	if d.Root == nil {
		obj, err := nest(path, v)
		if err != nil {
			return nil, err
		}
		out = append(append(bytes.Clone(d.src[:d.off]), st.format(obj, "", true)...), st.nl...)
	} else {
		if d.Root.Kind != '{' {
			return nil, &PathError{Kind: d.Root.Kind, Err: ErrNotObject}
		}
		n := d.Root
		for i, name := range path {
			m := n.index(name)
			if m < 0 {
				var err error
				if out, err = d.insert(st, n, path[i:], v); err != nil {
					return nil, err
				}
				break
			}
			mem := n.Members[m]
			if i == len(path)-1 || mem.Value.Kind == 'n' {
				// The last name, or a null standing where an object belongs.
				repl := v
				if i < len(path)-1 {
					var err error
					if repl, err = nest(path[i+1:], v); err != nil {
						return nil, err
					}
				}
				multi := st.multiline && d.multiline(n)
				out = d.splice(mem.Value.Start, mem.Value.End, st.format(repl, d.indent(mem.NameStart), multi))
				break
			}
			if mem.Value.Kind != '{' {
				return nil, &PathError{Path: path[:i+1], Kind: mem.Value.Kind, Err: ErrNotObject}
			}
			n = mem.Value
		}
	}
	return out, verifySet(out, path, v)
}

// insert adds the member rest[0] (holding rest[1:] nested around v) to the
// object n.
func (d *Doc) insert(st style, n *Node, rest []string, v jsontext.Value) ([]byte, error) {
	name, err := jsontext.AppendQuote(nil, rest[0])
	if err != nil {
		return nil, fmt.Errorf("member name %q: %w", rest[0], err)
	}
	val := v
	if len(rest) > 1 {
		if val, err = nest(rest[1:], v); err != nil {
			return nil, err
		}
	}
	multi := st.multiline && d.multiline(n)
	if len(n.Members) == 0 {
		if !st.multiline {
			return d.splice(n.Start, n.End, st.format(nestRaw(name, val), "", false)), nil
		}
		return d.splice(n.Start, n.End, st.format(nestRaw(name, val), d.indent(n.Start), true)), nil
	}
	last := n.Members[len(n.Members)-1]
	var b []byte
	if multi {
		indent := d.indent(last.NameStart)
		b = append(append(append(b, ','), st.nl...), indent...)
		b = append(append(append(b, name...), st.colon...), st.format(val, indent, true)...)
	} else {
		b = append(append(append(b, ", "...), name...), st.colon...)
		b = append(b, st.format(val, "", false)...)
	}
	return d.splice(last.Value.End, last.Value.End, b), nil
}

// Delete returns the source without the member at path (every member of
// that name in its object, so no older duplicate takes its place). It
// reports false, and returns the source unchanged, when there is no such
// member.
func (d *Doc) Delete(path []string) ([]byte, bool, error) {
	if len(path) == 0 {
		return nil, false, errors.New("empty path")
	}
	out, found := d.src, false
	doc := d
	for {
		parent := doc.Lookup(path[:len(path)-1])
		i := parent.index(path[len(path)-1])
		if i < 0 {
			break
		}
		found = true
		out = doc.remove(parent, i)
		var err error
		if doc, err = Parse(out); err != nil {
			return nil, false, fmt.Errorf("internal error: delete produced invalid JSON: %w", err)
		}
	}
	return bytes.Clone(out), found, nil
}

// remove returns the source without member i of object n, and without the
// comma and white space that separated it from its neighbour.
func (d *Doc) remove(n *Node, i int) []byte {
	ms := n.Members
	switch {
	case len(ms) == 1:
		return d.splice(n.Start+1, n.End-1, nil)
	case i == 0:
		return d.splice(ms[0].NameStart, ms[1].NameStart, nil)
	default:
		return d.splice(ms[i-1].Value.End, ms[i].Value.End, nil)
	}
}

// splice returns a new source with src[from:to] replaced by b.
func (d *Doc) splice(from, to int, b []byte) []byte {
	out := make([]byte, 0, len(d.src)-(to-from)+len(b))
	out = append(out, d.src[:from]...)
	out = append(out, b...)
	return append(out, d.src[to:]...)
}

// indent returns the white space that starts the line holding offset.
func (d *Doc) indent(offset int) string {
	start := bytes.LastIndexByte(d.src[:offset], '\n') + 1
	if start == 0 {
		start = d.off
	}
	end := start
	for end < offset && (d.src[end] == ' ' || d.src[end] == '\t') {
		end++
	}
	return string(d.src[start:end])
}

// multiline reports whether container n spans more than one line, or is
// empty (an empty object gets its first member on a line of its own).
func (d *Doc) multiline(n *Node) bool {
	return len(n.Members) == 0 && len(n.Elems) == 0 || bytes.IndexByte(d.src[n.Start:n.End], '\n') >= 0
}

// style is how the document lays out its JSON, for text the editor adds.
type style struct {
	nl, unit, colon string
	// multiline is false for a document written on a single line.
	multiline bool
}

func (d *Doc) style() style {
	// pi writes JSON.stringify(settings, null, 2).
	st := style{nl: "\n", unit: "  ", colon: ": ", multiline: true}
	if bytes.Contains(d.src, []byte("\r\n")) {
		st.nl = "\r\n"
	}
	r := d.Root
	if r == nil || r.Kind != '{' || len(r.Members) == 0 {
		return st
	}
	st.multiline = d.multiline(r)
	first := r.Members[0]
	if c := string(d.src[first.NameEnd:first.Value.Start]); !strings.ContainsAny(c, "\r\n") {
		st.colon = c
	}
	if st.multiline {
		if outer, inner := d.indent(r.Start), d.indent(first.NameStart); strings.HasPrefix(inner, outer) && len(inner) > len(outer) {
			st.unit = inner[len(outer):]
		}
	}
	return st
}

// format lays out v (compact JSON) for a place whose line starts with
// prefix: one member or element per line when multi, else on one line.
func (st style) format(v jsontext.Value, prefix string, multi bool) []byte {
	if k := v.Kind(); k != '{' && k != '[' {
		return v
	}
	doc, err := Parse(v)
	if err != nil || doc.Root == nil {
		return v
	}
	return st.write(nil, doc, doc.Root, prefix, multi)
}

func (st style) write(b []byte, d *Doc, n *Node, indent string, multi bool) []byte {
	count := len(n.Members) + len(n.Elems)
	if n.Kind != '{' && n.Kind != '[' || count == 0 {
		return append(b, d.Raw(n)...)
	}
	b = append(b, byte(n.Kind))
	inner := indent + st.unit
	for i := range count {
		if i > 0 {
			b = append(b, ',')
			if !multi {
				b = append(b, ' ')
			}
		}
		if multi {
			b = append(append(b, st.nl...), inner...)
		}
		if n.Kind == '{' {
			m := n.Members[i]
			b = append(append(b, d.src[m.NameStart:m.NameEnd]...), st.colon...)
			b = st.write(b, d, m.Value, inner, multi)
		} else {
			b = st.write(b, d, n.Elems[i], inner, multi)
		}
	}
	if multi {
		b = append(append(b, st.nl...), indent...)
	}
	return append(b, byte(n.Kind)+2)
}

// nest wraps v in objects named by path: nest([a b], 1) is {"a":{"b":1}}.
func nest(path []string, v jsontext.Value) (jsontext.Value, error) {
	for i := len(path) - 1; i >= 0; i-- {
		name, err := jsontext.AppendQuote(nil, path[i])
		if err != nil {
			return nil, fmt.Errorf("member name %q: %w", path[i], err)
		}
		v = nestRaw(name, v)
	}
	return v, nil
}

// nestRaw returns {name:v} for a quoted name.
func nestRaw(quotedName []byte, v jsontext.Value) jsontext.Value {
	b := append([]byte{'{'}, quotedName...)
	b = append(append(b, ':'), v...)
	return append(b, '}')
}

// verifySet re-reads an edited text and checks that path holds v, so a
// mistake in the editor is an error rather than a damaged file.
func verifySet(out []byte, path []string, v jsontext.Value) error {
	doc, err := Parse(out)
	if err != nil {
		return fmt.Errorf("internal error: edit produced invalid JSON: %w", err)
	}
	n := doc.Lookup(path)
	if n == nil {
		return fmt.Errorf("internal error: %s missing after edit", strings.Join(path, "."))
	}
	got := jsontext.Value(bytes.Clone(doc.Raw(n)))
	if err := got.Compact(jsonwire.ReadOptions); err != nil || !bytes.Equal(got, v) {
		return fmt.Errorf("internal error: %s is %s after edit, want %s", strings.Join(path, "."), got, v)
	}
	return nil
}
