package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// ErrNotFound reports an entry id that is not in the session, or a session
// that does not exist.
var ErrNotFound = errors.New("not found")

// NotSessionError reports a file that is not a session file: it is empty, or
// its first JSON line is not a session header. Such a file is never written
// to.
type NotSessionError struct {
	Path   string
	Reason string
}

func (e *NotSessionError) Error() string {
	return fmt.Sprintf("session: %s is not a session file: %s", e.Path, e.Reason)
}

// WarningKind classifies a [Warning].
type WarningKind int

// Kinds of warnings the loader reports.
const (
	// WarnMalformed: a line that is not valid JSON, or not an entry object.
	// It is skipped, as pi skips it.
	WarnMalformed WarningKind = iota + 1
	// WarnTornTail: the last line is incomplete and has no newline, the
	// mark of a crash in the middle of an append. It is skipped; the next
	// append starts on a fresh line.
	WarnTornTail
	// WarnDuplicateID: two entries share an id. Lookups find the later one,
	// as in pi.
	WarnDuplicateID
	// WarnMissingID: an entry has no id; it cannot be a parent or be looked
	// up, but it is kept.
	WarnMissingID
	// WarnCycle: parent links form a cycle; the entry named becomes a root.
	WarnCycle
	// WarnNewerVersion: the header names a format version newer than
	// Prime's. The file is read as version 3 and is not appended to.
	WarnNewerVersion
)

// Warning is a problem found while reading a session file that did not stop
// it from loading.
type Warning struct {
	Kind WarningKind
	// Line is the 1-based line number the warning is about, or 0.
	Line int
	// Msg says what is wrong, e.g. `malformed JSON: unexpected EOF`.
	Msg string
}

// String formats the warning as "line 12: msg".
func (w Warning) String() string {
	if w.Line == 0 {
		return w.Msg
	}
	return fmt.Sprintf("line %d: %s", w.Line, w.Msg)
}

// Session is a session file in memory: its header, its entries in file order
// and the tree they form, and, for a session opened with [Open] or [Create],
// the file it appends to.
//
// A Session is not safe for concurrent use. Its entries are immutable and
// may be shared freely.
type Session struct {
	path        string
	header      *Header
	fileVersion int

	entries []*Entry
	// parent[i] is the index of entries[i]'s parent, or -1 for a root.
	parent []int32
	byID   map[string]int32
	// leaf is the index of the current leaf, or -1 before the first entry
	// or after ResetLeaf.
	leaf int32
	// lastPath is the last path computed, to the entry at index lastEnd
	// (-1: none): the leaf's path, asked for again and again as entries are
	// appended at the leaf, is extended by one entry rather than walked
	// again. Parents never change once indexed, so it stays true.
	lastPath []*Entry
	lastEnd  int32
	labels   map[string]string
	name     string
	orphans  []int32

	warnings []Warning
	// skipped holds the lines that were not read as entries, so a
	// migration can carry them over unchanged.
	skipped []skippedLine
	// lines is the number of lines read so far (the last one possibly
	// without its newline).
	lines int
	// dupIDs is set once two entries have shared an id.
	dupIDs bool

	// kids is the children index, built on first use (see children).
	kids *childIndex

	w *writer // nil for a read-only session
}

type skippedLine struct {
	line int
	raw  []byte
}

// Load reads a session file for reading only: nothing Load returns ever
// writes to the file. A file in an older format version is migrated in
// memory (see the package doc). Bad lines are skipped and reported by
// [Session.Warnings]; a file that is not a session is a [*NotSessionError].
//
// A large file is decoded while it is being read: lines are validated on
// every core as soon as they arrive.
func Load(path string) (*Session, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	defer f.Close()
	s, _, err := readFile(path, f)
	return s, err
}

// readFile reads the session in f (named name in errors) from its start,
// and returns the bytes it read too. A large regular file is decoded while
// it is read (loadStream); any other is read into a buffer the size of the
// file and parsed. An empty file is a *NotSessionError, with no bytes.
func readFile(name string, f *os.File) (*Session, []byte, error) {
	size := -1
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && int64(int(fi.Size())) == fi.Size() {
		size = int(fi.Size())
	}
	if size >= streamBytes {
		return loadStream(name, f, size)
	}
	data, err := readAll(f, size)
	if err != nil {
		return nil, nil, fmt.Errorf("session: reading %s: %w", name, err)
	}
	s, err := Parse(name, data)
	return s, data, err
}

// readAll reads r to its end. size is what it is expected to hold (a
// file's size), or -1 when unknown: the buffer is allocated once for it
// instead of growing, and copying, while the data arrives.
func readAll(r io.Reader, size int) ([]byte, error) {
	if size < 0 {
		return io.ReadAll(r)
	}
	// One byte more than expected, so that the end is seen without
	// growing the buffer.
	buf := make([]byte, 0, size+1)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, cap(buf)/4+512) // the file grew meanwhile
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Parse reads a session from the contents of a session file. name is used
// in errors. The session keeps data: its entries, and the strings decoded
// from them, share its memory, so data must never be modified afterwards.
func Parse(name string, data []byte) (*Session, error) {
	s := &Session{path: name, leaf: -1}
	if err := s.read(data, true); err != nil {
		return nil, err
	}
	return s.finish(data)
}

// finish checks that a header was found, migrates and indexes the entries.
func (s *Session) finish(data []byte) (*Session, error) {
	if s.header == nil {
		reason := "no session header"
		if len(bytes.TrimSpace(data)) == 0 {
			reason = "the file is empty"
		}
		return nil, &NotSessionError{Path: s.path, Reason: reason}
	}
	if s.fileVersion < CurrentVersion {
		if err := s.migrate(); err != nil {
			return nil, err
		}
	}
	s.byID = make(map[string]int32, len(s.entries))
	s.index(0)
	return s, nil
}

// streamBytes is the file size from which Load decodes while reading, and
// readStep the size of each read.
const (
	streamBytes = 8 << 20
	readStep    = 1 << 20
)

// loadStream reads a file of the given size into one buffer, handing
// complete chunks of lines to decoding goroutines as the reads arrive, so
// that reading (page faults and copying) and validating overlap. It
// returns the bytes read too, even with an error: size at most, fewer if
// the file ends sooner.
func loadStream(name string, r io.Reader, size int) (*Session, []byte, error) {
	buf := make([]byte, size)
	progress := make(chan int, size/readStep+2)
	var readErr error
	go func() {
		defer close(progress)
		off := 0
		for off < len(buf) {
			n, err := r.Read(buf[off:min(off+readStep, len(buf))])
			off += n
			if n > 0 {
				progress <- off
			}
			if err != nil {
				if err != io.EOF {
					readErr = err
				}
				return
			}
		}
	}()
	work := make(chan *chunk, size/chunkBytes+2)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			var lines []textLine
			for c := range work {
				c.decode(&lines)
			}
		})
	}
	s := &Session{path: name, leaf: -1}
	var chunks []*chunk
	var headerErr error
	avail, cut := 0, 0
	for avail = range progress {
		if headerErr != nil {
			continue // drain the reader
		}
		nl := bytes.LastIndexByte(buf[cut:avail], '\n')
		if nl < 0 {
			continue
		}
		end := cut + nl + 1
		if s.header == nil {
			rest, err := s.readUntilHeader(buf[cut:end])
			if err != nil {
				headerErr = err
				continue
			}
			cut = end - len(rest)
			if s.header == nil {
				continue
			}
		}
		if end-cut >= chunkBytes {
			c := &chunk{data: buf[cut:end]}
			chunks = append(chunks, c)
			work <- c
			cut = end
		}
	}
	buf = buf[:avail]
	if headerErr == nil && s.header == nil {
		rest, err := s.readUntilHeader(buf[cut:])
		headerErr = err
		cut = len(buf) - len(rest)
	}
	if cut < len(buf) && headerErr == nil {
		c := &chunk{data: buf[cut:]}
		chunks = append(chunks, c)
		work <- c
	}
	close(work)
	wg.Wait()
	if readErr != nil {
		return nil, buf, fmt.Errorf("session: reading %s: %w", name, readErr)
	}
	if headerErr != nil {
		return nil, buf, headerErr
	}
	s.assemble(chunks)
	s, err := s.finish(buf)
	return s, buf, err
}

// read reads the lines of data, which continues the file after the lines
// already read. A last line without a newline is read too; when it is not
// valid it is reported as a torn tail instead of a malformed line.
func (s *Session) read(data []byte, atStart bool) error {
	if atStart {
		var err error
		if data, err = s.readUntilHeader(data); err != nil || s.header == nil {
			return err
		}
	}
	s.assemble(decodeChunks(data))
	return nil
}

// assemble adds the decoded chunks, in file order, to the entries, and
// their bad lines to the warnings.
func (s *Session) assemble(chunks []*chunk) {
	n := 0
	for _, c := range chunks {
		n += len(c.entries)
	}
	s.entries = slices.Grow(s.entries, n)
	for _, c := range chunks {
		for i := range c.entries {
			e := &c.entries[i]
			e.Line += s.lines
			s.entries = append(s.entries, e)
		}
		for _, l := range c.bad {
			num := s.lines + l.num
			kind, err := WarnMalformed, l.err
			if !l.terminated {
				kind = WarnTornTail
				err = fmt.Errorf("incomplete last line (%d bytes): %w", len(l.text), err)
			}
			s.warnings = append(s.warnings, Warning{Kind: kind, Line: num, Msg: err.Error()})
			s.skipped = append(s.skipped, skippedLine{line: num, raw: l.text})
		}
		s.lines += c.count
	}
}

// readUntilHeader reads the lines before and including the header and
// returns the rest of data.
func (s *Session) readUntilHeader(data []byte) ([]byte, error) {
	for len(data) > 0 && s.header == nil {
		line, rest, terminated := bytes.Cut(data, []byte{'\n'})
		data = rest
		s.lines++
		if line = bytes.TrimSpace(line); len(line) > 0 {
			if err := s.readHeader(line, terminated); err != nil {
				return nil, err
			}
		}
	}
	return data, nil
}

// chunk is a run of whole lines decoded together.
type chunk struct {
	data []byte
	// entries are the lines read as entries, in order, each with its
	// line number within the chunk (from 1) as its Line.
	entries []Entry
	// bad are the non-blank lines that are not entries, in order.
	bad []badLine
	// count is the number of lines in data, blank ones included.
	count int
}

// textLine is one non-blank line of a chunk.
type textLine struct {
	text []byte
	// num is the line's number within its chunk, from 1.
	num int
	// terminated is false for a last line without a newline.
	terminated bool
}

// badLine is a line that could not be read as an entry.
type badLine struct {
	textLine
	err error
}

// decode splits the chunk into lines and decodes each, straight into the
// entries array, which is sized once from the lines found. lines is
// scratch for the lines, reused from chunk to chunk by the caller.
func (c *chunk) decode(lines *[]textLine) {
	*lines = (*lines)[:0]
	data := c.data
	for len(data) > 0 {
		line, rest, terminated := bytes.Cut(data, []byte{'\n'})
		data = rest
		c.count++
		if line = bytes.TrimSpace(line); len(line) > 0 {
			*lines = append(*lines, textLine{text: line, num: c.count, terminated: terminated})
		}
	}
	c.entries = make([]Entry, 0, len(*lines))
	for _, l := range *lines {
		k := len(c.entries)
		c.entries = c.entries[:k+1]
		if err := decodeLineInto(&c.entries[k], l.text); err != nil {
			c.entries = c.entries[:k]
			c.bad = append(c.bad, badLine{textLine: l, err: err})
			continue
		}
		c.entries[k].Line = l.num
	}
}

// chunkBytes is the size of the pieces a large input is cut into, so that
// each goroutine has many to pick from.
const chunkBytes = 1 << 20

// decodeChunks cuts data into chunks of whole lines and decodes them, on as
// many goroutines as the machine runs at once when data is large:
// validating every line is most of the cost of opening a session, and
// lines are independent.
func decodeChunks(data []byte) []*chunk {
	var chunks []*chunk
	for len(data) > 0 {
		n := min(len(data), chunkBytes)
		if i := bytes.IndexByte(data[n:], '\n'); i >= 0 {
			n += i + 1
		} else {
			n = len(data)
		}
		chunks = append(chunks, &chunk{data: data[:n]})
		data = data[n:]
	}
	workers := min(runtime.GOMAXPROCS(0), len(chunks))
	if workers <= 1 {
		var lines []textLine
		for _, c := range chunks {
			c.decode(&lines)
		}
		return chunks
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var lines []textLine
			for i := int(next.Add(1)) - 1; i < len(chunks); i = int(next.Add(1)) - 1 {
				chunks[i].decode(&lines)
			}
		})
	}
	wg.Wait()
	return chunks
}

// readHeader handles a line met before the header: the header itself, or a
// line that is not JSON (skipped, as pi does). A JSON line that is not a
// header makes the file not a session.
func (s *Session) readHeader(line []byte, terminated bool) error {
	if !validJSON(line) {
		msg := malformed(line).Error()
		if !terminated {
			msg = "incomplete session header: " + msg
		}
		s.warnings = append(s.warnings, Warning{Kind: WarnMalformed, Line: s.lines, Msg: msg})
		s.skipped = append(s.skipped, skippedLine{line: s.lines, raw: line})
		return nil
	}
	h, ok, err := decodeHeader(line)
	if err != nil || !ok {
		return &NotSessionError{Path: s.path, Reason: fmt.Sprintf("line %d is not a session header", s.lines)}
	}
	s.header = h
	s.fileVersion = h.Version
	if h.Version > CurrentVersion {
		s.warnings = append(s.warnings, Warning{Kind: WarnNewerVersion, Line: s.lines,
			Msg: fmt.Sprintf("format version %d is newer than Prime's (%d); reading it as version %d", h.Version, CurrentVersion, CurrentVersion)})
	}
	return nil
}

// index adds entries[from:] to the id index and the tree, and brings the
// labels, the name and the leaf up to date.
func (s *Session) index(from int) {
	warned := len(s.warnings)
	defer func() {
		if len(s.warnings) > warned {
			// The warnings about ids and links come after those about
			// the lines; keep them all in line order.
			slices.SortStableFunc(s.warnings, func(a, b Warning) int { return a.Line - b.Line })
		}
	}()
	for i := from; i < len(s.entries); i++ {
		e := s.entries[i]
		if e.ID == "" {
			s.warnings = append(s.warnings, Warning{Kind: WarnMissingID, Line: e.Line, Msg: "entry has no id"})
			continue
		}
		if j, dup := s.byID[e.ID]; dup {
			s.dupIDs = true
			s.warnings = append(s.warnings, Warning{Kind: WarnDuplicateID, Line: e.Line,
				Msg: fmt.Sprintf("id %s is also used on line %d; the later entry wins", e.ID, s.entries[j].Line)})
		}
		s.byID[e.ID] = int32(i)
	}
	if s.dupIDs {
		// Parents resolve to the last entry with their id, wherever it
		// is in the file, so every link may have changed.
		from = 0
	}
	if from == 0 {
		s.lastPath = nil
	}
	s.parent = slices.Grow(s.parent[:from], len(s.entries)-from)[:len(s.entries)]
	forward := false
	for i := from; i < len(s.entries); i++ {
		p := s.resolveParent(i)
		s.parent[i] = p
		if p > int32(i) {
			forward = true
		}
	}
	if forward {
		s.breakCycles()
		s.lastPath = nil
	}
	if from > 0 && len(s.orphans) > 0 {
		// A new entry may be the missing parent of an orphan.
		s.lastPath = nil
		old := s.orphans
		s.orphans = nil
		for _, i := range old {
			s.parent[i] = s.resolveParent(int(i))
			if s.isOrphan(int(i)) {
				s.orphans = append(s.orphans, i)
			}
		}
	} else if from == 0 {
		s.orphans = nil
	}
	for i := from; i < len(s.entries); i++ {
		if s.isOrphan(i) {
			s.orphans = append(s.orphans, int32(i))
		}
	}
	for _, e := range s.entries[from:] {
		s.noteMeta(e)
	}
	if len(s.entries) > 0 {
		s.leaf = int32(len(s.entries) - 1)
	}
	s.kids = nil
}

// isOrphan reports whether entries[i] names a parent that is not in the
// file.
func (s *Session) isOrphan(i int) bool {
	e := s.entries[i]
	if s.parent[i] >= 0 || e.ParentID == "" || e.ParentID == e.ID {
		return false
	}
	_, ok := s.byID[e.ParentID]
	return !ok
}

// resolveParent returns the index of entries[i]'s parent, or -1 when it is
// a root: no parentId, its own id (pi treats both as roots), or an id not in
// the file (an orphan).
func (s *Session) resolveParent(i int) int32 {
	e := s.entries[i]
	if e.ParentID == "" || e.ParentID == e.ID {
		return -1
	}
	p, ok := s.byID[e.ParentID]
	if !ok || p == int32(i) {
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
	state := make([]byte, len(s.entries))
	var chain []int32
	for start := range s.entries {
		chain = chain[:0]
		j := int32(start)
		for j >= 0 && state[j] == unseen {
			state[j] = onStack
			chain = append(chain, j)
			j = s.parent[j]
		}
		if j >= 0 && state[j] == onStack {
			// chain from j onwards is a cycle.
			k := slices.Index(chain, j)
			low := slices.Min(chain[k:])
			s.parent[low] = -1
			s.warnings = append(s.warnings, Warning{Kind: WarnCycle, Line: s.entries[low].Line,
				Msg: fmt.Sprintf("parent links of entry %s form a cycle; it is read as a root", s.entries[low].ID)})
		}
		for _, c := range chain {
			state[c] = done
		}
	}
}

// noteMeta records what label and session_info entries say.
func (s *Session) noteMeta(e *Entry) {
	switch e.Type {
	case TypeLabel:
		p, err := e.Payload()
		if err != nil {
			return
		}
		l := p.(*LabelEntry)
		if l.Label == "" {
			delete(s.labels, l.TargetID)
			return
		}
		if s.labels == nil {
			s.labels = make(map[string]string)
		}
		s.labels[l.TargetID] = l.Label
	case TypeSessionInfo:
		p, err := e.Payload()
		if err != nil {
			return
		}
		s.name = strings.TrimSpace(p.(*SessionInfoEntry).Name)
	}
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
func (s *Session) Warnings() []Warning { return slices.Clone(s.warnings) }

// TornTail reports whether the file ended in an incomplete line.
func (s *Session) TornTail() bool {
	return slices.ContainsFunc(s.warnings, func(w Warning) bool { return w.Kind == WarnTornTail })
}

// Len returns the number of entries.
func (s *Session) Len() int { return len(s.entries) }

// Entries returns the entries in file order (the header excluded).
func (s *Session) Entries() []*Entry { return slices.Clone(s.entries) }

// Entry returns the entry with the given id, or nil. When ids repeat, the
// later entry is found, as in pi.
func (s *Session) Entry(id string) *Entry {
	if i, ok := s.byID[id]; ok {
		return s.entries[i]
	}
	return nil
}

// Parent returns e's parent, or nil for a root.
func (s *Session) Parent(e *Entry) *Entry {
	if i := s.indexOf(e); i >= 0 && s.parent[i] >= 0 {
		return s.entries[s.parent[i]]
	}
	return nil
}

// indexOf returns e's position in file order, or -1.
func (s *Session) indexOf(e *Entry) int32 {
	if e == nil {
		return -1
	}
	if i, ok := s.byID[e.ID]; ok && s.entries[i] == e {
		return i
	}
	// An entry without an id, or hidden by a later one with the same id.
	for i, x := range s.entries {
		if x == e {
			return int32(i)
		}
	}
	return -1
}

// Leaf returns the current leaf: the last entry in file order after
// loading, the last entry appended, or the entry set with [Session.SetLeaf].
// It is nil for an empty session or after [Session.ResetLeaf].
func (s *Session) Leaf() *Entry {
	if s.leaf < 0 {
		return nil
	}
	return s.entries[s.leaf]
}

// LeafID returns the id of the current leaf, or "".
func (s *Session) LeafID() string {
	if e := s.Leaf(); e != nil {
		return e.ID
	}
	return ""
}

// SetLeaf moves the leaf to the entry with the given id, so the next append
// starts a branch there. Like pi, the move itself is not written to the
// file: reloading puts the leaf back on the last entry.
func (s *Session) SetLeaf(id string) error {
	i, ok := s.byID[id]
	if !ok {
		return fmt.Errorf("session: entry %s: %w", id, ErrNotFound)
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
	i, ok := s.byID[id]
	if !ok {
		return nil
	}
	return s.pathTo(i)
}

// LeafPath returns the path from the root to the current leaf ([Session.Path]
// of the leaf), or nil when there is no leaf.
func (s *Session) LeafPath() []*Entry {
	if s.leaf < 0 {
		return nil
	}
	return s.pathTo(s.leaf)
}

func (s *Session) pathTo(i int32) []*Entry {
	if s.lastPath != nil && s.lastEnd >= 0 && int(s.lastEnd) < len(s.entries) {
		switch {
		case i == s.lastEnd:
			return s.lastPath[:len(s.lastPath):len(s.lastPath)]
		case s.parent[i] == s.lastEnd:
			s.lastPath = append(s.lastPath, s.entries[i])
			s.lastEnd = i
			return s.lastPath[:len(s.lastPath):len(s.lastPath)]
		}
	}
	path := s.walkTo(i)
	s.lastPath, s.lastEnd = path, i
	return path[:len(path):len(path)]
}

// walkTo walks from entries[i] up to its root.
func (s *Session) walkTo(i int32) []*Entry {
	n := 0
	for j := i; j >= 0; j = s.parent[j] {
		n++
	}
	path := make([]*Entry, n)
	for j := i; j >= 0; j = s.parent[j] {
		n--
		path[n] = s.entries[j]
	}
	return path
}

// Context returns what the model sees at the entry with the given id (see
// [BuildContext]). An empty id means the current leaf, and gives an empty
// context after [Session.ResetLeaf]; an id that is not in the session falls
// back to the last entry, as pi does.
func (s *Session) Context(leafID string) (Context, error) {
	i := s.leaf
	if leafID != "" {
		var ok bool
		if i, ok = s.byID[leafID]; !ok {
			i = int32(len(s.entries) - 1)
		}
	}
	if i < 0 {
		return BuildContext(nil)
	}
	return BuildContext(s.pathTo(i))
}

// Label returns the label on the entry with the given id, or "". The last
// label entry for an entry wins; an empty one clears it.
func (s *Session) Label(id string) string { return s.labels[id] }

// Labels returns every label, by the id of the labelled entry.
func (s *Session) Labels() map[string]string {
	m := make(map[string]string, len(s.labels))
	for k, v := range s.labels {
		m[k] = v
	}
	return m
}

// Name returns the session's name: the name in the last session_info entry
// (an empty one clears it), or "".
func (s *Session) Name() string { return s.name }

// Orphans returns the entries whose parent is not in the file. Like pi,
// Prime treats each as a root: paths through it stop there.
func (s *Session) Orphans() []*Entry {
	out := make([]*Entry, len(s.orphans))
	for k, i := range s.orphans {
		out[k] = s.entries[i]
	}
	return out
}
