package session

import (
	"bytes"
	"errors"
	"io"
	"sync"
)

// The index pass reads a run of lines of a session file and indexes each
// (indexLine), holding only a buffer or two per core: the file's bytes are
// never kept. The run is cut at fixed offsets into blocks of blockBytes;
// each core takes the next block, reads it through its block source, and
// indexes the lines that start in it (lineWalker), reading on past its end
// for the last one. Lines are independent, so the cores share nothing but
// the block counter. On the way each block gets the digest the persistent
// index keeps of it, from the lines' CRC-32Cs (see lineTerm).

// blockBytes is the size of the blocks the index pass reads and the
// persistent index keeps a digest of.
const blockBytes = 1 << 20

// badLine is a non-blank line that is not an entry.
type badLine struct {
	// line is its 1-based number, off where it starts.
	line int
	off  int64
	n    int
	err  error
	// raw is a copy of the line, kept only for a file that will be
	// migrated (see scanLines).
	raw []byte
}

// extra is what an indexed entry has beyond its rec.
type extra struct {
	i    int32 // the entry's index in its scan
	odd  *oddRec
	meta *meta
}

// lineScan is what the index pass found in a run of lines.
type lineScan struct {
	recs   []rec
	extras []extra
	bad    []badLine
	// lines is the number of lines read, blank ones included: all but a
	// torn last line.
	lines int
	// end is the offset just after the last line read (its newline
	// included, when it has one), midLine whether that line had none.
	end     int64
	midLine bool
	// torn is the last line when it has no newline and is not an entry:
	// not read, so that the next pass reads it again.
	torn *badLine
	// blocks are the digests of the lines read, block by block from block
	// firstBlock on, but for the last line when it has no newline: the
	// lines that start below summed (see lineTerm).
	blocks     []uint64
	firstBlock int64
	summed     int64
	// start is where the pass started.
	start int64
}

// chunkScan is what one block gave.
type chunkScan struct {
	recs   []rec
	extras []extra
	bad    []badLine
	lines  int
	end    int64
	mid    bool
	torn   *badLine
	// sum is the digest of the block's lines that end with a newline,
	// summed where the first of its lines that do not starts (else end).
	sum    uint64
	summed int64
	err    error
}

// scanLines indexes the lines of r from start, which must be where a line
// starts, to end; linesBefore lines come before start. With keepBad
// the lines that are not entries keep a copy of their bytes.
func scanLines(r io.ReaderAt, start, end int64, linesBefore int, keepBad bool) (*lineScan, error) {
	return scanLinesIn(r, start, end, linesBefore, keepBad, blockBytes)
}

// scanLinesIn is scanLines with blocks of the given size.
func scanLinesIn(r io.ReaderAt, start, end int64, linesBefore int, keepBad bool, block int64) (*lineScan, error) {
	return scanWith(func() blockSource { return newBlockSource(r, start, end) }, start, end, linesBefore, keepBad, block)
}

// scanWith is scanLinesIn reading through the block sources newSource
// makes, one per core.
func scanWith(newSource func() blockSource, start, end int64, linesBefore int, keepBad bool, block int64) (*lineScan, error) {
	out := &lineScan{end: start, firstBlock: start / block, summed: start, start: start}
	if start >= end {
		return out, nil
	}
	first, last := start/block, (end-1)/block
	m := &merger{out: out, line: linesBefore, first: first, blocks: last - first + 1, pending: map[int64]*chunkScan{}}
	scan := func(src blockSource, k int64) bool {
		c := &chunkScan{recs: m.buffer()}
		if err := guardFaults(func() error {
			*c = scanBlock(src, start, end, k, block, keepBad, c.recs)
			return nil
		}); err != nil {
			*c = chunkScan{err: err}
		}
		return m.add(k, c)
	}
	eachBlock(newSource, first, last, scan)
	if m.err != nil {
		return nil, m.err
	}
	return out, nil
}

// merger adds the blocks of a pass to its result in file order as they
// are done, so that the records are copied once into an array sized for
// the whole pass (from the first block, see add) and the buffers of the
// blocks are used again: a pass holds its result and a few blocks' worth,
// not its result twice.
type merger struct {
	mu  sync.Mutex
	out *lineScan
	// line is the number of lines before the next block to add; next is
	// that block's index from first, of blocks.
	line          int
	first, blocks int64
	next          int64
	pending       map[int64]*chunkScan
	free          [][]rec
	err           error
}

// buffer returns an empty buffer for a block's records.
func (m *merger) buffer() []rec {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n := len(m.free); n > 0 {
		b := m.free[n-1]
		m.free = m.free[:n-1]
		return b[:0]
	}
	return nil
}

// add takes the result of block k and adds every block it completes the
// run of; it reports whether the pass goes on (no block failed).
func (m *merger) add(k int64, c *chunkScan) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return false
	}
	m.pending[k-m.first] = c
	for {
		c, ok := m.pending[m.next]
		if !ok {
			return true
		}
		delete(m.pending, m.next)
		if c.err != nil {
			m.err = c.err
			return false
		}
		m.merge(c)
		m.next++
	}
}

// merge adds block c, the next in file order, to the result.
func (m *merger) merge(c *chunkScan) {
	out := m.out
	if out.recs == nil {
		// Room for as many records a byte as the first block has, and
		// an eighth more: pages not written to are never touched.
		out.recs = make([]rec, 0, len(c.recs)*int(m.blocks)*9/8+16)
	}
	base := int32(len(out.recs))
	line := int32(m.line)
	for _, r := range c.recs {
		r.line += line
		out.recs = append(out.recs, r)
	}
	for _, x := range c.extras {
		x.i += base
		out.extras = append(out.extras, x)
	}
	for _, b := range c.bad {
		b.line += m.line
		out.bad = append(out.bad, b)
	}
	if c.torn != nil {
		t := *c.torn
		t.line += m.line
		out.torn = &t
	}
	m.line += c.lines
	out.lines += c.lines
	if c.end > out.end {
		out.end, out.midLine, out.summed = c.end, c.mid, c.summed
	}
	out.blocks = append(out.blocks, c.sum)
	m.free = append(m.free, c.recs)
}

// scanBlock indexes the lines that start in block k of the given size (and
// at or after start), reading the file through src, its records appended
// to recs, and sums their terms (see lineTerm).
func scanBlock(src blockSource, start, end, k, block int64, keepBad bool, recs []rec) chunkScan {
	c := chunkScan{recs: recs}
	var w lineWalker
	for w.walk(src, start, end, k, block); ; {
		l, ok := w.next()
		if !ok {
			break
		}
		text := l.text
		term := blankTerm(l.at)
		if len(text) > 0 {
			x, err := indexLine(text, l.textAt, c.lines+1)
			if err != nil {
				// Its text, not the bytes it may refer to: a map is
				// gone after the pass.
				err = errors.New(err.Error())
			}
			switch {
			case err == nil:
				if x.odd != nil || x.meta != nil {
					c.extras = append(c.extras, extra{i: int32(len(c.recs)), odd: x.odd, meta: x.meta})
				}
				c.recs = append(c.recs, x.r)
				term = lineTerm(l.textAt, len(text), x.r.crc)
			case !l.terminated:
				c.torn = &badLine{line: c.lines + 1, off: l.textAt, n: len(text), err: err}
				if keepBad {
					c.torn.raw = bytes.Clone(text)
				}
				c.end, c.summed = l.at, l.at
				return c
			default:
				b := badLine{line: c.lines + 1, off: l.textAt, n: len(text), err: err}
				if keepBad {
					b.raw = bytes.Clone(text)
				}
				c.bad = append(c.bad, b)
				term = lineTerm(l.textAt, len(text), checksum(text))
			}
		}
		c.lines++
		c.end, c.mid = l.next, !l.terminated
		if l.terminated {
			c.sum += term
			c.summed = l.next
		} else {
			c.summed = l.at
		}
	}
	c.err = w.err
	return c
}
