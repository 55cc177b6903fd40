// Package pifixtures locates the real pi session files that tests may read.
// They live outside the repository, in ../shared/testdata/pi-sessions next
// to the checkout, and are never copied into it; tests that need them skip
// cleanly when they are absent.
package pifixtures

import (
	"os"
	"path/filepath"
	"testing"
)

// Names of the pi session files known to exist.
const (
	// LargeSession is a version-1 file: 914 messages (88 user, 453
	// assistant, 373 tool results), 1 model change, 103 thinking changes.
	LargeSession = "large-session.jsonl"
	// BeforeCompaction is a version-1 file: 990 messages (3 bash
	// executions), 2 compactions by firstKeptEntryIndex, 5 model and 5
	// thinking changes.
	BeforeCompaction = "before-compaction.jsonl"
)

// Path returns the path of the named pi session file, skipping the test when
// the shared directory is not there.
func Path(tb testing.TB, name string) string {
	tb.Helper()
	dir, ok := Dir()
	if !ok {
		tb.Skip("pi session files not available (../shared/testdata/pi-sessions)")
	}
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("pi session file not available: %v", err)
	}
	return p
}

// Dir returns the directory holding the pi session files, found by walking up
// from the working directory to the module root and looking beside it.
func Dir() (string, bool) {
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			p := filepath.Join(d, "..", "shared", "testdata", "pi-sessions")
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				return p, true
			}
			return "", false
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}
