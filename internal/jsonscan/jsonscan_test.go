package jsonscan

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// checkPlainRun checks PlainRun on b from i against a byte-at-a-time
// reading: it stops at the first byte that needs attention, or where fewer
// than eight bytes remain, without passing any such byte.
func checkPlainRun(t *testing.T, b []byte, i int) {
	t.Helper()
	for _, stop := range []bool{false, true} {
		want := i
		for ; want < len(b); want++ {
			if c := b[want]; c == '"' || c == '\\' || c < 0x20 || stop && c >= utf8.RuneSelf {
				break
			}
		}
		got := PlainRun(b, i, stop)
		if got > want || got < want && (got < i || len(b)-got >= 8) {
			t.Fatalf("PlainRun(%q, %d, %v) = %d; the first byte needing attention is at %d", b, i, stop, got, want)
		}
	}
}

func TestPlainRun(t *testing.T) {
	plain := bytes.Repeat([]byte("abcdefghijklmnopqrstuvwxyz 0123456789"), 2)
	for _, special := range []byte{'"', '\\', 0, 0x1f, 0x20, 0x7f, 0x80, 0xc3, 0xff} {
		for pos := range plain {
			b := bytes.Clone(plain)
			b[pos] = special
			for _, i := range []int{0, 1, 7, 8, 9, pos, len(b)} {
				checkPlainRun(t, b, min(i, len(b)))
			}
		}
	}
}

// FuzzPlainRun checks PlainRun against a byte-at-a-time reading.
func FuzzPlainRun(f *testing.F) {
	f.Add([]byte(`a plain string of some length, then a "quote" and more text`), 0)
	f.Add([]byte("line one\\nline two\x01 é and \xff"), 3)
	f.Fuzz(func(t *testing.T, b []byte, i int) {
		if i >= 0 && i <= len(b) {
			checkPlainRun(t, b, i)
		}
	})
}

// FuzzCharLen checks CharLen against utf8.DecodeRune.
func FuzzCharLen(f *testing.F) {
	for _, s := range []string{"a", "\x00", "\x1f", " ", "é", "日", "\U0001F600", "\xff", "\xc3", "\xef\xbf\xbd", "\xed\xa0\x80"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		r, n := utf8.DecodeRune(b)
		want := n
		if b[0] < 0x20 || r == utf8.RuneError && n == 1 {
			want = 0
		}
		if got := CharLen(b); got != want {
			t.Fatalf("CharLen(%q) = %d, want %d", b, got, want)
		}
	})
}
