package pifixtures

import (
	"os"
	"path/filepath"
	"testing"
)

// ReadAll returns the contents of every known pi session file, by name, or
// none when the shared directory is not there. A file that is there but
// cannot be read fails the test.
func ReadAll(tb testing.TB) map[string][]byte {
	tb.Helper()
	files := map[string][]byte{}
	dir, ok := Dir()
	if !ok {
		return files
	}
	for _, name := range []string{LargeSession, BeforeCompaction} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			tb.Fatal(err)
		}
		files[name] = data
	}
	return files
}
