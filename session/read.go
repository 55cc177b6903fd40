package session

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"time"
)

// ReadOptions configure how a session file is read.
type ReadOptions struct {
	// IndexDir is where the index of a large session file is kept from
	// one run to the next ([IndexDir] of the agent directory), so that
	// opening it again reads only the index and the lines appended since.
	// Empty means none: every open reads the whole file.
	IndexDir string
	// IndexLater writes the persistent index on a goroutine of the
	// session's instead of before the open returns: the caller can answer
	// first. [Session.Close] waits for it (a process that exits without
	// closing the session may leave no index, never a torn one).
	IndexLater bool
	// Write, when set, makes the appends' writes to the file (see
	// [Options.Write]).
	Write WriteFunc
	// Phases, when not nil, is told how long each phase of reading a
	// session file took, in order: "header", then "index load" (the
	// persistent index, checked), "appended" (the lines after it) or
	// "index pass" (every line), "tree", and "index save" when the
	// persistent index is written. For benchmarks.
	Phases func(phase string, took time.Duration)
}

// phases returns a function that reports to o.Phases the time since it
// was last called, under the name it is given.
func (o ReadOptions) phases() func(string) {
	if o.Phases == nil {
		return func(string) {}
	}
	last := time.Now()
	return func(name string) {
		now := time.Now()
		o.Phases(name, now.Sub(last))
		last = now
	}
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
		return nil, err
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
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		data, err := io.ReadAll(f)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		return Parse(name, data)
	}
	return readIndexed(name, f, fi, opts)
}

// readIndexed indexes the regular file f, which the session then reads
// its entries back from. A file in an older format version is read into
// memory and migrated there.
func readIndexed(name string, f *os.File, fi os.FileInfo, opts ReadOptions) (*Session, error) {
	phase := opts.phases()
	size := fi.Size()
	hp, err := readHeaderPart(name, f, size)
	if err != nil {
		return nil, err
	}
	if hp.header.Version < CurrentVersion {
		data, err := readAll(io.NewSectionReader(f, 0, size), int(size))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		return parseOld(name, data, hp)
	}
	phase("header")
	x := newIndexFile(opts.IndexDir, name, fi)
	var dropped error
	if x != nil {
		s, trusted, err := x.load(name, f, fi)
		phase("index load")
		dropped = err
		if s != nil {
			s.from = ReadIndexChecked
			if trusted {
				s.from = ReadIndexTrusted
			}
			indexed := s.indexed
			if err := s.readMore(f, size); err != nil {
				return nil, err
			}
			phase("appended")
			if !trusted || s.indexed != indexed {
				s.saveIndexFile(x, f, opts.IndexLater)
				phase("index save")
			}
			s.indexFile, s.savedAt = x, s.indexed
			return s, nil
		}
	}
	s := newRead(name, fileSource(f, name, fi), hp)
	if err := s.scanRest(f, size); err != nil {
		return nil, err
	}
	phase("index pass")
	s.index(0)
	phase("tree")
	if dropped != nil {
		s.warnings = append(s.warnings, indexWarning(dropped))
	}
	if x != nil {
		s.saveIndexFile(x, f, opts.IndexLater)
		s.indexFile, s.savedAt = x, s.indexed
		phase("index save")
	}
	return s, nil
}

// saveIndexFile writes the persistent index of s, read from f, now or
// (later) in the background.
func (s *Session) saveIndexFile(x *indexFile, f *os.File, later bool) {
	if later {
		s.saveInBackground(x, f)
	} else {
		x.save(s, f)
	}
}

// saveInBackground writes the persistent index of s, read from f, while
// the caller goes on: what the index file needs of the session is taken
// now, and the rest (the digests the session did not make, the sorted ids
// when there are none yet, the encoding and the writing) is done on a
// goroutine the session owns. Everything that would change the records
// or the ids in place, and Close, waits for it first (waitSave).
func (s *Session) saveInBackground(x *indexFile, f *os.File) {
	s.waitSave()
	img := x.image(s)
	if img == nil {
		return
	}
	done := make(chan struct{})
	s.saving = done
	go func() {
		defer close(done)
		img.write(f)
	}()
}

// waitSave waits for the index file being written in the background, if
// any.
func (s *Session) waitSave() {
	if s.saving != nil {
		<-s.saving
		s.saving = nil
	}
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
			return fmt.Errorf("reading %s: %w", s.path, err)
		}
		if nl < 0 {
			s.scanned = end
			return nil
		}
		start = nl + 1
		s.indexed, s.midLine = start, false
		// The line's term is of its whole text now.
		s.sumTo(r, start)
	}
	scan, err := scanLines(r, start, end, s.lines, false)
	if err != nil {
		return fmt.Errorf("reading %s: %w", s.path, err)
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
	r := memReader(data)
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
		return fmt.Errorf("reading %s: %w", s.path, err)
	}
	s.absorb(scan)
	return nil
}

// newRead starts a session read from src, whose header part is hp.
func newRead(name string, src *source, hp *headerPart) *Session {
	s := &Session{
		path: name, header: hp.header, fileVersion: hp.header.Version, src: src, leaf: -1,
		lines: hp.lines, warnings: hp.warnings, skipped: hp.skipped, indexed: hp.end, midLine: hp.midLine,
		headerOff: hp.headerOff, sums: hp.sums, summed: hp.summed,
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
	// sums are the digests of the lines that start below summed (see
	// Session.sums).
	sums   []uint64
	summed int64
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
		lead := int64(cap(line) - cap(trimmed))
		term := blankTerm(lineStart)
		if len(trimmed) > 0 {
			term = lineTerm(lineStart+lead, len(trimmed), checksum(trimmed))
		}
		if terminated {
			hp.sums = addDigest(hp.sums, lineStart/blockBytes, term)
			hp.summed = off
		}
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
				hp.headerOff = lineStart + lead
				return hp, nil
			}
		}
		if err != nil {
			if err != io.EOF {
				return nil, fmt.Errorf("reading %s: %w", name, err)
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
	if scan.start == s.summed {
		s.addDigests(digests{first: scan.firstBlock, sums: scan.blocks, summed: scan.summed})
	}
	s.indexed, s.midLine = scan.end, scan.midLine
}
