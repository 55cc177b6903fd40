package llm

import (
	"bytes"
	"unicode/utf8"
)

// UTF16Len returns the length of s in UTF-16 code units, which is what
// JavaScript's String.prototype.length reports and what pi's token estimates
// count. Runes above U+FFFF count two; an invalid byte counts one, as the
// replacement character it decodes to.
func UTF16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			// Fast path for ASCII runs.
			i++
			n++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r > 0xFFFF {
			n += 2
		} else {
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
