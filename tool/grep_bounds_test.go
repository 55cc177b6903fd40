package tool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/internal/procmem"
)

// TestGrepHugeLine: a file that is one line of 400 MB is searched in
// bounded memory: a match near its start is found (and shown cut), one past
// the first maxSearchLine bytes is not, the result says the line was
// searched only in part, and grep over the directory holding it finds the
// other files' matches. Before the bound, a 1.5 GB line took 6.36 GB.
func TestGrepHugeLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 400 MB file")
	}
	env := testEnv(t)
	const size = 400 << 20
	f, err := os.Create(filepath.Join(env.CWD, "huge.txt"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(f.Name()) })          // do not keep 400 MB around
	chunk := []byte(strings.Repeat("abcdefgh", 1<<17)) // 1 MiB, no newline
	copy(chunk, "NEEDLE")
	for written := 0; written < size; written += len(chunk) {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
		copy(chunk, "abcdef")
	}
	if _, err := f.WriteString("HAYSTACK_END\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, env.CWD, "small.txt", "a NEEDLE here\n")

	var start, end, dir string
	grew := procmem.PeakGrowthMB(func() {
		start = mustCall(t, env, "grep", `{"pattern":"NEEDLE","path":"huge.txt"}`)
		end = mustCall(t, env, "grep", `{"pattern":"HAYSTACK_END","path":"huge.txt"}`)
		dir = mustCall(t, env, "grep", `{"pattern":"NEEDLE"}`)
	})
	t.Logf("peak RSS growth %.0f MB for three searches of a %d MB line", grew, size>>20)
	long := "1 line longer than 4.0MB was searched only in its first 4.0MB."
	if !strings.HasPrefix(start, "huge.txt:1: NEEDLEghabcdefgh") || !strings.Contains(start, long) {
		t.Errorf("a match at the start:\n%.300s", start)
	}
	if !strings.HasPrefix(end, "No matches.") || !strings.Contains(end, long) {
		t.Errorf("a match past the bound:\n%.300s", end)
	}
	if !strings.Contains(dir, "small.txt:1: a NEEDLE here") || !strings.Contains(dir, "huge.txt:1: NEEDLE") {
		t.Errorf("the directory:\n%.600s", dir)
	}
	if grew > 100 {
		t.Errorf("peak RSS grew %.0f MB", grew)
	}
}
