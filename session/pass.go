package session

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// The index pass reads a run of lines of a session file and indexes each
// (indexLine), holding only a buffer or two per core: the file's bytes are
// never kept. The run is cut at fixed offsets into blocks of blockBytes
// (the persistent index checksums the same blocks); each core takes the
// next block, reads it with ReadAt, and indexes the lines that start in
// it, reading on past its end for the last one. Lines are independent, so
// the cores share nothing but the block counter.

// blockBytes is the size of the blocks the index pass reads and the
// persistent index checksums.
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
	// blocks are the checksums of the whole blocks of the file, from
	// block firstBlock on, that the pass read.
	blocks     []uint32
	firstBlock int64
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
	crc    uint32
	whole  bool
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
	out := &lineScan{end: start, firstBlock: start / block}
	if start >= end {
		return out, nil
	}
	first, last := start/block, (end-1)/block
	chunks := make([]chunkScan, last-first+1)
	scan := func(bufp *[]byte, k int64) {
		chunks[k-first] = scanBlock(r, start, end, k, block, keepBad, bufp)
	}
	if workers := min(int64(runtime.GOMAXPROCS(0)), int64(len(chunks))); workers <= 1 {
		var buf []byte
		for k := first; k <= last; k++ {
			scan(&buf, k)
		}
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				var buf []byte
				for k := first + next.Add(1) - 1; k <= last; k = first + next.Add(1) - 1 {
					scan(&buf, k)
				}
			})
		}
		wg.Wait()
	}
	n := 0
	for i := range chunks {
		if err := chunks[i].err; err != nil {
			return nil, err
		}
		n += len(chunks[i].recs)
	}
	out.recs = make([]rec, 0, n)
	line := linesBefore
	for i := range chunks {
		c := &chunks[i]
		base := int32(len(out.recs))
		for _, r := range c.recs {
			r.line += int32(line)
			out.recs = append(out.recs, r)
		}
		for _, x := range c.extras {
			x.i += base
			out.extras = append(out.extras, x)
		}
		for _, b := range c.bad {
			b.line += line
			out.bad = append(out.bad, b)
		}
		if c.torn != nil {
			t := *c.torn
			t.line += line
			out.torn = &t
		}
		line += c.lines
		out.lines += c.lines
		if c.end > out.end {
			out.end, out.midLine = c.end, c.mid
		}
		if c.whole && len(out.blocks) == i {
			out.blocks = append(out.blocks, c.crc)
		}
		chunks[i] = chunkScan{}
	}
	return out, nil
}

// scanBlock indexes the lines that start in block k of the given size (and
// at or after start), reading the block into *bufp (reused from block to
// block).
func scanBlock(r io.ReaderAt, start, end, k, block int64, keepBad bool, bufp *[]byte) chunkScan {
	var c chunkScan
	bs, be := k*block, min((k+1)*block, end)
	// The buffer holds the file from rs on: the byte before the block
	// too, which says whether a line starts at the block's start.
	rs := max(bs-1, 0)
	buf := (*bufp)[:0]
	grow := func(to int64) error {
		to = min(to, end)
		have := rs + int64(len(buf))
		if to <= have {
			return nil
		}
		if need := int(to - rs); cap(buf) < need {
			nb := make([]byte, len(buf), max(need, 2*cap(buf)))
			copy(nb, buf)
			buf = nb
		}
		n, err := r.ReadAt(buf[len(buf):to-rs], have)
		buf = buf[:len(buf)+n]
		if n < int(to-have) {
			if err == nil || err == io.EOF {
				err = fmt.Errorf("the file ends at %d bytes, before the %d it had when reading began (truncated?): %w", have+int64(n), end, ErrFileChanged)
			}
			return err
		}
		return nil
	}
	defer func() { *bufp = buf[:0] }()
	if c.err = grow(be); c.err != nil {
		return c
	}
	if be-bs == block {
		c.crc, c.whole = checksum(buf[bs-rs:be-rs]), true
	}
	p := max(bs, start)
	if p > start && buf[p-1-rs] != '\n' {
		i := bytes.IndexByte(buf[p-rs:], '\n')
		if i < 0 {
			return c // no line starts in this block
		}
		p += int64(i) + 1
	}
	for p < be {
		// Find the line's end, reading on when it runs past the block.
		var q int64
		for {
			if i := bytes.IndexByte(buf[p-rs:], '\n'); i >= 0 {
				q = p + int64(i)
				break
			}
			have := rs + int64(len(buf))
			if have >= end {
				q = end
				break
			}
			if c.err = grow(have + max(8<<10, have-p)); c.err != nil {
				return c
			}
		}
		terminated := q < end
		raw := buf[p-rs : q-rs]
		text := bytes.TrimSpace(raw)
		lead := int64(cap(raw) - cap(text)) // text is raw without its white space
		next := q + 1
		if !terminated {
			next = q
		}
		if len(text) > 0 {
			x, err := indexLine(text, p+lead, c.lines+1)
			switch {
			case err == nil:
				if x.odd != nil || x.meta != nil {
					c.extras = append(c.extras, extra{i: int32(len(c.recs)), odd: x.odd, meta: x.meta})
				}
				c.recs = append(c.recs, x.r)
			case !terminated:
				c.torn = &badLine{line: c.lines + 1, off: p + lead, n: len(text), err: err}
				if keepBad {
					c.torn.raw = bytes.Clone(text)
				}
				c.end = p
				return c
			default:
				b := badLine{line: c.lines + 1, off: p + lead, n: len(text), err: err}
				if keepBad {
					b.raw = bytes.Clone(text)
				}
				c.bad = append(c.bad, b)
			}
		}
		c.lines++
		c.end, c.mid = next, !terminated
		p = next
	}
	return c
}
