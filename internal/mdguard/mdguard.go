// Package mdguard bounds the work goldmark does on a markdown text, so that
// rendering any text, however made, takes time near-linear in its size.
// goldmark parses some shapes in quadratic time or worse (30 KB of "*a_" or
// "[a](" take seconds; a one-line "- - - … a" or "> > > … a" nests as deep
// as it is long; a wide table's short rows are padded to its header's
// columns, rows × columns cells). [Extension] adds three rules to a
// goldmark parser; an ordinary reply is parsed as before, and a text that
// trips a rule loses only markup, never text:
//
//   - Inline markup: a block (paragraph, heading, table cell) whose inline
//     text holds more than [MaxMarks] of the bytes that open inline markup
//     (* _ ~ [ ` <) is shown as its plain text: no emphasis, links, code
//     spans or raw HTML are read in it, backslash escapes and entities
//     still are. Each block costs at most MaxMarks × its length.
//   - Nesting: a block quote or list marker more than [MaxNest] containers
//     deep starts a paragraph instead, its markers shown as text (a line
//     there that would have gone on with a paragraph starts a new one).
//   - Tables: a table whose rows × (columns + header bytes), the cells its
//     short rows are padded to and a header repeated per row, is more than
//     [TableFactor] × its text (plus [TableSlack]) stays the paragraph it
//     was written as.
package mdguard

import (
	"bytes"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

const (
	// MaxMarks is the most bytes opening inline markup a block may hold
	// and still have its markup read.
	MaxMarks = 1000
	// MaxNest is the deepest nesting of containers (a block quote, a list,
	// a list's item: each counts one) a quote or list may open in.
	MaxNest = 20
	// TableFactor and TableSlack bound the work a table may make per byte
	// of its text (see the package doc).
	TableFactor, TableSlack = 8, 1 << 16
)

// Extension adds the rules of the package doc to a goldmark parser. Add it
// after the extensions whose markup it bounds (tables) or before: the
// priorities order it.
type Extension struct{}

// Extend adds the guards to m's parser.
func (Extension) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(
		parser.WithInlineParsers(util.Prioritized(inlineGuard{}, 0)),
		parser.WithBlockParsers(util.Prioritized(nestGuard{para: parser.NewParagraphParser()}, 250)),
		parser.WithParagraphTransformers(util.Prioritized(tableGuard{}, 150)),
	)
}

// IsMark reports whether c opens inline markup, the bytes MaxMarks counts.
func IsMark(c byte) bool {
	switch c {
	case '*', '_', '~', '[', '`', '<':
		return true
	}
	return false
}

// Marks is the count of the bytes opening inline markup in the lines of a
// block.
func Marks(source []byte, lines *text.Segments) int {
	n := 0
	for i := range lines.Len() {
		seg := lines.At(i)
		for _, c := range seg.Value(source) {
			if IsMark(c) {
				n++
			}
		}
	}
	return n
}

// plainKey keeps, for the block being inline-parsed, whether it is shown
// as plain text (a plainBlock).
var plainKey = parser.NewContextKey()

type plainBlock struct {
	node  ast.Node
	plain bool
}

// inlineGuard runs before every inline parser, on every byte one can start
// at. In a block with more than MaxMarks marks it takes the rest of the
// line as text, so that no other inline parser sees it; elsewhere it
// parses nothing.
type inlineGuard struct{}

func (inlineGuard) Trigger() []byte {
	t := []byte{' '}
	for c := byte('!'); c <= '~'; c++ {
		if util.IsPunct(c) {
			t = append(t, c)
		}
	}
	return t
}

func (inlineGuard) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	b, _ := pc.Get(plainKey).(*plainBlock)
	if b == nil {
		b = &plainBlock{}
		pc.Set(plainKey, b)
	}
	if b.node != parent {
		b.node, b.plain = parent, Marks(block.Source(), parent.Lines()) > MaxMarks
	}
	if !b.plain {
		return nil
	}
	line, seg := block.PeekLine()
	// The line's end stays goldmark's to read: its break (soft, or hard
	// after two spaces or a backslash) and trailing spaces.
	end := len(line)
	for end > 0 && (line[end-1] == '\n' || line[end-1] == '\r' || line[end-1] == ' ' || line[end-1] == '\t') {
		end--
	}
	if slashes := end - len(bytes.TrimRight(line[:end], "\\")); slashes%2 == 1 {
		end-- // a backslash ending the line breaks it (an escaped one does not)
	}
	if end == 0 {
		return nil
	}
	block.Advance(end)
	return ast.NewTextSegment(text.NewSegment(seg.Start, seg.Start+end))
}

// nestGuard runs after the thematic break parser, before the block quote
// and list parsers. Where a quote or
// list would open more than MaxNest containers deep, it opens a paragraph
// instead (the rest of the line is its text; a paragraph going on there
// ends); elsewhere it opens nothing.
type nestGuard struct {
	// para is goldmark's paragraph parser, to which the paragraphs opened
	// are left.
	para parser.BlockParser
}

func (nestGuard) Trigger() []byte {
	return []byte{'>', '-', '+', '*', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9'}
}

func (g nestGuard) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	if parent.Kind() == ast.KindList {
		return nil, parser.NoChildren // only an item opens in a list
	}
	depth := 0
	for p := parent; p != nil && depth <= MaxNest; p = p.Parent() {
		depth++
	}
	if depth <= MaxNest {
		return nil, parser.NoChildren
	}
	return g.para.Open(parent, reader, pc)
}

func (g nestGuard) Continue(node ast.Node, reader text.Reader, pc parser.Context) parser.State {
	return g.para.Continue(node, reader, pc)
}

func (g nestGuard) Close(node ast.Node, reader text.Reader, pc parser.Context) {
	g.para.Close(node, reader, pc)
}

func (nestGuard) CanInterruptParagraph() bool { return true }

func (nestGuard) CanAcceptIndentedLine() bool { return false }

// tableGuard runs before the table extension's paragraph transformer: a
// paragraph that would make a table too big for its text is put in its
// place again, new, so that no later transformer sees it.
type tableGuard struct{}

func (tableGuard) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	if lines.Len() < 2 {
		return
	}
	source := reader.Source()
	size := 0
	for i := range lines.Len() {
		seg := lines.At(i)
		size += seg.Len()
	}
	for i := 1; i < lines.Len(); i++ {
		seg := lines.At(i)
		cols := delimiterCols(seg.Value(source))
		if cols == 0 {
			continue
		}
		rows, header := lines.Len()-i, lines.At(i-1)
		if rows*(cols+header.Len()) <= TableFactor*size+TableSlack {
			return
		}
		p := ast.NewParagraph()
		kept := text.NewSegments()
		for j := range lines.Len() {
			seg := lines.At(j)
			kept.Append(seg.TrimLeftSpace(source))
		}
		last := kept.At(kept.Len() - 1)
		kept.Set(kept.Len()-1, last.TrimRightSpace(source))
		p.SetLines(kept)
		node.Parent().ReplaceChild(node.Parent(), node, p)
		return
	}
}

// delimiterCols is the count of columns of a table's delimiter row ("|---|:-:|"),
// or 0 when line is none.
func delimiterCols(line []byte) int {
	cols, dash, cell := 0, false, false
	for _, c := range line {
		switch c {
		case '|':
			if cell {
				cols++
			}
			cell = false
		case '-':
			dash, cell = true, true
		case ':':
			cell = true
		case ' ', '\t', '\n', '\r':
		default:
			return 0
		}
	}
	if cell {
		cols++
	}
	if !dash {
		return 0
	}
	return cols
}
