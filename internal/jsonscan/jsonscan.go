// Package jsonscan holds the byte-level loops shared by Prime's fast JSON
// paths (the session validator and decoder, and the check that tool-call
// arguments are already in JSON.stringify's form): finding, eight bytes at
// a time, the next byte of a string's body that needs attention, and
// reading one character of it; and marking, 64 bytes at a time (with AVX2 or SSE2
// on amd64), the quotes, escapes and control bytes of a text, which the
// session validator reads strings by.
package jsonscan

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// SWAR constants: one in every byte, and the high bit of every byte.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// PlainRun skips, eight bytes at a time, the bytes of a JSON string's body
// at and after i that need no attention: it returns the index of the first
// quote, backslash or control character (or, with stopNonASCII, byte
// outside ASCII), or the index from which fewer than eight bytes remain,
// which the caller reads one at a time. Each test can flag a byte above a
// real match (a borrow), never below one, so the lowest flagged byte is
// always a real match.
func PlainRun(b []byte, i int, stopNonASCII bool) int {
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ (ones * '"')
		bs := x ^ (ones * '\\')
		special := ((q - ones) &^ q) | ((bs - ones) &^ bs) | ((x - ones*0x20) &^ x)
		if stopNonASCII {
			special |= x
		}
		if special &= highs; special != 0 {
			return i + bits.TrailingZeros64(special)/8
		}
		i += 8
	}
	return i
}

// CharLen returns the length of the character at the start of b, which
// must not be empty, as it may stand unescaped in a JSON string's body: 1
// for ASCII, the length of its UTF-8 encoding for any other character, and
// 0 for a control character or invalid UTF-8 (which the fast paths leave
// to the general decoder).
func CharLen(b []byte) int {
	if c := b[0]; c >= 0x20 && c < utf8.RuneSelf {
		return 1
	}
	return otherCharLen(b)
}

// otherCharLen is CharLen for a control character or a byte outside ASCII.
func otherCharLen(b []byte) int {
	if b[0] < 0x20 {
		return 0
	}
	r, n := utf8.DecodeRune(b)
	if r == utf8.RuneError && n <= 1 {
		return 0
	}
	return n
}

// Hex4 reads the four hexadecimal digits of a \u escape at b[i:], in
// either case.
func Hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
