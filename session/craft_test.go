package session

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm"

	"github.com/prime-agent/prime/session/internal/rawmem"
)

// craftedSession writes a conversation large enough for a persistent
// index: user and assistant messages in one chain; then a custom entry
// whose data holds an object shaped like a user message entry with the
// custom entry's own id, parent id and timestamp, saying "evil"; then a
// line that is not JSON but starts like the next entry, also saying
// "evil"; then the real last entry, a user message. It returns the file,
// the indices of the custom entry and the last one, and where the
// object and the bad line are in the file.
func craftedSession(t *testing.T) (path string, custom, leaf int, nested, bad [2]int64) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "s.jsonl")
	data := []byte(`{"type":"session","version":3,"id":"s","timestamp":"2025-12-03T14:00:00.000Z","cwd":"/"}` + "\n")
	const ts = "2025-12-03T14:00:01.000Z"
	idOf := func(i int) string { return string(appendHexID(nil, uint32(i*7919+1))) }
	parent := ""
	add := func(i int, p Payload) {
		line, err := EncodeEntry(idOf(i), parent, ts, p)
		if err != nil {
			t.Fatal(err)
		}
		data = append(append(data, line...), '\n')
		parent = idOf(i)
	}
	pad := strings.Repeat("x", 3000)
	n := 0
	for ; len(data) < cacheMinBytes+(64<<10); n++ {
		var m Message = &llm.UserMessage{Content: []llm.Content{llm.Text{Text: fmt.Sprintf("question %d %s", n, pad)}}, Timestamp: 1}
		if n%2 == 1 {
			m = &llm.AssistantMessage{Content: []llm.Content{llm.Text{Text: fmt.Sprintf("answer %d", n)}}, StopReason: llm.StopReasonStop, Timestamp: 1}
		}
		add(n, &MessageEntry{Message: m})
	}
	evil := func(id, parent string) string {
		return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,"timestamp":%q,"message":{"role":"user","content":"evil","timestamp":1}}`, id, parent, ts)
	}
	obj := evil(idOf(n), idOf(n-1))
	start := len(data)
	add(n, &CustomEntry{CustomType: "note", Data: []byte(obj)})
	nested = [2]int64{int64(start + strings.Index(string(data[start:]), `{"type":"message"`)), int64(len(obj))}
	line := evil(idOf(n+1), idOf(n)) + "}"
	bad = [2]int64{int64(len(data)), int64(len(line))}
	data = append(append(data, line...), '\n')
	add(n+1, &MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: "the real last question"}}, Timestamp: 1}})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, n, n + 1, nested, bad
}

// editRec changes record i of an index file's bytes with edit.
func editRec(b []byte, i int, edit func(r *rec)) {
	at := fixedLen + int(binary.LittleEndian.Uint32(b[92:])) + i*recSize
	var r [1]rec
	copy(rawmem.Bytes(r[:]), b[at:])
	edit(&r[0])
	copy(b[at:], rawmem.Bytes(r[:]))
}

// lastText is the text of the context's last message.
func lastText(t *testing.T, s *Session) string {
	t.Helper()
	c, err := s.Context("")
	if err != nil {
		t.Fatal(err)
	}
	return llm.TextOf(c.Messages[len(c.Messages)-1].(*llm.UserMessage).Content)
}

func hasWarning(s *Session, kind WarningKind) bool {
	for _, w := range s.Warnings() {
		if w.Kind == kind {
			return true
		}
	}
	return false
}

// A persistent index crafted to mislead (its checksum recomputed, so it
// is whole) is trusted for nothing the file does not confirm: parent
// links that form a cycle, a self-parent or a link the ids do not give
// are found when it is read; a record pointing at another line, or into
// a line, when the line is read back. Either way the index is dropped,
// the file indexed again with a warning, and the context is the file's.
func TestCraftedIndex(t *testing.T) {
	path, custom, leaf, nested, bad := craftedSession(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	real, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := lastText(t, real)
	// pointAt makes record i describe the n bytes at off, as an entry
	// of the given type whose common members end at head.
	pointAt := func(b []byte, i int, at [2]int64, typ uint8) {
		editRec(b, i, func(r *rec) {
			line := data[at[0] : at[0]+at[1]]
			r.off, r.n, r.crc, r.typ, r.role = at[0], uint32(at[1]), checksum(line), typ, roleUser
			r.head = uint32(strings.Index(string(line), `,"message":`))
		})
	}
	cases := []struct {
		name string
		edit func(b []byte)
		// atRead: the damage shows only when a line is read back.
		atRead bool
	}{
		{"cycle", func(b []byte) { editRec(b, 5, func(r *rec) { r.parent = int32(leaf - 3) }) }, false},
		{"self-parent", func(b []byte) { editRec(b, leaf, func(r *rec) { r.parent = int32(leaf) }) }, false},
		{"parent elsewhere", func(b []byte) { editRec(b, leaf, func(r *rec) { r.parent = 3 }) }, false},
		{"record pointing at another line", func(b []byte) {
			editRec(b, leaf, func(r *rec) { r.off, r.n, r.crc = real.recs[0].off, real.recs[0].n, real.recs[0].crc })
		}, false},
		{"record pointing into a line", func(b []byte) { pointAt(b, custom, nested, typeMessage) }, true},
		{"a message typed as a label", func(b []byte) { editRec(b, leaf, func(r *rec) { r.typ, r.role = typeLabel, 0 }) }, true},
		{"a message typed as a system message", func(b []byte) { editRec(b, leaf-2, func(r *rec) { r.role = roleSystem }) }, true},
		{"record pointing at a line that is not JSON", func(b []byte) { pointAt(b, leaf, bad, typeMessage) }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			idx := t.TempDir()
			opts := ReadOptions{IndexDir: idx}
			if _, err := LoadWith(path, opts); err != nil {
				t.Fatal(err)
			}
			x, b := indexBytes(t, idx, path)
			tc.edit(b)
			binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], castagnoli()))
			if err := os.WriteFile(x.path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := LoadWith(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.from != ReadWhole; got != tc.atRead {
				t.Errorf("read from %q", s.from)
			}
			if v := s.LeafView(); v.Len() > s.Len() {
				t.Fatalf("a path of %d entries in a session of %d", v.Len(), s.Len())
			}
			if got := lastText(t, s); got != want {
				t.Errorf("the model would see %q, the file says %q", got, want)
			}
			if s.from != ReadWhole || !hasWarning(s, WarnIndex) {
				t.Errorf("read from %q, warnings %v: want the file indexed again, with a warning", s.from, s.Warnings())
			}
			if s.Len() != real.Len() || s.LeafID() != real.LeafID() {
				t.Errorf("%d entries, leaf %s; the file has %d, leaf %s", s.Len(), s.LeafID(), real.Len(), real.LeafID())
			}
			// The index written in its place is the file's: the next
			// open uses it without a warning.
			again, err := LoadWith(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			if again.from == ReadWhole || hasWarning(again, WarnIndex) || lastText(t, again) != want {
				t.Errorf("next open: from %q, warnings %v", again.from, again.Warnings())
			}
		})
	}
}

// A path walk never runs longer than the session has entries, even on
// parent links that form a cycle (which indexing never leaves).
func TestPathWalkBounded(t *testing.T) {
	data := []byte(`{"type":"session","version":3,"id":"s","timestamp":"2025-12-03T14:00:00.000Z","cwd":"/"}` + "\n")
	parent := ""
	for i := range 6 {
		id := string(appendHexID(nil, uint32(i+1)))
		line, err := EncodeEntry(id, parent, "2025-12-03T14:00:01.000Z", &CustomEntry{CustomType: "c"})
		if err != nil {
			t.Fatal(err)
		}
		data, parent = append(append(data, line...), '\n'), id
	}
	s, err := Parse("s.jsonl", data)
	if err != nil {
		t.Fatal(err)
	}
	s.recs[1].parent = 4 // 4 → 3 → 2 → 1 → 4
	s.lastIdx, s.kids = nil, nil
	v := s.LeafView()
	if v.Len() > s.Len() {
		t.Fatalf("path of %d entries", v.Len())
	}
	if !hasWarning(s, WarnCycle) {
		t.Errorf("warnings %v: want the cycle reported", s.Warnings())
	}
}

// A persistent index of a file whose ids form a cycle, crafted to keep
// the cycle (every link the one the ids give, the one indexing broke put
// back), is found out when it is read: the file is indexed again.
func TestCraftedIndexKeepsCycle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	data := []byte(`{"type":"session","version":3,"id":"s","timestamp":"2025-12-03T14:00:00.000Z","cwd":"/"}` + "\n")
	const ts = "2025-12-03T14:00:01.000Z"
	pad := []byte(`"` + strings.Repeat("x", 3000) + `"`)
	add := func(id, parent string) {
		line, err := EncodeEntry(id, parent, ts, &CustomEntry{CustomType: "pad", Data: pad})
		if err != nil {
			t.Fatal(err)
		}
		data = append(append(data, line...), '\n')
	}
	// Entries 0 and 1 name each other; the rest is a chain after them.
	add("cc000001", "cc000002")
	add("cc000002", "cc000001")
	parent := "cc000002"
	for i := 0; len(data) < cacheMinBytes+(64<<10); i++ {
		id := string(appendHexID(nil, uint32(i*7919+1)))
		add(id, parent)
		parent = id
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	idx := t.TempDir()
	opts := ReadOptions{IndexDir: idx}
	first, err := LoadWith(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if first.recs[0].parent != -1 || first.recs[1].parent != 0 || !hasWarning(first, WarnCycle) {
		t.Fatalf("the cycle is not broken at entry 0: parents %d, %d", first.recs[0].parent, first.recs[1].parent)
	}
	x, b := indexBytes(t, idx, path)
	editRec(b, 0, func(r *rec) { r.parent = 1 })
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], castagnoli()))
	if err := os.WriteFile(x.path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := LoadWith(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.from != ReadWhole || !hasWarning(s, WarnIndex) || s.recs[0].parent != -1 {
		t.Errorf("read from %q, parent of entry 0 %d, warnings %v: want the file indexed again, with a warning", s.from, s.recs[0].parent, s.Warnings())
	}
	if v := s.LeafView(); v.Len() > s.Len() {
		t.Fatalf("a path of %d entries in a session of %d", v.Len(), s.Len())
	}
}

// indexBytes returns the persistent index of path kept in idx and its
// bytes, or skips the test where the system keeps none.
func indexBytes(t *testing.T, idx, path string) (*indexFile, []byte) {
	t.Helper()
	fi, _ := os.Stat(path)
	x := newIndexFile(idx, path, fi)
	if x == nil {
		t.Skip("no persistent index on this system")
	}
	b, err := os.ReadFile(x.path)
	if err != nil {
		t.Fatal(err)
	}
	return x, b
}
