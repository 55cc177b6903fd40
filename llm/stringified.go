package llm

import (
	"math"

	"github.com/prime-agent/prime/internal/jsonscan"
)

// stringified reports whether b is one JSON value exactly as
// JSON.stringify prints it and as [NewArguments] would reformat it, so
// that reformatting can be skipped: no white space; strings whose only
// escapes are \" \\ \b \f \n \r \t, without other control characters, and
// valid UTF-8; integers of at most fifteen characters without a leading
// zero and other than -0 (those print the same in every JSON encoder);
// nesting at most maxStringifiedDepth deep; objects with distinct member
// names that do not start with a digit, at most maxStringifiedNames with
// those of the objects around them. Anything else, including
// values that are in that form but that this check does not recognize (a
// fraction, a \u escape), reports false and goes through the full
// reformatting, which decides. FuzzStringified checks that whatever it
// accepts, reformatting leaves unchanged.
//
// Tool-call arguments are a sizable part of a session's bytes, and
// reformatting them was about a sixth of the time spent decoding messages.
func stringified(b []byte) bool {
	if len(b) > math.MaxInt32 {
		return false
	}
	var s stringifiedScanner
	s.b = b
	return s.value(0) && s.i == len(b)
}

// maxStringifiedDepth bounds the nesting stringified follows; deeper values
// take the full path.
const maxStringifiedDepth = 64

type stringifiedScanner struct {
	b []byte
	i int
	// names[:n] are the names of the members read so far of the objects
	// being read, innermost last, as offsets of their quoted text in b:
	// an array, not a slice, so that the scanner stays on the stack.
	names [maxStringifiedNames]span
	n     int
}

// span is the text b[start:end].
type span struct{ start, end int32 }

// maxStringifiedNames bounds the member names stringified keeps to find
// repeated ones: an object's and those of the objects around it. Larger
// objects take the full path.
const maxStringifiedNames = 32

func (s *stringifiedScanner) value(depth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.str()
	case c == '{':
		return s.object(depth + 1)
	case c == '[':
		return s.array(depth + 1)
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.integer()
	}
	return false
}

func (s *stringifiedScanner) literal(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// integer accepts 0 and -?[1-9][0-9]* of at most fifteen characters, and
// nothing that continues as a fraction or an exponent.
func (s *stringifiedScanner) integer() bool {
	b, i := s.b, s.i
	start := i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		if i > start { // -0 prints as 0
			return false
		}
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i-start > 15 || i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E' || b[i] >= '0' && b[i] <= '9') {
		return false
	}
	s.i = i
	return true
}

func (s *stringifiedScanner) object(depth int) bool {
	if depth > maxStringifiedDepth {
		return false
	}
	s.i++ // {
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	base := s.n
	for {
		start := s.i
		if s.i >= len(s.b) || s.b[s.i] != '"' || !s.str() {
			return false
		}
		if !s.newName(base, span{int32(start), int32(s.i)}) {
			return false
		}
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		if !s.value(depth) {
			return false
		}
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			s.n = base
			return true
		default:
			return false
		}
	}
}

// newName records the name of a member of the object whose names start at
// names[base], and reports whether it is in the form the fast check
// accepts: not the name of an earlier member (JSON.parse keeps only the
// last of those) and not an array index, which JavaScript objects order
// before their other members. Within this form, equal names have equal
// text, since every character has one spelling.
func (s *stringifiedScanner) newName(base int, name span) bool {
	text := s.b[name.start+1 : name.end-1]
	if len(text) > 0 && text[0] >= '0' && text[0] <= '9' {
		return false
	}
	if s.n == len(s.names) {
		return false
	}
	for _, n := range s.names[base:s.n] {
		if string(s.b[n.start:n.end]) == string(s.b[name.start:name.end]) {
			return false
		}
	}
	s.names[s.n] = name
	s.n++
	return true
}

func (s *stringifiedScanner) array(depth int) bool {
	if depth > maxStringifiedDepth {
		return false
	}
	s.i++ // [
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return true
	}
	for {
		if !s.value(depth) || s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// str accepts a string from its opening quote in the form described at
// stringified.
func (s *stringifiedScanner) str() bool {
	b := s.b
	for i := s.i + 1; i < len(b); {
		if i = jsonscan.PlainRun(b, i, true); i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return true
		case c == '\\':
			if i+1 >= len(b) {
				return false
			}
			switch b[i+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				i += 2
			default:
				return false
			}
		default:
			n := jsonscan.CharLen(b[i:])
			if n == 0 {
				return false
			}
			i += n
		}
	}
	return false
}
