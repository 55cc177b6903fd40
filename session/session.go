package session

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unsafe"
	"weak"
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

// Session is a session file in memory: its header, the index of its
// entries in file order and the tree they form, and, for a session opened
// with [Open] or [Create], the file it appends to. It holds no entry's
// bytes (see the package doc, "Reading: memory and speed").
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
	// sums are the checksums of the file's whole blocks read so far
	// (see blockBytes), for the persistent index.
	sums []uint32
	// indexFile is where the persistent index is kept (nil: none), and
	// savedAt how much of the file it indexes.
	indexFile *indexFile
	savedAt   int64
	// mark is the last bytes read of the file (see checkUnchanged).
	mark []byte
	// from says how the session was read.
	from ReadFrom
	// dupIDs is set once two entries have shared an id.
	dupIDs bool

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

// ReadOptions configure how a session file is read.
type ReadOptions struct {
	// IndexDir is where the index of a large session file is kept from
	// one run to the next ([IndexDir] of the agent directory), so that
	// opening it again reads only the index and the lines appended since.
	// Empty means none: every open reads the whole file.
	IndexDir string
}

// ReadFrom says how a session's index was had (see [ReadOptions]).
type ReadFrom int

// How a session's index was had.
const (
	// ReadWhole: every line of the file was read and indexed.
	ReadWhole ReadFrom = iota
	// ReadIndexTrusted: the persistent index, the file's stamp vouching
	// for it, and the lines appended since.
	ReadIndexTrusted
	// ReadIndexChecked: the persistent index, checked block by block
	// against the file, and the lines appended since.
	ReadIndexChecked
)

func (r ReadFrom) String() string {
	switch r {
	case ReadIndexTrusted:
		return "persistent index (trusted on the file's stamp)"
	case ReadIndexChecked:
		return "persistent index (checked block by block)"
	}
	return "whole file"
}

// ReadFrom says how the session's index was had.
func (s *Session) ReadFrom() ReadFrom { return s.from }

// Load reads a session file for reading only: nothing Load returns ever
// writes to the file. A file in an older format version is migrated in
// memory (see the package doc). Bad lines are skipped and reported by
// [Session.Warnings]; a file that is not a session is a [*NotSessionError].
//
// The session keeps the file open to read entries back; [Session.Close]
// closes it (entries read afterwards open it again).
func Load(path string) (*Session, error) { return LoadWith(path, ReadOptions{}) }

// LoadWith is [Load] with options.
func LoadWith(path string, opts ReadOptions) (*Session, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	s, err := readFile(path, f, opts)
	if err != nil || s.src.cur.Load().memory {
		f.Close()
	}
	return s, err
}

// readFile reads the session in f (named name in errors) from its start:
// a regular file is indexed where it is and read back from f; anything
// else is read into memory and parsed. An empty file is a
// *NotSessionError.
func readFile(name string, f *os.File, opts ReadOptions) (*Session, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	if !fi.Mode().IsRegular() {
		data, err := io.ReadAll(f)
		if err != nil {
			return nil, fmt.Errorf("session: reading %s: %w", name, err)
		}
		return Parse(name, data)
	}
	return readIndexed(name, f, fi, opts)
}

// readIndexed indexes the regular file f, which the session then reads
// its entries back from. A file in an older format version is read into
// memory and migrated there.
func readIndexed(name string, f *os.File, fi os.FileInfo, opts ReadOptions) (*Session, error) {
	size := fi.Size()
	hp, err := readHeaderPart(name, f, size)
	if err != nil {
		return nil, err
	}
	if hp.header.Version < CurrentVersion {
		data, err := readAll(io.NewSectionReader(f, 0, size), int(size))
		if err != nil {
			return nil, fmt.Errorf("session: reading %s: %w", name, err)
		}
		return parseOld(name, data, hp)
	}
	x := newIndexFile(opts.IndexDir, name, fi)
	if x != nil {
		if s, trusted := x.load(name, f, fi); s != nil {
			s.from = ReadIndexChecked
			if trusted {
				s.from = ReadIndexTrusted
			}
			indexed := s.indexed
			if err := s.readMore(f, size); err != nil {
				return nil, err
			}
			if !trusted || s.indexed != indexed {
				x.save(s, f)
			}
			s.indexFile, s.savedAt = x, s.indexed
			return s, nil
		}
	}
	s := newRead(name, fileSource(f, name, fi), hp)
	if err := s.scanRest(f, size); err != nil {
		return nil, err
	}
	s.index(0)
	if x != nil {
		x.save(s, f)
		s.indexFile, s.savedAt = x, s.indexed
	}
	return s, nil
}

// readMore indexes the lines from where the session stopped reading to
// end, the file's size: what was appended since.
func (s *Session) readMore(r io.ReaderAt, end int64) error {
	start := s.indexed
	if s.midLine {
		// The last line read had no newline: what follows up to the next
		// newline ends it.
		nl, err := nextNewline(r, start, end)
		if err != nil {
			return fmt.Errorf("session: reading %s: %w", s.path, err)
		}
		if nl < 0 {
			s.scanned = end
			return nil
		}
		start = nl + 1
		s.indexed, s.midLine = start, false
	}
	scan, err := scanLines(r, start, end, s.lines, false)
	if err != nil {
		return fmt.Errorf("session: reading %s: %w", s.path, err)
	}
	s.scanned = end
	from := len(s.recs)
	s.absorb(scan)
	if len(s.recs) > from || from == 0 {
		s.index(from)
	}
	return nil
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
	r := bytes.NewReader(data)
	hp, err := readHeaderPart(name, r, int64(len(data)))
	if err != nil {
		return nil, err
	}
	if hp.header.Version < CurrentVersion {
		return parseOld(name, data, hp)
	}
	s := newRead(name, memorySource(data), hp)
	if err := s.scanRest(r, int64(len(data))); err != nil {
		return nil, err
	}
	s.index(0)
	return s, nil
}

// scanRest indexes the lines after the header, to end.
func (s *Session) scanRest(r io.ReaderAt, end int64) error {
	s.scanned = end
	if s.midLine {
		return nil // the header is the last line
	}
	scan, err := scanLines(r, s.indexed, end, s.lines, false)
	if err != nil {
		return fmt.Errorf("session: reading %s: %w", s.path, err)
	}
	s.absorb(scan)
	return nil
}

// newRead starts a session read from src, whose header part is hp.
func newRead(name string, src *source, hp *headerPart) *Session {
	s := &Session{
		path: name, header: hp.header, fileVersion: hp.header.Version, src: src, leaf: -1,
		lines: hp.lines, warnings: hp.warnings, skipped: hp.skipped, indexed: hp.end, midLine: hp.midLine,
		headerOff: hp.headerOff,
	}
	if v := hp.header.Version; v > CurrentVersion {
		s.warnings = append(s.warnings, Warning{Kind: WarnNewerVersion, Line: hp.headerLine,
			Msg: fmt.Sprintf("format version %d is newer than Prime's (%d); reading it as version %d", v, CurrentVersion, CurrentVersion)})
	}
	return s
}

// headerPart is what comes before and with the header line.
type headerPart struct {
	header *Header
	// headerLine is the header's line number, lines the number of lines
	// up to it, end the offset after it (and its newline: midLine when
	// it has none).
	headerLine, lines int
	end, headerOff    int64
	midLine           bool
	warnings          []Warning
	skipped           []skippedLine
}

// readHeaderPart reads the lines before and including the header: lines
// that are not JSON are skipped (as pi skips them); a JSON line that is
// not a header, or no header at all, makes the file not a session.
func readHeaderPart(name string, r io.ReaderAt, size int64) (*headerPart, error) {
	hp := new(headerPart)
	br := bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 4<<10)
	var off int64
	text := false // a non-blank line was seen
	var long []byte
	for {
		part, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, part...)
			continue
		}
		line := part
		if long != nil {
			line = append(long, part...)
			long = nil
		}
		if len(line) == 0 && err != nil {
			break
		}
		lineStart := off
		off += int64(len(line))
		terminated := len(line) > 0 && line[len(line)-1] == '\n'
		hp.lines++
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) > 0 {
			text = true
			if !validJSON(trimmed) {
				msg := malformed(trimmed).Error()
				if !terminated {
					msg = "incomplete session header: " + msg
				}
				hp.warnings = append(hp.warnings, Warning{Kind: WarnMalformed, Line: hp.lines, Msg: msg})
				hp.skipped = append(hp.skipped, skippedLine{line: hp.lines, raw: bytes.Clone(trimmed)})
			} else {
				h, ok, err := decodeHeader(bytes.Clone(trimmed))
				if err != nil || !ok {
					return nil, &NotSessionError{Path: name, Reason: fmt.Sprintf("line %d is not a session header", hp.lines)}
				}
				hp.header, hp.headerLine, hp.end, hp.midLine = h, hp.lines, off, !terminated
				hp.headerOff = lineStart + int64(cap(line)-cap(trimmed))
				return hp, nil
			}
		}
		if err != nil {
			if err != io.EOF {
				return nil, fmt.Errorf("session: reading %s: %w", name, err)
			}
			break
		}
	}
	reason := "no session header"
	if !text {
		reason = "the file is empty"
	}
	return nil, &NotSessionError{Path: name, Reason: reason}
}

// absorb adds what an index pass found after the lines already read.
func (s *Session) absorb(scan *lineScan) {
	from := int32(len(s.recs))
	if from == 0 {
		s.recs = scan.recs // not copied: the index may be large
	} else {
		s.recs = append(s.recs, scan.recs...)
	}
	for _, x := range scan.extras {
		s.setExtra(from+x.i, x.odd, x.meta)
	}
	for _, b := range scan.bad {
		s.warnings = append(s.warnings, Warning{Kind: WarnMalformed, Line: b.line, Msg: b.err.Error()})
		if b.raw != nil {
			s.skipped = append(s.skipped, skippedLine{line: b.line, raw: b.raw})
		}
	}
	s.torn = nil
	if t := scan.torn; t != nil {
		s.torn = &Warning{Kind: WarnTornTail, Line: t.line,
			Msg: fmt.Errorf("incomplete last line (%d bytes): %w", t.n, t.err).Error()}
		s.tornMsg = t.err.Error()
		if t.raw != nil {
			s.skipped = append(s.skipped, skippedLine{line: t.line, raw: t.raw})
		}
	}
	s.lines += scan.lines
	s.indexed, s.midLine = scan.end, scan.midLine
	if k := int(scan.firstBlock); k <= len(s.sums) {
		s.sums = append(s.sums[:k], scan.blocks...)
	}
}

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
func (s *Session) index(from int) {
	warned := len(s.warnings)
	defer func() {
		if len(s.warnings) > warned {
			// The warnings about ids and links come after those about
			// the lines; keep them all in line order.
			slices.SortStableFunc(s.warnings, func(a, b Warning) int { return a.Line - b.Line })
		}
	}()
	dup := func(i, j int32) {
		s.dupIDs = true
		s.warnings = append(s.warnings, Warning{Kind: WarnDuplicateID, Line: int(s.recs[i].line),
			Msg: fmt.Sprintf("id %s is also used on line %d; the later entry wins", s.idOf(i), s.recs[j].line)})
	}
	for i := from; i < len(s.recs); i++ {
		if s.recs[i].flags&recNoID != 0 {
			s.warnings = append(s.warnings, Warning{Kind: WarnMissingID, Line: int(s.recs[i].line), Msg: "entry has no id"})
		}
	}
	switch {
	case from == 0:
		ids, dups := buildIDs(s.recs, s.odd)
		s.ids = ids
		for i := range s.recs {
			if j, ok := dups[int32(i)]; ok {
				dup(int32(i), j)
			}
		}
	default:
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
				dup(i, j)
			}
			s.ids.add(i, id, r.id, hex)
		}
	}
	if s.dupIDs {
		// Parents resolve to the last entry with their id, wherever it
		// is in the file, so every link may have changed.
		from = 0
	}
	if from == 0 {
		s.lastPath, s.lastIdx = weak.Pointer[*Entry]{}, nil
	}
	forward := false
	for i := from; i < len(s.recs); i++ {
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
	for i := from; i < len(s.recs); i++ {
		if s.isOrphan(int32(i)) {
			s.orphans = append(s.orphans, int32(i))
		}
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
func (s *Session) EntriesFrom(i int) []*Entry {
	if i < 0 {
		i = 0
	}
	if i >= len(s.recs) {
		return nil
	}
	out := make([]*Entry, len(s.recs)-i)
	for j := range out {
		out[j] = s.entryAt(int32(i + j))
	}
	return out
}

// Entry returns the entry with the given id, or nil. When ids repeat, the
// later entry is found, as in pi.
func (s *Session) Entry(id string) *Entry {
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
	i, ok := s.lookup(id)
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
	if p := s.lastPath.Value(); p != nil && s.lastEnd >= 0 && int(s.lastEnd) < len(s.recs) {
		// p is the first element of the array of the last path, which
		// holding p keeps alive.
		last := unsafe.Slice(p, s.lastCap)[:s.lastLen]
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
func (s *Session) Orphans() []*Entry { return s.entriesAt(s.orphans) }
