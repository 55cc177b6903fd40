package agent

import (
	"fmt"
	"slices"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// TreeOptions says what a [Tree] carries beyond each entry's place.
type TreeOptions struct {
	// Lines fills TreeNode.Line: the entry's JSON line as stored.
	Lines bool
	// Describe fills TreeNode.Description.
	Describe bool
}

// Tree is the whole session as a forest, a snapshot.
type Tree struct {
	// Roots are normally one, plus any orphans and entries appended after
	// the leaf was reset; children are oldest first.
	Roots []*TreeNode
	// LeafID is the current leaf, "" for an empty session.
	LeafID string
	// Path holds the ids of the entries on the root→leaf path.
	Path map[string]bool
}

// TreeNode is one entry of the tree.
type TreeNode struct {
	ID, ParentID string
	// Type is the entry's type, in pi's names (message, compaction, …).
	Type      string
	Timestamp string
	// Label is the entry's label, or ""; LabelTime the time of the label
	// entry that set it.
	Label, LabelTime string
	// Line is the entry's line as stored (with TreeOptions.Lines); it may
	// share the session's memory and must not be modified.
	Line []byte
	// Description is the entry's one-line wording (with
	// TreeOptions.Describe).
	Description Description
	Children    []*TreeNode
}

// Bookkeeping reports whether the node is one of the entries that record
// state rather than conversation: labels, context edits, custom state,
// model, thinking level and name changes.
func (n *TreeNode) Bookkeeping() bool {
	switch n.Type {
	case session.TypeLabel, session.TypeContextEdit, session.TypeCustom, session.TypeModelChange,
		session.TypeThinkingLevelChange, session.TypeSessionInfo:
		return true
	}
	return false
}

// Tree returns the session's tree. It fails only when o.Lines asks for a
// line the file no longer holds as it was read.
func (a *Agent) Tree(o TreeOptions) (Tree, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return treeOf(a.s, o)
}

// treeOf builds the tree of s without recursion: a long conversation is a
// chain as deep as it has entries.
func treeOf(s *session.Session, o TreeOptions) (Tree, error) {
	t := Tree{LeafID: s.LeafID(), Path: map[string]bool{}}
	for _, e := range s.LeafPath() {
		t.Path[e.ID] = true
	}
	times := labelTimes(s)
	d := NewDescriber()
	type frame struct {
		n      *session.Node
		parent *TreeNode
	}
	var stack []frame
	roots := s.Tree()
	for i := len(roots) - 1; i >= 0; i-- {
		stack = append(stack, frame{n: roots[i]})
	}
	// One allocation for every node, one for every list of children.
	nodes, kids := make([]TreeNode, s.Len()), make([]*TreeNode, s.Len())
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		e := f.n.Entry
		if len(nodes) == 0 {
			nodes = make([]TreeNode, 1)
		}
		tn := &nodes[0]
		nodes = nodes[1:]
		*tn = TreeNode{ID: e.ID, ParentID: e.ParentID, Type: e.Type, Timestamp: e.Timestamp, Label: f.n.Label}
		if k := len(f.n.Children); k > 0 {
			if len(kids) < k {
				kids = make([]*TreeNode, k)
			}
			tn.Children, kids = kids[:0:k], kids[k:]
		}
		if tn.Label != "" {
			tn.LabelTime = times[e.ID]
		}
		if o.Lines {
			line, err := e.Raw()
			if err != nil {
				return Tree{}, fmt.Errorf("entry %s: %w", e.ID, err)
			}
			tn.Line = line
		}
		if o.Describe {
			tn.Description = d.Describe(e, e.ID == t.LeafID)
		}
		if f.parent == nil {
			t.Roots = append(t.Roots, tn)
		} else {
			f.parent.Children = append(f.parent.Children, tn)
		}
		for i := len(f.n.Children) - 1; i >= 0; i-- {
			stack = append(stack, frame{n: f.n.Children[i], parent: tn})
		}
	}
	return t, nil
}

// labelTimes returns, for each labelled entry, the time of the label entry
// that set its label: the last label entry for it, unless that one cleared
// the label.
func labelTimes(s *session.Session) map[string]string {
	out := map[string]string{}
	for _, e := range s.Entries() {
		if e.Type != session.TypeLabel {
			continue
		}
		p, err := e.Payload()
		if err != nil {
			continue
		}
		if l, ok := p.(*session.LabelEntry); ok {
			if l.Label != "" {
				out[l.TargetID] = e.Timestamp
			} else {
				delete(out, l.TargetID)
			}
		}
	}
	return out
}

// ErrEntryNotFound is returned for an entry id the session does not hold.
var ErrEntryNotFound = session.ErrNotFound

// EntryLines returns the JSON lines of the session's entries in file order
// (those after since, when since is not ""), and the leaf. The lines may
// share the session's memory and must not be modified. An unknown since
// is an error wrapping [ErrEntryNotFound].
func (a *Agent) EntryLines(since string) (lines [][]byte, leafID string, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	list := a.s.Entries()
	if since != "" {
		i := slices.IndexFunc(list, func(e *session.Entry) bool { return e.ID == since })
		if i < 0 {
			return nil, "", fmt.Errorf("entry %s: %w", since, ErrEntryNotFound)
		}
		list = list[i+1:]
	}
	lines = make([][]byte, 0, len(list))
	for _, e := range list {
		line, err := e.Raw()
		if err != nil {
			return nil, "", fmt.Errorf("entry %s: %w", e.ID, err)
		}
		lines = append(lines, line)
	}
	return lines, a.s.LeafID(), nil
}

// ForkPoint is a user message a fork can start from.
type ForkPoint struct {
	EntryID string
	// Text is the message's text.
	Text string
}

// ForkPoints lists what [Agent.Fork] can start from, as pi 1.6 does for
// its fork selector and RPC get_fork_messages: every user message of the
// session file that has text, in file order, on the current path or not.
func (a *Agent) ForkPoints() []ForkPoint {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []ForkPoint
	for _, e := range a.s.Entries() {
		if e.Type != session.TypeMessage {
			continue
		}
		if role, err := e.MessageRole(); err != nil || role != llm.RoleUser {
			continue
		}
		m, err := e.Message()
		if err != nil {
			continue
		}
		if u, ok := m.(*llm.UserMessage); ok {
			if text := llm.TextOf(u.Content); text != "" {
				out = append(out, ForkPoint{EntryID: e.ID, Text: text})
			}
		}
	}
	return out
}

// EntryLine returns the JSON line of the entry id as stored; an id the
// session does not hold is an error wrapping [ErrEntryNotFound].
func (a *Agent) EntryLine(id string) ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.s.Entry(id)
	if e == nil {
		return nil, fmt.Errorf("entry %s: %w", id, ErrEntryNotFound)
	}
	line, err := e.Raw()
	if err != nil {
		return nil, fmt.Errorf("entry %s: %w", id, err)
	}
	return line, nil
}
