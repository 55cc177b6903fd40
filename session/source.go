package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync/atomic"
)

// ErrFileChanged reports a session file that changed other than by appends
// since Prime read it: truncated, replaced, removed, or rewritten. Prime
// never reads such a file as if it were the one it indexed, and never
// appends to it; the session must be opened again.
var ErrFileChanged = errors.New("a session file only grows by appends; something else changed it")

// source is where a session's entry lines are read back from: the session
// file, or memory (a session kept in memory, one not written yet, a parsed
// buffer, a file migrated in memory). Entries refer to it and may read it
// from any goroutine.
type source struct {
	cur atomic.Pointer[backing]
	// repairs are the entries read only through coercion, or not at all
	// (see tolerant).
	repairs repairLog
	// mismatch is set when a line read back was not the entry the index
	// said (errIndexMismatch): the session then indexes its file again.
	mismatch atomic.Bool
	// unchecked is where the lines this process validated start: those
	// before it were indexed by a persistent index, so a line read back
	// from there is validated as JSON, as indexing would have.
	unchecked atomic.Int64
}

// backing is what a source reads at one time. It is replaced, never
// changed: a file created from memory, a closed file, more memory.
type backing struct {
	// mem holds the bytes at offsets [0, len(mem)) of a source in memory;
	// they are never modified.
	mem    []byte
	memory bool
	// f is the open file of a file source, nil once the session is
	// closed: each read then opens path again, and info checks that it is
	// still the same file.
	f    *os.File
	path string
	info os.FileInfo
}

func memorySource(data []byte) *source {
	s := new(source)
	s.cur.Store(&backing{mem: data, memory: true})
	return s
}

func fileSource(f *os.File, path string, info os.FileInfo) *source {
	s := new(source)
	s.cur.Store(&backing{f: f, path: path, info: info})
	return s
}

// appendMemory adds bytes at the end of a memory source.
func (s *source) appendMemory(p ...[]byte) {
	b := s.cur.Load()
	mem := b.mem
	for _, q := range p {
		mem = append(mem, q...)
	}
	s.cur.Store(&backing{mem: mem, memory: true})
}

// truncateMemory drops the bytes of a memory source from n on (an append
// that failed); nothing refers to them.
func (s *source) truncateMemory(n int) {
	b := s.cur.Load()
	s.cur.Store(&backing{mem: b.mem[:n:n], memory: true})
}

// memoryBytes returns a memory source's bytes.
func (s *source) memoryBytes() []byte { return s.cur.Load().mem }

// switchToFile makes the source read the file the memory was written to.
func (s *source) switchToFile(f *os.File, path string, info os.FileInfo) {
	s.cur.Store(&backing{f: f, path: path, info: info})
}

// detach stops the source from using its open file (which the caller
// closes): later reads open the file again.
func (s *source) detach() {
	b := s.cur.Load()
	if b.memory || b.f == nil {
		return
	}
	s.cur.Store(&backing{path: b.path, info: b.info})
}

// span is one line to read back: off and n locate it, crc is its checksum.
// A line of a file is also checked to be the entry e, or the one record r
// describes (odd its side-table strings), when either is set (see
// span.carriedBy).
type span struct {
	off int64
	n   uint32
	crc uint32
	e   *Entry
	r   *rec
	odd *oddRec
}

// errIndexMismatch reports a line read back that is not the entry the
// index says is there: its checksum matches, but it carries another id,
// parent, type or timestamp, or it is not a whole line. A persistent
// index that was damaged or crafted does this; the session then indexes
// its file again (see Session.confirm).
var errIndexMismatch = errors.New("the session index does not match the file")

// Reads are merged when the lines are at most mergeGap bytes apart, up to
// mergeMax bytes in one read.
const (
	mergeGap = 4 << 10
	mergeMax = 8 << 20
)

// read returns the bytes of one line. They must not be modified; a line
// from memory shares its memory.
func (s *source) read(sp span) ([]byte, error) {
	out := [][]byte{nil}
	err := s.readSpans([]span{sp}, out)
	return out[0], err
}

// readSpans reads the lines at spans into out (len(out) == len(spans)),
// reading neighbouring lines of a file in one read. Every line read from a
// file is checked against its checksum: a line that is not what was
// indexed, or a file that ends before it, is an error wrapping
// ErrFileChanged. The bytes must not be modified; lines read together
// share one buffer.
func (s *source) readSpans(spans []span, out [][]byte) error {
	b := s.cur.Load()
	if b.memory {
		for i, sp := range spans {
			end := sp.off + int64(sp.n)
			if sp.off < 0 || end > int64(len(b.mem)) {
				return fmt.Errorf("line at offset %d is beyond the %d bytes in memory", sp.off, len(b.mem))
			}
			out[i] = b.mem[sp.off:end:end]
		}
		return nil
	}
	f, release, err := b.file()
	if err != nil {
		return err
	}
	defer release()
	unchecked := s.unchecked.Load()
	err = readFileSpans(f, b.path, spans, out, unchecked)
	if errors.Is(err, os.ErrClosed) {
		// The session was closed while this read was under way.
		if f, err = b.reopen(); err != nil {
			return err
		}
		defer f.Close()
		err = readFileSpans(f, b.path, spans, out, unchecked)
	}
	if errors.Is(err, errIndexMismatch) {
		s.mismatch.Store(true)
	}
	return err
}

// file returns the open file of a file source, opening it again (see
// reopen) for a closed session; release closes what it opened.
func (b *backing) file() (*os.File, func(), error) {
	if b.f != nil {
		return b.f, func() {}, nil
	}
	f, err := b.reopen()
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

// reopen opens the file of a closed session again, if it is still the
// file that was indexed.
func (b *backing) reopen() (*os.File, error) {
	f, err := os.Open(b.path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s was removed: %w", b.path, ErrFileChanged)
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !os.SameFile(fi, b.info) {
		f.Close()
		return nil, fmt.Errorf("%s was replaced by another file: %w", b.path, ErrFileChanged)
	}
	return f, nil
}

// readFileSpans reads spans from f, merging neighbours (see readSpans);
// lines before unchecked are validated.
func readFileSpans(f *os.File, path string, spans []span, out [][]byte, unchecked int64) error {
	order := make([]int, len(spans))
	for i := range order {
		order[i] = i
	}
	if !slices.IsSortedFunc(order, func(a, b int) int { return cmpOff(spans[a], spans[b]) }) {
		slices.SortFunc(order, func(a, b int) int { return cmpOff(spans[a], spans[b]) })
	}
	for k := 0; k < len(order); {
		first := spans[order[k]]
		start, end := first.off, first.off+int64(first.n)
		j := k + 1
		for ; j < len(order); j++ {
			sp := spans[order[j]]
			e := max(end, sp.off+int64(sp.n))
			if sp.off > end+mergeGap || e-start > mergeMax {
				break
			}
			end = e
		}
		// The byte before the run and the one after it are read too: they
		// say whether each line read is a whole line of the file.
		lo := max(start-1, 0)
		buf := make([]byte, end+1-lo)
		n, err := f.ReadAt(buf, lo)
		if int64(n) < end-lo {
			if err == io.EOF || err == nil {
				return fmt.Errorf("%s ends at %d bytes, before the line at offset %d it had when it was read (truncated?): %w",
					path, lo+int64(n), first.off, ErrFileChanged)
			}
			return fmt.Errorf("reading %s: %w", path, err)
		}
		around := buf[:n]
		for ; k < j; k++ {
			i := order[k]
			sp := spans[i]
			from, to := sp.off-lo, sp.off-lo+int64(sp.n)
			line := buf[from:to:to]
			if checksum(line) != sp.crc {
				return fmt.Errorf("the line at offset %d of %s is not the one read before (the file was rewritten?): %w",
					sp.off, path, ErrFileChanged)
			}
			if (sp.e != nil || sp.r != nil) && (!sp.carriedBy(line) || !wholeLine(f, around, lo, sp.off, int64(sp.n))) ||
				sp.off < unchecked && !validJSON(line) {
				return fmt.Errorf("the line at offset %d of %s is not entry %s (%w): %w",
					sp.off, path, sp.name(), errIndexMismatch, ErrFileChanged)
			}
			out[i] = line
		}
	}
	return nil
}

// wholeLine reports whether the n bytes at off in f are a whole line of
// it, but for white space around them: what precedes them back to a
// newline, and what follows them up to a newline or the end, is white
// space. around holds the file's bytes from lo on, off's neighbours
// included; only a line with white space around it reads more.
func wholeLine(f io.ReaderAt, around []byte, lo, off, n int64) bool {
	if off <= 0 {
		return false // the header comes first
	}
	before, after := around[off-1-lo], byte('\n')
	if end := off + n - lo; end < int64(len(around)) {
		after = around[end]
	}
	if before == '\n' && after == '\n' {
		return true
	}
	return spaceTo(f, off-1, -1) && spaceTo(f, off+n, 1)
}

// spaceTo reports whether the bytes of f from at on, going in direction
// dir (1 or -1), are white space (as bytes.TrimSpace has it) up to a
// newline, the start or the end of the file. It looks at most 64 KiB.
func spaceTo(f io.ReaderAt, at int64, dir int64) bool {
	const most = 64 << 10
	if dir > 0 {
		buf := make([]byte, most)
		n, _ := f.ReadAt(buf, at)
		gap := buf[:n]
		if i := bytes.IndexByte(gap, '\n'); i >= 0 {
			gap = gap[:i]
		} else if n == most {
			return false
		}
		return len(bytes.TrimSpace(gap)) == 0
	}
	lo := max(at+1-most, 0)
	buf := make([]byte, at+1-lo)
	if n, _ := f.ReadAt(buf, lo); n < len(buf) {
		return false
	}
	gap := buf
	if i := bytes.LastIndexByte(gap, '\n'); i >= 0 {
		gap = gap[i+1:]
	} else if lo > 0 {
		return false
	}
	return len(bytes.TrimSpace(gap)) == 0
}

func cmpOff(a, b span) int {
	switch {
	case a.off < b.off:
		return -1
	case a.off > b.off:
		return 1
	}
	return 0
}
