//go:build amd64 && !purego

package jsonscan

import (
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestClassifyAVX2 checks the AVX2 classifier against the SSE2 one, and
// its simple escapes against a byte-at-a-time reading, on every byte
// value at every position, whichever classifyBatch uses here.
func TestClassifyAVX2(t *testing.T) {
	if !cpu.X86.HasAVX2 {
		t.Skip("this processor has no AVX2")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for n := 1; n <= 2*batch+1; n++ {
		b := make([]byte, 64*n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		for i := range 256 {
			b[r.IntN(len(b))] = byte(i)
		}
		sse, avx := make([]uint64, 4*n), make([]uint64, 4*n)
		classifyChunks(&b[0], n, &sse[0])
		classifyChunksAVX2(&b[0], n, &avx[0])
		for k := range sse {
			if k%4 == 3 {
				continue
			}
			if sse[k] != avx[k] {
				t.Fatalf("%d chunks, word %d: SSE2 %#x, AVX2 %#x", n, k, sse[k], avx[k])
			}
		}
		for c := range n {
			var simple uint64
			for k, x := range b[64*c : 64*c+64] {
				if isSimpleEscape(x) {
					simple |= 1 << k
				}
			}
			if sse[4*c+3] != 0 || avx[4*c+3] != simple {
				t.Fatalf("%d chunks, chunk %d: simple escapes SSE2 %#x, AVX2 %#x, want 0 and %#x", n, c, sse[4*c+3], avx[4*c+3], simple)
			}
		}
	}
}

// BenchmarkClassify compares the SSE2 and AVX2 classifiers on batches of
// eight chunks, as Scanner.Next makes them.
func BenchmarkClassify(b *testing.B) {
	text := make([]byte, 64<<10)
	r := rand.New(rand.NewPCG(7, 8))
	for i := range text {
		text[i] = byte(' ' + r.IntN(95))
	}
	out := make([]uint64, 4*batch)
	for _, c := range []struct {
		name string
		run  func(p *byte, chunks int, out *uint64)
		ok   bool
	}{{"sse2", classifyChunks, true}, {"avx2", classifyChunksAVX2, cpu.X86.HasAVX2}} {
		b.Run(c.name, func(b *testing.B) {
			if !c.ok {
				b.Skip("not on this processor")
			}
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				for at := 0; at < len(text); at += 64 * batch {
					c.run(&text[at], batch, &out[0])
				}
			}
		})
	}
}
