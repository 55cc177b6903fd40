package jsonscan

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// checkMasks checks Scanner.Next over b from 0, and from every offset in
// its first 130 bytes, against a byte-at-a-time reading of the same text.
func checkMasks(t *testing.T, b []byte) {
	t.Helper()
	for from := range min(len(b), 130) + 1 {
		checkMasksFrom(t, b, from)
	}
}

// checkMasksFrom is checkMasks from one offset.
func checkMasksFrom(t *testing.T, b []byte, from int) {
	t.Helper()
	var s Scanner
	pending := false
	next, made := 0, 0
	for at := from; at < len(b)+64; at += 64 {
		if next == made {
			next, made = 0, s.Next(b, at)
		}
		got := s.Made(next)
		next++
		var want Masks
		var simple uint64
		for k := range 64 {
			if at+k >= len(b) {
				// Past the end: plain, but a pending escape marks it.
				if pending {
					want.Escaped |= 1 << k
					pending = false
				}
				continue
			}
			c, bit := b[at+k], uint64(1)<<k
			if c < 0x20 {
				want.Control |= bit
			}
			switch {
			case pending:
				want.Escaped |= bit
				if isSimpleEscape(c) {
					simple |= bit
				}
				pending = false
			case c == '\\':
				pending = true
			case c == '"':
				want.Quote |= bit
			}
		}
		// Escaped may leave out the simple escapes (see Masks).
		if got.Quote != want.Quote || got.Control != want.Control ||
			got.Escaped != want.Escaped && got.Escaped != want.Escaped&^simple {
			t.Fatalf("%q from %d, at %d: got %+v, want %+v (simple escapes %#x)", b, from, at, got, want, simple)
		}
		if at >= len(b) {
			break
		}
	}
}

// isSimpleEscape reports whether c stands alone after a backslash in JSON.
func isSimpleEscape(c byte) bool { return strings.IndexByte(`"\\/bfnrt`, c) >= 0 }

func TestScannerMasks(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("\\\\\\\"a\x01\x1f \x7f\x80\xffnu/t")
	for range 3000 {
		b := make([]byte, r.IntN(300))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		checkMasks(t, b)
	}
	for n := range 200 {
		b := make([]byte, n)
		for i := range b {
			b[i] = '\\'
		}
		checkMasks(t, b)
		checkMasks(t, append([]byte("x"), b...))
	}
}

// FuzzScannerMasks checks Scanner.Next against a byte-at-a-time reading.
func FuzzScannerMasks(f *testing.F) {
	f.Add([]byte(`"a\"b\\\\" \\\"`))
	f.Add([]byte("\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\"\x00"))
	f.Fuzz(func(t *testing.T, b []byte) { checkMasks(t, b) })
}

// TestClassifyBatch checks the batch classifier (SSE2 on amd64) against
// the word-at-a-time classify, every byte value at every position.
func TestClassifyBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := 1; n <= 3*batch; n++ {
		b := make([]byte, 64*n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		for i := range 256 {
			b[r.IntN(len(b))] = byte(i)
		}
		out := make([]Masks, n)
		classifyBatch(b, out)
		for k := range n {
			want := classify((*[64]byte)(b[64*k : 64*k+64]))
			if got := out[k]; got.Quote != want.Quote || got.Escaped != want.Escaped || got.Control != want.Control {
				t.Fatalf("chunk %d of %d: batch %+v, classify %+v", k, n, out[k], want)
			}
		}
	}
}
