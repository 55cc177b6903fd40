package session

import (
	"cmp"
	"slices"
)

// childIndex lists every entry's children in one array: the children of
// entry i are list[start[i]:start[i+1]], and the roots are roots. Children
// are in timestamp order (file order among equal timestamps), as pi's tree
// shows them.
type childIndex struct {
	start []int32
	list  []int32
	roots []int32
}

// children returns the children index, building it when the session has
// changed since it was last built.
func (s *Session) children() *childIndex {
	if s.kids != nil {
		return s.kids
	}
	n := len(s.recs)
	c := &childIndex{start: make([]int32, n+1)}
	for i := range n {
		if p := s.recs[i].parent; p >= 0 {
			c.start[p+1]++
		} else {
			c.roots = append(c.roots, int32(i))
		}
	}
	for i := range n {
		c.start[i+1] += c.start[i]
	}
	c.list = make([]int32, c.start[n])
	next := slices.Clone(c.start[:n])
	for i := range n {
		if p := s.recs[i].parent; p >= 0 {
			c.list[next[p]] = int32(i)
			next[p]++
		}
	}
	byTime := func(a, b int32) int { return cmp.Compare(s.recs[a].ms, s.recs[b].ms) }
	for i := range n {
		if kids := c.list[c.start[i]:c.start[i+1]]; len(kids) > 1 {
			slices.SortStableFunc(kids, byTime)
		}
	}
	s.kids = c
	return c
}

// Children returns the entries whose parent is the entry with the given id,
// oldest first, or nil when there are none or the id is unknown.
func (s *Session) Children(id string) []*Entry {
	i, ok := s.lookup(id)
	if !ok {
		return nil
	}
	c := s.children()
	return s.entriesAt(c.list[c.start[i]:c.start[i+1]])
}

// Roots returns the entries without a parent in the file, in file order:
// the first entry, entries appended after [Session.ResetLeaf], and orphans.
func (s *Session) Roots() []*Entry { return s.entriesAt(s.children().roots) }

// Leaves returns the entries without children in file order. Each is the
// end of one branch: a session without branches has one leaf.
func (s *Session) Leaves() []*Entry {
	c := s.children()
	var out []*Entry
	for i := range s.recs {
		if c.start[i] == c.start[i+1] {
			out = append(out, s.entryAt(int32(i)))
		}
	}
	return out
}

// Node is an entry in the session tree, with its label and children.
type Node struct {
	Entry *Entry
	// Label is the entry's label, or "".
	Label    string
	Children []*Node
}

// Tree returns the whole session as a forest: the roots (normally one, plus
// any orphans and entries appended after [Session.ResetLeaf]) with their
// descendants, children oldest first, labels resolved. It is built without
// recursion, so a session of any depth is fine.
func (s *Session) Tree() []*Node {
	c := s.children()
	nodes := make([]Node, len(s.recs))
	for i := range s.recs {
		e := s.entryAt(int32(i))
		nodes[i] = Node{Entry: e, Label: s.Label(e.ID)}
		if kids := c.list[c.start[i]:c.start[i+1]]; len(kids) > 0 {
			nodes[i].Children = make([]*Node, len(kids))
			for k, j := range kids {
				nodes[i].Children[k] = &nodes[j]
			}
		}
	}
	roots := make([]*Node, len(c.roots))
	for k, i := range c.roots {
		roots[k] = &nodes[i]
	}
	return roots
}
