package markdown

import (
	"sort"
	"strings"

	"github.com/charmbracelet/x/ansi"
	east "github.com/yuin/goldmark/extension/ast"
)

// table renders a table with borders, each column as wide as its widest
// cell; when that is too wide for the screen the columns share the width
// (the narrow ones keep theirs) and their cells wrap at their spaces. A
// screen too narrow for the borders, or for a column's words (up to
// wordCut cells) to stay whole, gets each row as lines of "header: value".
func (c *ctx) table(n *east.Table, width int) []string {
	var rows [][][]seg
	header := -1
	for r := n.FirstChild(); r != nil; r = r.NextSibling() {
		var cells [][]seg
		f := flags(0)
		if _, ok := r.(*east.TableHeader); ok {
			f, header = fBold, len(rows)
		}
		for cell := r.FirstChild(); cell != nil; cell = cell.NextSibling() {
			cells = append(cells, c.inlines(cell, f))
		}
		rows = append(rows, cells)
	}
	ncol := len(n.Alignments)
	for _, r := range rows {
		ncol = max(ncol, len(r))
	}
	if ncol == 0 {
		return nil
	}
	natural, word := make([]int, ncol), make([]int, ncol)
	for _, r := range rows {
		for j, cell := range r {
			natural[j] = max(natural[j], segsWidth(cell))
			word[j] = max(word[j], min(longestWord(cell), wordCut))
		}
	}
	avail := width - 3*ncol - 1
	if avail < 2*ncol {
		return c.tableAsList(rows, header, ncol, width)
	}
	colw := shareWidth(natural, avail)
	for j, w := range colw {
		if w < word[j] {
			// A column narrower than its words would cut them
			// ("charl" / "ie"): the rows read better as lists.
			return c.tableAsList(rows, header, ncol, width)
		}
	}
	border := c.r.style(fBorder)
	rule := func(l, m, r string) string {
		parts := make([]string, ncol)
		for j, w := range colw {
			parts[j] = strings.Repeat("─", w+2)
		}
		return border.wrap(l + strings.Join(parts, m) + r)
	}
	out := []string{rule("┌", "┬", "┐")}
	for i, r := range rows {
		out = append(out, c.tableRow(r, colw, n.Alignments)...)
		if i == header && i < len(rows)-1 {
			out = append(out, rule("├", "┼", "┤"))
		}
	}
	return append(out, rule("└", "┴", "┘"))
}

// wordCut is the widest word a table's column must hold whole for the table
// to be drawn with borders: a longer one (a path, a URL) is cut anyway.
const wordCut = 12

// shareWidth gives columns of natural widths avail cells in all: every
// column gets its width if it fits, else the narrowest columns keep theirs
// and the others share what is left equally.
func shareWidth(natural []int, avail int) []int {
	colw := make([]int, len(natural))
	order := make([]int, len(natural))
	for j := range order {
		order[j] = j
	}
	sort.SliceStable(order, func(a, b int) bool { return natural[order[a]] < natural[order[b]] })
	left := avail
	for k, j := range order {
		share := left / (len(order) - k)
		colw[j] = max(min(natural[j], share), 1)
		left -= colw[j]
	}
	return colw
}

// tableRow renders one row of cells, each wrapped to its column.
func (c *ctx) tableRow(cells [][]seg, colw []int, align []east.Alignment) []string {
	wrapped := make([][]string, len(colw))
	height := 1
	for j, w := range colw {
		if j < len(cells) && len(cells[j]) > 0 {
			wrapped[j] = c.wrap(cells[j], w)
		}
		height = max(height, len(wrapped[j]))
	}
	bar := c.r.style(fBorder).wrap("│")
	out := make([]string, height)
	for k := range height {
		var b strings.Builder
		b.WriteString(bar)
		for j, w := range colw {
			cell := ""
			if k < len(wrapped[j]) {
				cell = wrapped[j][k]
			}
			a := east.AlignNone
			if j < len(align) {
				a = align[j]
			}
			b.WriteString(" " + alignCell(cell, w, a) + " " + bar)
		}
		out[k] = b.String()
	}
	return out
}

func alignCell(s string, width int, a east.Alignment) string {
	gap := width - ansi.StringWidth(s)
	if gap <= 0 {
		return s
	}
	switch a {
	case east.AlignRight:
		return strings.Repeat(" ", gap) + s
	case east.AlignCenter:
		return strings.Repeat(" ", gap/2) + s + strings.Repeat(" ", gap-gap/2)
	}
	return s + strings.Repeat(" ", gap)
}

// tableAsList renders the rows of a table too wide for any borders as
// "header: value" lines, a blank line between rows. Every row has a line for
// each of the ncol columns, and a table whose rows have not arrived yet
// (streaming) shows its header's names, so that the lines only grow as the
// cells come.
func (c *ctx) tableAsList(rows [][][]seg, header, ncol, width int) []string {
	var names [][]seg
	if header >= 0 {
		names = rows[header]
	}
	var out []string
	body := 0
	for i, r := range rows {
		if i == header {
			continue
		}
		body++
		if len(out) > 0 {
			out = append(out, "")
		}
		for j := range ncol {
			var line []seg
			if j < len(names) {
				line = append(append(line, names[j]...), seg{text: ": ", f: fBold})
			}
			if j < len(r) {
				line = append(line, r[j]...)
			}
			if len(line) > 0 {
				out = append(out, c.wrap(line, width)...)
			} else {
				out = append(out, "")
			}
		}
	}
	if body == 0 {
		for _, name := range names {
			out = append(out, c.wrap(append(append([]seg(nil), name...), seg{text: ":", f: fBold}), width)...)
		}
	}
	return out
}
