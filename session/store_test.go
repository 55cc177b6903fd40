package session_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiontest"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const header3 = `{"type":"session","version":3,"id":"sess-1","timestamp":"2025-12-03T14:00:00.000Z","cwd":"/tmp/p"}`
const msgLine = `{"type":"message","id":"aaaa0001","parentId":null,"timestamp":"2025-12-03T14:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1764770401000}}`

// Scenarios 88–93, 101–105 and 107 of pi-reference §9.13.
func TestLoadFiles(t *testing.T) {
	t.Run("88 missing file", func(t *testing.T) {
		_, err := session.Load(filepath.Join(t.TempDir(), "none.jsonl"))
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("err = %v, want not exist", err)
		}
	})
	notSession := []struct{ name, content string }{
		{"89 empty file", ""},
		{"89 blank lines", "\n\n  \n"},
		{"90 first line not a header", msgLine + "\n"},
		{"91 only malformed JSON", "{not json\nnor this\n"},
		{"105 non-session JSONL", `{"hello":"world"}` + "\n" + `{"type":"session","id":"late"}` + "\n"},
	}
	for _, tt := range notSession {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, "f.jsonl", tt.content)
			_, err := session.Load(p)
			var ns *session.NotSessionError
			if !errors.As(err, &ns) || ns.Path != p || !strings.Contains(err.Error(), p) {
				t.Fatalf("err = %v, want a NotSessionError naming the file", err)
			}
			// Opening for appending refuses too, and leaves the file as it was.
			if tt.content != "" {
				if _, err := session.Open(p); !errors.As(err, &ns) {
					t.Errorf("Open: err = %v", err)
				}
				if got, _ := os.ReadFile(p); string(got) != tt.content {
					t.Errorf("file changed to %q", got)
				}
			}
		})
	}
	t.Run("92 header and message", func(t *testing.T) {
		s, err := session.Load(writeFile(t, "f.jsonl", header3+"\n"+msgLine+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		if s.Header().ID != "sess-1" || s.Len() != 1 || s.Entries()[0].Type != session.TypeMessage || len(s.Warnings()) != 0 {
			t.Errorf("header %+v, %d entries, warnings %v", s.Header(), s.Len(), s.Warnings())
		}
	})
	t.Run("93 garbage line skipped with its line number", func(t *testing.T) {
		s, err := session.Load(writeFile(t, "f.jsonl", header3+"\n{garbage\n"+msgLine+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		w := s.Warnings()
		if s.Len() != 1 || len(w) != 1 || w[0].Line != 2 || w[0].Kind != session.WarnMalformed || s.Entries()[0].Line != 3 {
			t.Errorf("%d entries, warnings %v", s.Len(), w)
		}
		if !strings.HasPrefix(w[0].String(), "line 2: malformed JSON") {
			t.Errorf("warning text %q", w[0])
		}
	})
	t.Run("garbage before the header is skipped", func(t *testing.T) {
		s, err := session.Load(writeFile(t, "f.jsonl", "oops\n"+header3+"\n"+msgLine+"\n"))
		if err != nil || s.Len() != 1 || len(s.Warnings()) != 1 {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("107 padding newlines", func(t *testing.T) {
		s, err := session.Load(writeFile(t, "f.jsonl", header3+"\n"+strings.Repeat("\n", 1<<20)+msgLine+"\n\n"))
		if err != nil {
			t.Fatal(err)
		}
		ctx, err := s.Context("")
		if err != nil || s.Len() != 1 || len(ctx.Messages) != 1 || s.Entries()[0].Line != 2+1<<20 {
			t.Errorf("err %v, %d entries", err, s.Len())
		}
	})
	t.Run("101 103 104 open an empty file", func(t *testing.T) {
		p := writeFile(t, "empty.jsonl", "")
		s, err := session.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		data, _ := os.ReadFile(p)
		if bytes.Count(data, []byte("\n")) != 1 || !bytes.Contains(data, []byte(`"id":"`+s.Header().ID+`"`)) || s.File() != p {
			t.Errorf("file after open: %q", data)
		}
		again, err := session.Load(p)
		if err != nil || again.Header().ID != s.Header().ID {
			t.Errorf("reload: %v, id %v", err, again)
		}
	})
}

// Scenarios 94–100 and 108 of pi-reference §9.13: finding the most recent
// session.
func TestMostRecent(t *testing.T) {
	dir := t.TempDir()
	if _, err := session.MostRecent(dir, ""); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("94 empty dir: %v", err)
	}
	if _, err := session.MostRecent(filepath.Join(dir, "none"), ""); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("95 missing dir: %v", err)
	}
	write := func(name, content string, age time.Duration) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		mt := time.Now().Add(-age)
		os.Chtimes(p, mt, mt)
		return p
	}
	write("a.txt", header3+"\n", 0)
	write("b.json", header3+"\n", 0)
	write("c.jsonl", msgLine+"\n", 0)
	if _, err := session.MostRecent(dir, ""); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("96/97 no valid session: %v", err)
	}
	older := write("older.jsonl", header3+"\n", 2*time.Hour)
	if got, err := session.MostRecent(dir, ""); err != nil || got != older {
		t.Errorf("98 one valid file: %q %v", got, err)
	}
	newer := write("newer.jsonl", strings.Replace(header3, "/tmp/p", "/tmp/q", 1)+"\n", time.Hour)
	if got, _ := session.MostRecent(dir, ""); got != newer {
		t.Errorf("99 newer mtime wins: %q", got)
	}
	write("newest-invalid.jsonl", "garbage\n", 0)
	if got, _ := session.MostRecent(dir, ""); got != newer {
		t.Errorf("100 invalid newer file ignored: %q", got)
	}
	if got, _ := session.MostRecent(dir, "/tmp/p"); got != older {
		t.Errorf("108 filtered by cwd: %q", got)
	}
}

// Scenarios 110–113, 116 and 117 of pi-reference §9.14.
func TestLabels(t *testing.T) {
	s, err := session.Create("", session.Options{CWD: "/tmp", Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := s.Append(user("q"))
	a, _ := s.Append(assistant("a"))
	l, err := s.Append(&session.LabelEntry{TargetID: u.ID, Label: "start"})
	if err != nil || s.Label(u.ID) != "start" {
		t.Fatalf("110: %v, label %q", err, s.Label(u.ID))
	}
	if p, _ := l.Payload(); *p.(*session.LabelEntry) != (session.LabelEntry{TargetID: u.ID, Label: "start"}) {
		t.Errorf("110 label entry %+v", p)
	}
	s.Append(&session.LabelEntry{TargetID: a.ID, Label: "x"})
	s.Append(&session.LabelEntry{TargetID: a.ID})
	if got := s.Label(a.ID); got != "" {
		t.Errorf("111 cleared label = %q", got)
	}
	for _, name := range []string{"one", "two", "three"} {
		s.Append(&session.LabelEntry{TargetID: a.ID, Label: name})
	}
	if got := s.Label(a.ID); got != "three" {
		t.Errorf("112 last label wins: %q", got)
	}
	tree := s.Tree()
	if tree[0].Label != "start" || tree[0].Children[0].Label != "three" {
		t.Errorf("113 tree labels %q %q", tree[0].Label, tree[0].Children[0].Label)
	}
	ctx, _ := s.Context("")
	if len(ctx.Messages) != 2 {
		t.Errorf("116 label entries in context: %v", texts(ctx.Messages))
	}
	if _, err := s.Append(&session.LabelEntry{TargetID: "non-existent", Label: "x"}); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("117 err = %v", err)
	}
	// Labels survive a reload from the written bytes.
	r, err := session.Parse("again", bytesOf(t, s))
	if err != nil || r.Label(a.ID) != "three" || r.Label(u.ID) != "start" {
		t.Errorf("reloaded labels: %v %q", err, r.Labels())
	}
}

// Scenarios 118 and 119 of pi-reference §9.15, plus the v2→v3 rename and
// firstKeptEntryIndex.
func TestMigration(t *testing.T) {
	v1 := `{"type":"session","id":"v1-session","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p","provider":"anthropic"}
{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"provider":"x","model":"y","timestamp":2}}
{"type":"compaction","timestamp":"2025-01-01T00:00:03.000Z","summary":"s","firstKeptEntryIndex":2,"tokensBefore":5}
{"type":"compaction","timestamp":"2025-01-01T00:00:04.000Z","summary":"s2","firstKeptEntryIndex":0,"tokensBefore":6}
`
	s, err := session.Parse("v1", []byte(v1))
	if err != nil {
		t.Fatal(err)
	}
	es := s.Entries()
	if s.Header().Version != 3 || s.FileVersion() != 1 || len(es) != 4 {
		t.Fatalf("118: version %d/%d, %d entries", s.Header().Version, s.FileVersion(), len(es))
	}
	for i, e := range es {
		if len(e.ID) != 8 {
			t.Errorf("118: id %q is not 8 characters", e.ID)
		}
		if want := ""; i > 0 {
			want = es[i-1].ID
			if e.ParentID != want {
				t.Errorf("118: parent of %d = %q, want %q", i, e.ParentID, want)
			}
		} else if e.ParentID != "" {
			t.Errorf("118: first entry has parent %q", e.ParentID)
		}
	}
	p, _ := es[2].Payload()
	if c := p.(*session.CompactionEntry); c.FirstKeptEntryID != es[1].ID {
		t.Errorf("firstKeptEntryIndex 2 → %q, want %q (the assistant message)", c.FirstKeptEntryID, es[1].ID)
	}
	p, _ = es[3].Payload()
	if c := p.(*session.CompactionEntry); c.FirstKeptEntryID != "" || bytes.Contains(sessiontest.Line(t, es[3]), []byte("firstKeptEntry")) {
		t.Errorf("index 0 (the header) must leave firstKeptEntryId unset: %s", sessiontest.Line(t, es[3]))
	}
	if !bytes.HasPrefix(s.Header().Raw(), []byte(`{"type":"session","version":3,"id":"v1-session"`)) || !bytes.Contains(s.Header().Raw(), []byte(`"provider":"anthropic"`)) {
		t.Errorf("migrated header %s", s.Header().Raw())
	}
	again, _ := session.Parse("v1", []byte(v1))
	if diff := cmp.Diff(ids(es), ids(again.Entries())); diff != "" {
		t.Errorf("ids are not deterministic:\n%s", diff)
	}
	if es[0].ID != session.MigrationID("v1-session", 0, 0) {
		t.Errorf("id %s is not MigrationID", es[0].ID)
	}

	v2 := `{"type":"session","version":2,"id":"v2","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"message","id":"id-1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"message","id":"id-2","parentId":"id-1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"hookMessage","customType":"h","content":"x","display":true,"timestamp":2}}
`
	s2, err := session.Parse("v2", []byte(v2))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"id-1", "id-2"}, ids(s2.Entries())); diff != "" {
		t.Errorf("119 ids changed:\n%s", diff)
	}
	if role, _ := s2.Entries()[1].MessageRole(); role != session.RoleCustom {
		t.Errorf("hookMessage → %q", role)
	}
	if !bytes.Equal(sessiontest.Line(t, s2.Entries()[0]), []byte(strings.Split(v2, "\n")[1])) {
		t.Error("an entry the migration does not touch must keep its bytes")
	}
}

// Scenario 120 of pi-reference §9.16.
func TestSaveCustomEntry(t *testing.T) {
	s, _ := session.Create("", session.Options{CWD: "/tmp"})
	u, _ := s.Append(user("q"))
	c, err := s.Append(&session.CustomEntry{CustomType: "state", Data: jsontext.Value(`{"n":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := s.Append(assistant("a"))
	if s.Len() != 3 || c.ParentID != u.ID || a.ParentID != c.ID {
		t.Fatalf("entries %v", ids(s.Entries()))
	}
	p, _ := c.Payload()
	if ce := p.(*session.CustomEntry); ce.CustomType != "state" || string(ce.Data) != `{"n":1}` {
		t.Errorf("custom entry %+v", ce)
	}
	if diff := cmp.Diff([]string{u.ID, c.ID, a.ID}, ids(s.LeafPath())); diff != "" {
		t.Error(diff)
	}
	ctx, _ := s.Context("")
	if len(ctx.Messages) != 2 {
		t.Errorf("context %v", texts(ctx.Messages))
	}
}

// Scenarios 121–130 of pi-reference §9.17.
func TestSessionIDs(t *testing.T) {
	uuid7 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	s, err := session.Create("", session.Options{ID: "my-id", CWD: "/tmp"})
	if err != nil || s.Header().ID != "my-id" || !bytes.Contains(s.Header().Raw(), []byte(`"id":"my-id"`)) {
		t.Errorf("121/124/125: %v %s", err, s.Header().Raw())
	}
	if err := s.Flush(); err != nil {
		t.Errorf("125: in-memory Flush: %v", err)
	}
	s, _ = session.Create("", session.Options{CWD: "/tmp"})
	if !uuid7.MatchString(s.Header().ID) {
		t.Errorf("122/128: generated id %q is not a UUID v7", s.Header().ID)
	}
	if _, err := session.Create("", session.Options{ID: "abc-123_def.456", CWD: "/tmp"}); err != nil {
		t.Errorf("126: %v", err)
	}
	for _, bad := range []string{"-lead", "trail-", "_x", "x.", "a/b", `a\b`, "a b", ".x"} {
		if _, err := session.Create("", session.Options{ID: bad, CWD: "/tmp"}); err == nil {
			t.Errorf("127: id %q accepted", bad)
		}
	}
	dir := filepath.Join(t.TempDir(), "sessions", "--tmp--")
	now := time.Date(2025, 12, 3, 14, 0, 0, 0, time.UTC)
	s, err = session.CreateIn(dir, session.Options{ID: "custom", CWD: "/tmp", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "2025-12-03T14-00-00-000Z_custom.jsonl"); s.File() != want {
		t.Errorf("129: file %q, want %q", s.File(), want)
	}
	if _, err := os.Stat(s.File()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("129: file exists before any assistant message")
	}
	s.Append(&session.ModelChangeEntry{Provider: "p", ModelID: "m"})
	s.Append(&session.ThinkingLevelChangeEntry{ThinkingLevel: "high"})
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	s.Append(user("q"))
	s.Append(assistant("a"))
	s.Close()
	r, err := session.Load(s.File())
	if err != nil || r.Len() != 4 || len(r.Warnings()) != 0 {
		t.Fatalf("130: %v, %d entries, %v", err, r.Len(), r.Warnings())
	}
	data, _ := os.ReadFile(s.File())
	if n := bytes.Count(data, []byte(`"type":"session"`)); n != 1 {
		t.Errorf("130: %d headers", n)
	}
	fi, _ := os.Stat(s.File())
	di, _ := os.Stat(dir)
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Errorf("modes: file %v, dir %v", fi.Mode().Perm(), di.Mode().Perm())
	}
}

// Scenarios 132–156 and 160 of pi-reference §9.18.
func TestTreeTraversal(t *testing.T) {
	s, _ := session.Create("", session.Options{CWD: "/tmp", Now: fixedClock()})
	if s.Leaf() != nil || s.LeafPath() != nil || len(s.Tree()) != 0 {
		t.Fatal("137/138/142/152: empty session has a leaf, path or tree")
	}
	e1, _ := s.Append(user("q1"))
	if diff := cmp.Diff([]string{e1.ID}, ids(s.LeafPath())); diff != "" {
		t.Errorf("139: %s", diff)
	}
	e2, _ := s.Append(&session.ThinkingLevelChangeEntry{ThinkingLevel: "high"})
	e3, _ := s.Append(&session.ModelChangeEntry{Provider: "openai", ModelID: "gpt-4o"})
	e4, _ := s.Append(assistant("a1"))
	e5, _ := s.Append(&session.CompactionEntry{Summary: "sum", FirstKeptEntryID: e1.ID, TokensBefore: 1000})
	e6, _ := s.Append(&session.CustomEntry{CustomType: "c"})
	e7, _ := s.Append(user("q2"))
	all := []*session.Entry{e1, e2, e3, e4, e5, e6, e7}
	for i, e := range all {
		want := ""
		if i > 0 {
			want = all[i-1].ID
		}
		if e.ParentID != want {
			t.Errorf("132–136: entry %d parent %q, want %q", i, e.ParentID, want)
		}
	}
	if s.Leaf() != e7 {
		t.Error("137/153: leaf is not the last appended entry")
	}
	if p, _ := e3.Payload(); *p.(*session.ModelChangeEntry) != (session.ModelChangeEntry{Provider: "openai", ModelID: "gpt-4o"}) {
		t.Errorf("134: %+v", p)
	}
	if p, _ := e5.Payload(); p.(*session.CompactionEntry).TokensBefore != 1000 || p.(*session.CompactionEntry).FirstKeptEntryID != e1.ID {
		t.Errorf("135: %+v", p)
	}
	if diff := cmp.Diff(ids(all), ids(s.LeafPath())); diff != "" {
		t.Errorf("140: %s", diff)
	}
	if diff := cmp.Diff([]string{e1.ID, e2.ID}, ids(s.Path(e2.ID))); diff != "" {
		t.Errorf("141: %s", diff)
	}
	if tree := s.Tree(); len(tree) != 1 || len(tree[0].Children) != 1 {
		t.Errorf("143: linear session is not a single chain")
	}
	if err := s.SetLeaf(e2.ID); err != nil || s.Leaf() != e2 {
		t.Errorf("147: %v", err)
	}
	if err := s.SetLeaf("nope"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("148: %v", err)
	}
	b1, _ := s.Append(user("branch"))
	if b1.ParentID != e2.ID || len(s.Children(e2.ID)) != 2 {
		t.Errorf("144/149: sibling parent %q, children %d", b1.ParentID, len(s.Children(e2.ID)))
	}
	s.SetLeaf(e2.ID)
	s.Append(user("third branch"))
	if n := len(s.Children(e2.ID)); n != 3 {
		t.Errorf("145: %d children", n)
	}
	bs, err := s.AppendAt(e1.ID, &session.BranchSummaryEntry{FromID: b1.ID, Summary: "left the branch"})
	if err != nil || bs.ParentID != e1.ID || s.Leaf() != bs {
		t.Errorf("150: %v", err)
	}
	if _, err := s.AppendAt("nope", &session.BranchSummaryEntry{Summary: "x"}); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("151: %v", err)
	}
	if s.Entry("nope") != nil || s.Entry(e4.ID) != e4 {
		t.Error("154/155: Entry lookup")
	}
	s.SetLeaf(b1.ID)
	ctx, _ := s.Context("")
	if diff := cmp.Diff([]string{"user:q1", "user:branch"}, texts(ctx.Messages)); diff != "" {
		t.Errorf("156: %s", diff)
	}
	s.ResetLeaf()
	root2, _ := s.Append(user("new root"))
	if root2.ParentID != "" || len(s.Roots()) != 2 {
		t.Errorf("ResetLeaf: parent %q, roots %d", root2.ParentID, len(s.Roots()))
	}
	// The tree shape in the written file is the same.
	r, err := session.Parse("again", bytesOf(t, s))
	if err != nil || len(r.Children(e2.ID)) != 3 || len(r.Leaves()) != len(s.Leaves()) {
		t.Errorf("reloaded tree differs: %v", err)
	}
}

func TestDeepPath(t *testing.T) {
	// 162: a long chain; paths are built without front insertion or recursion.
	const n = 100_000
	s, _ := session.Create("", session.Options{CWD: "/tmp"})
	for i := range n {
		if _, err := s.Append(&session.CustomEntry{CustomType: "c"}); err != nil {
			t.Fatal(i, err)
		}
	}
	p := s.LeafPath()
	if len(p) != n || p[0].ParentID != "" || p[n-1] != s.Leaf() {
		t.Fatalf("path of %d entries", len(p))
	}
	if tree := s.Tree(); len(tree) != 1 {
		t.Fatal("one root expected")
	}
}

// Scenario 160 (pi 1.6's rule) and pi bug §10.1 #2: setup entries stay in
// memory and the file appears with the first user message, with one header
// and no duplicate entries, also when a session without an assistant
// message is reopened and appended to.
func TestDeferredFirstWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	s, err := session.Create(path, session.Options{CWD: "/tmp"})
	if err != nil {
		t.Fatal(err)
	}
	s.Append(&session.ModelChangeEntry{Provider: "p", ModelID: "m"})
	s.Append(&session.CustomEntry{CustomType: "c"})
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("file written before the conversation started")
	}
	s.Append(user("q"))
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("file not written with the first user message: %v", err)
	}
	s.Append(user("q2"))
	s.Close()
	check := func(want int) {
		t.Helper()
		data, _ := os.ReadFile(path)
		r, err := session.Parse(path, data)
		if err != nil || bytes.Count(data, []byte(`"type":"session"`)) != 1 || r.Len() != want || len(r.Warnings()) != 0 {
			t.Fatalf("file: err %v, %d entries (want %d), warnings %v\n%s", err, r.Len(), want, r.Warnings(), data)
		}
	}
	check(4)

	// A flushed file without an assistant message, reopened and appended to.
	path2 := filepath.Join(dir, "t.jsonl")
	s2, _ := session.Create(path2, session.Options{CWD: "/tmp"})
	s2.Append(user("q"))
	s2.Flush()
	s2.Close()
	o, err := session.Open(path2)
	if err != nil {
		t.Fatal(err)
	}
	o.Append(user("again"))
	o.Append(assistant("a"))
	o.Close()
	path = path2
	check(3)
}

func TestCreateRefusesExistingFile(t *testing.T) {
	p := writeFile(t, "x.jsonl", "precious\n")
	if _, err := session.Create(p, session.Options{CWD: "/tmp"}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("err = %v", err)
	}
	// A file that appears between Create and the first write is not overwritten.
	p2 := filepath.Join(t.TempDir(), "y.jsonl")
	s, _ := session.Create(p2, session.Options{CWD: "/tmp"})
	os.WriteFile(p2, []byte("precious\n"), 0o600)
	s.Append(user("q"))
	if _, err := s.Append(assistant("a")); err == nil {
		t.Error("append overwrote a file that appeared meanwhile")
	}
	if got, _ := os.ReadFile(p2); string(got) != "precious\n" {
		t.Errorf("file is now %q", got)
	}
}

func TestReadOnly(t *testing.T) {
	s := parse(t, chain(user("q"))...)
	if _, err := s.Append(user("x")); !errors.Is(err, session.ErrReadOnly) {
		t.Errorf("err = %v", err)
	}
}

func TestOpenMigratesOldFile(t *testing.T) {
	v1 := `{"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
`
	p := writeFile(t, "old.jsonl", v1)
	s, err := session.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(assistant("a")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if bak, _ := os.ReadFile(p + ".bak"); string(bak) != v1 {
		t.Errorf("backup %q", bak)
	}
	r, err := session.Load(p)
	if err != nil || r.FileVersion() != 3 || r.Len() != 2 || r.Leaf().ParentID != r.Entries()[0].ID {
		t.Fatalf("after open+append: %v", err)
	}
}

func TestSessionName(t *testing.T) {
	s, _ := session.Create("", session.Options{CWD: "/tmp"})
	s.Append(&session.SessionInfoEntry{Name: "  first\nname  "})
	if s.Name() != "first name" {
		t.Errorf("name %q", s.Name())
	}
	s.Append(&session.SessionInfoEntry{Name: ""})
	if s.Name() != "" {
		t.Errorf("an empty name clears it: %q", s.Name())
	}
}

func TestOrphansDuplicatesCycles(t *testing.T) {
	s := parse(t,
		ent{id: "a", p: user("root")},
		ent{id: "b", parent: "missing", p: user("orphan")},
		ent{id: "c", parent: "d", p: user("cycle 1")},
		ent{id: "d", parent: "c", p: user("cycle 2")},
		ent{id: "a", parent: "", p: user("duplicate")},
		ent{id: "self", parent: "self", p: user("own parent")},
	)
	if o := ids(s.Orphans()); !cmp.Equal(o, []string{"b"}) {
		t.Errorf("orphans %v", o)
	}
	kinds := map[session.WarningKind]int{}
	for _, w := range s.Warnings() {
		kinds[w.Kind]++
	}
	if kinds[session.WarnCycle] != 1 || kinds[session.WarnDuplicateID] != 1 {
		t.Errorf("warnings %v", s.Warnings())
	}
	for _, e := range s.Entries() {
		if p := s.Path(e.ID); e.ID != "" && len(p) == 0 {
			t.Errorf("no path to %s", e.ID)
		}
	}
	if s.Entry("a").Line != 6 {
		t.Error("a duplicate id finds the later entry")
	}
	if p := s.Path("self"); len(p) != 1 {
		t.Errorf("self parent: path %v", ids(p))
	}
}

func TestUnknownEntryTypeSurvives(t *testing.T) {
	line := `{"type":"future_thing","id":"f1","parentId":null,"timestamp":"2025-12-03T14:00:01.000Z","x":{"y":[1,2]},"z":"\u00e9"}`
	data := []byte(header3 + "\n" + line + "\n")
	s, err := session.Parse("f", data)
	if err != nil || len(s.Warnings()) != 0 {
		t.Fatal(err, s.Warnings())
	}
	if p, _ := s.Entries()[0].Payload(); p.EntryType() != "future_thing" {
		t.Errorf("payload %#v", p)
	}
	if !bytes.Equal(bytesOf(t, s), data) {
		t.Errorf("round trip changed the file:\n%s", bytesOf(t, s))
	}
}

func TestList(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, ts int64, text string, named string) {
		ents := chain(&session.MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}, Timestamp: ts}})
		if named != "" {
			ents = append(ents, ent{id: "n", parent: "test-id-1", p: &session.SessionInfoEntry{Name: named}})
		}
		os.WriteFile(filepath.Join(dir, name), fileBytes(t, ents...), 0o600)
	}
	mk("old.jsonl", 1000, "first question", "")
	mk("new.jsonl", 5000, "other", "Named session")
	os.WriteFile(filepath.Join(dir, "junk.jsonl"), []byte("junk\n"), 0o600)
	infos, err := session.List(dir)
	if err != nil || len(infos) != 2 {
		t.Fatalf("%v %v", err, infos)
	}
	if infos[0].Title() != "Named session" || infos[1].Title() != "first question" || infos[0].Modified.UnixMilli() != 5000 || infos[1].MessageCount != 1 {
		t.Errorf("163: %+v", infos)
	}
}

// Scenario 106 of pi-reference §9.13: a content block of a type Prime does
// not know survives reading, appending elsewhere and reading again.
func TestUnknownContentBlockSurvives(t *testing.T) {
	line := `{"type":"message","id":"m1","parentId":null,"timestamp":"2025-12-03T14:00:01.000Z","message":{"role":"assistant","content":[{"type":"finalAnswer","text":"42","extra":{"k":[1]}}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1}}`
	s, err := session.Parse("f", []byte(header3+"\n"+line+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Entries()[0].Message()
	if err != nil {
		t.Fatal(err)
	}
	dst, _ := session.Create("", session.Options{CWD: "/tmp"})
	e, err := dst.Append(&session.MessageEntry{Message: m})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(sessiontest.Line(t, e), []byte(`{"type":"finalAnswer","text":"42","extra":{"k":[1]}}`)) {
		t.Errorf("block lost: %s", sessiontest.Line(t, e))
	}
}

// TestPathAfterMoves checks the remembered path against a fresh reading of
// the file as the leaf moves around and entries are appended.
func TestPathAfterMoves(t *testing.T) {
	s, err := session.Create("", session.Options{CWD: "/tmp"})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var ids []string
	for i := range 400 {
		switch {
		case len(ids) > 0 && rng.IntN(5) == 0:
			s.SetLeaf(ids[rng.IntN(len(ids))])
		case rng.IntN(20) == 0:
			s.ResetLeaf()
		}
		e, err := s.Append(user(fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
		got := s.LeafPath()
		r, err := session.Parse("check", bytesOf(t, s))
		if err != nil {
			t.Fatal(err)
		}
		want := r.Path(e.ID)
		if len(got) != len(want) {
			t.Fatalf("step %d: path of %d entries, want %d", i, len(got), len(want))
		}
		for j := range got {
			if got[j].ID != want[j].ID {
				t.Fatalf("step %d: entry %d is %s, want %s", i, j, got[j].ID, want[j].ID)
			}
		}
		if p := s.Path(ids[rng.IntN(len(ids))]); len(p) == 0 {
			t.Fatal("empty path")
		}
	}
}
