package session

import (
	"errors"
	"fmt"
	"slices"
)

// Nothing a persistent index says is trusted beyond what the file
// confirms (see the package doc, "The persistent index"): a line read
// back must be a whole line of the file, with the checksum its record
// has, and carry the type, id, parent id, timestamp and role the record
// says. A line that does not is errIndexMismatch, and the session indexes
// its file again (Session.confirm).

// carriedBy reports whether line, read back for sp, is the entry sp names:
// the same type, id, parent id, timestamp and message role, its common
// members ending where they did.
func (sp *span) carriedBy(line []byte) bool {
	x, err := readHead(line)
	if err != nil {
		return false
	}
	got := &x.r
	if sp.e != nil {
		e := sp.e
		return got.head == e.head && got.role == e.role && typeText(got, x.odd) == e.Type &&
			idMatches(got.flags, recNoID, recHexID, got.id, x.odd, e.ID, func(o *oddRec) string { return o.id }) &&
			idMatches(got.flags, recNoParent, recHexParent, got.pid, x.odd, e.ParentID, func(o *oddRec) string { return o.parent }) &&
			timeMatches(got, x.odd, e.Timestamp)
	}
	r, odd := sp.r, sp.odd
	const same = recHexID | recNoID | recHexParent | recNoParent | recISOTime | recOdd
	if got.head != r.head || got.role != r.role || got.typ != r.typ || got.flags&same != r.flags&same ||
		got.id != r.id || got.pid != r.pid || got.ms != r.ms {
		return false
	}
	if x.odd == nil {
		return true
	}
	return odd != nil && *odd == *x.odd
}

// name is the id of the entry sp should read, for errors.
func (sp *span) name() string {
	switch {
	case sp.e != nil:
		return sp.e.ID
	case sp.r == nil:
		return "(unnamed)"
	}
	if sp.r.flags&recHexID != 0 {
		return string(appendHexID(nil, sp.r.id))
	}
	if sp.odd != nil {
		return sp.odd.id
	}
	return `""`
}

// typeText is the type of a record read from a line.
func typeText(r *rec, odd *oddRec) string {
	if r.typ == typeOdd {
		return odd.typ
	}
	return typeNames[r.typ]
}

// idMatches reports whether an id read from a line (flags none or hex, or
// the string other(odd)) is want.
func idMatches(flags, none, hex uint8, v uint32, odd *oddRec, want string, other func(*oddRec) string) bool {
	switch {
	case flags&hex != 0:
		w, ok := isHexID(want)
		return ok && w == v
	case flags&none != 0:
		return want == ""
	}
	return odd != nil && other(odd) == want
}

// timeMatches reports whether the timestamp read from a line is want.
func timeMatches(r *rec, odd *oddRec, want string) bool {
	if r.flags&recISOTime == 0 {
		return odd != nil && odd.ts == want
	}
	var buf [24]byte
	return string(appendISO(buf[:0], r.ms)) == want
}

// damagedIndexError is a persistent index that is whole (its checksum
// holds) but does not describe its session file: damaged in a way a torn
// write cannot explain, or crafted. It is not used, and the session says
// so in a warning.
type damagedIndexError struct{ err error }

func (e *damagedIndexError) Error() string { return e.err.Error() }
func (e *damagedIndexError) Unwrap() error { return e.err }

// confirmCached makes s, just read from the persistent index c, trust of
// c only what the file confirms or what can be checked without reading
// it: records lie in file order after the header without overlapping,
// and the sorted ids are exactly the records' hex ids (both checked when
// c was read, see recCheck); parent links are
// computed again from the ids, as indexing computes them, and must be
// those c recorded (a cycle or a self-parent kept, or a link the ids do
// not give, is a damaged index); the warnings about ids and links, the
// orphans, the labels and the name are made again, the last two from
// their lines read back when first asked for (see readMeta). Lines are
// checked as they are read back, and validated as JSON (source.unchecked).
func (s *Session) confirmCached(c *cached) error {
	damaged := func(format string, args ...any) error {
		return &damagedIndexError{fmt.Errorf(format, args...)}
	}
	// Reading c made sure of the records' order and of the sorted ids.
	s.warnings = slices.DeleteFunc(s.warnings, func(w Warning) bool {
		return w.Kind == WarnDuplicateID || w.Kind == WarnMissingID || w.Kind == WarnCycle || w.Kind == WarnIndex
	})
	s.src.unchecked.Store(c.indexed)
	s.labels, s.name, s.unreadMeta = nil, "", true
	ids, dups := idsFrom(c.sorted, c.recs, c.odd)
	// Nearly always the links recorded are those the ids give, each to
	// an entry before: they are kept as they are. Otherwise they are
	// made again, as indexing makes them, and must come out as recorded.
	s.ids, s.dupIDs = ids, len(dups) > 0
	if s.linksKept(c.facts.far) {
		s.indexFrom(0, ids, dups, &c.facts)
		return nil
	}
	recorded := make([]int32, len(c.recs))
	for i := range c.recs {
		recorded[i] = c.recs[i].parent
	}
	s.indexFrom(0, ids, dups, nil)
	for i := range s.recs {
		if s.recs[i].parent != recorded[i] {
			return damaged("the parent of entry %d (line %d) is not the one its parentId names", i, s.recs[i].line)
		}
	}
	return nil
}

// indexWarning says that the persistent index was dropped, and why.
func indexWarning(why error) Warning {
	return Warning{Kind: WarnIndex, Msg: fmt.Sprintf("the session index in the cache does not match the file (%v); it was dropped and the file indexed again", why)}
}

// confirm indexes the file again when a line read back was not the entry
// the index said (errIndexMismatch): what the session says from then on
// is what the file says.
func (s *Session) confirm() {
	if s.src.mismatch.Load() {
		s.reindex()
	}
}

// reindex indexes the session's file again from its start, replacing the
// index it was read with (a persistent index that did not describe the
// file), and says so in a warning. Entries made before belong to the old
// index (their source is another), so they are no longer the session's.
// The leaf stays on the entry with its id, if there is one.
func (s *Session) reindex() error {
	b := s.src.cur.Load()
	s.src.mismatch.Store(false)
	if b.memory {
		return errIndexMismatch // a memory source never has a persistent index
	}
	f, release, err := b.file()
	if err != nil {
		return err
	}
	defer release()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	hp, err := readHeaderPart(s.path, f, fi.Size())
	if err != nil {
		return err
	}
	src := new(source)
	src.cur.Store(b)
	fresh := newRead(s.path, src, hp)
	if err := fresh.scanRest(f, fi.Size()); err != nil {
		return err
	}
	fresh.index(0)
	fresh.warnings = append(fresh.warnings, indexWarning(errors.New("a line read back is not the entry it names")))
	leaf := fresh.leaf
	if s.leaf < 0 {
		leaf = -1
	} else if i, ok := fresh.lookup(s.idOf(s.leaf)); ok {
		leaf = i
	}
	fresh.leaf, fresh.w, fresh.indexFile = leaf, s.w, s.indexFile
	s.waitSave()
	*s = *fresh
	if s.w != nil && s.w.f != nil {
		s.w.size = s.scanned
		if err := s.readMark(s.w.f); err != nil {
			return err
		}
	}
	if s.indexFile != nil {
		s.indexFile.save(s, f)
		s.savedAt = s.indexed
	}
	return nil
}

// readMeta reads the labels and the name of a session read from a
// persistent index from their lines, which are confirmed as they are read
// back, the first time they are needed. A line that cannot be read leaves
// them as far as they got, and the session indexes its file again at its
// next use (errIndexMismatch).
func (s *Session) readMeta() {
	if !s.unreadMeta {
		return
	}
	s.unreadMeta = false
	var idx []int32
	for i := range s.recs {
		if t := s.recs[i].typ; t == typeLabel || t == typeSessionInfo {
			idx = append(idx, int32(i))
		}
	}
	s.readLines(idx, func(i int32, line []byte) error {
		if m := lineMeta(s.recs[i].typ, line); m != nil {
			s.noteMeta(m)
		}
		return nil
	})
}

// confirmUnread reads back, to confirm them (see span.carriedBy), the
// lines of those entries of es that a persistent index, not this process,
// indexed: entries a context does not decode but whose type or role, as
// the index has them, decided what the model sees (an entry that is not a
// compaction, a kept message that is a system message).
func confirmUnread(es []*Entry) error {
	var need [maxBatch]bool
	var lines [maxBatch][]byte
	batch := make([]*Entry, 0, maxBatch)
	flush := func() error {
		for i := range batch {
			need[i], lines[i] = true, nil
		}
		err := readEntryLines(batch, need[:len(batch)], lines[:len(batch)])
		batch = batch[:0]
		return err
	}
	for _, e := range es {
		if e.src == nil || e.off >= e.src.unchecked.Load() {
			continue
		}
		if batch = append(batch, e); len(batch) == maxBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}
