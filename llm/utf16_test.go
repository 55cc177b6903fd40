package llm

import (
	"testing"
	"unicode/utf16"
)

// FuzzUTF16Len checks the counting of UTF-16 units, on strings and on
// bytes, against encoding the runes to UTF-16 (an invalid byte reads as one
// replacement character).
func FuzzUTF16Len(f *testing.F) {
	for _, s := range []string{"", "abc", "abcdefgh", "abcdefghé", "日本語のテキストです", "\U0001F600abcdefgh", "\xff\xfeabcdefgh\xc3", "abcdefg\xe6\x97"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := len(utf16.Encode([]rune(s)))
		if got := UTF16Len(s); got != want {
			t.Fatalf("UTF16Len(%q) = %d, want %d", s, got, want)
		}
		if got := utf16Len([]byte(s)); got != want {
			t.Fatalf("utf16Len([]byte(%q)) = %d, want %d", s, got, want)
		}
	})
}
