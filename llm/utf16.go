package llm

import (
	"bytes"
	"unicode/utf8"
)

// UTF16Len returns the length of s in UTF-16 code units, which is what
// JavaScript's String.prototype.length reports and what pi's token estimates
// count. Runes above U+FFFF count two; an invalid byte counts one, as the
// replacement character it decodes to.
func UTF16Len(s string) int { return utf16Len(s) }

// utf16Len is UTF16Len for text in a string or in bytes. Most of a
// session's text is ASCII, so it counts eight bytes at a time while none of
// them is outside ASCII: estimating a long context is otherwise a
// noticeable part of preparing a compaction.
func utf16Len[T string | []byte](s T) int {
	const highs = 0x8080808080808080
	n := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
				uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
			if x&highs == 0 {
				i += 8
				n += 8
				continue
			}
		}
		if s[i] < utf8.RuneSelf {
			i++
			n++
			continue
		}
		var r rune
		var size int
		switch s := any(s).(type) {
		case string:
			r, size = utf8.DecodeRuneInString(s[i:])
		case []byte:
			r, size = utf8.DecodeRune(s[i:])
		}
		i += size
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

// UTF16Prefix returns the longest prefix of s whose UTF-16 length is at most
// n units without splitting a surrogate pair, and the UTF-16 length of that
// prefix. A rune that would straddle the limit is left out, as pi 1.6 does
// when it cuts a tool result.
func UTF16Prefix(s string, n int) (prefix string, units int) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		w := 1
		if r > 0xFFFF {
			w = 2
		}
		if units+w > n {
			return s[:i], units
		}
		units += w
		i += size
	}
	return s, units
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
