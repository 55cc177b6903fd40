package htmlexport

import (
	"context"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/session"
)

// document is a page being made: its data and the frame's parts.
type document struct {
	data        pageData
	red         *redactor
	md          *markdown
	chart       string
	chartNote   string
	leaves      int
	compactions int
	// rowOf maps entries to their rows.
	rowOf map[*session.Entry]int32
	// entries are the rows' entries.
	entries []*session.Entry
}

// pageData is the page's data, read by its script. Entries are rows in the
// tree's order (depth first, children oldest first); every list is by row.
type pageData struct {
	IDs []string `json:"ids"`
	// Par is the parent's row, -1 for a root.
	Par []int32 `json:"par"`
	// Kind is what the conversation shows for the entry: "u" user, "a"
	// reply, "r" tool result, "b" shell command, "c" compaction, "s"
	// branch summary, "m" extension message, "y" system prompt, "n" a
	// one-line note; "" nothing.
	Kind []string `json:"kind"`
	// HTML is the entry's block in the conversation. A compressed page
	// holds the blocks after the data instead, and Off their offsets in
	// that text in UTF-16 units (len(HTML)+1 of them).
	HTML []string `json:"html,omitzero"`
	Off  []int64  `json:"off,omitzero"`
	// Depth and Tree are the entry's row in the tree: its indent and its
	// HTML; Flags its marks (the flag constants).
	Depth []int32  `json:"depth"`
	Tree  []string `json:"tree"`
	Flags []int32  `json:"flags"`
	// Calls maps a tool result's row to its call's id, which the reply's
	// block holds a place for.
	Calls map[int32]string `json:"calls"`
	// Comp describes each compaction's row.
	Comp map[int32]compInfo `json:"comp"`
	// Leaf is the active leaf's row, -1 when the session is empty.
	Leaf int32 `json:"leaf"`
	// Points are the chart's points: row, x and y in the chart (tenths),
	// 1 when measured, the tokens.
	Points [][5]int32 `json:"points"`
	// ChartW is the chart's drawing width.
	ChartW int `json:"chartW"`
}

// compInfo is what a compaction replaced: the rows on its path from From
// up to Kept (its first kept entry), Count of them; -1 when unknown.
type compInfo struct {
	Num   int   `json:"num"`
	From  int32 `json:"from"`
	Kept  int32 `json:"kept"`
	Count int   `json:"count"`
}

// Flags of a tree row.
const (
	flagLabel    = 1 << iota // labelled
	flagPin                  // a pin, or a message pinned
	flagSummary              // a branch summary
	flagCompact              // a compaction
	flagBranch               // the first entry of a branch (its parent has several children)
	flagLeaf                 // ends a branch
	flagHiddenAt             // hidden from the model by a context edit
)

// build makes the document of src.
func build(ctx context.Context, src Source, opts Options) (*document, error) {
	d := &document{red: newRedactor(opts.NoRedact), md: newMarkdown(), rowOf: map[*session.Entry]int32{}}
	d.layout(src.Roots)
	n := len(d.entries)
	d.data.HTML = make([]string, n)
	d.data.Kind = make([]string, n)
	d.data.Tree = make([]string, n)
	d.data.Calls = map[int32]string{}
	d.data.Comp = map[int32]compInfo{}
	d.data.Leaf = -1
	r := &renderer{d: d, labels: map[string]string{}, pinned: map[string]bool{}, hidden: map[string]bool{}}
	r.scan()
	for i, e := range d.entries {
		if i%512 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if err := r.entry(int32(i), e); err != nil {
			r.unreadable(int32(i), e, err)
		}
	}
	var path []*session.Entry
	for i := range d.entries {
		if d.entries[i].ID == src.LeafID && src.LeafID != "" {
			d.data.Leaf = int32(i)
		}
	}
	for j := d.data.Leaf; j >= 0; j = d.data.Par[j] {
		path = append(path, d.entries[j])
	}
	for a, b := 0, len(path)-1; a < b; a, b = a+1, b-1 {
		path[a], path[b] = path[b], path[a]
	}
	h, err := history(src, path)
	if err != nil {
		// An entry that cannot be read leaves the chart empty, not the page.
		d.chartNote = "The context could not be measured: " + err.Error()
		h = &compaction.History{}
	}
	c := drawChart(h, opts, d.data.Comp, d.rowOf, path)
	d.chart, d.data.Points, d.data.ChartW = c.svg, c.points, c.width
	return d, nil
}

// layout orders the tree's entries into rows, depth first with children
// oldest first, without recursion: a chain keeps its indent, the children
// of a branch point are indented one more.
func (d *document) layout(roots []*session.Node) {
	type item struct {
		n      *session.Node
		parent int32
		depth  int32
		branch bool
	}
	stack := make([]item, 0, len(roots))
	for i := len(roots) - 1; i >= 0; i-- {
		stack = append(stack, item{n: roots[i], parent: -1})
	}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		row := int32(len(d.entries))
		d.entries = append(d.entries, it.n.Entry)
		d.rowOf[it.n.Entry] = row
		d.data.IDs = append(d.data.IDs, it.n.Entry.ID)
		d.data.Par = append(d.data.Par, it.parent)
		d.data.Depth = append(d.data.Depth, it.depth)
		var f int32
		if it.branch {
			f |= flagBranch
		}
		if len(it.n.Children) == 0 {
			f |= flagLeaf
			d.leaves++
		}
		d.data.Flags = append(d.data.Flags, f)
		kids := it.n.Children
		depth := it.depth
		if len(kids) > 1 {
			depth++
		}
		for k := len(kids) - 1; k >= 0; k-- {
			stack = append(stack, item{n: kids[k], parent: row, depth: depth, branch: len(kids) > 1})
		}
	}
}

// compaction records what the compaction at row replaced: the entries of
// its path before its first kept entry, back to the first kept entry of the
// compaction before it (or to the root).
func (d *document) compaction(row int32, firstKept string) compInfo {
	d.compactions++
	info := compInfo{Num: d.compactions, From: -1, Kept: -1}
	k := d.data.Par[row]
	for k >= 0 && d.entries[k].ID != firstKept {
		k = d.data.Par[k]
	}
	if k < 0 {
		return info
	}
	info.Kept = k
	for j := d.data.Par[k]; j >= 0; j = d.data.Par[j] {
		if prev, ok := d.data.Comp[j]; ok && prev.Kept >= 0 {
			info.From = prev.Kept
			break
		}
		info.From = j
	}
	for j := d.data.Par[k]; j >= 0 && info.From >= 0; j = d.data.Par[j] {
		info.Count++
		if j == info.From {
			break
		}
	}
	return info
}

// kindOf is the conversation's kind for an entry type (messages are told
// apart by role in renderer.entry).
func kindOf(typ string) string {
	switch typ {
	case session.TypeCompaction:
		return "c"
	case session.TypeBranchSummary:
		return "s"
	case session.TypeCustomMessage:
		return "m"
	case session.TypeModelChange, session.TypeThinkingLevelChange, session.TypeContextEdit:
		return "n"
	}
	return ""
}
