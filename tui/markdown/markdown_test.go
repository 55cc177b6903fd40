package markdown

import (
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/prime-agent/prime/internal/golden"
)

// testTheme is a theme with colours, for the golden that shows styles.
func testTheme() Theme {
	fg := func(c color.Color) lipgloss.Style { return lipgloss.NewStyle().Foreground(c) }
	return Theme{
		Heading1: lipgloss.NewStyle().Bold(true).Underline(true).Foreground(lipgloss.Cyan),
		Heading2: lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Cyan),
		Heading:  lipgloss.NewStyle().Bold(true),
		Bold:     lipgloss.NewStyle().Bold(true), Italic: lipgloss.NewStyle().Italic(true),
		Strike: lipgloss.NewStyle().Strikethrough(true), Code: fg(lipgloss.Yellow),
		Link: lipgloss.NewStyle().Underline(true).Foreground(lipgloss.Blue), URL: fg(lipgloss.BrightBlack),
		Marker: fg(lipgloss.Cyan), Quote: fg(lipgloss.BrightBlack), Rule: fg(lipgloss.BrightBlack),
		Border: fg(lipgloss.BrightBlack), Fence: fg(lipgloss.BrightBlack), HTML: fg(lipgloss.BrightBlack),
		Keyword: fg(lipgloss.Magenta), String: fg(lipgloss.Green), Comment: fg(lipgloss.BrightBlack),
		Number: fg(lipgloss.Yellow), Type: fg(lipgloss.Cyan), Added: fg(lipgloss.Green), Removed: fg(lipgloss.Red),
		Hunk: fg(lipgloss.Cyan),
	}
}

func corpus(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	out := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".md")] = string(data)
	}
	return out
}

var widths = []int{40, 80, 120}

// checkWidth fails for a line wider than width.
func checkWidth(t *testing.T, what, out string, width int) {
	t.Helper()
	for i, l := range strings.Split(out, "\n") {
		if w := ansi.StringWidth(l); w > width {
			t.Errorf("%s: line %d is %d cells wide, more than %d: %q", what, i+1, w, width, ansi.Strip(l))
		}
	}
}

// The corpus rendered at 40, 80 and 120 columns, without styles (the
// layout), and with them at 80 columns (the styles: every line closes
// what it opens).
func TestGolden(t *testing.T) {
	plain := New(Theme{})
	styled := New(testTheme())
	for name, src := range corpus(t) {
		for _, w := range widths {
			out := plain.Render(src, w)
			checkWidth(t, name, out, w)
			golden.Check(t, filepath.Join("golden", name+"."+itoa(w)+".txt"), out+"\n")
		}
		out := styled.Render(src, 80)
		if ansi.Strip(out) != plain.Render(src, 80) {
			t.Errorf("%s: the styles change the layout", name)
		}
		for i, l := range strings.Split(out, "\n") {
			if j := strings.LastIndex(l, "\x1b["); j >= 0 && !strings.HasPrefix(l[j:], "\x1b[m") && !strings.HasPrefix(l[j:], "\x1b[0m") {
				t.Errorf("%s: line %d does not end with its styles closed: %q", name, i+1, l)
			}
		}
		golden.Check(t, filepath.Join("golden", name+".styled.txt"), out+"\n")
	}
}

// Every prefix of every reply of the corpus renders, no wider than the
// screen, and the frame only grows as the reply streams: a line once drawn
// does not disappear again.
func TestStreaming(t *testing.T) {
	r := New(testTheme())
	for name, src := range corpus(t) {
		for _, w := range widths {
			prev, prevAt := 0, 0
			for i := 0; i <= len(src); i++ {
				if i < len(src) && !utf8.RuneStart(src[i]) {
					continue
				}
				out := r.RenderPartial(src[:i], w)
				checkWidth(t, name, out, w)
				n := strings.Count(out, "\n") + 1
				if out == "" {
					n = 0
				}
				if n < prev {
					t.Errorf("%s at %d columns: %d lines after %q, %d after %q", name, w, prev, tail(src[:prevAt]), n, tail(src[:i]))
				}
				prev, prevAt = n, i
			}
		}
	}
}

func tail(s string) string {
	if len(s) > 30 {
		return "…" + s[len(s)-30:]
	}
	return s
}

func TestCloseOpen(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain", "plain"},
		{"some **bold", "some **bold**"},
		{"some **", "some"},
		{"a `code", "a `code`"},
		{"a `co**de", "a `co**de`"},
		{"done **x** and ~~gone", "done **x** and ~~gone~~"},
		{"para\n\nnext **b", "para\n\nnext **b**"},
		{"```go\nx := `a\n", "```go\nx := `a\n"},
		{"**bold\n", "**bold**\n"},
	} {
		if got := closeOpen(c.in); got != c.want {
			t.Errorf("closeOpen(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTabsAndNarrow(t *testing.T) {
	r := New(Theme{})
	got := r.Render("```\n\tx\n\t\ty\n```", 40)
	want := "```\n      x\n          y\n```"
	if got != want {
		t.Errorf("tabs: got\n%s\nwant\n%s", got, want)
	}
	// A width below the least still renders.
	checkWidth(t, "narrow", r.Render("| a | b | c |\n|---|---|---|\n| 1 | 2 | 3 |\n\n- "+strings.Repeat("x", 30), 3), 10)
}

// Nesting deeper than a narrow screen has room for, and a list number
// wider than it, still draw no wider than the screen and show their text.
func TestNarrowNesting(t *testing.T) {
	r := New(Theme{})
	in4 := strings.Repeat("  ", 4)
	q4 := strings.Repeat("> ", 4)
	for _, c := range []struct {
		src   string
		width int
	}{
		{strings.Repeat("- ", 10) + "a", 10},
		{strings.Repeat("- ", 10) + "a", 18},
		{strings.Repeat("> ", 6) + "a", 10},
		{strings.Repeat("> - ", 4) + "a\n\n" + in4 + "b", 10},
		{"123456789. a", 10},
		{strings.Repeat("- ", 4) + "x\n" + in4 + "```\n" + in4 + "a\n" + in4 + "```", 10},
		{q4 + "| h | i |\n" + q4 + "|---|---|\n" + q4 + "| a | b |", 10},
	} {
		out := r.Render(c.src, c.width)
		checkWidth(t, c.src, out, c.width)
		if !strings.Contains(out, "a") {
			t.Errorf("%q at %d columns lost its text:\n%s", c.src, c.width, out)
		}
	}
}

func FuzzRender(f *testing.F) {
	f.Add("# h\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```go\nx\n```\n> q\n- l", uint8(40))
	f.Add("**a `b ~~c", uint8(12))
	r := New(testTheme())
	f.Fuzz(func(t *testing.T, src string, w uint8) {
		width := max(int(w%130), 10)
		checkWidth(t, "fuzz", r.RenderPartial(src, width), width)
	})
}

// A text drawn again at other widths, from its kept tree, renders as a
// renderer that never saw it renders it; the partial form is not kept.
func TestKeptTrees(t *testing.T) {
	src := "# Title\n\nSome **bold** text with `code`, then a table:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- item one that is long enough to wrap at forty columns\n- two\n"
	kept := New(testTheme())
	for _, width := range []int{80, 40, 120, 40} {
		if got, want := kept.Render(src, width), New(testTheme()).Render(src, width); got != want {
			t.Fatalf("width %d: drawn from the kept tree:\n%s\nwant:\n%s", width, got, want)
		}
	}
	if len(kept.parsed) != 1 {
		t.Errorf("%d trees kept for one text", len(kept.parsed))
	}
	kept.RenderPartial(src+"more **bo", 80)
	if len(kept.parsed) != 1 {
		t.Error("a partial text's tree was kept")
	}
}
