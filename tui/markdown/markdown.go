// Package markdown renders a model's markdown replies as styled terminal
// text for a given width: goldmark parses, and the rendering is the
// terminal's own (no HTML on the way). Headings are styled without their
// markers, code blocks keep their fences and language and are highlighted,
// tables are sized to their content and bordered, lists and quotes wrap
// under their prefixes, links show their URL. Every line is styled on its
// own (each ends with its styles reset), so that a line can be prefixed,
// cut or printed alone.
//
// Rendering is safe on a reply still streaming: an open code fence, a table
// whose rows are arriving or an emphasis not yet closed render as what they
// will be (see [Renderer.RenderPartial]).
//
// Rendering takes time linear in the text's size, whatever it holds, so
// that no reply freezes the screen: the parser is bounded by
// internal/mdguard, whose rules keep all the text and drop only markup
// where goldmark would take quadratic time. A paragraph, heading or table
// cell with more than 1,000 of the bytes * _ ~ [ ` < is shown as its plain
// text; a quote or list more than 20 containers deep (a list and its item
// count one each) starts a paragraph there, its markers shown; a table
// whose short rows would be padded to far more cells than it has bytes is
// shown as the text written. A reply streaming is parsed again whole at
// most once a frame (the transcript keeps the frame's rendering), so its
// cost is that of one rendering per frame.
package markdown

import (
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"

	"github.com/prime-agent/prime/internal/mdguard"
)

// Theme is the look of rendered markdown. A zero Style draws plain text.
type Theme struct {
	// Heading1 is a level 1 heading, Heading2 level 2, Heading the others.
	Heading1, Heading2, Heading lipgloss.Style
	// Bold, Italic and Strike are the emphasis styles.
	Bold, Italic, Strike lipgloss.Style
	// Code is inline code.
	Code lipgloss.Style
	// Link is a link's text, URL the address shown after it.
	Link, URL lipgloss.Style
	// Marker draws list bullets and numbers, Quote the quote bar, Rule a
	// thematic break, Border a table's lines, Fence a code block's fences
	// and language, HTML raw HTML.
	Marker, Quote, Rule, Border, Fence, HTML lipgloss.Style
	// The tokens of highlighted code.
	Keyword, String, Comment, Number, Type, Added, Removed, Hunk lipgloss.Style
}

// Renderer renders markdown with a theme. It is not safe for concurrent
// use; the languages it highlights are set up when a code block first needs
// them.
type Renderer struct {
	md     goldmark.Markdown
	theme  Theme
	styles map[flags]sgr
	langs  map[string]*language
	// parsed are the finished texts' trees (Render), so that drawing them
	// at another width (a resize) does not parse them again.
	parsed map[string]parsedDoc
}

// parsedDoc is a text's tree and the source its nodes point into.
type parsedDoc struct {
	doc gast.Node
	src []byte
}

// parsedLimit bounds the trees kept: past it they are dropped and made again.
const parsedLimit = 1024

// New returns a renderer drawing with theme.
func New(theme Theme) *Renderer {
	md := goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList, mdguard.Extension{}))
	return &Renderer{md: md, theme: theme, styles: map[flags]sgr{}}
}

// Render returns src rendered to lines no wider than width cells (at least
// 10), joined by newlines, without trailing blank lines.
func (r *Renderer) Render(src string, width int) string {
	p, ok := r.parsed[src]
	if !ok {
		p = r.parse(src)
		if r.parsed == nil || len(r.parsed) >= parsedLimit {
			r.parsed = map[string]parsedDoc{}
		}
		r.parsed[src] = p
	}
	return r.renderDoc(p, width)
}

// parse reads src into its tree. A stray byte that is not UTF-8 becomes
// U+FFFD, as a terminal shows it, so that widths are counted as drawn.
func (r *Renderer) parse(src string) parsedDoc {
	source := []byte(strings.ToValidUTF8(src, "\uFFFD"))
	return parsedDoc{doc: r.md.Parser().Parse(text.NewReader(source), parser.WithContext(parser.NewContext())), src: source}
}

// renderDoc renders a parsed text at width.
func (r *Renderer) renderDoc(p parsedDoc, width int) string {
	width = max(width, 10)
	doc, source := p.doc, p.src
	c := &ctx{r: r, src: source}
	lines := c.blocks(doc, width, false)
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

// RenderPartial renders a reply still streaming: what has arrived is
// rendered as its complete form will be (an emphasis or inline code opened
// on the last line is closed), so that the frame does not jump when the
// closing marker arrives.
func (r *Renderer) RenderPartial(src string, width int) string {
	return r.renderDoc(r.parse(closeOpen(src)), width) // not kept: the text grows with each delta
}

// ctx is one rendering: the renderer and the source the nodes point into.
type ctx struct {
	r   *Renderer
	src []byte
}

// blocks renders the block children of n, a blank line between them (none
// between the parts of a tight list's item).
func (c *ctx) blocks(n gast.Node, width int, tight bool) []string {
	var out []string
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		lines := c.block(ch, width)
		if len(lines) == 0 {
			continue
		}
		if len(out) > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, lines...)
	}
	return out
}

// block renders one block node.
func (c *ctx) block(n gast.Node, width int) []string {
	switch n := n.(type) {
	case *gast.Paragraph, *gast.TextBlock:
		return c.wrap(c.inlines(n, 0), width)
	case *gast.Heading:
		f := fHeading
		switch n.Level {
		case 1:
			f = fHeading1
		case 2:
			f = fHeading2
		}
		return c.wrap(c.inlines(n, f), width)
	case *gast.ThematicBreak:
		return []string{c.r.style(fRule).wrap(strings.Repeat("─", width))}
	case *gast.FencedCodeBlock:
		return c.fenced(n, width)
	case *gast.CodeBlock:
		return c.code(c.lines(n), "", width, true)
	case *gast.Blockquote:
		return c.quote(n, width)
	case *gast.List:
		return c.list(n, width)
	case *east.Table:
		return c.table(n, width)
	case *gast.HTMLBlock:
		var lines []string
		for _, l := range strings.Split(strings.TrimRight(c.lines(n)+c.closure(n), "\n"), "\n") {
			lines = append(lines, c.wrap([]seg{{text: ExpandTabs(l), f: fHTML}}, width)...)
		}
		return lines
	}
	if n.HasChildren() {
		return c.blocks(n, width, false)
	}
	return nil
}

// lines is the text of a block's lines.
func (c *ctx) lines(n gast.Node) string {
	var b strings.Builder
	ls := n.Lines()
	for i := range ls.Len() {
		s := ls.At(i)
		b.Write(s.Value(c.src))
	}
	return b.String()
}

func (c *ctx) closure(n gast.Node) string {
	if h, ok := n.(*gast.HTMLBlock); ok && h.HasClosure() {
		return string(h.ClosureLine.Value(c.src))
	}
	return ""
}

// quote renders a block quote: its blocks under a bar. Where the width
// left has no room for the bar and a cell of text (a quote nested deep on
// a narrow screen), its blocks are drawn as they are.
func (c *ctx) quote(n gast.Node, width int) []string {
	if width < 3 {
		return c.blocks(n, width, false)
	}
	inner := c.blocks(n, width-2, false)
	bar := c.r.style(fQuote).wrap("│")
	for i, l := range inner {
		if l == "" {
			inner[i] = bar
		} else {
			inner[i] = bar + " " + l
		}
	}
	return inner
}

// list renders a list: each item's blocks under its marker, wrapped lines
// indented to the marker's width. Where the width left has no room for
// the marker and a cell of text (a list nested deep on a narrow screen, a
// long number), each marker has a line of its own (cut to the width) and
// the item's blocks follow it unindented.
func (c *ctx) list(n *gast.List, width int) []string {
	depth := 0
	for p := n.Parent(); p != nil; p = p.Parent() {
		if _, ok := p.(*gast.List); ok {
			depth++
		}
	}
	var markers []string
	num := n.Start
	for it := n.FirstChild(); it != nil; it = it.NextSibling() {
		if n.IsOrdered() {
			markers = append(markers, itoa(num)+string(n.Marker))
			num++
		} else {
			markers = append(markers, bullets[depth%len(bullets)])
		}
	}
	mw := 0
	for _, m := range markers {
		mw = max(mw, ansi.StringWidth(m))
	}
	var out []string
	i := 0
	if width < mw+2 {
		for it := n.FirstChild(); it != nil; it = it.NextSibling() {
			if i > 0 && !n.IsTight {
				out = append(out, "")
			}
			out = append(out, c.r.style(fMarker).wrap(ansi.Truncate(markers[i], width, "…")))
			out = append(out, c.blocks(it, width, n.IsTight)...)
			i++
		}
		return out
	}
	for it := n.FirstChild(); it != nil; it = it.NextSibling() {
		if i > 0 && !n.IsTight {
			out = append(out, "")
		}
		inner := c.blocks(it, width-mw-1, n.IsTight)
		if len(inner) == 0 {
			inner = []string{""}
		}
		marker := c.r.style(fMarker).wrap(padLeft(markers[i], mw)) + " "
		indent := strings.Repeat(" ", mw+1)
		for j, l := range inner {
			switch {
			case j == 0:
				out = append(out, strings.TrimRight(marker+l, " "))
			case l == "":
				out = append(out, "")
			default:
				out = append(out, indent+l)
			}
		}
		i++
	}
	return out
}

// bullets are the unordered lists' markers by depth.
var bullets = [...]string{"•", "◦", "▪"}

// fenced renders a fenced code block: its fences, the language named on
// the first, the code highlighted between them. A fence not yet closed (a
// reply streaming) has no closing line.
func (c *ctx) fenced(n *gast.FencedCodeBlock, width int) []string {
	lang := ""
	if n.Info != nil {
		lang = strings.TrimSpace(string(n.Info.Segment.Value(c.src)))
		if i := strings.IndexAny(lang, " \t{"); i >= 0 {
			lang = lang[:i]
		}
	}
	return c.code(c.lines(n), lang, width, c.closed(n))
}

// closed reports whether a fenced block's closing fence is in the source.
func (c *ctx) closed(n *gast.FencedCodeBlock) bool {
	end := 0
	if ls := n.Lines(); ls.Len() > 0 {
		end = ls.At(ls.Len() - 1).Stop
	} else if n.Info != nil {
		end = n.Info.Segment.Stop
		if i := strings.IndexByte(string(c.src[end:]), '\n'); i >= 0 {
			end += i + 1
		} else {
			return false
		}
	} else {
		return false
	}
	rest := strings.TrimLeft(string(c.src[min(end, len(c.src)):]), " ")
	return strings.HasPrefix(rest, "```") || strings.HasPrefix(rest, "~~~")
}

// code renders the lines of a code block between fences, each indented by
// two columns and, when it must wrap, continued two columns further in.
// The opening fence is cut to width.
func (c *ctx) code(src, lang string, width int, closed bool) []string {
	fence := c.r.style(fFence)
	out := []string{fence.wrap(ansi.Truncate("```"+lang, width, "…"))} // a long language name is cut, not wrapped
	hl := c.r.highlighter(lang)
	body := strings.TrimSuffix(src, "\n")
	if body != "" || strings.HasSuffix(src, "\n") {
		for _, l := range strings.Split(body, "\n") {
			out = append(out, c.codeLine(hl.line(ExpandTabs(l)), width)...)
		}
	}
	if closed {
		out = append(out, fence.wrap(ansi.Truncate("```", width, "…")))
	}
	return out
}

// codeLine cuts one highlighted line of code to width: the first part two
// columns in, the rest indented two columns past the line's own
// indentation (a hanging indent), broken at a space where there is one.
func (c *ctx) codeLine(segs []seg, width int) []string {
	text := plain(segs)
	lead := len(text) - len(strings.TrimLeft(text, " "))
	// On a screen narrower than the indents (code nested deep), they
	// shrink to leave a cell for the code.
	pad := min(2, width-1)
	hang := min(2+lead+2, max(width/2, 4), width-1)
	starts := codeBreaks(text, max(width-pad, 1), max(width-hang, 1))
	out := make([]string, len(starts))
	for i, from := range starts {
		to := len(text)
		if i+1 < len(starts) {
			to = starts[i+1]
		}
		l := c.r.draw(lineOf(sliceSegs(segs, from, to)))
		switch {
		case l == "":
			out[i] = ""
		case i == 0:
			out[i] = strings.Repeat(" ", max(pad, 0)) + l
		default:
			out[i] = strings.Repeat(" ", hang) + l
		}
	}
	return out
}

// codeBreaks returns where each line of a cut line of code starts (byte
// offsets into text): lines of first cells, then of rest, each ending at
// its last space when that is past its first half.
func codeBreaks(text string, first, rest int) []int {
	starts := []int{0}
	width, w, space := first, 0, -1
	for at := 0; at < len(text); {
		g, gw := grapheme(text, at)
		if w+gw > width && w > 0 {
			from := at
			if space > starts[len(starts)-1] && 2*(space-starts[len(starts)-1]) > width {
				from = space
			}
			starts = append(starts, from)
			width, w = rest, ansi.StringWidth(text[from:at])
		}
		w += gw
		if g == " " {
			space = at + 1
		}
		at += len(g)
	}
	return starts
}

// sliceSegs returns the runs of text[from:to], text being the runs joined,
// without the spaces the part ends with.
func sliceSegs(segs []seg, from, to int) []seg {
	var out []seg
	pos := 0
	for _, s := range segs {
		a, b := max(from-pos, 0), min(to-pos, len(s.text))
		if a < b {
			out = append(out, seg{text: s.text[a:b], f: s.f})
		}
		pos += len(s.text)
	}
	for len(out) > 0 {
		last := &out[len(out)-1]
		last.text = strings.TrimRight(last.text, " ")
		if last.text != "" {
			break
		}
		out = out[:len(out)-1]
	}
	return out
}

// lineOf is runs as a line to draw.
func lineOf(segs []seg) line {
	var l line
	for _, s := range segs {
		l.add(piece{text: s.text, f: s.f})
	}
	return l
}

// ExpandTabs replaces tabs with spaces to the next multiple of 4 columns:
// a terminal would move a tab to its own stops (every 8 columns), which
// the width of the text does not count.
func ExpandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, r := range s {
		if r == '\t' {
			n := 4 - col%4
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(r)
		col += ansi.StringWidth(string(r))
	}
	return b.String()
}

func padLeft(s string, width int) string {
	if w := ansi.StringWidth(s); w < width {
		return strings.Repeat(" ", width-w) + s
	}
	return s
}

func padRight(s string, width int) string {
	if w := ansi.StringWidth(s); w < width {
		return s + strings.Repeat(" ", width-w)
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }
