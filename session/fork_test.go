package session_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prime-agent/prime/internal/pifixtures"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
	"github.com/prime-agent/prime/session/sessiontest"
)

// forkLines returns the lines of the forked session's file, header first.
func forkLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(data, []byte(`"type":"session"`)) != 1 {
		t.Fatalf("want exactly one header:\n%s", data)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// Scenarios 114, 115 and 157–161 of pi-reference §9.14 and §9.18.
func TestFork(t *testing.T) {
	// id1 ─ id2 ─ id3
	//          └─ id4 ─ id5
	s := parse(t,
		ent{"id1", "", user("first")},
		ent{"id2", "id1", assistant("a1")},
		ent{"id3", "id2", user("main branch")},
		ent{"id4", "id2", user("side")},
		ent{"id5", "id4", assistant("a2")},
		ent{"l1", "id5", &session.LabelEntry{TargetID: "id1", Label: "start"}},
		ent{"l2", "l1", &session.LabelEntry{TargetID: "id3", Label: "off the path"}},
		ent{"l3", "l2", &session.LabelEntry{TargetID: "id4", Label: "side"}},
	)

	t.Run("157 unknown id", func(t *testing.T) {
		if _, err := s.Fork("", "nope", session.Options{}); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("err = %v, want ErrNotFound", err)
		}
	})

	t.Run("158 in memory", func(t *testing.T) {
		f, err := s.Fork("", "id2", session.Options{Now: fixedClock()})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(f.Entries()); !slices.Equal(got[:2], []string{"id1", "id2"}) || len(got) != 3 {
			t.Errorf("entries %v, want id1 id2 and the label of id1", got)
		}
		if f.File() != "" || f.Header().ParentSession == "" {
			t.Errorf("file %q, parent %q", f.File(), f.Header().ParentSession)
		}
	})

	t.Run("159 114 115 side branch", func(t *testing.T) {
		dir := t.TempDir()
		f, err := s.ForkIn(dir, "l3", session.Options{Now: fixedClock()})
		if err != nil {
			t.Fatal(err)
		}
		// The path holds an assistant message: written at once (161).
		lines := forkLines(t, f.File())
		if got := ids(f.Entries()); !slices.Equal(got[:4], []string{"id1", "id2", "id4", "id5"}) || len(got) != 6 {
			t.Fatalf("entries %v", got)
		}
		for i, id := range []string{"id1", "id2", "id4", "id5"} {
			if want := string(sessiontest.Line(t, s.Entry(id))); lines[i+1] != want {
				t.Errorf("entry %s changed:\n got %s\nwant %s", id, lines[i+1], want)
			}
		}
		// Two fresh label entries, chained after the path, with the
		// times the labels were set; the label of id3 is gone.
		es := f.Entries()
		for i, want := range []struct{ target, label, from string }{{"id1", "start", "l1"}, {"id4", "side", "l3"}} {
			e := es[4+i]
			p, _ := e.Payload()
			l := p.(*session.LabelEntry)
			if l.TargetID != want.target || l.Label != want.label || e.ParentID != es[3+i].ID || e.Timestamp != s.Entry(want.from).Timestamp {
				t.Errorf("label %d: %+v parent %s at %s", i, l, e.ParentID, e.Timestamp)
			}
			if e.ID == want.from {
				t.Errorf("label %d kept its old id", i)
			}
		}
		if f.Label("id3") != "" || f.Label("id1") != "start" || f.Label("id4") != "side" {
			t.Errorf("labels %v", f.Labels())
		}
		abs, _ := filepath.Abs(s.File())
		h := f.Header()
		if h.ParentSession != abs || h.CWD != s.Header().CWD || h.ID == s.Header().ID || !strings.Contains(filepath.Base(f.File()), h.ID) {
			t.Errorf("header %+v, file %s", h, f.File())
		}
		f.Close()
		r, err := session.Load(f.File())
		if err != nil || len(r.Warnings()) != 0 {
			t.Fatalf("%v %v", err, r.Warnings())
		}
		want, _ := s.Context("id5")
		got, _ := r.Context("")
		if !slices.Equal(texts(got.Messages), texts(want.Messages)) {
			t.Errorf("context %v, want %v", texts(got.Messages), texts(want.Messages))
		}
	})
}

// A fork whose path holds no conversation yet (only setup entries) is
// written when the first user or assistant message arrives, as pi 1.6 does;
// one whose path holds a user message is written at once.
func TestForkDefersWrite(t *testing.T) {
	s := parse(t,
		ent{"id0", "", &session.ModelChangeEntry{Provider: "p", ModelID: "m"}},
		ent{"id1", "id0", user("first")},
		ent{"id2", "id1", assistant("a1")},
	)
	dir := t.TempDir()
	path := filepath.Join(dir, "fork.jsonl")
	f, err := s.Fork(path, "id0", session.Options{ID: "my-fork", Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	f.Append(&session.CustomEntry{CustomType: "note"})
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("160: fork without a conversation written before one starts")
	}
	f.Append(user("again"))
	f.Close()
	lines := forkLines(t, path)
	r, err := session.Load(path)
	if err != nil || len(r.Warnings()) != 0 || r.Len() != 3 || len(lines) != 4 {
		t.Fatalf("%v %v: %d entries, %d lines", err, r.Warnings(), r.Len(), len(lines))
	}
	if r.Header().ID != "my-fork" {
		t.Errorf("131: header id %q", r.Header().ID)
	}
	if got := ids(r.LeafPath()); got[0] != "id0" || len(got) != 3 {
		t.Errorf("path %v", got)
	}

	at := filepath.Join(dir, "at-user.jsonl")
	g, err := s.Fork(at, "id1", session.Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	if _, err := os.Stat(at); err != nil {
		t.Errorf("a fork at a user message is not written at once: %v", err)
	}
}

// A fork larger than one write is written in runs of whole lines that
// load back as the same session.
func TestForkLarge(t *testing.T) {
	s, err := session.Parse("big.jsonl", sessiongen.Bytes(sessiongen.Options{Entries: 400, Seed: 3, SizeScale: 40, BranchRate: -1}))
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.ForkIn(t.TempDir(), s.LeafID(), session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Flush()
	f.Close()
	fi, err := os.Stat(f.File())
	if err != nil || fi.Size() < 8<<20 {
		t.Fatalf("fork of %v bytes (%v), want more than one write", fi.Size(), err)
	}
	r, err := session.Load(f.File())
	if err != nil || len(r.Warnings()) != 0 || r.Len() != f.Len() {
		t.Fatalf("%v %v: %d entries, want %d", err, r.Warnings(), r.Len(), f.Len())
	}
	for i, e := range r.Entries() {
		if !bytes.Equal(sessiontest.Line(t, e), sessiontest.Line(t, f.Entries()[i])) {
			t.Fatalf("entry %d differs on disk", i)
		}
	}
}

// Labels on the path are dropped and re-chained; a compaction that kept
// from a dropped label keeps from the entry that followed it.
func TestForkRechainsAroundLabels(t *testing.T) {
	s := parse(t,
		ent{"id1", "", user("first")},
		ent{"l1", "id1", &session.LabelEntry{TargetID: "id1", Label: "a"}},
		ent{"id2", "l1", assistant("a1")},
		ent{"l2", "id2", &session.LabelEntry{TargetID: "id2", Label: "b"}},
		ent{"l3", "l2", &session.LabelEntry{TargetID: "id1"}},
		ent{"id3", "l3", user("second")},
		ent{"c1", "id3", &session.CompactionEntry{Summary: "sum", FirstKeptEntryID: "l2", TokensBefore: 100}},
		ent{"id4", "c1", assistant("a2")},
		ent{"l4", "id4", &session.LabelEntry{TargetID: "id1", Label: "again"}},
	)
	f, err := s.Fork("", "id4", session.Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	es := f.Entries()
	type link struct{ id, parent string }
	var got []link
	for _, e := range es[:5] {
		got = append(got, link{e.ID, e.ParentID})
	}
	want := []link{{"id1", ""}, {"id2", "id1"}, {"id3", "id2"}, {"c1", "id3"}, {"id4", "c1"}}
	if !slices.Equal(got, want) {
		t.Fatalf("links %v, want %v", got, want)
	}
	p, _ := es[3].Payload()
	if c := p.(*session.CompactionEntry); c.FirstKeptEntryID != "id3" || c.Summary != "sum" || c.TokensBefore != 100 {
		t.Errorf("compaction %+v", c)
	}
	// Member order is kept; only the values changed.
	if raw := string(sessiontest.Line(t, es[1])); !strings.HasPrefix(raw, `{"type":"message","id":"id2","parentId":"id1","timestamp":`) {
		t.Errorf("re-linked entry %s", raw)
	}
	// Label order: id2 was labeled first among the current labels, id1
	// was cleared and labeled again later.
	var labels []string
	for _, e := range es[5:] {
		p, _ := e.Payload()
		labels = append(labels, p.(*session.LabelEntry).TargetID)
	}
	if !slices.Equal(labels, []string{"id2", "id1"}) {
		t.Errorf("labels in order %v", labels)
	}
	ctxWant, _ := s.Context("id4")
	ctxGot, _ := f.Context("")
	if !slices.Equal(texts(ctxGot.Messages), texts(ctxWant.Messages)) {
		t.Errorf("context %v, want %v", texts(ctxGot.Messages), texts(ctxWant.Messages))
	}
}

// Forking every leaf of generated sessions gives a file that loads
// cleanly, holds the leaf's path and nothing else, and shows the model
// what the original showed at that leaf.
func TestForkGenerated(t *testing.T) {
	for seed := range uint64(4) {
		data := sessiongen.Bytes(sessiongen.Options{Entries: 600, Seed: seed})
		s, err := session.Parse("gen.jsonl", data)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		for _, leaf := range s.Leaves() {
			f, err := s.ForkIn(dir, leaf.ID, session.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Flush(); err != nil {
				t.Fatal(err)
			}
			f.Close()
			r, err := session.Load(f.File())
			if err != nil || len(r.Warnings()) != 0 || len(r.Leaves()) != 1 {
				t.Fatalf("seed %d leaf %s: %v %v, %d leaves", seed, leaf.ID, err, r.Warnings(), len(r.Leaves()))
			}
			var want []string
			for _, e := range s.Path(leaf.ID) {
				if e.Type != session.TypeLabel {
					want = append(want, e.ID)
				}
			}
			if got := ids(r.LeafPath()); !slices.Equal(got[:len(want)], want) {
				t.Fatalf("seed %d leaf %s: path %v, want %v", seed, leaf.ID, got, want)
			}
			cw, err := s.Context(leaf.ID)
			if err != nil {
				t.Fatal(err)
			}
			cg, err := r.Context("")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(texts(cg.Messages), texts(cw.Messages)) {
				t.Fatalf("seed %d leaf %s: contexts differ", seed, leaf.ID)
			}
		}
	}
}

// A version-1 file from pi forks into a version-3 session that shows the
// model the same conversation; the original is not touched.
func TestForkPiFile(t *testing.T) {
	path := pifixtures.Path(t, pifixtures.LargeSession)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.ForkIn(t.TempDir(), s.LeafID(), session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	r, err := session.Load(f.File())
	if err != nil || r.FileVersion() != session.CurrentVersion || len(r.Warnings()) != 0 {
		t.Fatalf("%v: version %d, warnings %v", err, r.FileVersion(), r.Warnings())
	}
	want, _ := s.Context("")
	got, _ := r.Context("")
	if len(got.Messages) != 914 || !slices.Equal(texts(got.Messages), texts(want.Messages)) {
		t.Errorf("fork shows %d messages, want the original's %d", len(got.Messages), len(want.Messages))
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Error("forking changed pi's file")
	}
}
