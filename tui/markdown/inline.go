package markdown

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	gast "github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/util"
)

// flags are the styles a piece of text is drawn with, combined.
type flags uint32

const (
	fBold flags = 1 << iota
	fItalic
	fStrike
	fCode
	fLink
	fURL
	fHeading1
	fHeading2
	fHeading
	fMarker
	fQuote
	fRule
	fBorder
	fFence
	fHTML
	fKeyword
	fString
	fComment
	fNumber
	fType
	fAdded
	fRemoved
	fHunk
)

// themeStyle returns the theme's style of one flag.
func (t *Theme) themeStyle(f flags) lipgloss.Style {
	switch f {
	case fBold:
		return t.Bold
	case fItalic:
		return t.Italic
	case fStrike:
		return t.Strike
	case fCode:
		return t.Code
	case fLink:
		return t.Link
	case fURL:
		return t.URL
	case fHeading1:
		return t.Heading1
	case fHeading2:
		return t.Heading2
	case fHeading:
		return t.Heading
	case fMarker:
		return t.Marker
	case fQuote:
		return t.Quote
	case fRule:
		return t.Rule
	case fBorder:
		return t.Border
	case fFence:
		return t.Fence
	case fHTML:
		return t.HTML
	case fKeyword:
		return t.Keyword
	case fString:
		return t.String
	case fComment:
		return t.Comment
	case fNumber:
		return t.Number
	case fType:
		return t.Type
	case fAdded:
		return t.Added
	case fRemoved:
		return t.Removed
	case fHunk:
		return t.Hunk
	}
	return lipgloss.NewStyle()
}

// sgr is a style as the escape codes that open and close it.
type sgr struct{ open, close string }

func (s sgr) wrap(text string) string {
	if text == "" {
		return ""
	}
	return s.open + text + s.close
}

// style returns the escape codes of a combination of flags, made once. The
// higher flags (a code token, a link) take precedence over the lower (bold,
// a heading) where both set the same property.
func (r *Renderer) style(f flags) sgr {
	if s, ok := r.styles[f]; ok {
		return s
	}
	st := lipgloss.NewStyle()
	for bit := fHunk; bit != 0; bit >>= 1 {
		if f&bit != 0 {
			st = st.Inherit(r.theme.themeStyle(bit))
		}
	}
	out := st.Render("X")
	i := strings.IndexByte(out, 'X')
	s := sgr{}
	if i >= 0 {
		s = sgr{open: out[:i], close: out[i+1:]}
	}
	r.styles[f] = s
	return s
}

// seg is a run of text with its style; "\n" is a hard line break.
type seg struct {
	text string
	f    flags
}

// inlines returns the inline content of n as styled runs.
func (c *ctx) inlines(n gast.Node, f flags) []seg {
	var out []seg
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		out = c.inline(out, ch, f)
	}
	return out
}

func (c *ctx) inline(out []seg, n gast.Node, f flags) []seg {
	switch n := n.(type) {
	case *gast.Text:
		v := n.Segment.Value(c.src)
		v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
		out = append(out, seg{text: strings.ReplaceAll(strings.TrimRight(string(v), "\n"), "\t", " "), f: f})
		switch {
		case n.HardLineBreak():
			out = append(out, seg{text: "\n", f: f})
		case n.SoftLineBreak():
			out = append(out, seg{text: " ", f: f})
		}
		return out
	case *gast.String:
		return append(out, seg{text: string(n.Value), f: f})
	case *gast.CodeSpan:
		var b strings.Builder
		for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
			if t, ok := ch.(*gast.Text); ok {
				b.Write(t.Segment.Value(c.src))
			} else if s, ok := ch.(*gast.String); ok {
				b.Write(s.Value)
			}
		}
		return append(out, seg{text: strings.ReplaceAll(b.String(), "\n", " "), f: f | fCode})
	case *gast.Emphasis:
		if n.Level >= 2 {
			return append(out, c.inlines(n, f|fBold)...)
		}
		return append(out, c.inlines(n, f|fItalic)...)
	case *east.Strikethrough:
		return append(out, c.inlines(n, f|fStrike)...)
	case *gast.Link:
		label := c.inlines(n, f|fLink)
		out = append(out, label...)
		return appendURL(out, string(n.Destination), plain(label), f)
	case *gast.AutoLink:
		return append(out, seg{text: string(n.Label(c.src)), f: f | fLink})
	case *gast.Image:
		alt := plain(c.inlines(n, f))
		out = append(out, seg{text: "[image: " + alt + "]", f: f | fURL})
		return appendURL(out, string(n.Destination), "", f)
	case *gast.RawHTML:
		var b strings.Builder
		for i := range n.Segments.Len() {
			s := n.Segments.At(i)
			b.Write(s.Value(c.src))
		}
		switch strings.ToLower(strings.ReplaceAll(b.String(), " ", "")) {
		case "<br>", "<br/>":
			return append(out, seg{text: "\n", f: f})
		}
		return append(out, seg{text: b.String(), f: f | fHTML})
	case *east.TaskCheckBox:
		box := "[ ] "
		if n.IsChecked {
			box = "[x] "
		}
		return append(out, seg{text: box, f: f | fMarker})
	}
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		out = c.inline(out, ch, f)
	}
	return out
}

// appendURL adds a link's address after its text, unless the text is the
// address.
func appendURL(out []seg, url, label string, f flags) []seg {
	if url == "" || url == label || strings.TrimPrefix(url, "mailto:") == label {
		return out
	}
	return append(out, seg{text: " ", f: f}, seg{text: "(" + url + ")", f: f | fURL})
}

// plain is the text of runs without their styles.
func plain(segs []seg) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteString(s.text)
	}
	return b.String()
}

// piece is a run of one line, w cells wide.
type piece struct {
	text string
	f    flags
	w    int
}

// word is what the wrapping does not break (unless it is wider than a
// line): a run of graphemes between spaces, or one wide grapheme. Its
// pieces are pieces[from:to] of the slice words returns with it.
type word struct {
	from, to int
	w        int
	space    bool // a space comes before it
	spaceF   flags
	br       bool // a hard line break
}

// grapheme returns the grapheme cluster at t[i:] and its width.
func grapheme(t string, i int) (string, int) {
	if c := t[i]; c < 0x80 && (i+1 == len(t) || t[i+1] < 0x80) {
		if c < 0x20 || c == 0x7f {
			return t[i : i+1], 0
		}
		return t[i : i+1], 1
	}
	return ansi.FirstGraphemeCluster(t[i:], ansi.GraphemeWidth)
}

// words splits runs into the units wrapping places.
func words(segs []seg) ([]word, []piece) {
	n := 0
	for _, s := range segs {
		n += len(s.text)
	}
	out := make([]word, 0, n/5+1)
	pieces := make([]piece, 0, n/5+len(segs)+1)
	cur := word{}
	space, spaceF := false, flags(0)
	for _, s := range segs {
		t := s.text
		start, pw := -1, 0 // the piece of t the current word has so far
		endPiece := func(i int) {
			if start >= 0 {
				pieces = append(pieces, piece{text: t[start:i], f: s.f, w: pw})
				start, pw = -1, 0
			}
		}
		flush := func(i int) {
			endPiece(i)
			if cur.w > 0 {
				cur.to = len(pieces)
				out = append(out, cur)
			}
			cur = word{from: len(pieces)}
		}
		for i := 0; i < len(t); {
			g, gw := grapheme(t, i)
			switch {
			case g == "\n":
				flush(i)
				out = append(out, word{br: true})
				space = false
			case g == " " || g == "\t":
				flush(i)
				space, spaceF = true, s.f
			case gw >= 2:
				flush(i)
				pieces = append(pieces, piece{text: g, f: s.f, w: gw})
				out = append(out, word{from: len(pieces) - 1, to: len(pieces), w: gw, space: space, spaceF: spaceF})
				cur = word{from: len(pieces)}
				space = false
			default:
				if cur.w == 0 && start < 0 && cur.from == len(pieces) {
					cur.space, cur.spaceF = space, spaceF
					space = false
				}
				if start < 0 {
					start = i
				}
				pw += gw
				cur.w += gw
			}
			i += len(g)
		}
		endPiece(len(t))
	}
	if cur.w > 0 {
		cur.to = len(pieces)
		out = append(out, cur)
	}
	return out, pieces
}

// line is a line being filled.
type line struct {
	pieces []piece
	w      int
}

func (l *line) add(p piece) {
	l.pieces = append(l.pieces, p)
	l.w += p.w
}

// draw writes a line, each run of one style opened and closed once.
func (r *Renderer) draw(l line) string {
	var b strings.Builder
	for i := 0; i < len(l.pieces); {
		f := l.pieces[i].f
		st := r.style(f)
		b.WriteString(st.open)
		for ; i < len(l.pieces) && l.pieces[i].f == f; i++ {
			b.WriteString(l.pieces[i].text)
		}
		b.WriteString(st.close)
	}
	return b.String()
}

// wrap fills lines of width cells with runs, breaking at spaces and around
// wide characters; a word wider than a line is cut.
func (c *ctx) wrap(segs []seg, width int) []string {
	var out []string
	var cur line
	emit := func() {
		out = append(out, c.r.draw(cur))
		cur.pieces, cur.w = cur.pieces[:0], 0
	}
	ws, pieces := words(segs)
	for _, w := range ws {
		if w.br {
			emit()
			continue
		}
		sp := 0
		if w.space && cur.w > 0 {
			sp = 1
		}
		if cur.w > 0 && cur.w+sp+w.w > width {
			emit()
			sp = 0
		}
		if sp == 1 {
			cur.add(piece{text: " ", f: w.spaceF, w: 1})
		}
		if cur.w+w.w <= width {
			for _, p := range pieces[w.from:w.to] {
				cur.add(p)
			}
			continue
		}
		// Wider than a line: cut it, grapheme by grapheme.
		for _, p := range pieces[w.from:w.to] {
			for i := 0; i < len(p.text); {
				g, gw := grapheme(p.text, i)
				if cur.w+gw > width && cur.w > 0 {
					emit()
				}
				cur.add(piece{text: g, f: p.f, w: gw})
				i += len(g)
			}
		}
	}
	if cur.w > 0 || len(out) == 0 {
		emit()
	}
	return out
}

// segsWidth is the cells runs take on one line.
func segsWidth(segs []seg) int {
	n := 0
	for _, s := range segs {
		n += ansi.StringWidth(s.text)
	}
	return n
}

// longestWord is the width of the widest unbreakable word of runs.
func longestWord(segs []seg) int {
	n := 0
	ws, _ := words(segs)
	for _, w := range ws {
		n = max(n, w.w)
	}
	return n
}
