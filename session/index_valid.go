package session

import (
	"encoding/binary"
	"math/bits"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/prime-agent/prime/internal/jsonscan"
)

// walkDepth is the deepest nesting walk follows itself, the bits of a
// word; deeper text is left to validDeep, which accepts nesting as deep
// as the JSON decoder that later decodes the entry does.
const walkDepth = 64

// What walk found: a value that is not valid JSON, one that is, or one
// that nests deeper than walkDepth (which validDeep then checks whole).
const (
	walkBad = iota
	walkOK
	walkDeep
)

// validJSON reports whether b holds exactly one JSON value, optionally
// surrounded by whitespace. It accepts what JSON.parse accepts and what
// [jsonwire.ReadOptions] let the decoder read: invalid UTF-8, lone
// surrogate escapes and duplicate member names.
//
// It exists because validating every line of a large session is most of the
// cost of opening it: the strings that make up the bulk of a session are
// read 64 bytes at a time (see validator.str). FuzzValidJSON checks it
// against jsontext.Value.IsValid.
func validJSON(b []byte) bool {
	v := newValidator(b, 0)
	v.space()
	switch v.walk(false) {
	case walkBad:
		return false
	case walkDeep:
		return validDeep(b)
	}
	v.space()
	return v.i == len(v.b)
}

// validObjectFrom reports whether b is one JSON object, with white space
// after it, given that b[:i] is valid JSON as the start of an object up
// to the end of a member's value (what fastHead reads): it validates only
// from i on.
func validObjectFrom(b []byte, i int) bool {
	v := newValidator(b, i)
	switch v.walk(true) {
	case walkBad:
		return false
	case walkDeep:
		// b[:i] starts an object, so b is one when it is valid at all.
		return validDeep(b)
	}
	v.space()
	return v.i == len(v.b)
}

// validDeep reports whether b is one JSON value, for the rare text that
// nests deeper than walk keeps track of: through the general decoder's
// check, with the same options and depth limit as validJSON.
func validDeep(b []byte) bool {
	return jsontext.Value(b).IsValid(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
}

// A validator reads b from i on. Strings, the bulk of a session, are read
// through the masks of 64-byte chunks of b (jsonscan.Scanner), computed in
// order from where the validator starts as it reaches them: a string ends
// at the first unescaped quote after it opens, and is valid when no
// control byte comes before that and each escaped character is one JSON
// allows. The validator starts where no backslash is pending (the start
// of the line, or after a member's value), so the masks read as they would
// from the line's start.
type validator struct {
	b []byte
	i int
	// at is where the chunk of m starts; the next chunk is at at+64,
	// and chunks next to made-1 of those the scanner made last follow.
	at         int
	m          jsonscan.Masks
	next, made int
	scan       jsonscan.Scanner
	// depth and objs hold walk's while it calls out.
	depth int
	objs  uint64
}

// newValidator returns a validator of b from i on.
func newValidator(b []byte, i int) validator {
	return validator{b: b, i: i, at: i - 64}
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

// str consumes a string starting at its opening quote.
func (v *validator) str() bool {
	i := v.i + 1
	for {
		for i >= v.at+64 {
			// The next chunk, from the batch the scanner made last or
			// a new one; a string still open at the end of b is not
			// one.
			if v.at+64 >= len(v.b) {
				return false
			}
			v.at += 64
			if v.next >= v.made {
				v.made, v.next = v.scan.Next(v.b, v.at), 0
			}
			v.m = v.scan.Made(v.next)
			v.next++
		}
		from := ^uint64(0) << uint(i-v.at)
		body := from
		q := v.m.Quote & from
		if q != 0 {
			body &= q&-q - 1 // up to the closing quote
		} else if v.at+64 >= len(v.b) {
			return false // b ends first
		}
		if v.m.Control&body != 0 || v.m.Escaped&body != 0 && !v.escapes(v.m.Escaped&body) {
			return false
		}
		if q != 0 {
			v.i = v.at + bits.TrailingZeros64(q) + 1
			return true
		}
		i = v.at + 64
	}
}

// escapes reports whether each escaped character esc marks in the chunk
// at v.at is one JSON allows after a backslash, \u with its four digits.
func (v *validator) escapes(esc uint64) bool {
	b := v.b
	simple := [2]uint64{simpleBelow64, simpleFrom64}
	for ; esc != 0; esc &= esc - 1 {
		p := v.at + bits.TrailingZeros64(esc)
		// One bit test for the characters that stand alone after a
		// backslash, instead of a comparison each.
		c := b[p]
		if c < 128 && simple[c>>6]>>(c&63)&1 != 0 {
			continue
		}
		if c != 'u' || p+5 > len(b) || !isHex(b[p+1]) || !isHex(b[p+2]) || !isHex(b[p+3]) || !isHex(b[p+4]) {
			return false
		}
	}
	return true
}

// The characters JSON allows on their own after a backslash, " \ / b f n
// r t, as bits: bit c of simpleBelow64 for those below 64, bit c-64 of
// simpleFrom64 for the others.
const (
	simpleBelow64 = 1<<'"' | 1<<'/'
	simpleFrom64  = 1<<('\\'-64) | 1<<('b'-64) | 1<<('f'-64) | 1<<('n'-64) | 1<<('r'-64) | 1<<('t'-64)
)

// literalEnd reads the literal true, false or null at b[i], whose first
// byte is its: where it ends, and whether it is one.
func literalEnd(b []byte, i int) (int, bool) {
	lit := "null"
	if b[i] == 't' {
		lit = "true"
	} else if b[i] == 'f' {
		lit = "false"
	}
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// numberEnd reads the JSON number at b[i], which must exist: where it
// ends, and whether it is one.
func numberEnd(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return i, false
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
			return i, false
		}
		i = j
	}
	return i, true
}

// digits returns the index of the first byte at or after i in b that is
// not a decimal digit, eight bytes at a time while eight remain. A byte
// is flagged when it is below '0', above '9' or not ASCII; a non-ASCII
// byte can carry into the bytes after it, never into those before, so the
// lowest flagged byte is always the first non-digit.
func digits(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		if other := (^(x + ones*(0x80-'0')) | (x + ones*(0x80-'9'-1)) | x) & highs; other != 0 {
			return i + bits.TrailingZeros64(other)/8
		}
		i += 8
	}
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// walk validates one JSON value from v.i on, or with inObject what
// follows a member's value inside an object (validObjectFrom), and leaves
// v.i just after it. It is one loop with an explicit stack, not a call per
// value: the bulk of a session line is short strings, numbers and
// separators, where a call per token cost more than the token (walking
// the lines of a generated session is 11% faster than the recursive
// validator it replaced). A string that ends in the chunk at hand without
// escapes or control bytes, the common case, is read from its masks in
// place; others go through str.
func (v *validator) walk(inObject bool) int {
	b := v.b
	i := v.i
	// depth is the nesting depth; objs has bit d-1 set when the
	// container at depth d is an object.
	var depth int
	var objs uint64
	var ok, obj bool
	if inObject {
		depth, objs = 1, 1
		goto next
	}
value:
	if i >= len(b) {
		return walkBad
	}
	switch c := b[i]; c {
	case '"':
		if end := v.shortStr(i); end > 0 {
			i = end
			goto next
		}
		// The walk's state goes through v around the call, so that it
		// is not saved on every value's way (see walk).
		v.i, v.depth, v.objs = i, depth, objs
		ok = v.str()
		b, i, depth, objs = v.b, v.i, v.depth, v.objs
		if !ok {
			return walkBad
		}
	case '{':
		if depth++; depth > walkDepth {
			return walkDeep
		}
		objs |= 1 << (uint(depth-1) & 63)
		if i = skipSpace(b, i+1); i < len(b) && b[i] == '}' {
			depth--
			i++
			break
		}
		goto member
	case '[':
		if depth++; depth > walkDepth {
			return walkDeep
		}
		objs &^= 1 << (uint(depth-1) & 63)
		if i = skipSpace(b, i+1); i < len(b) && b[i] == ']' {
			depth--
			i++
			break
		}
		goto value
	case 't', 'f', 'n':
		if i, ok = literalEnd(v.b, i); !ok {
			return walkBad
		}
	default:
		if c-'1' < 9 {
			// A plain integer, the usual number (times, counts),
			// read in place; others go through numberEnd.
			if j := digits(v.b, i+1); j < len(b) && b[j] != '.' && b[j]|0x20 != 'e' {
				i = j
				goto next
			}
		} else if c != '-' && c != '0' {
			return walkBad
		}
		v.depth, v.objs = depth, objs
		i, ok = numberEnd(v.b, i)
		b, depth, objs = v.b, v.depth, v.objs
		if !ok {
			return walkBad
		}
	}
next:
	// A value has ended: what follows it in its container, if any.
	if depth == 0 {
		v.i = i
		return walkOK
	}
	if i < len(b) && b[i] <= ' ' {
		i = skipSpace(b, i)
	}
	if i >= len(b) {
		return walkBad
	}
	obj = objs>>(uint(depth-1)&63)&1 != 0
	switch b[i] {
	case ',':
		if i++; i < len(b) && b[i] <= ' ' {
			i = skipSpace(b, i)
		}
		if obj {
			goto member
		}
		goto value
	case '}':
		if !obj {
			return walkBad
		}
	case ']':
		if obj {
			return walkBad
		}
	default:
		return walkBad
	}
	depth--
	i++
	goto next
member:
	// A member's name, its colon, then its value.
	if i >= len(b) || b[i] != '"' {
		return walkBad
	}
	if end := v.shortStr(i); end > 0 {
		i = end
		goto colon
	}
	v.i, v.depth, v.objs = i, depth, objs
	ok = v.str()
	b, i, depth, objs = v.b, v.i, v.depth, v.objs
	if !ok {
		return walkBad
	}
colon:
	if i < len(b) && b[i] <= ' ' {
		i = skipSpace(b, i)
	}
	if i >= len(b) || b[i] != ':' {
		return walkBad
	}
	if i++; i < len(b) && b[i] <= ' ' {
		i = skipSpace(b, i)
	}
	goto value
}

// shortStr reads the string whose opening quote is at i when it ends in
// the chunk at hand without escapes or control bytes, the common case:
// where it ends, or 0 when it is not such a string (strAt reads it then).
// It is small enough to be inlined.
func (v *validator) shortStr(i int) int {
	if j := uint(i + 1 - v.at); j < 64 {
		from := ^uint64(0) << j
		if q := v.m.Quote & from; q != 0 && (v.m.Control|v.m.Escaped)&from&(q&-q-1) == 0 {
			return v.at + bits.TrailingZeros64(q) + 1
		}
	}
	return 0
}

// strAt reads the string whose opening quote is at i: where it ends (just
// after its closing quote) and whether it is valid.
func (v *validator) strAt(i int) (int, bool) {
	v.i = i
	ok := v.str()
	return v.i, ok
}
