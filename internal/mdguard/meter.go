package mdguard

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Meter measures, for tests, the inline work goldmark's parsers may do: it
// is an inline parser run after the guard and before every other one, and
// records the blocks those others are offered. Add it with [Meter.Option]
// before the parser's first use.
type Meter struct {
	blocks map[ast.Node]bool
}

// Option is the parser option that adds m.
func (m *Meter) Option() parser.Option {
	return parser.WithInlineParsers(util.Prioritized(m, 1))
}

// Trigger is every byte an inline parser can start at.
func (m *Meter) Trigger() []byte { return inlineGuard{}.Trigger() }

// Parse records the block and parses nothing.
func (m *Meter) Parse(parent ast.Node, _ text.Reader, _ parser.Context) ast.Node {
	if m.blocks == nil {
		m.blocks = map[ast.Node]bool{}
	}
	m.blocks[parent] = true
	return nil
}

// Work is the sum, over the blocks the inline parsers were offered since
// the last Work, of the block's marks times its length: what bounds their
// work (a delimiter or bracket may be matched against, or scan, the whole
// block). It then forgets the blocks.
func (m *Meter) Work(source []byte) int {
	w := 0
	for b := range m.blocks {
		size := 0
		for i := range b.Lines().Len() {
			seg := b.Lines().At(i)
			size += seg.Len()
		}
		w += Marks(source, b.Lines()) * size
	}
	m.blocks = nil
	return w
}

// Shape is the depth of a tree's blocks (its deepest block's count of
// block ancestors) and its count of table cells.
func Shape(doc ast.Node) (depth, cells int) {
	var walk func(n ast.Node, d int)
	walk = func(n ast.Node, d int) {
		depth = max(depth, d)
		if n.Kind().String() == "TableCell" {
			cells++
		}
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if c.Type() == ast.TypeBlock {
				walk(c, d+1)
			}
		}
	}
	walk(doc, 0)
	return depth, cells
}
