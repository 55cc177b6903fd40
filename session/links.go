package session

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"weak"
)

// idIndex returns the id index, building it when it is not there yet.
func (s *Session) idIndex() *idIndex {
	if s.ids == nil {
		s.ids, _ = buildIDs(s.recs, s.odd)
	}
	return s.ids
}

// lookup returns the index of the entry with the given id.
func (s *Session) lookup(id string) (int32, bool) {
	if id == "" {
		return 0, false
	}
	return s.idIndex().lookup(id)
}

// oddOf returns the side-table strings of entry i (empty when it has none).
func (s *Session) oddOf(i int32) *oddRec {
	if o := s.odd[i]; o != nil {
		return o
	}
	return &oddRec{}
}

// idOf returns entry i's id as a string.
func (s *Session) idOf(i int32) string {
	r := &s.recs[i]
	switch {
	case r.flags&recHexID != 0:
		return string(appendHexID(nil, r.id))
	case r.flags&recNoID != 0:
		return ""
	}
	return s.oddOf(i).id
}

// idIs reports whether entry i's id is id.
func (s *Session) idIs(i int32, id string) bool {
	r := &s.recs[i]
	switch {
	case r.flags&recHexID != 0:
		v, ok := isHexID(id)
		return ok && v == r.id
	case r.flags&recNoID != 0:
		return id == ""
	}
	return s.oddOf(i).id == id
}

// parentIDOf returns entry i's parentId as a string.
func (s *Session) parentIDOf(i int32) string {
	r := &s.recs[i]
	switch {
	case r.flags&recHexParent != 0:
		return string(appendHexID(nil, r.pid))
	case r.flags&recNoParent != 0:
		return ""
	}
	return s.oddOf(i).parent
}

// typeOf returns entry i's type.
func (s *Session) typeOf(i int32) string {
	if t := s.recs[i].typ; t != typeOdd {
		return typeNames[t]
	}
	return s.oddOf(i).typ
}

// index adds entries recs[from:] to the id index and the tree, and brings
// the labels, the name and the leaf up to date.
func (s *Session) index(from int) { s.indexFrom(from, nil, nil, nil) }

// indexFrom is index; from 0 with ids (and their duplicates, see
// buildIDs) already made, it uses them. With facts, the records are a
// persistent index's, checked as they were read (recCheck), whose
// parents are already those they link to (see linksKept): they are not
// resolved again, nor looked through for the entries to warn of.
func (s *Session) indexFrom(from int, ids *idIndex, dups map[int32]int32, facts *recFacts) {
	// The records and the ids change in place below: an index file
	// being written from them must be done first.
	s.waitSave()
	warned := len(s.warnings)
	defer func() {
		if len(s.warnings) > warned {
			// The warnings about ids and links come after those about
			// the lines; keep them all in line order.
			slices.SortStableFunc(s.warnings, func(a, b Warning) int { return a.Line - b.Line })
		}
	}()
	if facts == nil {
		for i := from; i < len(s.recs); i++ {
			s.warnOddEntry(int32(i))
		}
	} else {
		for _, i := range facts.unusual {
			s.warnOddEntry(i)
		}
	}
	s.indexIDs(from, ids, dups)
	if s.dupIDs {
		// Parents resolve to the last entry with their id, wherever it
		// is in the file, so every link may have changed.
		from = 0
	}
	s.linkParents(from, facts)
	if len(s.metas) > 0 {
		s.readMeta() // the earlier ones first
	}
	for _, m := range s.metas {
		s.noteMeta(m.m)
	}
	s.metas = nil
	if len(s.recs) > 0 {
		s.leaf = int32(len(s.recs) - 1)
	}
	s.kids = nil
}

// warnOddEntry warns of entry i if it is a second header or has no id.
func (s *Session) warnOddEntry(i int32) {
	r := &s.recs[i]
	if r.typ == typeSession {
		s.warnings = append(s.warnings, Warning{Kind: WarnSecondHeader, Line: int(r.line),
			Msg: fmt.Sprintf("a second session header (id %s) in the middle of the file, as when two files were joined; read as an entry the model never sees", s.idOf(i))})
	}
	if r.flags&recNoID != 0 {
		s.warnings = append(s.warnings, Warning{Kind: WarnMissingID, Line: int(r.line), Msg: "entry has no id"})
	}
}

// indexIDs adds the ids of entries recs[from:] to the id index (from 0,
// ids and dups when not nil) and warns of each duplicate.
func (s *Session) indexIDs(from int, ids *idIndex, dups map[int32]int32) {
	if from == 0 {
		if ids == nil {
			ids, dups = buildIDs(s.recs, s.odd)
		}
		s.ids = ids
		// In file order, as the entries are.
		for _, i := range slices.Sorted(maps.Keys(dups)) {
			s.warnDuplicate(i, dups[i])
		}
		return
	}
	if s.ids == nil {
		s.ids, _ = buildIDs(s.recs[:from], s.odd)
	}
	for i := int32(from); i < int32(len(s.recs)); i++ {
		r := &s.recs[i]
		if r.flags&recNoID != 0 {
			continue
		}
		hex := r.flags&recHexID != 0
		var id string
		var j int32
		var taken bool
		if hex {
			j, taken = s.ids.lookupHex(r.id)
		} else {
			id = s.oddOf(i).id
			j, taken = s.ids.lookup(id)
		}
		if taken {
			s.warnDuplicate(i, j)
		}
		s.ids.add(i, id, r.id, hex)
	}
}

// warnDuplicate warns that entry i reuses the id of entry j.
func (s *Session) warnDuplicate(i, j int32) {
	s.dupIDs = true
	s.warnings = append(s.warnings, Warning{Kind: WarnDuplicateID, Line: int(s.recs[i].line),
		Msg: fmt.Sprintf("id %s is also used on line %d; the later entry wins", s.idOf(i), s.recs[j].line)})
}

// linkParents resolves the parents of entries recs[from:] (and of the
// orphans an entry added since may adopt), breaks cycles, and brings the
// list of orphans up to date. With facts (from 0), the parents are
// resolved already, none after its child (see linksKept), and only the
// far entries, the others having the entry before as their parent, may
// be orphans.
func (s *Session) linkParents(from int, facts *recFacts) {
	if from == 0 {
		s.lastPath, s.lastIdx = weak.Pointer[*Entry]{}, nil
	}
	forward := false
	for i := from; i < len(s.recs) && facts == nil; i++ {
		p := s.resolveParent(int32(i))
		s.recs[i].parent = p
		if p > int32(i) {
			forward = true
		}
	}
	if forward {
		s.breakCycles()
		s.lastPath, s.lastIdx = weak.Pointer[*Entry]{}, nil
	}
	if from > 0 && len(s.orphans) > 0 {
		// A new entry may be the missing parent of an orphan.
		s.lastPath, s.lastIdx = weak.Pointer[*Entry]{}, nil
		old := s.orphans
		s.orphans = nil
		for _, i := range old {
			s.recs[i].parent = s.resolveParent(i)
			if s.isOrphan(i) {
				s.orphans = append(s.orphans, i)
			}
		}
	} else if from == 0 {
		s.orphans = nil
	}
	if facts != nil {
		for _, i := range facts.far {
			if s.recs[i].parent < 0 && s.isOrphan(i) {
				s.orphans = append(s.orphans, i)
			}
		}
		return
	}
	for i := from; i < len(s.recs); i++ {
		if s.recs[i].parent < 0 && s.isOrphan(int32(i)) {
			s.orphans = append(s.orphans, int32(i))
		}
	}
}

// linksKept reports whether the parent every entry holds is the one
// resolveParent gives it, and comes before it (so that there is no cycle
// to break): what the records of a persistent index that describes its
// file hold. far are the entries that do not record a link to the entry
// before by its hex id (recFacts.far): when no id repeats, resolveParent
// gives every other one that link, so only these are looked at. The id
// index must be made, and dupIDs set.
func (s *Session) linksKept(far []int32) bool {
	kept := func(i int32) bool {
		p := s.resolveParent(i)
		return p == s.recs[i].parent && p < i
	}
	if s.dupIDs {
		for i := range s.recs {
			if !kept(int32(i)) {
				return false
			}
		}
		return true
	}
	for _, i := range far {
		if !kept(i) {
			return false
		}
	}
	return true
}

// isOrphan reports whether entry i names a parent that is not in the file.
func (s *Session) isOrphan(i int32) bool {
	r := &s.recs[i]
	if r.parent >= 0 || r.flags&recNoParent != 0 || s.selfParent(i) {
		return false
	}
	_, ok := s.lookup(s.parentIDOf(i))
	return !ok
}

// selfParent reports whether entry i names itself as its parent.
func (s *Session) selfParent(i int32) bool {
	r := &s.recs[i]
	switch {
	case r.flags&recHexParent != 0:
		return r.flags&recHexID != 0 && r.id == r.pid
	case r.flags&recNoParent != 0:
		return false
	}
	return s.parentIDOf(i) == s.idOf(i)
}

// resolveParent returns the index of entry i's parent, or -1 when it is a
// root: no parentId, its own id (pi treats both as roots), or an id not in
// the file (an orphan).
func (s *Session) resolveParent(i int32) int32 {
	r := &s.recs[i]
	if r.flags&recNoParent != 0 || s.selfParent(i) {
		return -1
	}
	var p int32
	var ok bool
	if r.flags&recHexParent != 0 {
		// The parent is nearly always the entry before.
		if i > 0 && !s.dupIDs && s.recs[i-1].flags&recHexID != 0 && s.recs[i-1].id == r.pid {
			return i - 1
		}
		p, ok = s.idIndex().lookupHex(r.pid)
	} else {
		p, ok = s.lookup(s.parentIDOf(i))
	}
	if !ok || p == i {
		return -1
	}
	return p
}

// breakCycles makes parent links acyclic. Files written by pi and Prime
// have no cycles (a parent is always written before its child), but a
// hand-edited file may, and pi would loop forever on one. The entry with
// the lowest file position in each cycle becomes a root.
func (s *Session) breakCycles() {
	const (
		unseen = iota
		onStack
		done
	)
	state := make([]byte, len(s.recs))
	var chain []int32
	for start := range s.recs {
		chain = chain[:0]
		j := int32(start)
		for j >= 0 && state[j] == unseen {
			state[j] = onStack
			chain = append(chain, j)
			j = s.recs[j].parent
		}
		if j >= 0 && state[j] == onStack {
			// chain from j onwards is a cycle.
			k := slices.Index(chain, j)
			low := slices.Min(chain[k:])
			s.recs[low].parent = -1
			s.warnings = append(s.warnings, Warning{Kind: WarnCycle, Line: int(s.recs[low].line),
				Msg: fmt.Sprintf("parent links of entry %s form a cycle; it is read as a root", s.idOf(low))})
		}
		for _, c := range chain {
			state[c] = done
		}
	}
}

// noteMeta records what a label or session_info entry says.
func (s *Session) noteMeta(m *meta) {
	switch {
	case m.label != nil:
		l := m.label
		if l.Label == "" {
			delete(s.labels, l.TargetID)
			return
		}
		if s.labels == nil {
			s.labels = make(map[string]string)
		}
		s.labels[l.TargetID] = l.Label
	case m.name != nil:
		s.name = strings.TrimSpace(*m.name)
	}
}
