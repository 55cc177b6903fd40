package tool

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonedit"
)

// Problem is one way a call's arguments break the tool's schema.
type Problem struct {
	// Path is the dotted path of the offending value ("edits.0.oldText"),
	// or "(arguments)" for the arguments as a whole.
	Path string
	// Message says what is wrong, in words for the model.
	Message string
}

// ValidationError is returned by [Validate] when arguments do not fit the
// schema even after coercion. Its text lists every problem and then the
// arguments as received, so that the model can correct its call.
type ValidationError struct {
	// Tool is the tool's name.
	Tool string
	// Problems are in schema order: properties as the schema declares them.
	Problems []Problem
	// Received is the arguments text as the model sent it.
	Received jsontext.Value
}

// Error formats the problems one per line, then the received arguments
// indented.
func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "The arguments of the %s call do not fit its schema:\n", e.Tool)
	for _, p := range e.Problems {
		fmt.Fprintf(&b, "  - %s: %s\n", p.Path, p.Message)
	}
	b.WriteString("\nThe arguments received were:\n")
	received := e.Received.Clone()
	if err := received.Indent(jsontext.WithIndent("  ")); err != nil {
		received = e.Received
	}
	b.Write(received)
	return b.String()
}

// rootPath names the arguments as a whole in a [Problem].
const rootPath = "(arguments)"

// Validate checks a call's arguments against spec.Parameters and returns
// them coerced, as compact JSON with members in the order received. It
// understands the part of JSON Schema the built-in tools use: type (a name
// or a list), properties, required, additionalProperties (false or a
// schema), items, minItems and enum; descriptions and other keywords are
// ignored. Models often send loosely typed values, so before a value is
// judged it is coerced as pi does:
//
//   - a numeric string becomes a number where a number or integer is
//     expected ("42", " 3.5 ", "1e3"), but never an empty string;
//   - "true" and "false" (any case) become booleans;
//   - a number or boolean becomes its text where a string is expected;
//   - a single value becomes a one-element array where an array is
//     expected (except null);
//   - null for an optional property that does not allow null is dropped,
//     as if omitted.
//
// Empty args mean the empty object. Failures are a [*ValidationError]; a
// schema this function cannot read is a plain error.
func Validate(spec Spec, args jsontext.Value) (jsontext.Value, error) {
	sch, err := parseSchema(spec.Parameters)
	if err != nil {
		return nil, fmt.Errorf("the schema of tool %s: %w", spec.Name, err)
	}
	if len(args) == 0 {
		args = jsontext.Value("{}")
	}
	v, err := parseNode(args)
	if err != nil {
		return nil, &ValidationError{
			Tool:     spec.Name,
			Problems: []Problem{{rootPath, "not valid JSON (" + err.Error() + ")"}},
			Received: args,
		}
	}
	var probs []Problem
	out := sch.check(v, "", &probs)
	if len(probs) > 0 {
		return nil, &ValidationError{Tool: spec.Name, Problems: probs, Received: args}
	}
	return out.value(), nil
}

// schema is the readable part of one JSON Schema node.
type schema struct {
	types      []string
	properties []schemaProperty
	required   map[string]bool
	// requiredOrder lists the required names as the schema does.
	requiredOrder []string
	noExtra       bool    // additionalProperties: false
	extra         *schema // additionalProperties as a schema
	items         *schema
	minItems      int
	enum          []node
}

type schemaProperty struct {
	name string
	sch  *schema
}

func parseSchema(v jsontext.Value) (*schema, error) {
	n, err := parseNode(v)
	if err != nil {
		return nil, err
	}
	return schemaOf(n, "")
}

func schemaOf(n node, at string) (*schema, error) {
	if n.kind == 't' {
		return &schema{}, nil // true: anything
	}
	if n.kind != '{' {
		return nil, fmt.Errorf("%s: a schema must be an object", pathOr(at))
	}
	s := &schema{required: map[string]bool{}}
	for _, m := range n.obj {
		var err error
		switch m.name {
		case "type":
			switch m.val.kind {
			case '"':
				s.types = []string{m.val.str}
			case '[':
				for _, t := range m.val.arr {
					if t.kind != '"' {
						return nil, fmt.Errorf("%s: type list holds a non-string", pathOr(at))
					}
					s.types = append(s.types, t.str)
				}
			default:
				return nil, fmt.Errorf("%s: type must be a string or a list", pathOr(at))
			}
			for _, t := range s.types {
				if !knownType(t) {
					return nil, fmt.Errorf("%s: unknown type %q", pathOr(at), t)
				}
			}
		case "properties":
			if m.val.kind != '{' {
				return nil, fmt.Errorf("%s: properties must be an object", pathOr(at))
			}
			for _, p := range m.val.obj {
				ps, err := schemaOf(p.val, join(at, p.name))
				if err != nil {
					return nil, err
				}
				s.properties = append(s.properties, schemaProperty{p.name, ps})
			}
		case "required":
			if m.val.kind != '[' {
				return nil, fmt.Errorf("%s: required must be a list", pathOr(at))
			}
			for _, r := range m.val.arr {
				if r.kind != '"' {
					return nil, fmt.Errorf("%s: required holds a non-string", pathOr(at))
				}
				s.required[r.str] = true
				s.requiredOrder = append(s.requiredOrder, r.str)
			}
		case "additionalProperties":
			switch m.val.kind {
			case 'f':
				s.noExtra = true
			case 't':
			default:
				s.extra, err = schemaOf(m.val, at)
			}
		case "items":
			s.items, err = schemaOf(m.val, join(at, "items"))
		case "minItems":
			if m.val.kind != '0' || m.val.float() < 0 {
				return nil, fmt.Errorf("%s: minItems must be a non-negative number", pathOr(at))
			}
			s.minItems = int(m.val.float())
		case "enum":
			if m.val.kind != '[' {
				return nil, fmt.Errorf("%s: enum must be a list", pathOr(at))
			}
			s.enum = m.val.arr
		}
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

func knownType(t string) bool {
	switch t {
	case "string", "number", "integer", "boolean", "null", "array", "object":
		return true
	}
	return false
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func pathOr(p string) string {
	if p == "" {
		return rootPath
	}
	return p
}

// check returns v coerced to s, adding what cannot be to probs.
func (s *schema) check(v node, at string, probs *[]Problem) node {
	if len(s.types) > 0 {
		var ok bool
		if v, ok = s.coerce(v); !ok {
			*probs = append(*probs, Problem{pathOr(at), fmt.Sprintf("should be %s, not %s", typeList(s.types), jsonedit.KindName(v.kind))})
			return v
		}
	}
	if len(s.enum) > 0 && !inEnum(s.enum, v) {
		*probs = append(*probs, Problem{pathOr(at), "should be one of " + enumList(s.enum)})
	}
	switch v.kind {
	case '{':
		v = s.checkObject(v, at, probs)
	case '[':
		if len(v.arr) < s.minItems {
			*probs = append(*probs, Problem{pathOr(at), fmt.Sprintf("should hold at least %d %s", s.minItems, plural(s.minItems, "item", "items"))})
		}
		if s.items != nil {
			arr := make([]node, len(v.arr))
			for i, item := range v.arr {
				arr[i] = s.items.check(item, join(at, strconv.Itoa(i)), probs)
			}
			v.arr = arr
		}
	}
	return v
}

func (s *schema) checkObject(v node, at string, probs *[]Problem) node {
	out := node{kind: '{'}
	// Problems are reported in schema order, as the model reads the
	// schema, then those of undeclared members in the order received.
	byProperty := make([][]Problem, len(s.properties))
	var extra []Problem
	for _, m := range v.obj {
		if i := s.propertyIndex(m.name); i >= 0 {
			p := s.properties[i].sch
			if m.val.kind == 'n' && !s.required[m.name] && !p.allows("null") {
				continue // an omitted optional, the way some models say it
			}
			out.obj = append(out.obj, member{m.name, p.check(m.val, join(at, m.name), &byProperty[i])})
			continue
		}
		switch {
		case s.noExtra:
			extra = append(extra, Problem{join(at, m.name), "is not a parameter of this tool"})
		case s.extra != nil:
			out.obj = append(out.obj, member{m.name, s.extra.check(m.val, join(at, m.name), &extra)})
		default:
			out.obj = append(out.obj, m)
		}
	}
	missing := func(name string) Problem { return Problem{join(at, name), "is required but missing"} }
	for i, p := range s.properties {
		if _, ok := v.get(p.name); !ok && s.required[p.name] {
			byProperty[i] = append(byProperty[i], missing(p.name))
		}
		*probs = append(*probs, byProperty[i]...)
	}
	for _, name := range s.requiredOrder {
		if _, ok := v.get(name); !ok && s.propertyIndex(name) < 0 {
			*probs = append(*probs, missing(name))
		}
	}
	*probs = append(*probs, extra...)
	return out
}

func (s *schema) propertyIndex(name string) int {
	for i, p := range s.properties {
		if p.name == name {
			return i
		}
	}
	return -1
}

func (s *schema) allows(t string) bool {
	if len(s.types) == 0 {
		return true
	}
	for _, have := range s.types {
		if have == t {
			return true
		}
	}
	return false
}

// coerce returns v if one of the schema's types accepts it, else the first
// coercion of v that one of them accepts.
func (s *schema) coerce(v node) (node, bool) {
	for _, t := range s.types {
		if fits(v, t) {
			return v, true
		}
	}
	for _, t := range s.types {
		if c, ok := coerceTo(v, t); ok {
			return c, true
		}
	}
	return v, false
}

func fits(v node, t string) bool {
	switch t {
	case "string":
		return v.kind == '"'
	case "number":
		return v.kind == '0'
	case "integer":
		return v.kind == '0' && isWhole(v.float())
	case "boolean":
		return v.kind == 't' || v.kind == 'f'
	case "null":
		return v.kind == 'n'
	case "array":
		return v.kind == '['
	case "object":
		return v.kind == '{'
	}
	return false
}

func isWhole(f float64) bool { return f == math.Trunc(f) && !math.IsInf(f, 0) }

// numericString is the decimal number syntax a string may use to stand for
// a number: no hexadecimal, no Infinity or NaN, no underscores.
var numericString = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`) })

func coerceTo(v node, t string) (node, bool) {
	switch t {
	case "number", "integer":
		if v.kind != '"' {
			return v, false
		}
		text := strings.TrimSpace(v.str)
		if !numericString().MatchString(text) {
			return v, false
		}
		f, err := strconv.ParseFloat(strings.TrimPrefix(text, "+"), 64)
		if err != nil || math.IsInf(f, 0) || (t == "integer" && !isWhole(f)) {
			return v, false
		}
		return node{kind: '0', str: formatNumber(f)}, true
	case "boolean":
		if v.kind == '"' {
			switch strings.ToLower(v.str) {
			case "true":
				return node{kind: 't'}, true
			case "false":
				return node{kind: 'f'}, true
			}
		}
	case "string":
		switch v.kind {
		case '0':
			return stringNode(v.str), true
		case 't':
			return stringNode("true"), true
		case 'f':
			return stringNode("false"), true
		}
	case "array":
		if v.kind != 'n' && v.kind != '[' {
			return node{kind: '[', arr: []node{v}}, true
		}
	}
	return v, false
}

// formatNumber prints f as JavaScript does (1000, 0.5, 1e+21).
func formatNumber(f float64) string {
	return string(jsontext.AppendFloat(nil, f, 64))
}

func inEnum(enum []node, v node) bool {
	for _, e := range enum {
		if equalNodes(e, v) {
			return true
		}
	}
	return false
}

func equalNodes(a, b node) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case '"':
		return a.str == b.str
	case '0':
		return a.float() == b.float()
	case '[':
		if len(a.arr) != len(b.arr) {
			return false
		}
		for i := range a.arr {
			if !equalNodes(a.arr[i], b.arr[i]) {
				return false
			}
		}
		return true
	case '{':
		if len(a.obj) != len(b.obj) {
			return false
		}
		for _, m := range a.obj {
			bv, ok := b.get(m.name)
			if !ok || !equalNodes(m.val, *bv) {
				return false
			}
		}
		return true
	}
	return true
}

func enumList(enum []node) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		parts[i] = string(e.value())
	}
	return strings.Join(parts, ", ")
}

func typeList(types []string) string {
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = typeName(t)
	}
	return strings.Join(parts, " or ")
}

func typeName(t string) string {
	switch t {
	case "integer", "array", "object":
		return "an " + t
	case "null":
		return "null"
	}
	return "a " + t
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
