package session

import (
	"bytes"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// The persistent index keeps a digest of every block of the part of the
// file it indexes, to tell whether that part changed when the file's
// stamp cannot vouch for it. A block's digest is built from the lines, not
// the raw bytes, so that the index pass makes it from what it computes
// anyway (each line's CRC-32C) instead of hashing every byte twice: each
// line has a term, a 64-bit mix of where its text starts, its length and
// its CRC-32C (a blank line: where it starts, 0, 0, so that the number of
// lines counts too), and a block's digest is the sum of the terms of the
// lines that start in it and end with a newline. A sum can be made in
// parts: a pass that starts in the middle of a block (the lines appended
// since) adds to what the session has. The last line of the part indexed,
// when it has no newline yet, is kept apart (its term may change when
// the line is ended). One line walker, lineWalker, finds the lines for
// the index pass and for the check, so the two agree on what a line is.

// lineTerm is the term of a line whose text (without the white space
// around it) starts at off, is n bytes long and has the CRC-32C crc.
func lineTerm(off int64, n int, crc uint32) uint64 {
	return mix64(mix64(uint64(off)+0x9e3779b97f4a7c15) ^ (uint64(n)<<32 | uint64(crc)))
}

// blankTerm is the term of a blank line that starts at off.
func blankTerm(off int64) uint64 { return lineTerm(off, 0, 0) }

// mix64 is MurmurHash3's 64-bit finalizer: every bit of the result
// depends on every bit of h.
func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// addDigest adds d to the digest of block k in sums, which grows as
// needed.
func addDigest(sums []uint64, k int64, d uint64) []uint64 {
	for int64(len(sums)) <= k {
		sums = append(sums, 0)
	}
	sums[k] += d
	return sums
}

// walkedLine is one line the walker found.
type walkedLine struct {
	// at is where the line starts, text its bytes without the newline and
	// the white space around them, textAt where text starts, and next
	// where the line after it starts.
	at, textAt, next int64
	text             []byte
	// terminated is whether the line ends with a newline; the last line
	// of the run may not, and then ends where the run ends.
	terminated bool
}

// lineWalker finds the lines that start in one block of a run of lines
// [start, end) (start is where a line starts), reading the file through
// a block source: a line starts at the block's start when the byte before
// it is a newline, and the block's last line runs on past its end.
type lineWalker struct {
	src blockSource
	// end is where the run ends, be where the block does, p where the
	// next line starts; buf holds the file from rs on.
	end, be, p, rs int64
	buf            []byte
	err            error
}

// walk starts w on block k, of the given size, of the run [start, end).
func (w *lineWalker) walk(src blockSource, start, end, k, block int64) {
	bs, be := k*block, min((k+1)*block, end)
	// buf holds the byte before the block too, which says whether a line
	// starts at the block's start.
	*w = lineWalker{src: src, end: end, be: be, p: max(bs, start), rs: max(bs-1, 0)}
	if w.err = w.grow(be); w.err != nil {
		return
	}
	if p := w.p; p > start && w.buf[p-1-w.rs] != '\n' {
		i := bytes.IndexByte(w.buf[p-w.rs:], '\n')
		if i < 0 {
			w.p = be // no line starts in this block
			return
		}
		w.p += int64(i) + 1
	}
}

// grow makes buf hold the file up to to (at most the run's end).
func (w *lineWalker) grow(to int64) error {
	b, err := w.src.view(w.rs, min(to, w.end))
	w.buf = b
	return err
}

// next returns the next line that starts in the block, or false when
// there is none or reading failed (see err). The line's text is valid
// until the next call.
func (w *lineWalker) next() (walkedLine, bool) {
	p, rs := w.p, w.rs
	if p >= w.be || w.err != nil {
		return walkedLine{}, false
	}
	// Find the line's end, reading on when it runs past the block.
	var q int64
	for {
		if i := bytes.IndexByte(w.buf[p-rs:], '\n'); i >= 0 {
			q = p + int64(i)
			break
		}
		have := rs + int64(len(w.buf))
		if have >= w.end {
			q = w.end
			break
		}
		if w.err = w.grow(have + max(8<<10, have-p)); w.err != nil {
			return walkedLine{}, false
		}
	}
	raw := w.buf[p-rs : q-rs]
	text := bytes.TrimSpace(raw)
	l := walkedLine{at: p, textAt: p + int64(cap(raw)-cap(text)), next: q + 1, text: text, terminated: q < w.end}
	if !l.terminated {
		l.next = q
	}
	w.p = l.next
	return l, true
}

// eachBlock calls work for blocks first to last, on every core, each
// core reading through a block source of its own from newSource, until
// work returns false. Blocks are taken in order, one at a time.
func eachBlock(newSource func() blockSource, first, last int64, work func(src blockSource, k int64) bool) {
	workers := min(int64(runtime.GOMAXPROCS(0)), last-first+1)
	if workers <= 1 {
		src := newSource()
		for k := first; k <= last && work(src, k); k++ {
		}
		src.done()
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			src := newSource()
			defer src.done()
			for k := first + next.Add(1) - 1; k <= last; k = first + next.Add(1) - 1 {
				if !work(src, k) {
					return
				}
			}
		})
	}
	wg.Wait()
}

// digests are the digests of the lines of a run.
type digests struct {
	// sums are the digests of the blocks from first on of the lines that
	// end with a newline; summed is where the line that does not starts
	// (the run's end when there is none), tail its term.
	first  int64
	sums   []uint64
	summed int64
	tail   uint64
}

// lineDigests walks the lines of [from, to) (from is where a line starts)
// on every core, reading through the block sources newSource makes, and
// returns their digests in blocks of the given size.
func lineDigests(newSource func() blockSource, from, to, block int64) (digests, error) {
	d := digests{first: from / block, summed: to}
	if from >= to {
		return d, nil
	}
	last := (to - 1) / block
	d.sums = make([]uint64, last-d.first+1)
	var mu sync.Mutex
	var failed error
	eachBlock(newSource, d.first, last, func(src blockSource, k int64) bool {
		err := guardFaults(func() error {
			var w lineWalker
			var sum uint64
			for w.walk(src, from, to, k, block); ; {
				l, ok := w.next()
				if !ok {
					break
				}
				t := blankTerm(l.at)
				if len(l.text) > 0 {
					t = lineTerm(l.textAt, len(l.text), checksum(l.text))
				}
				if !l.terminated {
					// Only the last block can have it.
					d.summed, d.tail = l.at, t
					break
				}
				sum += t
			}
			d.sums[k-d.first] = sum
			return w.err
		})
		if err != nil {
			mu.Lock()
			failed = err
			mu.Unlock()
			return false
		}
		return true
	})
	if failed != nil {
		return digests{}, failed
	}
	return d, nil
}

// fileDigests is lineDigests of [from, to) of r in blocks of blockBytes.
func fileDigests(r io.ReaderAt, from, to int64) (digests, error) {
	return lineDigests(func() blockSource { return newBlockSource(r, from, to) }, from, to, blockBytes)
}

// addDigests adds the digests of a run that starts at s.summed to the
// session's. A pass that stops before a torn last line has blocks past it
// in which no line starts: their digests are 0, and left out.
func (s *Session) addDigests(d digests) {
	for i, v := range d.sums {
		if v != 0 {
			s.sums = addDigest(s.sums, d.first+int64(i), v)
		}
	}
	s.summed = d.summed
}

// sumLine adds the term of a line just added at off (line, without its
// newline, whose CRC-32C is crc, then a newline) when the sums reach
// that far: else what they lack is computed from the file when the index
// is saved.
func (s *Session) sumLine(off int64, line []byte, crc uint32) {
	if s.summed != off || len(line) == 0 || len(bytes.TrimSpace(line)) != len(line) {
		return
	}
	s.sums = addDigest(s.sums, off/blockBytes, lineTerm(off, len(line), crc))
	s.summed = off + int64(len(line)) + 1
}

// sumTo extends the session's sums to the lines of r that start below
// to, a line start, reading them. When that fails the sums stay short,
// which is sound: saving the index reads what they lack (or fails too).
func (s *Session) sumTo(r io.ReaderAt, to int64) {
	if s.summed >= to {
		return
	}
	if d, err := fileDigests(r, s.summed, to); err == nil {
		s.addDigests(d)
	}
}
