package session_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
	"github.com/prime-agent/prime/session/sessiontest"
)

// sameSession fails unless got reads as want: the same entries (common
// fields, line numbers and bytes), warnings, labels, name, orphans, tree
// and leaf context.
func sameSession(t *testing.T, what string, got, want *session.Session) {
	t.Helper()
	if got.Len() != want.Len() {
		t.Fatalf("%s: %d entries, want %d", what, got.Len(), want.Len())
	}
	ge, we := got.Entries(), want.Entries()
	for i := range ge {
		g, w := ge[i], we[i]
		if g.Type != w.Type || g.ID != w.ID || g.ParentID != w.ParentID || g.Timestamp != w.Timestamp || g.Line != w.Line ||
			!bytes.Equal(sessiontest.Line(t, g), sessiontest.Line(t, w)) {
			t.Fatalf("%s: entry %d is %s %s (line %d), want %s %s (line %d)", what, i, g.Type, g.ID, g.Line, w.Type, w.ID, w.Line)
		}
		gp, wp := got.Parent(g), want.Parent(w)
		if (gp == nil) != (wp == nil) || gp != nil && gp.ID != wp.ID {
			t.Fatalf("%s: entry %d has another parent", what, i)
		}
	}
	if g, w := fmt.Sprint(got.Warnings()), fmt.Sprint(want.Warnings()); g != w {
		t.Fatalf("%s: warnings\n%s\nwant\n%s", what, g, w)
	}
	if g, w := fmt.Sprint(got.Labels()), fmt.Sprint(want.Labels()); g != w || got.Name() != want.Name() {
		t.Fatalf("%s: labels %s name %q, want %s %q", what, g, got.Name(), w, want.Name())
	}
	if g, w := ids(got.Orphans()), ids(want.Orphans()); !slices.Equal(g, w) {
		t.Fatalf("%s: orphans %v, want %v", what, g, w)
	}
	if g, w := ids(got.Leaves()), ids(want.Leaves()); !slices.Equal(g, w) {
		t.Fatalf("%s: leaves differ", what)
	}
	if got.LeafID() != want.LeafID() || got.TornTail() != want.TornTail() {
		t.Fatalf("%s: leaf %s torn %v, want %s %v", what, got.LeafID(), got.TornTail(), want.LeafID(), want.TornTail())
	}
	gc, err1 := got.Context("")
	wc, err2 := want.Context("")
	if (err1 == nil) != (err2 == nil) || !slices.Equal(texts(gc.Messages), texts(wc.Messages)) {
		t.Fatalf("%s: contexts differ: %v / %v", what, err1, err2)
	}
}

// bigSession writes a generated session of at least the size whose index is
// kept, with odd lines in it (garbage, a line with an escaped id, a
// duplicate id, a label and a name), and returns its path and bytes.
func bigSession(t *testing.T, dir string, seed uint64) (string, []byte) {
	t.Helper()
	data := sessiongen.Bytes(sessiongen.Options{Entries: 8000, Seed: seed})
	if len(data) < 2*session.CacheMinBytes {
		t.Fatalf("only %d bytes", len(data))
	}
	mid := bytes.IndexByte(data[len(data)/2:], '\n') + len(data)/2 + 1
	odd := "{broken\n\n" +
		`{"type":"custom","id":"odd\u0069d","parentId":null,"timestamp":"yesterday","customType":"x"}` + "\n" +
		`{"id":"dup00001","type":"custom","parentId":null,"timestamp":"2025-12-03T14:00:00.000Z","customType":"x"}` + "\n" +
		`{"type":"custom","id":"dup00001","parentId":"oddid","timestamp":"2025-12-03T14:00:01.000Z","customType":"x"}` + "\n" +
		`{"type":"session_info","id":"name0001","parentId":null,"timestamp":"2025-12-03T14:00:02.000Z","name":"big one"}` + "\n"
	data = append(append(append([]byte{}, data[:mid]...), odd...), data[mid:]...)
	path := filepath.Join(dir, fmt.Sprintf("big-%d.jsonl", seed))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, data
}

// needIndex skips a test of the persistent index where none is kept.
func needIndex(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the persistent index is kept on Linux")
	}
}

// age waits until a file last changed long enough ago for its stamp to
// vouch for it (see the package doc, "Reading: memory and speed").
func age(t *testing.T, path string) {
	t.Helper()
	for {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if time.Since(changeTime(fi)) > 2500*time.Millisecond || changeTime(fi).Nanosecond() != 0 && time.Since(changeTime(fi)) > 300*time.Millisecond {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The persistent index gives the session that indexing the file gives: on
// its stamp when the file is unchanged, checked block by block when it is
// too recent to trust or has grown, with the lines appended since read.
func TestIndexReused(t *testing.T) {
	needIndex(t)
	dir, idx := t.TempDir(), t.TempDir()
	opts := session.ReadOptions{IndexDir: idx}
	path, data := bigSession(t, dir, 1)
	want, err := session.Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	first, err := session.LoadWith(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if session.FromIndex(first) != "" {
		t.Fatalf("first read: from index %q", session.FromIndex(first))
	}
	sameSession(t, "first read", first, want)
	if _, err := os.Stat(session.IndexFileOf(idx, path)); err != nil {
		t.Fatalf("no index kept: %v", err)
	}
	// The file's times changed (not its bytes): the index is checked block
	// by block.
	old := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(path, old, old)
	second, err := session.LoadWith(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if session.FromIndex(second) != "verified" {
		t.Fatalf("second read: from index %q, want verified", session.FromIndex(second))
	}
	sameSession(t, "verified", second, want)

	age(t, path)
	session.LoadWith(path, opts) // the index is written again with the old stamp
	third, err := session.LoadWith(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if session.FromIndex(third) != "trusted" {
		t.Fatalf("third read: from index %q, want trusted", session.FromIndex(third))
	}
	sameSession(t, "trusted", third, want)

	// Appends, a torn line among them: the index and the new lines.
	o, err := session.OpenWith(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if session.FromIndex(o) != "trusted" {
		t.Fatalf("open: from index %q", session.FromIndex(o))
	}
	for i := range 3 {
		if _, err := o.Append(&session.LabelEntry{TargetID: o.LeafID(), Label: fmt.Sprint("l", i)}); err != nil {
			t.Fatal(err)
		}
	}
	o.Close()
	// Closing the session that appended wrote the index again, once the
	// file's last change was old enough for its stamp to vouch for it.
	if fi, _ := os.Stat(path); changeTime(fi).Nanosecond() != 0 {
		if s, err := session.LoadWith(path, opts); err != nil || session.FromIndex(s) != "trusted" {
			t.Fatalf("after the appending session closed: from index %q, %v", session.FromIndex(s), err)
		}
	}
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"type":"custom","id":"torn`)
	f.Close()
	grown, _ := os.ReadFile(path)
	want, err = session.Parse(path, grown)
	if err != nil {
		t.Fatal(err)
	}
	fourth, err := session.LoadWith(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if session.FromIndex(fourth) != "verified" || !fourth.TornTail() {
		t.Fatalf("after appends: from index %q, torn %v", session.FromIndex(fourth), fourth.TornTail())
	}
	sameSession(t, "after appends", fourth, want)

	// An append after the torn line makes it an ordinary bad line, in the
	// session that appends as in one that reads the file afterwards.
	age(t, path)
	session.LoadWith(path, opts)
	o, err = session.OpenWith(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if _, err := o.Append(&session.CustomEntry{CustomType: "after", Data: jsontext.Value(`{}`)}); err != nil {
		t.Fatal(err)
	}
	final, _ := os.ReadFile(path)
	want, err = session.Parse(path, final)
	if err != nil {
		t.Fatal(err)
	}
	sameSession(t, "appending session", o, want)
	fifth, err := session.LoadWith(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	sameSession(t, "after the torn line ended", fifth, want)
}

// An index that does not describe the file is not used: the file changed
// within its indexed part (same size, another byte), it shrank, it is
// another file, the index is damaged. Each time the file is indexed again.
func TestIndexNotTrustedBlindly(t *testing.T) {
	needIndex(t)
	dir, idx := t.TempDir(), t.TempDir()
	opts := session.ReadOptions{IndexDir: idx}
	path, data := bigSession(t, dir, 2)
	fresh := func(what string, data []byte) {
		t.Helper()
		s, err := session.LoadWith(path, opts)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if session.FromIndex(s) != "" {
			t.Fatalf("%s: the index was used (%s)", what, session.FromIndex(s))
		}
		want, err := session.Parse(path, data)
		if err != nil {
			t.Fatal(err)
		}
		sameSession(t, what, s, want)
	}
	keep := func() {
		t.Helper()
		age(t, path)
		session.LoadWith(path, opts)
		if s, err := session.LoadWith(path, opts); err != nil || session.FromIndex(s) != "trusted" {
			t.Fatalf("the index is not kept: %v %q", err, session.FromIndex(s))
		}
	}
	keep()

	// One byte of a message changed in place, the modification time put
	// back: the change time still tells, and the blocks do not match.
	i := bytes.Index(data, []byte(`"text":"`)) + len(`"text":"`)
	changed := bytes.Clone(data)
	changed[i] ^= 1
	fi, _ := os.Stat(path)
	os.WriteFile(path, changed, 0o600)
	os.Chtimes(path, fi.ModTime(), fi.ModTime())
	fresh("a byte changed", changed)

	keep()
	short := changed[:len(changed)/2]
	short = short[:bytes.LastIndexByte(short, '\n')+1]
	os.WriteFile(path, short, 0o600)
	fresh("shrunk", short)

	// Another file's index under this file's name.
	keep()
	other, otherData := bigSession(t, dir, 3)
	age(t, other)
	session.LoadWith(other, opts)
	os.Rename(session.IndexFileOf(idx, other), session.IndexFileOf(idx, path))
	fresh("another file's index", short)
	_ = otherData

	// A damaged index: every byte flipped in turn at a few places.
	keep()
	ix := session.IndexFileOf(idx, path)
	good, _ := os.ReadFile(ix)
	for _, at := range []int{0, 9, 20, 70, 100, 200, len(good) / 2, len(good) - 1} {
		bad := bytes.Clone(good)
		bad[at] ^= 0x40
		os.WriteFile(ix, bad, 0o600)
		fresh(fmt.Sprintf("index damaged at %d", at), short)
		keep()
	}
	os.WriteFile(ix, good[:len(good)-10], 0o600)
	fresh("index cut short", short)
}

// Small files keep no index, and no index directory means none is kept.
func TestIndexOnlyForLargeFiles(t *testing.T) {
	dir, idx := t.TempDir(), t.TempDir()
	small := filepath.Join(dir, "small.jsonl")
	os.WriteFile(small, sessiongen.Bytes(sessiongen.Options{Entries: 100, Seed: 1}), 0o600)
	if _, err := session.LoadWith(small, session.ReadOptions{IndexDir: idx}); err != nil {
		t.Fatal(err)
	}
	big, _ := bigSession(t, dir, 4)
	if _, err := session.Load(big); err != nil {
		t.Fatal(err)
	}
	if names, _ := os.ReadDir(idx); len(names) != 0 {
		t.Errorf("index directory holds %d files", len(names))
	}
}

// A file truncated while a session has it open: appending fails with
// ErrFileChanged and writes nothing; entries not yet read fail the same
// way, and nothing is read as if it were the file indexed.
func TestFileTruncatedWhileOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	data := sessiongen.Bytes(sessiongen.Options{Entries: 300, Seed: 5, HugeRate: -1})
	os.WriteFile(path, data, 0o600)
	s, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	half := data[:bytes.LastIndexByte(data[:len(data)/2], '\n')+1]
	if err := os.Truncate(path, int64(len(half))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(&session.CustomEntry{CustomType: "x"}); !errors.Is(err, session.ErrFileChanged) {
		t.Fatalf("append to a truncated file: %v", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, half) {
		t.Fatal("the append wrote to the truncated file")
	}
	if _, err := s.Context(""); !errors.Is(err, session.ErrFileChanged) {
		t.Fatalf("context of a truncated file: %v", err)
	}
	if _, err := s.Leaf().Payload(); !errors.Is(err, session.ErrFileChanged) {
		t.Fatalf("payload of an entry cut off: %v", err)
	}

	// Cut and written again longer, with other lines: the lines read are
	// not the ones indexed.
	other := sessiongen.Bytes(sessiongen.Options{Entries: 400, Seed: 6, HugeRate: -1})
	os.WriteFile(path, other, 0o600)
	if _, err := s.Append(&session.CustomEntry{CustomType: "x"}); !errors.Is(err, session.ErrFileChanged) {
		t.Fatalf("append to a rewritten file: %v", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, other) {
		t.Fatal("the append wrote to the rewritten file")
	}
	for _, e := range s.Entries()[250:] {
		if _, err := e.Raw(); !errors.Is(err, session.ErrFileChanged) {
			t.Fatalf("entry %s of a rewritten file read back: %v", e.ID, err)
		}
	}
}

// A file replaced while a session has it open (another file renamed over
// it): appending fails with ErrFileChanged and neither file gets the line;
// entries still read what was indexed while the session holds the old
// file, and fail once it must open the file again.
func TestFileReplacedWhileOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	data := sessiongen.Bytes(sessiongen.Options{Entries: 200, Seed: 7, HugeRate: -1})
	os.WriteFile(path, data, 0o600)
	want, _ := session.Parse(path, data)
	s, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	other := sessiongen.Bytes(sessiongen.Options{Entries: 200, Seed: 8, HugeRate: -1})
	tmp := filepath.Join(dir, "new.jsonl")
	os.WriteFile(tmp, other, 0o600)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(&session.CustomEntry{CustomType: "x"}); !errors.Is(err, session.ErrFileChanged) {
		t.Fatalf("append to a replaced file: %v", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, other) {
		t.Fatal("the append wrote to the new file")
	}
	sameSession(t, "replaced while open", s, want)
	s.Close()
	if _, err := s.Entries()[10].Raw(); !errors.Is(err, session.ErrFileChanged) {
		t.Fatalf("entry read after close from a replaced file: %v", err)
	}
}

// Entries of a closed session open the file again to read their lines.
func TestReadAfterClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	data := sessiongen.Bytes(sessiongen.Options{Entries: 50, Seed: 9, HugeRate: -1})
	os.WriteFile(path, data, 0o600)
	want, _ := session.Parse(path, data)
	for _, load := range []func(string) (*session.Session, error){session.Load, session.Open} {
		s, err := load(path)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		sameSession(t, "closed", s, want)
		if _, err := s.Append(&session.CustomEntry{CustomType: "x"}); err == nil {
			t.Fatal("append after close")
		}
	}
}

// Another process appends while a session is open: the session sees those
// entries at its next append, which continues its own branch; then it reads
// as the file does.
func TestAppendsWhileOpen(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(path, sessiongen.Bytes(sessiongen.Options{Entries: 300, Seed: 11, HugeRate: -1}), 0o600)
	s, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before, err := s.Context("")
	if err != nil {
		t.Fatal(err)
	}
	leaf := s.LeafID()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PRIME_TEST_SESSION="+path, "PRIME_TEST_APPENDS=20", "PRIME_TEST_WRITER=other")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the other process: %v %s", err, out)
	}
	if s.Len() != 300 {
		t.Fatalf("%d entries before appending", s.Len())
	}
	e, err := s.Append(user("mine"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 321 || e.ParentID != leaf {
		t.Fatalf("%d entries, the new one under %s (want 321, under %s)", s.Len(), e.ParentID, leaf)
	}
	after, err := s.Context("")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := texts(after.Messages), append(texts(before.Messages), "user:mine"); !slices.Equal(got, want) {
		t.Fatalf("context after the append ends %v", got[max(0, len(got)-3):])
	}
	r, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	sameSession(t, "after another process appended", s, r)
}

// A session's context, built from its index without making the whole path
// (Session.Context), is the one BuildContext makes from the path's entries,
// at every kind of leaf of every kind of generated session.
func TestSessionContextMatchesBuildContext(t *testing.T) {
	for _, o := range []sessiongen.Options{
		{Entries: 600, ContextWindow: 40000},
		{Entries: 600, BranchRate: 0.3, ContextWindow: 30000},
		{Entries: 600, Pi16: true, ContextWindow: 40000},
		{Entries: 400, NoCompactions: true},
	} {
		for seed := range uint64(3) {
			o.Seed = seed + 1
			s, err := session.Parse("gen", sessiongen.Bytes(o))
			if err != nil {
				t.Fatal(err)
			}
			es := s.Entries()
			var leaves []string
			for i, e := range es {
				if i%37 == 0 || e.Type == session.TypeCompaction || i == len(es)-1 {
					leaves = append(leaves, e.ID)
				}
			}
			for _, id := range leaves {
				got, err1 := s.Context(id)
				want, err2 := session.BuildContext(s.Path(id))
				if fmt.Sprint(err1) != fmt.Sprint(err2) {
					t.Fatalf("at %s: %v, want %v", id, err1, err2)
				}
				if !slices.Equal(texts(got.Messages), texts(want.Messages)) || !slices.Equal(ids(got.Entries), ids(want.Entries)) ||
					got.ThinkingLevel != want.ThinkingLevel || fmt.Sprint(got.Model) != fmt.Sprint(want.Model) ||
					got.EstimateNext() != want.EstimateNext() || got.AfterCompaction() != want.AfterCompaction() {
					t.Fatalf("seed %d at %s: contexts differ", o.Seed, id)
				}
				var gp, wp []string
				for e, m := range got.Projection() {
					gp = append(gp, fmt.Sprint(e.ID, len(m)))
				}
				for e, m := range want.Projection() {
					wp = append(wp, fmt.Sprint(e.ID, len(m)))
				}
				if !slices.Equal(gp, wp) {
					t.Fatalf("seed %d at %s: projections differ", o.Seed, id)
				}
				view, ok := s.ViewOf(id)
				if !ok || !slices.Equal(ids(view.Entries()), ids(s.Path(id))) {
					t.Fatalf("at %s: the view is not the path", id)
				}
			}
		}
	}
}

// A session whose parent links are odd (a cycle, a child before its
// parent, a self-parent, an orphan) reads from its persistent index as it
// reads from the file, without a warning that the index was dropped:
// links kept from the index as they are and links made again agree.
func TestIndexOddLinks(t *testing.T) {
	needIndex(t)
	custom := func(id, parent string) string {
		if parent != "" {
			parent = `"` + parent + `"`
		} else {
			parent = "null"
		}
		return fmt.Sprintf(`{"type":"custom","id":%q,"parentId":%s,"timestamp":"2025-12-03T14:00:00.000Z","customType":"x"}`+"\n", id, parent)
	}
	for _, tc := range []struct{ name, lines string }{
		{"cycle", custom("cc000001", "cc000002") + custom("cc000002", "cc000001")},
		{"child before its parent", custom("fa000001", "fa000002") + custom("fa000002", "")},
		{"self-parent", custom("5e1f0001", "5e1f0001")},
		{"orphan", custom("0a000001", "0bad0001")},
		{"none", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, idx := t.TempDir(), t.TempDir()
			opts := session.ReadOptions{IndexDir: idx}
			data := sessiongen.Bytes(sessiongen.Options{Entries: 8000, Seed: 5})
			mid := bytes.IndexByte(data[len(data)/2:], '\n') + len(data)/2 + 1
			data = append(append(append([]byte{}, data[:mid]...), tc.lines...), data[mid:]...)
			path := filepath.Join(dir, "s.jsonl")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			want, err := session.Parse(path, data)
			if err != nil {
				t.Fatal(err)
			}
			age(t, path)
			if _, err := session.LoadWith(path, opts); err != nil {
				t.Fatal(err)
			}
			s, err := session.LoadWith(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			if session.FromIndex(s) != "trusted" {
				t.Fatalf("read from index %q", session.FromIndex(s))
			}
			sameSession(t, tc.name, s, want)
			for _, w := range s.Warnings() {
				if w.Kind == session.WarnIndex {
					t.Fatalf("index dropped: %s", w.Msg)
				}
			}
		})
	}
}
