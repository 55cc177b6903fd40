//go:build !amd64 || purego

package jsonscan

// classifyBatch is classifyChunks in Go: the masks of the chunks of b
// (a whole number of them) into out, three words a chunk.
func classifyBatch(b []byte, out []uint64) {
	for k := 0; k+64 <= len(b); k += 64 {
		out[3*(k/64)], out[3*(k/64)+1], out[3*(k/64)+2] = classify((*[64]byte)(b[k : k+64]))
	}
}
