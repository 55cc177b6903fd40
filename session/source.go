package session

import (
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
type span struct {
	off int64
	n   uint32
	crc uint32
}

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
	f := b.f
	if f == nil {
		var err error
		if f, err = b.reopen(); err != nil {
			return err
		}
		defer f.Close()
	}
	err := readFileSpans(f, b.path, spans, out)
	if errors.Is(err, os.ErrClosed) {
		// The session was closed while this read was under way.
		if f, err = b.reopen(); err != nil {
			return err
		}
		defer f.Close()
		err = readFileSpans(f, b.path, spans, out)
	}
	return err
}

// reopen opens the file of a closed session again, if it is still the
// file that was indexed.
func (b *backing) reopen() (*os.File, error) {
	f, err := os.Open(b.path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("session: %s was removed: %w", b.path, ErrFileChanged)
		}
		return nil, fmt.Errorf("session: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("session: %w", err)
	}
	if !os.SameFile(fi, b.info) {
		f.Close()
		return nil, fmt.Errorf("session: %s was replaced by another file: %w", b.path, ErrFileChanged)
	}
	return f, nil
}

// readFileSpans reads spans from f, merging neighbours (see readSpans).
func readFileSpans(f *os.File, path string, spans []span, out [][]byte) error {
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
		buf := make([]byte, end-start)
		if n, err := f.ReadAt(buf, start); n < len(buf) {
			if err == io.EOF || err == nil {
				return fmt.Errorf("session: %s ends at %d bytes, before the line at offset %d it had when it was read (truncated?): %w",
					path, start+int64(n), first.off, ErrFileChanged)
			}
			return fmt.Errorf("session: reading %s: %w", path, err)
		}
		for ; k < j; k++ {
			i := order[k]
			sp := spans[i]
			line := buf[sp.off-start : sp.off-start+int64(sp.n) : sp.off-start+int64(sp.n)]
			if checksum(line) != sp.crc {
				return fmt.Errorf("session: the line at offset %d of %s is not the one read before (the file was rewritten?): %w",
					sp.off, path, ErrFileChanged)
			}
			out[i] = line
		}
	}
	return nil
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
