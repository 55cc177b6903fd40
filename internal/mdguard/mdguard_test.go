package mdguard

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// Every shape at 90 KB: the inline parsers are offered no more than
// MaxMarks × the text's length of work, blocks nest no deeper than MaxNest
// and a little, and tables have no more cells than their bound.
func TestShapesBounded(t *testing.T) {
	for _, s := range Shapes(90 << 10) {
		t.Run(s.Name, func(t *testing.T) {
			var m Meter
			md := goldmark.New(goldmark.WithExtensions(extension.GFM, Extension{}), goldmark.WithParserOptions(m.Option()))
			src := []byte(s.Text)
			doc := md.Parser().Parse(text.NewReader(src))
			if w, most := m.Work(src), MaxMarks*len(src); w > most {
				t.Errorf("inline work %d, more than %d", w, most)
			}
			depth, cells := Shape(doc)
			if depth > MaxNest+3 {
				t.Errorf("blocks nest %d deep", depth)
			}
			if cells > TableFactor*len(src)+TableSlack {
				t.Errorf("%d table cells", cells)
			}
		})
	}
}

// ordinary are replies of the kinds models write; the guard changes
// nothing in them.
func ordinary(t *testing.T) []string {
	texts := []string{
		"Some **bold**, *italic*, ~~struck~~ and `code`, a [link](https://example.com) and ![img](x.png).",
		"# Title\n\n> quoted\n> > twice\n\n- one\n  - two\n    - three\n      1. four\n\n| a | b |\n|---|:-:|\n| 1 |\n| 2 | 3 |",
		"snake_case_name and __init__ and a*b*c <br> <span>x</span> &amp; \\*not\\*",
		"```go\nfunc f() {}\n```\n\n---\n\n- [ ] task\n- [x] done\n\nhttps://www.example.com",
		strings.Repeat("A paragraph with *some* emphasis and `code` and [links](u) in it. ", 60), // about 240 marks
		strings.Repeat("> ", MaxNest/2) + "deep but not too deep\n\n" + strings.Repeat("- ", MaxNest/2-1) + "listed",
		"| h1 | h2 | h3 |\n|----|----|----|\n" + strings.Repeat("| a | b | c |\n", 2000),
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "tui", "markdown", "testdata", "corpus", "*.md"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(data))
	}
	return texts
}

// The guard changes nothing in ordinary replies.
func TestOrdinaryUnchanged(t *testing.T) {
	plain := goldmark.New(goldmark.WithExtensions(extension.GFM))
	guarded := goldmark.New(goldmark.WithExtensions(extension.GFM, Extension{}))
	for _, src := range ordinary(t) {
		var want, got bytes.Buffer
		if err := plain.Convert([]byte(src), &want); err != nil {
			t.Fatal(err)
		}
		if err := guarded.Convert([]byte(src), &got); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%.60q: guarded\n%s\nwant\n%s", src, got.String(), want.String())
		}
	}
}

// A text past a rule keeps its text: a block with too many marks shows them
// as they are, escapes and entities read; a quote too deep shows its
// markers; a table too big for its text stays its text.
func TestPastTheRules(t *testing.T) {
	md := goldmark.New(goldmark.WithExtensions(extension.GFM, Extension{}))
	marks := strings.Repeat("*a_", MaxMarks)
	wide := strings.Repeat("|a", 200) + "|\n" + strings.Repeat("|-", 200) + "|\n"
	for _, c := range []struct{ src, want string }{
		{marks + " \\` &amp;", "<p>" + marks + " ` &amp;</p>\n"},
		{marks + "  \nnext", "<p>" + marks + "<br>\nnext</p>\n"},
		{marks + "\\\nnext", "<p>" + marks + "<br>\nnext</p>\n"},
		{marks + "\\\\\nnext", "<p>" + marks + "\\\nnext</p>\n"},
		{"# " + marks, "<h1>" + marks + "</h1>\n"},
		{strings.Repeat("> ", MaxNest+2) + "a", strings.Repeat("<blockquote>\n", MaxNest) + "<p>&gt; &gt; a</p>\n" + strings.Repeat("</blockquote>\n", MaxNest)},
		{wide + strings.Repeat("x\n", 1000), "<p>" + wide + strings.Repeat("x\n", 999) + "x</p>\n"},
		{wide + strings.Repeat("x\n", 100), "<table>"}, // within the bound: a table
	} {
		var b bytes.Buffer
		if err := md.Convert([]byte(c.src), &b); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); got != c.want && !(strings.HasSuffix(c.want, ">") && strings.HasPrefix(got, c.want)) {
			t.Errorf("%.60q renders\n%s\nwant\n%s", c.src, tail(b.String()), tail(c.want))
		}
	}
}

func tail(s string) string {
	if len(s) > 200 {
		return "…" + s[len(s)-200:]
	}
	return s
}
