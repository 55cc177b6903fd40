package session

import (
	"errors"
	"fmt"
	"slices"
	"weak"

	"github.com/prime-agent/prime/session/internal/rawmem"
)

// Session is a session file in memory: its header, the index of its
// entries in file order and the tree they form, and, for a session opened
// with [Open] or [Create], the file it appends to. It holds no entry's
// bytes (see docs/session.md, "Reading: memory and speed").
//
// A Session is not safe for concurrent use. Its entries are immutable and
// may be shared freely.
type Session struct {
	path        string
	header      *Header
	fileVersion int
	// src is where the entries' lines are read back from.
	src *source

	// recs is the index: one record per entry, in file order.
	recs []rec
	// odd holds the strings records cannot (see rec), by entry index.
	odd map[int32]*oddRec
	// ids finds entries by id; nil until first needed (a session read
	// from a persistent index may never need it).
	ids *idIndex
	// metas are the labels and names of entries indexed but not yet
	// applied (see index).
	metas []metaAt
	// blocks are the entries made so far (see entryAt); hot is block
	// hotK, the one last used.
	blocks []weak.Pointer[entryBlock]
	hot    *entryBlock
	hotK   int
	// leaf is the index of the current leaf, or -1 before the first entry
	// or after ResetLeaf.
	leaf int32
	// lastPath is the last path computed, to the entry at index lastEnd
	// (-1: none), while its caller still uses it (a weak reference to
	// its array of lastLen of lastCap entries): the leaf's path, asked for
	// again and again as entries are appended at the leaf, is extended by
	// one entry rather than walked again. Parents never change once
	// indexed, so it stays true.
	lastPath         weak.Pointer[*Entry]
	lastLen, lastCap int
	lastEnd          int32
	// lastIdx is the same for the indices of a path (see pathIdx).
	lastIdx    []int32
	lastIdxEnd int32
	// active holds the messages of the last context built (see Context),
	// so that the next one, usually the same conversation and one or two
	// messages more, reads and decodes only what is new.
	active  []Message
	labels  map[string]string
	name    string
	orphans []int32

	warnings []Warning
	// torn is the warning about a torn last line, which is not read
	// until a newline ends it; tornMsg says what is wrong with the line.
	torn    *Warning
	tornMsg string
	// skipped holds the lines that were not read as entries of a file in
	// an older format version, so a migration can carry them over
	// unchanged.
	skipped []skippedLine
	// lines is the number of lines read so far (the last one possibly
	// without its newline); a torn last line is not counted.
	lines int
	// indexed is the offset up to which the file has been read: just
	// after the last line read, which has no newline when midLine.
	indexed int64
	midLine bool
	// scanned is the size of the file when it was last read; headerOff
	// where its header line starts.
	scanned   int64
	headerOff int64
	// sums are the digests, block by block (see blockBytes), of the lines
	// of the file that start below summed, for the persistent index (see
	// lineTerm): every line read, when they are kept up, but for a last
	// one without a newline. The index computes the rest from the file
	// when it is saved.
	sums   []uint64
	summed int64
	// indexFile is where the persistent index is kept (nil: none), and
	// savedAt how much of the file it indexes.
	indexFile *indexFile
	savedAt   int64
	// saving, while not nil, is closed when the index file being written
	// in the background is written (see saveInBackground).
	saving chan struct{}
	// mark is the last bytes read of the file (see checkUnchanged).
	mark []byte
	// from says how the session was read.
	from ReadFrom
	// dupIDs is set once two entries have shared an id.
	dupIDs bool
	// unreadMeta is set while the labels and the name of a session read
	// from a persistent index are still to be read (see readMeta).
	unreadMeta bool

	// kids is the children index, built on first use (see children).
	kids *childIndex

	w *writer // nil for a read-only session
}

// metaAt is what the label or session_info entry i says.
type metaAt struct {
	i int32
	m *meta
}

type skippedLine struct {
	line int
	raw  []byte
}

// File returns the path of the session file ("" for a session kept only in
// memory).
func (s *Session) File() string { return s.path }

// Header returns the session header.
func (s *Session) Header() *Header { return s.header }

// FileVersion returns the format version of the file as read, before any
// in-memory migration.
func (s *Session) FileVersion() int { return s.fileVersion }

// Warnings returns the problems found while reading the file, in line order.
func (s *Session) Warnings() []Warning {
	w := slices.Clone(s.warnings)
	if s.torn != nil {
		w = append(w, *s.torn)
	}
	if s.src != nil {
		w = append(w, s.src.repairs.warnings()...)
	}
	return w
}

// TornTail reports whether the file ended in an incomplete line.
func (s *Session) TornTail() bool { return s.torn != nil }

// Len returns the number of entries.
func (s *Session) Len() int { return len(s.recs) }

// Entries returns the entries in file order (the header excluded).
func (s *Session) Entries() []*Entry { return s.EntriesFrom(0) }

// EntriesFrom returns the entries in file order from the i-th (counting
// from 0) on: those added since a caller saw Len() return i, since entries
// are only ever added after the others.
func (s *Session) EntriesFrom(i int) []*Entry { return s.EntriesBetween(i, len(s.recs)) }

// EntriesBetween returns the entries i to j-1 in file order, as many of
// them as there are: a part of EntriesFrom, for a caller that reads a long
// session a part at a time.
func (s *Session) EntriesBetween(i, j int) []*Entry {
	i, j = max(i, 0), min(j, len(s.recs))
	if i >= j {
		return nil
	}
	out := make([]*Entry, j-i)
	for k := range out {
		out[k] = s.entryAt(int32(i + k))
	}
	return out
}

// Entry returns the entry with the given id, or nil. When ids repeat, the
// later entry is found, as in pi.
func (s *Session) Entry(id string) *Entry {
	s.confirm()
	if i, ok := s.lookup(id); ok {
		return s.entryAt(i)
	}
	return nil
}

// Parent returns e's parent, or nil for a root.
func (s *Session) Parent(e *Entry) *Entry {
	if i := s.indexOf(e); i >= 0 && s.recs[i].parent >= 0 {
		return s.entryAt(s.recs[i].parent)
	}
	return nil
}

// indexOf returns e's position in file order, or -1 when it is not an entry
// of s.
func (s *Session) indexOf(e *Entry) int32 {
	if e == nil || e.src != s.src || e.idx < 0 || int(e.idx) >= len(s.recs) {
		return -1
	}
	return e.idx
}

// Leaf returns the current leaf: the last entry in file order after
// loading, the last entry appended, or the entry set with [Session.SetLeaf].
// It is nil for an empty session or after [Session.ResetLeaf].
func (s *Session) Leaf() *Entry {
	s.confirm()
	if s.leaf < 0 {
		return nil
	}
	return s.entryAt(s.leaf)
}

// LeafID returns the id of the current leaf, or "".
func (s *Session) LeafID() string {
	if s.leaf < 0 {
		return ""
	}
	return s.idOf(s.leaf)
}

// SetLeaf moves the leaf to the entry with the given id, so the next append
// starts a branch there. Like pi, the move itself is not written to the
// file: reloading puts the leaf back on the last entry.
func (s *Session) SetLeaf(id string) error {
	i, ok := s.lookup(id)
	if !ok {
		return fmt.Errorf("entry %s: %w", id, ErrNotFound)
	}
	s.leaf = i
	return nil
}

// ResetLeaf moves the leaf before the first entry: the next append is a new
// root.
func (s *Session) ResetLeaf() { s.leaf = -1 }

// Path returns the entries from the root to the entry with the given id,
// root first, or nil when there is no such entry. It stops at an orphan
// (an entry whose parent is missing). It takes time proportional to the
// path's length.
func (s *Session) Path(id string) []*Entry {
	s.confirm()
	i, ok := s.lookup(id)
	if !ok {
		return nil
	}
	return s.pathTo(i)
}

// LeafPath returns the path from the root to the current leaf ([Session.Path]
// of the leaf), or nil when there is no leaf.
func (s *Session) LeafPath() []*Entry {
	s.confirm()
	if s.leaf < 0 {
		return nil
	}
	return s.pathTo(s.leaf)
}

func (s *Session) pathTo(i int32) []*Entry {
	if p := s.lastPath.Value(); p != nil && s.lastEnd >= 0 && int(s.lastEnd) < len(s.recs) {
		// p is the first element of the array of the last path, which
		// holding p keeps alive.
		last := rawmem.ArrayAt(p, s.lastCap)[:s.lastLen]
		switch {
		case i == s.lastEnd:
			return last[:len(last):len(last)]
		case s.recs[i].parent == s.lastEnd:
			return s.keepPath(append(last, s.entryAt(i)), i)
		}
	}
	return s.keepPath(s.entriesAt(s.pathIdx(i)), i)
}

// keepPath remembers path, to entry i, as the last path computed and
// returns it.
func (s *Session) keepPath(path []*Entry, i int32) []*Entry {
	if len(path) == 0 {
		s.lastPath = weak.Pointer[*Entry]{}
		return path
	}
	s.lastPath, s.lastLen, s.lastCap, s.lastEnd = weak.Make(&path[0]), len(path), cap(path), i
	return path[:len(path):len(path)]
}

// Context returns what the model sees at the entry with the given id (see
// [BuildContext]). An empty id means the current leaf, and gives an empty
// context after [Session.ResetLeaf]; an id that is not in the session falls
// back to the last entry, as pi does.
//
// The session keeps the messages of the last context it built while it
// builds the next, so a conversation that grows by a message or two costs
// only the new messages.
func (s *Session) Context(leafID string) (Context, error) {
	s.confirm()
	c, err := s.context(leafID)
	if err != nil && (errors.Is(err, errIndexMismatch) || s.from != ReadWhole) && s.reindex() == nil {
		// A line read back that is not its entry, or that does not
		// decode, from a persistent index: what the file says, then.
		c, err = s.context(leafID)
	}
	return c, err
}

// context is Context.
func (s *Session) context(leafID string) (Context, error) {
	i := s.leaf
	if leafID != "" {
		var ok bool
		if i, ok = s.lookup(leafID); !ok {
			i = int32(len(s.recs) - 1)
		}
	}
	view := PathView{s: s}
	if i >= 0 {
		view.idx = s.pathIdx(i)
	}
	c, err := buildContext(view)
	if err == nil {
		s.active = c.Messages
	}
	return c, err
}

// Label returns the label on the entry with the given id, or "". The last
// label entry for an entry wins; an empty one clears it.
func (s *Session) Label(id string) string {
	s.readMeta()
	return s.labels[id]
}

// Labels returns every label, by the id of the labelled entry.
func (s *Session) Labels() map[string]string {
	s.readMeta()
	m := make(map[string]string, len(s.labels))
	for k, v := range s.labels {
		m[k] = v
	}
	return m
}

// Name returns the session's name: the name in the last session_info entry
// (an empty one clears it), or "".
func (s *Session) Name() string {
	s.readMeta()
	return s.name
}

// Orphans returns the entries whose parent is not in the file. Like pi,
// Prime treats each as a root: paths through it stop there.
func (s *Session) Orphans() []*Entry { return s.entriesAt(s.orphans) }
