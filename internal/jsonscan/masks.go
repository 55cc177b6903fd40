package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// Masks describes 64 bytes of JSON text, one bit a byte (bit k for the
// byte at offset k), so that a reader finds where a string ends with one
// bit search instead of a branch per byte, per word or per escape.
type Masks struct {
	// Quote marks the quotes no backslash escapes, Control the bytes
	// below 0x20. Escaped marks the characters an escaping backslash
	// precedes (the 'u' of \u, not its digits) that a reader must look
	// at: all of them, or, where the classifier tells them apart (with
	// AVX2), all but those JSON allows alone after a backslash, " \ / b
	// f n r t, so that a string whose only escapes are those reads as
	// one without any.
	Quote, Escaped, Control uint64
	// simple is the classifier's: the bytes that are one of " \ / b f n
	// r t, or none where it does not tell them apart.
	simple uint64
}

// Scanner computes the Masks of a text 64 bytes at a time, from one
// offset on and in order: whether a run of backslashes escapes the byte
// after it depends on the bytes before, which the scanner carries from
// one chunk to the next. A text read from an offset where no backslash
// run is pending (the start of a JSON value, or after one) reads as it
// would from its beginning.
type Scanner struct {
	// pending is 1 when the last chunk ended with a backslash that
	// escapes the first byte of the next.
	pending uint64
	// m holds the masks Next last made.
	m [batch]Masks
}

// batch is how many chunks Next makes the masks of at once, so that a
// call does 512 bytes and a reader calls once for eight chunks.
const batch = 8

// Next makes the masks of the chunks of b from at on, at least one and
// at most eight of them, and returns how many: chunk k's, covering
// b[at+64k:at+64k+64], are then Made(k). Bytes past the end of b count as
// plain (neither quote, backslash nor control). Each call after the
// first must start where the chunks the last one made end. (It returns a
// count, not a slice of s, so that a Scanner kept in a reader's stack
// frame can stay there.)
func (s *Scanner) Next(b []byte, at int) int {
	n := 1
	switch {
	case at+64 <= len(b):
		n = min(batch, (len(b)-at)/64)
		classifyBatch(b[at:at+64*n], s.m[:n])
	case len(b) >= 64 && at < len(b):
		// The last, partial chunk: the 64 bytes that end where b does,
		// their masks shifted down to start at at. The bits shifted in
		// are zero: the bytes past the end are plain.
		classifyBatch(b[len(b)-64:], s.m[:1])
		d := uint(at - (len(b) - 64))
		m := &s.m[0]
		m.Quote >>= d
		m.Escaped >>= d
		m.Control >>= d
		m.simple >>= d
	default:
		var pad [64]byte
		for k := range pad {
			pad[k] = ' '
		}
		if at < len(b) {
			copy(pad[:], b[at:])
		}
		s.m[0] = classify(&pad)
	}
	// The classifier's masks have backslashes in Escaped: turn them into
	// what they escape.
	for k := range s.m[:n] {
		m := &s.m[k]
		esc := s.escaped(m.Escaped)
		m.Quote &^= esc
		m.Escaped = esc &^ m.simple
	}
	return n
}

// Made returns the masks of chunk k of those Next made last.
func (s *Scanner) Made(k int) Masks { return s.m[k%batch] }

// classify returns one bit a byte of c for its quotes, backslashes (in
// Escaped, which Next turns into what they escape) and control bytes,
// the masks as the classifier makes them; it does not tell simple
// escapes apart. Each test is exact per byte (no borrow crosses a byte):
// the low seven bits are added to a constant that cannot carry out of
// the byte, and the high bit is tested apart.
func classify(c *[64]byte) Masks {
	var quote, slash, ctl uint64
	const low7 = 0x7f7f7f7f7f7f7f7f
	for w := range 8 {
		x := binary.LittleEndian.Uint64(c[8*w:])
		q, s := x^(ones*'"'), x^(ones*'\\')
		// A byte is zero exactly when adding 0x7f to its low seven bits
		// leaves the high bit clear and its own high bit is clear.
		qz := ^((q&low7 + low7) | q) & highs
		sz := ^((s&low7 + low7) | s) & highs
		// A byte is below 0x20 exactly when adding 0x60 to its low seven
		// bits leaves the high bit clear and its own high bit is clear.
		cz := ^((x&low7 + ones*0x60) | x) & highs
		shift := uint(8 * w)
		quote |= gather(qz) << shift
		slash |= gather(sz) << shift
		ctl |= gather(cz) << shift
	}
	return Masks{Quote: quote, Escaped: slash, Control: ctl}
}

// gather packs the high bits of the eight bytes of h into the low eight
// bits, byte j's to bit j: after the shift byte j's bit is at 8j, and the
// multiplier's bit at 56-7j moves it to 56+j; no two products meet, so
// nothing carries.
func gather(h uint64) uint64 {
	return ((h >> 7) * 0x0102040810204080) >> 56
}

// escaped returns the bits of the characters the backslashes of slash
// escape, given and updating what the chunk before left pending. In a run
// of backslashes the first escapes the second, the third the fourth, and
// so on; the byte after the run is escaped when the run is odd. A run that
// starts on an even bit is odd when it ends on an even bit (its end is
// marked by the escaped odd bit after it); adding the run's start to the
// run turns its bits off and carries one bit past its end, and that sum
// is how the parities of the runs starting on odd bits are flipped.
func (s *Scanner) escaped(slash uint64) uint64 {
	const even = 0x5555555555555555
	slash &^= s.pending // escaped itself: not the start of an escape
	follows := slash<<1 | s.pending
	oddStarts := slash &^ even &^ follows
	sum, carry := bits.Add64(oddStarts, slash, 0)
	s.pending = carry
	return (even ^ sum<<1) & follows
}
