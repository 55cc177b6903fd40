package tui

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

func TestWrapWords(t *testing.T) {
	text := "no model to talk to: set ANTHROPIC_API_KEY or OPENAI_API_KEY, or add a provider to models.json and name its model with --model PROVIDER/ID"
	for width := 18; width <= 90; width++ { // wider than every word
		got := wrapWords(text, width)
		for _, l := range strings.Split(got, "\n") {
			if ansi.StringWidth(l) > width {
				t.Fatalf("width %d: line %q is wider", width, l)
			}
			if strings.HasSuffix(l, "-") || strings.HasPrefix(l, "model PROVIDER") {
				t.Fatalf("width %d: a flag is split:\n%s", width, got)
			}
		}
		if strings.Join(strings.Fields(got), " ") != text {
			t.Fatalf("width %d: words lost or changed:\n%s", width, got)
		}
	}
	if got := wrapWords("abcdefghij xy", 4); got != "abcd\nefgh\nij\nxy" {
		t.Errorf("a long word: %q", got)
	}
}

// A word far wider than the line, styled or not, is cut into lines that
// each fit and hold it all, in one pass over it.
func TestWrapWordsLongWord(t *testing.T) {
	word := strings.Repeat("ab界c", 50000)
	styled := "\x1b[31m" + word + "\x1b[0m"
	for _, width := range []int{2, 3, 80} {
		for _, in := range []string{word, styled} {
			got := wrapWords("Error: "+in+" end", width)
			lines := strings.Split(got, "\n")
			for _, l := range lines {
				if w := ansi.StringWidth(l); w > width {
					t.Fatalf("width %d: line %q is %d wide", width, l, w)
				}
			}
			if ansi.Strip(strings.Join(lines, "")) != "Error:"+word+"end" {
				t.Fatalf("width %d: the text changed", width)
			}
			if len(lines) > ansi.StringWidth(word)/(width-1)+4 {
				t.Fatalf("width %d: %d lines for %d cells", width, len(lines), ansi.StringWidth(word))
			}
		}
	}
}

func TestWrapSpaces(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  string
	}{
		{"short", 20, "short"},
		{"FAIL: expected value got something-else entirely", 20, "FAIL: expected value\ngot something-else\nentirely"},
		{"    indented words that wrap", 14, "    indented\nwords that\nwrap"},
		{"a  b  c", 4, "a  b\nc"},
		{"col1    col2    col3", 12, "col1    col2\ncol3"},
		{"github.com/prime-agent/prime/tui ok", 10, "github.com\n/prime-age\nnt/prime/t\nui ok"},
		{"x 界界界", 2, "x\n界\n界\n界"},
		{"界", 1, "界"},
	} {
		if got := wrapSpaces(c.in, c.width); got != c.want {
			t.Errorf("wrapSpaces(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
}

// A word far wider than the line (a minified file's one line in a tool's
// output) is cut into lines that each fit and hold it all, in the time of
// one pass over it: measuring the rest again at every cut was quadratic.
func TestWrapSpacesLongWord(t *testing.T) {
	word := strings.Repeat("ab界c", 4000)
	for _, width := range []int{1, 2, 3, 80} {
		got := wrapSpaces(word+" end", width)
		lines := strings.Split(got, "\n")
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > width && l != "界" {
				t.Fatalf("width %d: line %q is %d wide", width, l, w)
			}
		}
		if strings.Join(strings.Fields(got), "") != word+"end" {
			t.Fatalf("width %d: the word changed", width)
		}
		if width >= 2 && len(lines) > ansi.StringWidth(word)/(width-1)+2 {
			t.Fatalf("width %d: %d lines for %d cells", width, len(lines), ansi.StringWidth(word))
		}
	}
}

// BenchmarkWrapSpacesLongLine wraps a 64 KB line with no spaces (and some non-ASCII) at 80
// columns, a minified file printed by a tool.
func BenchmarkWrapSpacesLongLine(b *testing.B) {
	line := strings.Repeat("función(a){return\x27→\x27+a};", 64<<10/28)
	for b.Loop() {
		wrapSpaces(line, 80)
	}
}

// FuzzWrapSpaces: no line is wider than the width (but for a character
// wider than the line, alone), and the text's words come out in order,
// only cut where a word is wider than the line.
func FuzzWrapSpaces(f *testing.F) {
	f.Add("FAIL: expected value got something-else entirely", 20)
	f.Add("  a\tb 界界 ccccccccccccccccccc  ", 3)
	f.Fuzz(func(t *testing.T, s string, width int) {
		if width < 1 || width > 200 || strings.ContainsAny(s, "\n\x1b") {
			return
		}
		got := wrapSpaces(s, width)
		for _, l := range strings.Split(got, "\n") {
			if w := ansi.StringWidth(l); w > width && ansi.StringWidth(firstGrapheme(l)) < w {
				t.Fatalf("line %q is %d wide, over %d", l, w, width)
			}
		}
		if strings.Join(strings.Fields(got), "") != strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), "") {
			t.Fatalf("the text changed: %q → %q", s, got)
		}
	})
}

// FuzzWrapWords: no line is wider than the width (but for a character
// wider than the line, alone), and the words come out in order, cut only
// where one is wider than the line.
func FuzzWrapWords(f *testing.F) {
	f.Add("no model to talk to: set ANTHROPIC_API_KEY or OPENAI_API_KEY", 18)
	f.Add("x 界界界 abcdefghijklmnop\nq", 2)
	f.Fuzz(func(t *testing.T, s string, width int) {
		if width < 1 || width > 200 || strings.Contains(s, "\x1b") || !utf8.ValidString(s) {
			return
		}
		got := wrapWords(s, width)
		for _, l := range strings.Split(got, "\n") {
			if w := ansi.StringWidth(l); w > width && ansi.StringWidth(firstGrapheme(l)) < w {
				t.Fatalf("line %q is %d wide, over %d", l, w, width)
			}
		}
		if strings.Join(strings.Fields(got), "") != strings.Join(strings.Fields(s), "") {
			t.Fatalf("the text changed: %q → %q", s, got)
		}
	})
}
