//go:build amd64 && !purego

package jsonscan

// classifyChunks writes, for each of chunks 64-byte chunks from p, the
// masks of its quotes, backslashes and control bytes to out, three words
// a chunk, with SSE2 (classify_amd64.s). (An AVX2 version, twice as wide,
// measured slower on the machines this was written on.)
//
//go:noescape
func classifyChunks(p *byte, chunks int, out *uint64)

// classifyBatch writes the masks of the chunks of b (a whole number of
// them, at least one) into out, three words a chunk.
func classifyBatch(b []byte, out []uint64) {
	n := len(b) / 64
	_ = out[3*n-1]
	classifyChunks(&b[0], n, &out[0])
}
