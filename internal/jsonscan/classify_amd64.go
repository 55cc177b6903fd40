//go:build amd64 && !purego

package jsonscan

import "golang.org/x/sys/cpu"

// classifyChunks writes, for each of chunks 64-byte chunks from p, the
// masks of its quotes, backslashes and control bytes to out, and a zero
// word (it does not tell simple escapes apart): four words a chunk, with
// SSE2 (classify_amd64.s), which every amd64 has.
//
//go:noescape
func classifyChunks(p *byte, chunks int, out *uint64)

// classifyChunksAVX2 is classifyChunks with AVX2, for the processors
// that have it, and its fourth word marks the bytes that are one of
// " \ / b f n r t.
//
//go:noescape
func classifyChunksAVX2(p *byte, chunks int, out *uint64)

// classifyBatch writes the masks of the chunks of b (a whole number of
// them, at least one) into out, one a chunk, as classify makes them:
// Masks is four words, so out is the words classifyChunks writes.
func classifyBatch(b []byte, out []Masks) {
	n := len(b) / 64
	_ = out[n-1]
	if cpu.X86.HasAVX2 {
		classifyChunksAVX2(&b[0], n, &out[0].Quote)
		return
	}
	classifyChunks(&b[0], n, &out[0].Quote)
}
