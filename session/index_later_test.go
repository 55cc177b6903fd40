package session_test

import (
	"os"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// With IndexLater the open does not wait for the persistent index: the
// session reads and appends while it is written, Close waits for it, and
// the next open reads it and gives the same session.
func TestIndexLater(t *testing.T) {
	needIndex(t)
	dir, idx := t.TempDir(), t.TempDir()
	path, data := bigSession(t, dir, 2)
	want, err := session.Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	later := session.ReadOptions{IndexDir: idx, IndexLater: true}
	first, err := session.LoadWith(path, later)
	if err != nil {
		t.Fatal(err)
	}
	// What a command does while the index is written: build the context
	// and read entries.
	if _, err := first.Context(""); err != nil {
		t.Fatal(err)
	}
	sameSession(t, "first read", first, want)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(session.IndexFileOf(idx, path)); err != nil {
		t.Fatalf("no index after Close: %v", err)
	}
	second, err := session.LoadWith(path, session.ReadOptions{IndexDir: idx})
	if err != nil {
		t.Fatal(err)
	}
	if session.FromIndex(second) == "" {
		t.Fatal("the second open did not read the index written in the background")
	}
	sameSession(t, "second read", second, want)
	second.Close()
}

// An append right after an open whose index is still being written waits
// for it (the records change in place), and what is written is the
// session as read, with the append read from the file by the next open.
func TestIndexLaterAppend(t *testing.T) {
	needIndex(t)
	dir, idx := t.TempDir(), t.TempDir()
	path, _ := bigSession(t, dir, 3)
	later := session.ReadOptions{IndexDir: idx, IndexLater: true}
	s, err := session.OpenWith(path, later)
	if err != nil {
		t.Fatal(err)
	}
	n := s.Len()
	e, err := s.Append(&session.MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: "after the open"}}, Timestamp: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := session.LoadWith(path, later)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.Len() != n+1 || again.Entry(e.ID) == nil {
		t.Fatalf("reopened: %d entries (want %d), appended entry found: %v", again.Len(), n+1, again.Entry(e.ID) != nil)
	}
	if session.FromIndex(again) == "" {
		t.Fatal("the reopen did not read the index")
	}
}
