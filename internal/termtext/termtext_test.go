package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFilter(t *testing.T) {
	tests := []struct{ name, in, clean, style string }{
		{"plain", "hello\tworld\n", "hello\tworld\n", "hello\tworld\n"},
		{"title", "a\x1b]0;PWNED\x07b", "ab", "ab"},
		{"clipboard", "a\x1b]52;c;cm0gLXJmIH4=\x1b\\b", "ab", "ab"},
		{"clear screen", "a\x1b[2J\x1b[Hb", "ab", "ab"},
		{"colour", "a\x1b[1;31mred\x1b[0mb", "aredb", "a\x1b[1;31mred\x1b[0mb"},
		{"private mode", "a\x1b[?1049hb", "ab", "ab"},
		{"carriage return", "safe\rforged", "safeforged", "safeforged"},
		{"c1 csi", "a\u009b2Jb\u009d0;x\u0007c", "a2Jb0;xc", "a2Jb0;xc"},
		{"unterminated osc", "a\x1b]0;never ends", "a", "a"},
		{"lone escape", "a\x1b", "a", "a"},
		{"two-byte", "a\x1bcb\x1b7c", "abc", "abc"},
		{"unicode stays", "é — 日本 🎉", "é — 日本 🎉", "é — 日本 🎉"},
		{"backspace and bell", "ab\x08\x07c", "abc", "abc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Clean(tc.in); got != tc.clean {
				t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.clean)
			}
			if got := KeepStyle(tc.in); got != tc.style {
				t.Errorf("KeepStyle(%q) = %q, want %q", tc.in, got, tc.style)
			}
		})
	}
}

func FuzzClean(f *testing.F) {
	f.Add("a\x1b]0;x\x07\x1b[31mb\u009b")
	f.Add("\x1b[\x1b]\x1bP\x1b")
	f.Fuzz(func(t *testing.T, s string) {
		k := KeepStyle(s)
		for i := 0; i < len(k); i++ {
			if k[i] == 0x1b {
				n, style := escape(k[i:])
				if !style {
					t.Fatalf("KeepStyle(%q) = %q: a sequence other than SGR at %d", s, k, i)
				}
				i += n - 1
			}
		}
		c := Clean(s)
		if strings.ContainsRune(c, 0x1b) || strings.ContainsRune(c, '\r') {
			t.Fatalf("Clean(%q) = %q", s, c)
		}
		for _, r := range c {
			if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f {
				t.Fatalf("Clean(%q) kept %U", s, r)
			}
		}
		if utf8.ValidString(s) && !utf8.ValidString(c) {
			t.Fatalf("Clean made invalid UTF-8 of %q", s)
		}
		if KeepStyle(KeepStyle(s)) != KeepStyle(s) {
			t.Fatalf("KeepStyle is not idempotent on %q", s)
		}
	})
}
