package session

import "weak"

// PathView is the path from a root to an entry read from the session's
// index: its entries are made only as they are asked for, so looking at a
// long path's entry types, its last entries, or building its context costs
// nothing for the entries not looked at. (A []*Entry path, [Session.Path],
// holds an Entry for each of its entries.) Like the session, a view is not
// safe for concurrent use; it stays true as the session grows, since an
// entry's ancestors never change.
type PathView struct {
	s   *Session
	idx []int32
}

// LeafView returns the view of the path to the current leaf (empty when
// there is none), as [Session.LeafPath] returns its entries.
func (s *Session) LeafView() PathView {
	s.confirm()
	if s.leaf < 0 {
		return PathView{s: s}
	}
	return PathView{s: s, idx: s.pathIdx(s.leaf)}
}

// ViewOf returns the view of the path to the entry with the given id, as
// [Session.Path] returns its entries; ok is false when there is no such
// entry.
func (s *Session) ViewOf(id string) (p PathView, ok bool) {
	s.confirm()
	i, ok := s.lookup(id)
	if !ok {
		return PathView{s: s}, false
	}
	return PathView{s: s, idx: s.pathIdx(i)}, true
}

// Len returns the number of entries on the path.
func (p PathView) Len() int { return len(p.idx) }

// Type returns the type of the path's entry i (0 is the root).
func (p PathView) Type(i int) string { return p.s.typeOf(p.idx[i]) }

// Entry returns the path's entry i.
func (p PathView) Entry(i int) *Entry { return p.s.entryAt(p.idx[i]) }

// Entries returns every entry of the path, root first.
func (p PathView) Entries() []*Entry { return p.s.entriesAt(p.idx) }

// KeptStart returns the index on the path of the first entry kept by the
// compaction at index compaction, or -1 (see [KeptStart]).
func (p PathView) KeptStart(compaction int) int { return keptStart(p, compaction) }

// idIs reports whether the path's entry i has the given id, from the index.
func (p PathView) idIs(i int, id string) bool { return p.s.idIs(p.idx[i], id) }

// role returns the MessageRole of the path's entry i, from the index when
// it knows it.
func (p PathView) role(i int) (string, error) {
	if r := p.s.recs[p.idx[i]].role; r != roleUnknown {
		return roleNames[r], nil
	}
	return p.Entry(i).MessageRole()
}

// pathIdx returns the indices of the path to entry i. The last one
// computed is remembered and extended by one entry when asked for a child
// of its end (the leaf's path after an append).
func (s *Session) pathIdx(i int32) []int32 {
	if s.lastIdx != nil && s.lastIdxEnd >= 0 && int(s.lastIdxEnd) < len(s.recs) {
		switch {
		case i == s.lastIdxEnd:
			return s.lastIdx[:len(s.lastIdx):len(s.lastIdx)]
		case s.recs[i].parent == s.lastIdxEnd:
			s.lastIdx = append(s.lastIdx, i)
			s.lastIdxEnd = i
			return s.lastIdx[:len(s.lastIdx):len(s.lastIdx)]
		}
	}
	n := 0
	for j := i; j >= 0; j = s.recs[j].parent {
		if n++; n > len(s.recs) {
			// A path longer than the session has a cycle, which
			// indexing never leaves; should one be there all the same,
			// break it (as indexing would) rather than walk forever.
			s.breakCycles()
			s.lastIdx, s.lastPath, s.kids = nil, weak.Pointer[*Entry]{}, nil
			return s.pathIdx(i)
		}
	}
	idx := make([]int32, n)
	for j := i; j >= 0; j = s.recs[j].parent {
		n--
		idx[n] = j
	}
	s.lastIdx, s.lastIdxEnd = idx, i
	return idx[:len(idx):len(idx)]
}
