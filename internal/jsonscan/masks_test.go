package jsonscan

import (
	"math/rand/v2"
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
				pending = false
			case c == '\\':
				pending = true
			case c == '"':
				want.Quote |= bit
			}
		}
		if got != want {
			t.Fatalf("%q from %d, at %d: got %+v, want %+v", b, from, at, got, want)
		}
		if at >= len(b) {
			break
		}
	}
}

func TestScannerMasks(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("\\\\\\\"a\x01\x1f \x7f\x80\xff")
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
			if want := classify((*[64]byte)(b[64*k : 64*k+64])); out[k] != want {
				t.Fatalf("chunk %d of %d: batch %+v, classify %+v", k, n, out[k], want)
			}
		}
	}
}
