// Package termtext makes text that someone else wrote safe to show on the
// user's terminal. A cloned repository's file, a command's output or a
// model's reply can hold escape sequences that a terminal obeys rather
// than shows: set the window title, clear the screen, write the clipboard
// (OSC 52: the next paste runs what the repository chose), or move the
// cursor to forge what Prime drew. Text is shown only as text.
package termtext

import (
	"strings"
	"unicode/utf8"
)

// Clean removes escape sequences and control characters (C0, DEL and C1)
// from s; newlines and tabs stay, and a byte that is not UTF-8 becomes
// U+FFFD.
func Clean(s string) string { return filter(s, false) }

// KeepStyle is Clean for text Prime has styled: the colour and emphasis
// sequences (SGR, ESC [ ... m) stay, and everything else a terminal would
// act on goes.
func KeepStyle(s string) string { return filter(s, true) }

func filter(s string, sgr bool) string {
	if safe(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b:
			n, style := escape(s[i:])
			if sgr && style {
				b.WriteString(s[i : i+n])
			}
			i += n
			continue
		case c == '\n' || c == '\t':
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
		case c < utf8.RuneSelf:
			b.WriteByte(c)
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				// A stray byte: shown as U+FFFD, or two of them
				// around a removed control could meet as one.
				b.WriteString("\uFFFD")
				i++
				continue
			}
			if r >= 0x80 && r <= 0x9f {
				// C1 controls: U+009B is CSI on terminals that read
				// them, U+009D OSC.
				i += size
				continue
			}
			b.WriteString(s[i : i+size])
			i += size
			continue
		}
		i++
	}
	return b.String()
}

// safe reports whether s holds nothing filter would change.
func safe(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f {
			return false
		}
	}
	return true
}

// escape returns the length of the escape sequence at the start of s (an
// ESC), and whether it is an SGR sequence: CSI (ESC [ parameters,
// intermediates, a final byte), OSC, DCS, SOS, PM and APC strings (ended by
// BEL or ESC \, or by the end of s), or ESC and one more byte.
func escape(s string) (n int, style bool) {
	if len(s) < 2 {
		return len(s), false
	}
	switch s[1] {
	case '[':
		i := 2
		for i < len(s) && s[i] >= 0x30 && s[i] <= 0x3f {
			i++
		}
		params := s[2:i]
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
			i++
		}
		if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
			return i + 1, s[i] == 'm' && strings.Trim(params, "0123456789;:") == ""
		}
		return i, false
	case ']', 'P', 'X', '^', '_':
		for i := 2; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1, false
			}
			if s[i] == 0x1b {
				if i+1 < len(s) && s[i+1] == '\\' {
					return i + 2, false
				}
				return i, false
			}
		}
		return len(s), false
	}
	_, size := utf8.DecodeRuneInString(s[1:])
	return 1 + size, false
}
