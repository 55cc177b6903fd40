// Package sessiontest helps tests read sessions: an entry's line, which is
// read back from its file and may fail, as a value or a failed test.
package sessiontest

import (
	"testing"

	"github.com/prime-agent/prime/session"
)

// Line returns e's line (Entry.Raw), failing the test when it cannot be
// read back.
func Line(t testing.TB, e *session.Entry) []byte {
	t.Helper()
	line, err := e.Raw()
	if err != nil {
		t.Fatal(err)
	}
	return line
}
