package tui

import (
	"errors"
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/agent"
)

// treeFilter says which entries the tree shows.
type treeFilter int

const (
	filterDefault treeFilter = iota // all but bookkeeping entries
	filterNoTools                   // also without tool results
	filterUser                      // user messages only
	filterLabeled                   // labeled entries only
	filterAll                       // everything
)

var filterTags = [...]string{"", " [no-tools]", " [user]", " [labeled]", " [all]"}

// treeNode is an entry of the session tree as the selector knows it.
type treeNode struct {
	id, parent  string
	bookkeeping bool
	label       string
	text        string // what the row says
	search      string // lower-cased, for search
	user        bool
	toolResult  bool
	// hiddenReply marks a reply that only calls tools: not shown unless it
	// failed or is the current leaf.
	hiddenReply bool
	children    []*treeNode
}

// treeRow is a visible node with its drawing.
type treeRow struct {
	node   *treeNode
	prefix string // gutters and connector
}

// treeSelector is /tree: the session's tree of entries with the current
// path marked, filters, search, folding and labels. Enter picks an entry
// to navigate to.
type treeSelector struct {
	roots  []*treeNode
	byID   map[string]*treeNode
	leafID string
	active map[string]bool
	filter treeFilter
	search string
	folded map[string]bool
	rows   []treeRow
	sel    int
	// selID is the entry selected, kept across filter changes.
	selID string
	// pinned are the messages whose text is pinned on the current path.
	pinned map[string]bool
}

// newTreeSelector shows the agent's tree of the session.
func newTreeSelector(tree agent.Tree) *treeSelector {
	t := &treeSelector{byID: map[string]*treeNode{}, leafID: tree.LeafID, active: tree.Path, folded: map[string]bool{}}
	// The tree can be deep (a long conversation is one chain): it is
	// converted without recursion.
	for _, r := range tree.Roots {
		t.roots = append(t.roots, convertIter(r, t))
	}
	// The branch holding the current leaf comes first.
	var order func(ns []*treeNode) []*treeNode
	order = func(ns []*treeNode) []*treeNode {
		out := make([]*treeNode, 0, len(ns))
		for _, n := range ns {
			if t.active[n.id] {
				out = append(out, n)
			}
		}
		for _, n := range ns {
			if !t.active[n.id] {
				out = append(out, n)
			}
		}
		return out
	}
	t.roots = order(t.roots)
	for _, n := range t.byID {
		if len(n.children) > 1 {
			n.children = order(n.children)
		}
	}
	t.selID = t.leafID
	t.layout()
	return t
}

// convertIter converts an agent's tree node and its descendants,
// iteratively.
func convertIter(root *agent.TreeNode, t *treeSelector) *treeNode {
	type frame struct {
		n      *agent.TreeNode
		parent *treeNode
	}
	var top *treeNode
	stack := []frame{{n: root}}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		tn := rowOf(f.n)
		t.byID[tn.id] = tn
		if f.parent == nil {
			top = tn
		} else {
			f.parent.children = append(f.parent.children, tn)
		}
		for i := len(f.n.Children) - 1; i >= 0; i-- {
			stack = append(stack, frame{n: f.n.Children[i], parent: tn})
		}
	}
	return top
}

// rowOf is what the selector keeps of a node: the agent's wording, on one
// line of at most 200 characters.
func rowOf(n *agent.TreeNode) *treeNode {
	d := n.Description
	tn := &treeNode{id: n.ID, parent: n.ParentID, bookkeeping: n.Bookkeeping(), label: n.Label,
		user: d.User, toolResult: d.ToolResult, hiddenReply: d.ToolCallsOnly}
	tn.text = cutRunes(oneLine(d.Text), 200)
	tn.search = strings.ToLower(tn.label + " " + tn.text)
	return tn
}

// shown reports whether the filter and the search keep a node.
func (t *treeSelector) shown(n *treeNode) bool {
	if n.hiddenReply && n.id != t.leafID {
		return false
	}
	bookkeeping := n.bookkeeping
	ok := true
	switch t.filter {
	case filterDefault:
		ok = !bookkeeping
	case filterNoTools:
		ok = !bookkeeping && !n.toolResult
	case filterUser:
		ok = n.user
	case filterLabeled:
		ok = n.label != ""
	}
	if !ok {
		return false
	}
	return matchesWords(n.search, t.search)
}

// layout computes the visible rows: hidden entries pass their children to
// their nearest visible ancestor, folded ones hide their descendants; a
// node with several visible children draws each under a connector (├─,
// └─, with │ gutters below those that are not last), a single child stays
// at its parent's indent.
func (t *treeSelector) layout() {
	// Visible children of each visible node (and of the top).
	kids := map[*treeNode][]*treeNode{}
	var top []*treeNode
	type frame struct {
		n       *treeNode
		visible *treeNode // nearest visible ancestor; nil for the top
		under   bool      // below a folded node
	}
	var stack []frame
	for i := len(t.roots) - 1; i >= 0; i-- {
		stack = append(stack, frame{n: t.roots[i]})
	}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		anc := f.visible
		if !f.under && t.shown(f.n) {
			if anc == nil {
				top = append(top, f.n)
			} else {
				kids[anc] = append(kids[anc], f.n)
			}
			anc = f.n
		}
		under := f.under || t.folded[f.n.id] && anc == f.n
		for i := len(f.n.children) - 1; i >= 0; i-- {
			stack = append(stack, frame{n: f.n.children[i], visible: anc, under: under})
		}
	}
	t.rows = t.rows[:0]
	type place struct {
		n      *treeNode
		gutter string // drawn before the node's own slot
		slot   string // the connector, or "" for a chain
		below  string // what descendants draw in this slot
	}
	var places []place
	push := func(ns []*treeNode, gutter string) {
		for i := len(ns) - 1; i >= 0; i-- {
			p := place{n: ns[i], gutter: gutter}
			if len(ns) > 1 {
				if i == len(ns)-1 {
					p.slot, p.below = "└─ ", "   "
				} else {
					p.slot, p.below = "├─ ", "│  "
				}
			}
			places = append(places, p)
		}
	}
	push(top, "")
	for len(places) > 0 {
		p := places[len(places)-1]
		places = places[:len(places)-1]
		slot := p.slot
		if slot != "" && t.foldable(p.n, kids) {
			mark := "⊟"
			if t.folded[p.n.id] {
				mark = "⊞"
			}
			slot = string([]rune(slot)[0]) + mark + " "
		}
		prefix := p.gutter + slot
		if slot == "" && t.folded[p.n.id] {
			prefix += "⊞ "
		}
		t.rows = append(t.rows, treeRow{node: p.n, prefix: prefix})
		push(kids[p.n], p.gutter+p.below)
	}
	t.sel = t.nearest(t.selID)
	if t.sel < len(t.rows) {
		t.selID = t.rows[t.sel].node.id
	}
}

// foldable: a node whose subtree can be folded — a branch point, or the
// first node of a branch with something below it.
func (t *treeSelector) foldable(n *treeNode, kids map[*treeNode][]*treeNode) bool {
	return len(kids[n]) > 0 || t.folded[n.id]
}

// nearest is the row of the entry id, or of its nearest visible ancestor,
// or the last row.
func (t *treeSelector) nearest(id string) int {
	idx := map[string]int{}
	for i, r := range t.rows {
		idx[r.node.id] = i
	}
	for id != "" {
		if i, ok := idx[id]; ok {
			return i
		}
		n := t.byID[id]
		if n == nil {
			break
		}
		id = n.parent
	}
	return max(len(t.rows)-1, 0)
}

func (t *treeSelector) move(d int) {
	if len(t.rows) == 0 {
		return
	}
	t.sel = ((t.sel+d)%len(t.rows) + len(t.rows)) % len(t.rows)
	t.selID = t.rows[t.sel].node.id
}

// page moves a page, stopping at the ends.
func (t *treeSelector) page(d, size int) {
	if len(t.rows) == 0 {
		return
	}
	t.sel = min(max(t.sel+d*size, 0), len(t.rows)-1)
	t.selID = t.rows[t.sel].node.id
}

func (t *treeSelector) setFilter(f treeFilter) {
	if t.filter == f {
		f = filterDefault
	}
	t.filter = f
	t.layout()
}

// fold folds the selected subtree, or, when it cannot, goes to the start
// of the branch segment above.
func (t *treeSelector) fold() {
	if len(t.rows) == 0 {
		return
	}
	r := t.rows[t.sel]
	if !t.folded[r.node.id] && t.sel+1 < len(t.rows) && t.isChild(t.rows[t.sel+1].node, r.node) {
		t.folded[r.node.id] = true
		t.layout()
		return
	}
	for i := t.sel - 1; i >= 0; i-- {
		if strings.ContainsAny(t.rows[i].prefix, "├└") && len(t.rows[i].prefix) > 0 || i == 0 {
			t.sel, t.selID = i, t.rows[i].node.id
			return
		}
	}
}

// unfold unfolds the selected subtree, or goes to the next branch start.
func (t *treeSelector) unfold() {
	if len(t.rows) == 0 {
		return
	}
	r := t.rows[t.sel]
	if t.folded[r.node.id] {
		delete(t.folded, r.node.id)
		t.layout()
		return
	}
	for i := t.sel + 1; i < len(t.rows); i++ {
		if strings.ContainsAny(t.rows[i].prefix, "├└") {
			t.sel, t.selID = i, t.rows[i].node.id
			return
		}
	}
}

// isChild reports whether n descends from anc.
func (t *treeSelector) isChild(n, anc *treeNode) bool {
	for id := n.parent; id != ""; {
		if id == anc.id {
			return true
		}
		p := t.byID[id]
		if p == nil {
			return false
		}
		id = p.parent
	}
	return false
}

// treeOverlay is the tree selector in the editor's place.
type treeOverlay struct{ t *treeSelector }

// openTree is /tree (and Escape twice on an empty editor).
func (m *Model) openTree() tea.Cmd {
	return m.openTreeAt("", filterDefault)
}

// openTreeAt opens the tree with an entry selected (the current leaf when
// id is empty) and a filter.
func (m *Model) openTreeAt(id string, f treeFilter) tea.Cmd {
	pins := m.ag.Pins()
	tree, err := m.ag.Tree(agent.TreeOptions{Describe: true})
	if err != nil {
		m.fail("cannot read the session's tree: " + err.Error())
		return nil
	}
	t := newTreeSelector(tree)
	t.pinned = map[string]bool{}
	for _, p := range pins {
		if p.MessageID != "" {
			t.pinned[p.MessageID] = true
		}
	}
	if len(t.byID) == 0 {
		m.warn("The session is empty: nothing to navigate to yet")
		return nil
	}
	if f != filterDefault {
		t.filter = f
	}
	if id != "" {
		t.selID = id
	}
	t.layout()
	m.overlay = &treeOverlay{t: t}
	return nil
}

// treePage is how many rows the tree shows.
func (m *Model) treePage() int { return max(m.height/2, 5) }

func (o *treeOverlay) key(m *Model, k tea.KeyPressMsg) tea.Cmd {
	t := o.t
	switch k.String() {
	case "up":
		t.move(-1)
	case "down":
		t.move(1)
	case "left", "pgup":
		t.page(-1, m.treePage())
	case "right", "pgdown":
		t.page(1, m.treePage())
	case "ctrl+left":
		t.fold()
	case "ctrl+right":
		t.unfold()
	case "ctrl+d":
		t.setFilter(filterDefault)
	case "ctrl+t":
		t.setFilter(filterNoTools)
	case "ctrl+u":
		t.setFilter(filterUser)
	case "ctrl+l":
		t.setFilter(filterLabeled)
	case "ctrl+a":
		t.setFilter(filterAll)
	case "ctrl+o":
		t.filter = (t.filter + 1) % treeFilter(len(filterTags))
		t.layout()
	case "ctrl+shift+o":
		t.filter = (t.filter + treeFilter(len(filterTags)) - 1) % treeFilter(len(filterTags))
		t.layout()
	case "L", "shift+l":
		if t.sel < len(t.rows) {
			n := t.rows[t.sel].node
			d := newDialog("Label for this entry (empty removes it)", n.label, func(m *Model, text string) tea.Cmd {
				return m.setLabel(n.id, strings.TrimSpace(text), t.filter)
			})
			d.cancel = func(m *Model) tea.Cmd { m.overlay = o; return nil }
			m.overlay = d
		}
	case "P", "shift+p":
		if t.sel < len(t.rows) {
			return m.pinEntry(t.rows[t.sel].node.id, t.filter)
		}
	case "esc":
		if t.search != "" {
			t.search = ""
			t.layout()
			return nil
		}
		m.overlay = nil
	case "ctrl+c":
		m.overlay = nil
	case "backspace":
		if r := []rune(t.search); len(r) > 0 {
			t.search = string(r[:len(r)-1])
			t.layout()
		}
	case "enter":
		if t.sel < len(t.rows) {
			return m.treeChosen(t.rows[t.sel].node.id, t.filter)
		}
	default:
		if k.Text != "" {
			t.search += k.Text
			t.layout()
		}
	}
	return nil
}

func (o *treeOverlay) paste(m *Model, s string) tea.Cmd {
	o.t.search += oneLine(s)
	o.t.layout()
	return nil
}

func (o *treeOverlay) render(m *Model, v *view) string {
	t := o.t
	var b strings.Builder
	b.WriteString(v.st.rule.Render(strings.Repeat("─", v.width)) + "\n")
	b.WriteString(v.st.bold.Render("Session Tree") + "\n")
	b.WriteString(v.st.muted.Render(treeHelp(v.width)) + "\n")
	b.WriteString(v.st.muted.Render("  Type to search: ") + v.st.accent.Render(t.search) + "\n")
	if len(t.rows) == 0 {
		b.WriteString(v.st.muted.Render("  No entries found") + "\n")
		b.WriteString(v.st.muted.Render("  (0/0)"+filterTags[t.filter]) + "\n")
	} else {
		page := m.treePage()
		start := max(0, min(t.sel-page/2, len(t.rows)-page))
		for i := start; i < len(t.rows) && i < start+page; i++ {
			r := t.rows[i]
			line := v.st.dim.Render(r.prefix)
			if t.active[r.node.id] {
				line += v.st.accent.Render("• ")
			}
			if r.node.label != "" {
				line += v.st.warning.Render("[" + r.node.label + "] ")
			}
			if t.pinned[r.node.id] {
				line += v.st.success.Render("[pinned] ")
			}
			// The row's text is cut to fit, never the marker after it.
			marker := ""
			if r.node.id == t.leafID {
				marker = " ← you are here"
			}
			room := max(v.width-2-ansi.StringWidth(line)-ansi.StringWidth(marker), 1)
			text := truncate(r.node.text, room) + marker
			if i == t.sel {
				b.WriteString(truncate(v.st.accent.Render("› ")+line+v.st.bold.Render(text), v.width) + "\n")
			} else {
				b.WriteString(truncate("  "+line+text, v.width) + "\n")
			}
		}
		b.WriteString(v.st.muted.Render(fmt.Sprintf("  (%d/%d)%s", t.sel+1, len(t.rows), filterTags[t.filter])) + "\n")
	}
	b.WriteString(v.st.rule.Render(strings.Repeat("─", v.width)))
	return b.String()
}

// pinsLeft says which pins a move left behind on the branch it left (they
// are made on a branch, and apply only there), or "" when none.
func pinsLeft(before, after []agent.Pin) string {
	kept := map[string]bool{}
	for _, p := range after {
		kept[p.ID] = true
	}
	var gone []string
	for _, p := range before {
		if !kept[p.ID] {
			gone = append(gone, p.ID+": "+cutRunes(oneLine(p.Text), 40))
		}
	}
	switch len(gone) {
	case 0:
		return ""
	case 1:
		return "The pin " + gone[0] + " stays on the branch left: the model no longer sees it (/pin it again to keep it here)"
	}
	return itoa(len(gone)) + " pins stay on the branch left, the model no longer sees them (/pin them again to keep them here): " + strings.Join(gone, "; ")
}

// treeHelp is the /tree selector's line of key hints on one line of
// width cells: on a narrow screen the least needed hints are left out
// (each hint has a rank; the highest ranks go first).
func treeHelp(width int) string {
	helps := []struct {
		text string
		rank int
	}{
		{"↑↓ move", 0}, {"←→ page", 3}, {"ctrl+←→ fold", 4}, {"shift+l label", 5}, {"shift+p pin", 2},
		{"ctrl+d/t/u/l/a filter", 6}, {"ctrl+o next filter", 7}, {"enter go", 0}, {"escape close", 1},
	}
	line := ""
	for limit := 8; limit >= 1; limit-- {
		var parts []string
		for _, h := range helps {
			if h.rank < limit {
				parts = append(parts, h.text)
			}
		}
		line = "  " + strings.Join(parts, " · ")
		if ansi.StringWidth(line) <= width {
			break
		}
	}
	return truncate(line, width)
}

// setLabel bookmarks an entry, then shows the tree again.
func (m *Model) setLabel(id, label string, f treeFilter) tea.Cmd {
	m.overlay = nil
	ag := m.ag
	return m.call(func() resultMsg {
		err := ag.SetLabel(id, label)
		return func(m *Model) tea.Cmd {
			if err != nil {
				m.fail(err.Error())
				return nil
			}
			return m.openTreeAt(id, f)
		}
	})
}

// treeChosen is Enter in the tree: at the current point nothing happens;
// otherwise the "Summarize branch?" choice (unless branchSummary.skipPrompt)
// and the navigation.
func (m *Model) treeChosen(id string, f treeFilter) tea.Cmd {
	if id == m.ag.LeafID() {
		m.overlay = nil
		m.status("Already at this point")
		return nil
	}
	if m.ag.Preferences().SkipBranchSummaryPrompt {
		m.overlay = nil
		return m.navigate(id, false, "", f)
	}
	return m.openSummarizeChoice(id, f)
}

// openSummarizeChoice asks whether to summarize the branch being left.
// Escape goes back to the tree, at the same entry.
func (m *Model) openSummarizeChoice(id string, f treeFilter) tea.Cmd {
	entries := []listEntry{
		{label: "No summary", value: 0},
		{label: "Summarize", value: 1},
		{label: "Summarize with custom instructions", value: 2},
	}
	l := newList("Summarize branch?", entries, func(m *Model, e listEntry) tea.Cmd {
		switch e.value.(int) {
		case 0:
			m.overlay = nil
			return m.navigate(id, false, "", f)
		case 1:
			m.overlay = nil
			return m.navigate(id, true, "", f)
		}
		d := newDialog("Custom summarization instructions", "", func(m *Model, text string) tea.Cmd {
			m.overlay = nil
			return m.navigate(id, true, strings.TrimSpace(text), f)
		})
		d.cancel = func(m *Model) tea.Cmd { return m.openSummarizeChoice(id, f) }
		m.overlay = d
		return nil
	})
	l.cancel = func(m *Model) tea.Cmd { return m.openTreeAt(id, f) }
	m.overlay = l
	return nil
}

// navigate moves to another point of the tree. A running reply is aborted
// first (its queued messages come back to the editor); a summary being
// written can be cancelled with Escape, which reopens the tree.
func (m *Model) navigate(id string, summarize bool, instructions string, f treeFilter) tea.Cmd {
	busy := m.busy
	if busy {
		m.takeQueue()
	}
	m.navigating = true
	ctx, ag := m.ctx, m.ag
	return async(func() resultMsg {
		if busy {
			ag.Abort()
		}
		before := ag.Pins()
		res, err := ag.Navigate(ctx, agent.NavigateRequest{TargetID: id, Summarize: summarize, Instructions: instructions})
		left := pinsLeft(before, ag.Pins())
		return func(m *Model) tea.Cmd {
			m.navigating = false
			var ce *agent.CancelledError
			switch {
			case errors.As(err, &ce) && ce.Hook != "":
				m.status("Navigation cancelled")
				return nil
			case errors.Is(err, agent.ErrCancelled):
				m.status("Branch summarization cancelled")
				return m.openTreeAt(id, f)
			case err != nil:
				m.fail(err.Error())
				return nil
			}
			m.load(false)
			if res.EditorText != "" && strings.TrimSpace(m.editor.value()) == "" {
				m.editor.setValue(res.EditorText)
			}
			if res.NotSummarized != nil {
				m.status("Navigated to selected point (no summary: the branch left holds no message)")
			} else {
				m.status("Navigated to selected point")
			}
			if left != "" {
				m.warn(left)
			}
			return nil
		}
	})
}
