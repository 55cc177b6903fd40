package tool

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFormatSize(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0B"}, {1023, "1023B"}, {1024, "1.0KB"}, {1280, "1.3KB"}, {1279, "1.2KB"},
		{4608, "4.5KB"}, {51200, "50.0KB"}, {1048575, "1024.0KB"}, {1048576, "1.0MB"}, {1258291, "1.2MB"},
	}
	for _, tt := range tests {
		if got := FormatSize(tt.n); got != tt.want {
			t.Errorf("FormatSize(%d) = %s, want %s", tt.n, got, tt.want)
		}
	}
}

func TestTruncateHead(t *testing.T) {
	tests := []struct {
		name, text         string
		maxLines, maxBytes int
		want, by           string
		outLines, totLines int
		firstLineExceeds   bool
	}{
		{"fits", "a\nb\n", 5, 100, "a\nb\n", "", 2, 2, false},
		{"empty", "", 5, 100, "", "", 0, 0, false},
		{"by lines", "1\n2\n3\n4\n", 2, 100, "1\n2", "lines", 2, 4, false},
		{"by bytes", "aaaa\nbbbb\ncccc", 10, 9, "aaaa\nbbbb", "bytes", 2, 3, false},
		{"by bytes, tight", "aaaa\nbbbb\ncccc", 10, 8, "aaaa", "bytes", 1, 3, false},
		{"first line too long", "aaaaaaaaaa\nb", 10, 5, "", "bytes", 0, 2, true},
		{"only the final newline over", "abcd\n", 10, 4, "abcd", "", 1, 1, false},
		{"empty lines count", "\n\n\n\n", 2, 100, "\n", "lines", 2, 4, false},
	}
	for _, tt := range tests {
		got, tr := TruncateHead(tt.text, tt.maxLines, tt.maxBytes)
		if got != tt.want || tr.TruncatedBy != tt.by || tr.OutputLines != tt.outLines || tr.TotalLines != tt.totLines ||
			tr.FirstLineExceedsLimit != tt.firstLineExceeds || tr.Truncated != (tt.by != "") || tr.OutputBytes != len(got) {
			t.Errorf("%s: got %q %+v", tt.name, got, tr)
		}
	}
}

func TestTruncateTail(t *testing.T) {
	tests := []struct {
		name, text         string
		maxLines, maxBytes int
		want, by           string
		outLines           int
		partial            bool
	}{
		{"fits", "a\nb", 5, 100, "a\nb", "", 2, false},
		{"by lines", "1\n2\n3\n4\n", 2, 100, "3\n4", "lines", 2, false},
		{"by bytes", "aaaa\nbbbb\ncccc\n", 10, 9, "bbbb\ncccc", "bytes", 2, false},
		{"last line partial", "a\nbcdefgh", 10, 4, "efgh", "bytes", 1, true},
		{"partial at a rune boundary", "x\n" + strings.Repeat("é", 5), 10, 5, "éé", "bytes", 1, true},
		{"single line", "abc", 1, 100, "abc", "", 1, false},
	}
	for _, tt := range tests {
		got, tr := TruncateTail(tt.text, tt.maxLines, tt.maxBytes)
		if got != tt.want || tr.TruncatedBy != tt.by || tr.OutputLines != tt.outLines || tr.LastLinePartial != tt.partial ||
			tr.OutputBytes != len(got) || !utf8.ValidString(got) {
			t.Errorf("%s: got %q %+v", tt.name, got, tr)
		}
	}
}

// FuzzTruncate checks the invariants of both truncations on any text.
func FuzzTruncate(f *testing.F) {
	f.Add("a\nbb\nccc\n", 2, 5)
	f.Add("ééé\n\n", 1, 3)
	f.Fuzz(func(t *testing.T, text string, maxLines, maxBytes int) {
		if maxLines < 1 || maxBytes < 1 || maxLines > 1000 || maxBytes > 1000 {
			return
		}
		head, h := TruncateHead(text, maxLines, maxBytes)
		if !strings.HasPrefix(text, head) || h.OutputBytes != len(head) {
			t.Fatalf("head %q is not a prefix of %q", head, text)
		}
		if h.Truncated && (countLines(head) > maxLines || len(head) > maxBytes) {
			t.Fatalf("head %q over the limits %d/%d", head, maxLines, maxBytes)
		}
		if h.Truncated && head != "" && text[len(head)] != '\n' {
			t.Fatalf("head %q does not end at a line", head)
		}
		tail, tt := TruncateTail(text, maxLines, maxBytes)
		if !strings.HasSuffix(strings.TrimSuffix(text, "\n"), tail) && tail != text {
			t.Fatalf("tail %q is not a suffix of %q", tail, text)
		}
		if tt.Truncated && (countLines(tail) > maxLines || len(tail) > maxBytes) {
			t.Fatalf("tail %q over the limits %d/%d", tail, maxLines, maxBytes)
		}
		if !h.Truncated && head != text && head != strings.TrimSuffix(text, "\n") {
			t.Fatalf("untruncated head %q of %q", head, text)
		}
	})
}
