package session

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/prime-agent/prime/session/internal/rawmem"
)

// The index pass reads each block through a blockSource of its own core:
// bytes already in memory (a parsed buffer) as they are, a session file
// through a read-only memory map of the block where the system has them
// (see mapBlocks), otherwise copied in with ReadAt.

// blockSource gives one core of the index pass the bytes of a file.
type blockSource interface {
	// view returns the bytes [from, to) of the file, to at most the end
	// the pass was given; they stay valid until the next view or done,
	// and nothing may keep them.
	view(from, to int64) ([]byte, error)
	// done releases what the source holds.
	done()
}

// newBlockSource returns a block source for the pass over r from start
// to end.
func newBlockSource(r io.ReaderAt, start, end int64) blockSource {
	switch r := r.(type) {
	case memReader:
		return memBlocks(r[:end:end])
	case *os.File:
		if end-start >= mapMin {
			if m := newMapSource(r, end); m != nil {
				return m
			}
		}
	}
	return &readBlocks{r: r, end: end}
}

// mapMin is the shortest pass that maps the blocks of a file; a shorter
// one (the lines appended since a session was read) reads them.
const mapMin = 1 << 20

// memReader reads a buffer that holds a whole file, which the pass then
// reads in place.
type memReader []byte

func (m memReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(m)) {
		return 0, io.EOF
	}
	n := copy(p, m[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// memBlocks is a file already in memory.
type memBlocks []byte

func (m memBlocks) view(from, to int64) ([]byte, error) { return m[from:to:to], nil }
func (memBlocks) done()                                 {}

// readBlocks copies the file in with ReadAt into a buffer it reuses.
type readBlocks struct {
	r   io.ReaderAt
	end int64
	// buf holds the file's bytes from off on.
	buf []byte
	off int64
}

func (s *readBlocks) view(from, to int64) ([]byte, error) {
	if from != s.off || int64(len(s.buf)) > to-from {
		s.buf, s.off = s.buf[:0], from
	}
	have := s.off + int64(len(s.buf))
	if to <= have {
		return s.buf, nil
	}
	if need := int(to - from); cap(s.buf) < need {
		nb := make([]byte, len(s.buf), max(need, 2*cap(s.buf)))
		copy(nb, s.buf)
		s.buf = nb
	}
	n, err := s.r.ReadAt(s.buf[len(s.buf):to-from], have)
	s.buf = s.buf[:len(s.buf)+n]
	if n < int(to-have) {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("the file ends at %d bytes, before the %d it had when reading began (truncated?): %w", have+int64(n), s.end, ErrFileChanged)
		}
		return nil, err
	}
	return s.buf, nil
}

func (s *readBlocks) done() { s.buf = s.buf[:0] }

// guardFaults runs f, which reads the views of the pass's block sources,
// turning a memory fault while it runs (a mapped file that shrank under
// its map: the pages past its new end no longer exist) into
// ErrFileChanged instead of a crash.
func guardFaults(f func() error) error {
	err := rawmem.Guard(f)
	if errors.Is(err, rawmem.ErrShrank) {
		err = fmt.Errorf("%w: %w", err, ErrFileChanged)
	}
	return err
}

// mapBlocks reads a session file through rawmem's read-only maps of the
// part each block needs, one window at a time: the pass reads the page
// cache in place instead of copying it (a read of 1 MiB costs more than
// mapping it and faulting its pages in). A file that shrinks while it is
// read faults, which guardFaults (around every block the pass reads)
// turns into ErrFileChanged.
type mapBlocks struct{ m *rawmem.FileMap }

// mapAhead is how far past what it is asked for a map reaches, so that
// the last line of a block (which runs into the next one) seldom needs
// another map.
const mapAhead = 64 << 10

// mapWindow is how much of the file one map covers from the block asked
// for: four blocks, so that a core maps once for every other block it
// takes (the cores take blocks in turn) and unmaps, which costs the
// system more than mapping, a fourth as often as with one block a map;
// the pages a core touches stay resident only while its window is mapped.
const mapWindow = 4 * blockBytes

// newMapSource returns a map source for f up to end, or nil where the
// system has no maps.
func newMapSource(f *os.File, end int64) blockSource {
	m := rawmem.NewFileMap(f, end, mapWindow, mapAhead)
	if m == nil {
		return nil
	}
	return mapBlocks{m}
}

func (s mapBlocks) view(from, to int64) ([]byte, error) { return s.m.View(from, to) }
func (s mapBlocks) done()                               { s.m.Close() }
