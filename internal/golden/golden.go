// Package golden compares test output with golden files under testdata and
// rewrites them when the test binary runs with -update:
//
//	go test ./compaction -run Request -update
//
// It registers the -update flag, so a test package that imports it must
// not define its own.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Updating reports whether the test binary runs with -update, for tests
// that write their golden files themselves.
func Updating() bool { return *update }

// Check compares got with the file testdata/name, or writes got there under
// -update. A difference fails the test with a diff (-want +got).
func Check[T ~string | ~[]byte](tb testing.TB, name string, got T) {
	tb.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (go test -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		tb.Errorf("%s differs from its golden file (-want +got; go test -update rewrites it):\n%s", path, diff)
	}
}
