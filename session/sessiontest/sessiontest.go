// Package sessiontest reads session files for tests that check what a
// command or a front end wrote: the kinds of the entries in file order, the
// users' messages, an entry's line (which is read back from its file and
// may fail). A file that does not load cleanly fails the test.
package sessiontest

import (
	"testing"

	"github.com/prime-agent/prime/llm"
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

// Load loads the session file at path, failing the test when it cannot be
// read or has problems (a malformed line, a torn tail).
func Load(tb testing.TB, path string) *session.Session {
	tb.Helper()
	s, err := session.Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	if w := s.Warnings(); len(w) > 0 || s.TornTail() {
		tb.Errorf("%s has problems: %v", path, w)
	}
	return s
}

// Kinds lists the entries of the file at path in file order: a message's
// role ("user", "assistant", "toolResult", ...), else the entry's type.
func Kinds(tb testing.TB, path string) []string {
	tb.Helper()
	var out []string
	for _, e := range Load(tb, path).Entries() {
		k := e.Type
		if e.Type == session.TypeMessage {
			k, _ = e.MessageRole()
		}
		out = append(out, k)
	}
	return out
}

// UserTexts lists the texts of the user messages of the file at path, in
// file order.
func UserTexts(tb testing.TB, path string) []string {
	tb.Helper()
	var out []string
	for _, e := range Load(tb, path).Entries() {
		if m, err := e.Message(); err == nil {
			if u, ok := m.(*llm.UserMessage); ok {
				out = append(out, llm.TextOf(u.Content))
			}
		}
	}
	return out
}
