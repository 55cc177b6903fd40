package session

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/prime-agent/prime/llm"
)

// BenchmarkReadIndexFile reads and checks the persistent index of a
// session of 100,000 entries, then confirms it as a session read from it
// (what opening the session again costs but for its file's lines).
func BenchmarkReadIndexFile(b *testing.B) {
	dir, idx := b.TempDir(), b.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	data := []byte(`{"type":"session","version":3,"id":"s","timestamp":"2025-12-03T14:00:00.000Z","cwd":"/"}` + "\n")
	parent := ""
	for i := range 100_000 {
		id := string(appendHexID(nil, uint32(i*7919+1)))
		var m Message = &llm.UserMessage{Content: []llm.Content{llm.Text{Text: "a question"}}, Timestamp: 1}
		line, err := EncodeEntry(id, parent, "2025-12-03T14:00:01.000Z", &MessageEntry{Message: m})
		if err != nil {
			b.Fatal(err)
		}
		data = append(append(data, line...), '\n')
		parent = id
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	if _, err := LoadWith(path, ReadOptions{IndexDir: idx}); err != nil {
		b.Fatal(err)
	}
	fi, _ := os.Stat(path)
	x := newIndexFile(idx, path, fi)
	if x == nil {
		b.Skip("no persistent index on this system")
	}
	for b.Loop() {
		c, err := readIndexFile(x.path)
		if err != nil {
			b.Fatal(err)
		}
		s := &Session{recs: c.recs, odd: c.odd, warnings: c.warnings, leaf: -1, src: new(source)}
		if err := s.confirmCached(c); err != nil {
			b.Fatal(err)
		}
	}
}
