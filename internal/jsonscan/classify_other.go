//go:build !amd64 || purego

package jsonscan

// classifyBatch is classifyChunks in Go: the masks of the chunks of b
// (a whole number of them) into out, one a chunk, as classify makes them.
func classifyBatch(b []byte, out []Masks) {
	for k := 0; k+64 <= len(b); k += 64 {
		out[k/64] = classify((*[64]byte)(b[k : k+64]))
	}
}
