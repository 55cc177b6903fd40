package session

import "github.com/prime-agent/prime/internal/jsonscan"

// maxDepth is the deepest nesting validJSON accepts, the same limit as the
// JSON decoder that later decodes the entry.
const maxDepth = 10000

// validJSON reports whether b holds exactly one JSON value, optionally
// surrounded by whitespace. It accepts what JSON.parse accepts and what
// [jsonwire.ReadOptions] let the decoder read: invalid UTF-8, lone
// surrogate escapes and duplicate member names.
//
// It exists because validating every line of a large session is most of the
// cost of opening it: the strings that make up the bulk of a session are
// scanned eight bytes at a time. FuzzValidJSON checks it against
// jsontext.Value.IsValid.
func validJSON(b []byte) bool {
	v := validator{b: b}
	v.space()
	if !v.value(0) {
		return false
	}
	v.space()
	return v.i == len(v.b)
}

type validator struct {
	b []byte
	i int
}

func (v *validator) space() { v.i = skipSpace(v.b, v.i) }

// skipSpace returns the index of the first byte at or after i in b that is
// not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// plainInt reads digits, at most maxLen of them and at least one, as a
// non-negative integer; ok is false for anything else.
func plainInt(digits []byte, maxLen int) (n int64, ok bool) {
	if len(digits) == 0 || len(digits) > maxLen {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func (v *validator) value(depth int) bool {
	if v.i >= len(v.b) {
		return false
	}
	switch c := v.b[v.i]; c {
	case '"':
		return v.str()
	case '{':
		return v.object(depth + 1)
	case '[':
		return v.array(depth + 1)
	case 't':
		return v.literal("true")
	case 'f':
		return v.literal("false")
	case 'n':
		return v.literal("null")
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return v.number()
		}
		return false
	}
}

func (v *validator) literal(lit string) bool {
	if len(v.b)-v.i < len(lit) || string(v.b[v.i:v.i+len(lit)]) != lit {
		return false
	}
	v.i += len(lit)
	return true
}

func (v *validator) object(depth int) bool {
	if depth > maxDepth {
		return false
	}
	v.i++ // {
	v.space()
	if v.i < len(v.b) && v.b[v.i] == '}' {
		v.i++
		return true
	}
	for {
		if v.i >= len(v.b) || v.b[v.i] != '"' || !v.str() {
			return false
		}
		v.space()
		if v.i >= len(v.b) || v.b[v.i] != ':' {
			return false
		}
		v.i++
		v.space()
		if !v.value(depth) {
			return false
		}
		if more, ok := v.sep('}'); !more {
			return ok
		}
	}
}

func (v *validator) array(depth int) bool {
	if depth > maxDepth {
		return false
	}
	v.i++ // [
	v.space()
	if v.i < len(v.b) && v.b[v.i] == ']' {
		v.i++
		return true
	}
	for {
		if !v.value(depth) {
			return false
		}
		if more, ok := v.sep(']'); !more {
			return ok
		}
	}
}

// sep consumes what follows a member or an element: a comma (more follows)
// or the closing bracket (ok and not more); anything else is not JSON.
func (v *validator) sep(closing byte) (more, ok bool) {
	v.space()
	if v.i >= len(v.b) {
		return false, false
	}
	switch v.b[v.i] {
	case ',':
		v.i++
		v.space()
		return true, true
	case closing:
		v.i++
		return false, true
	}
	return false, false
}

// str consumes a string starting at its opening quote.
func (v *validator) str() bool {
	b, i := v.b, v.i+1
	for {
		i = jsonscan.PlainRun(b, i, false)
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '"':
			v.i = i + 1
			return true
		case c == '\\':
			if i+1 >= len(b) {
				return false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return false
				}
				i += 6
			default:
				return false
			}
		case c < 0x20:
			return false
		default:
			i++
		}
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func (v *validator) number() bool {
	b, i := v.b, v.i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return false
		}
		i = j
	}
	v.i = i
	return true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
