package compaction

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/session"
)

// pendingPaths are paths to hold a pending compaction against, in the
// builder's language: edits, hidden and replaced entries, system state,
// split turns, older compactions before and inside the kept range.
var pendingPaths = []string{
	"u1:400 a1:400 u2:400 a2:400 u3:400 a3:400",
	"S1:300 u1:400 a1:400!read=x.go r1:800 a2:200 S2:100 u2:400 a3@900/40",
	"u1:400 a1:400 H1(a1) u2:400 a2:300 R1:50(a2) u3:200 a3:200",
	"u1:900 a1:900 C1(keep u1) u2:400 a2:400!edit=y.go r1:400 a3:100 u3:50 a4:50",
	"u1:500 a1:500 u2:500 C1(keep u2) a2:500 u3:500 a3:500 C2(keep u3) u4:300 a4:300",
	"u1:200 b1:300 c1:100 s1:200 e1 m1 M1 l1 x1 u2:300 a2:300 H2(s1) u3 a3",
	"u1:400 a1:300!read=a.go!read=b.go r1:300 r2:300 a2:300 H1(a2) u2:100",
}

// oracleAfter is the context size after c, had it been written: the entry
// encoded and read back, the context built as the session does.
func oracleAfter(t *testing.T, path []*session.Entry, c *session.CompactionEntry) int {
	t.Helper()
	ctx, err := session.BuildContext(appended(t, path, "pending", c))
	if err != nil {
		t.Fatal(err)
	}
	return ctx.EstimateNext().Tokens
}

func TestContextAfterIsTheWrittenContext(t *testing.T) {
	system := &session.SystemMessage{Sections: []session.SystemSection{{Name: "prompt", Text: text("sys", 700)}}}
	for _, spec := range pendingPaths {
		path := newBuilder(t).parse(spec).path
		keeps := []string{"", "nowhere"}
		for _, e := range path {
			keeps = append(keeps, e.ID)
		}
		for _, keep := range keeps {
			for _, sys := range []*session.SystemMessage{nil, system} {
				c := &session.CompactionEntry{Summary: text("summary", 333), FirstKeptEntryID: keep, TokensBefore: 5000, SystemMessage: sys}
				got, err := ContextAfter(path, c)
				if err != nil {
					t.Fatalf("%s, keep %q: %v", spec, keep, err)
				}
				if want := oracleAfter(t, path, c); got != want {
					t.Errorf("%s, keep %q, system %v: ContextAfter = %d, the written context %d", spec, keep, sys != nil, got, want)
				}
			}
		}
	}
}

func TestContextAfterFailures(t *testing.T) {
	path := newBuilder(t).parse("u1 a1 u2 a2").path
	if _, err := ContextAfter(path[:2], &session.CompactionEntry{FirstKeptEntryID: "u1"}); err != nil {
		t.Errorf("a plain path: %v", err)
	}
	if _, err := projectPending(path, 1, &session.CompactionEntry{FirstKeptEntryID: "u1"}, 0); err != nil {
		t.Errorf("planned inside the path: %v", err)
	}
	compacted := newBuilder(t).parse("u1 a1 u2 C1(keep u2) a2 u3").path
	if _, err := projectPending(compacted, 2, &session.CompactionEntry{FirstKeptEntryID: "a1"}, 0); !errors.Is(err, errCompactedSince) {
		t.Errorf("a compaction after the pending one: %v, want errCompactedSince", err)
	}
}

// oracleUpdate is the preparation of the update as it was made before:
// Prepare of the path with the background compaction written after
// path[:n].
func oracleUpdate(t *testing.T, path []*session.Entry, n int, c *session.CompactionEntry, fresh *Preparation) (*Preparation, error) {
	t.Helper()
	withC := append(appended(t, path[:n], "bg-"+path[n-1].ID, c), path[n:]...)
	prep, err := Prepare(withC, fresh.Settings)
	if err != nil {
		return nil, err
	}
	if prep.FirstKeptEntryID != fresh.FirstKeptEntryID {
		return nil, errors.New("another cut")
	}
	prep.TokensBefore = fresh.TokensBefore
	return prep, nil
}

func TestUpdatePreparationIsThePreparationWithTheSummaryWritten(t *testing.T) {
	specs := []struct {
		spec string
		n    int // the background summary was planned after path[:n]
	}{
		{"u1:400 a1:400 u2:400 a2:400 u3:400 a3:400 u4:400 a4:400 u5:400 a5:400", 6},
		{"u1:400 a1:400!read=x.go r1:400 a2:400!edit=y.go r2:400 a3:400 u2:400 a4:400 u3:400 a5:400 u4:200 a6:200", 7},
		{"S1:200 u1:400 a1:400 u2:400 a2:400 H1(a2) u3:400 a3:400 S2:100 u4:400 a4:400 u5:400 a5:400", 8},
		{"u1:900 a1:900 C1(keep u1) u2:400 a2:400 u3:400 a3:400 u4:400 a4:400 u5:400 a5:400", 7},
		{"u1:400 a1:400 u2:400 a2:400 u3:400 a3:400!read=z.go r1:2000 a4:400", 6},
	}
	compared, refused := 0, 0
	for _, tt := range specs {
		path := newBuilder(t).parse(tt.spec).path
		for _, keepRecent := range []int{150, 400, 800, 1200} {
			s := Settings{Enabled: true, ReserveTokens: 1000, KeepRecentTokens: keepRecent}
			planned, err := Prepare(path[:tt.n], s)
			if err != nil {
				continue
			}
			fresh, err := Prepare(path, s)
			if err != nil {
				t.Fatalf("%s: %v", tt.spec, err)
			}
			c := &session.CompactionEntry{Summary: "background summary", FirstKeptEntryID: planned.FirstKeptEntryID, TokensBefore: planned.TokensBefore,
				Details: Details{ReadFiles: []string{"bg.go"}, ModifiedFiles: []string{}}.Encode()}
			got, gotErr := UpdatePreparation(path, tt.n, c, fresh)
			want, wantErr := oracleUpdate(t, path, tt.n, c, fresh)
			if (gotErr != nil) != (wantErr != nil) {
				t.Fatalf("%s, keep %d: error %v, written %v", tt.spec, keepRecent, gotErr, wantErr)
			}
			if gotErr != nil {
				refused++
				continue
			}
			compared++
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			if string(g) != string(w) {
				t.Errorf("%s, keep %d:\n got %s\nwant %s", tt.spec, keepRecent, g, w)
			}
			if got.PreviousSummary != "background summary" || !slices.Contains(got.ReadFiles(), "bg.go") {
				t.Errorf("%s: the update does not build on the background summary: %+v", tt.spec, got)
			}
		}
	}
	if compared < 5 {
		t.Errorf("%d updates compared (%d refused by both): the cases miss their point", compared, refused)
	}
}

func TestUpdatePreparationRefuses(t *testing.T) {
	path := newBuilder(t).parse("u1:400 a1:400 u2:400 a2:400 u3:400 a3:400").path
	s := Settings{Enabled: true, KeepRecentTokens: 300}
	fresh, err := Prepare(path, s)
	if err != nil {
		t.Fatal(err)
	}
	c := &session.CompactionEntry{Summary: "bg", FirstKeptEntryID: "u2"}
	tests := []struct {
		name string
		n    int
		c    *session.CompactionEntry
		s    Settings
	}{
		{"planned at no entry", 0, c, s},
		{"planned past the path", len(path) + 1, c, s},
		{"nothing since", len(path), c, s},
		{"bad settings", 4, c, Settings{KeepRecentTokens: -1}},
		{"another cut", 2, &session.CompactionEntry{Summary: "bg", FirstKeptEntryID: "a1"}, Settings{Enabled: true, KeepRecentTokens: math.MaxInt32}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := *fresh
			f.Settings = tt.s
			if _, err := UpdatePreparation(path, tt.n, tt.c, &f); err == nil {
				t.Error("no error")
			}
		})
	}
}

// fuzzPath builds a path from data, two bytes a token: what the entry is,
// and a size or which earlier entry it points at.
func fuzzPath(t *testing.T, data []byte) *builder {
	b := newBuilder(t)
	var ids []string
	pick := func(x byte) string { return ids[int(x)%len(ids)] }
	for i := 0; i+1 < len(data) && len(ids) < 60; i += 2 {
		kind, arg := data[i]%12, data[i+1]
		id := fmt.Sprint(len(ids) + 1)
		size := int(arg)*8 + 1
		var tok string
		switch {
		case kind == 0 || len(ids) == 0:
			tok = fmt.Sprintf("u%s:%d", id, size)
		case kind == 1:
			tok = fmt.Sprintf("a%s:%d@%d/%d", id, size, int(arg)*40, arg)
		case kind == 2:
			tok = fmt.Sprintf("a%s:%d!read=f%d.go", id, size, arg%5)
		case kind == 3 && len(b.pending) > 0:
			tok = fmt.Sprintf("r%s:%d", id, size)
		case kind == 4:
			tok = fmt.Sprintf("H%s(%s)", id, pick(arg))
		case kind == 5:
			tok = fmt.Sprintf("R%s:%d(%s)", id, size, pick(arg))
		case kind == 6:
			tok = fmt.Sprintf("S%s:%d", id, size)
		case kind == 7 && b.path[len(b.path)-1].Type != session.TypeCompaction:
			tok = fmt.Sprintf("C%s(keep %s)", id, pick(arg))
		case kind == 8:
			tok = fmt.Sprintf("b%s:%d", id, size)
		case kind == 9:
			tok = fmt.Sprintf("c%s:%d", id, size)
		case kind == 10:
			tok = fmt.Sprintf("s%s:%d", id, size)
		default:
			tok = fmt.Sprintf("m%s", id)
		}
		b.token(tok)
		ids = append(ids, b.path[len(b.path)-1].ID)
	}
	return b
}

// FuzzPendingCompaction holds the context after a pending compaction, and
// the update of a background summary, against the same made with the
// compaction written, on paths of every kind of entry.
func FuzzPendingCompaction(f *testing.F) {
	f.Add([]byte{0, 40, 1, 40, 0, 40, 2, 40, 3, 90, 1, 10, 4, 3, 0, 40, 1, 40, 7, 2, 0, 20}, byte(3), byte(5))
	f.Add([]byte{6, 30, 0, 50, 1, 50, 5, 1, 0, 50, 7, 2, 1, 50, 0, 50, 8, 20, 9, 20, 10, 20, 1, 50, 0, 50, 1, 50}, byte(7), byte(9))
	f.Add([]byte{0, 200, 2, 10, 3, 200, 2, 10, 3, 200, 1, 30, 4, 3, 4, 4, 0, 100, 1, 100}, byte(1), byte(6))
	f.Fuzz(func(t *testing.T, data []byte, keepAt, plannedAt byte) {
		b := fuzzPath(t, data)
		path := b.path
		if len(path) == 0 {
			return
		}
		keep := path[int(keepAt)%len(path)].ID
		c := &session.CompactionEntry{Summary: "pending " + keep, FirstKeptEntryID: keep, TokensBefore: 1,
			SystemMessage: &session.SystemMessage{Sections: []session.SystemSection{{Name: "prompt", Text: "be brief"}}}}
		after, err := ContextAfter(path, c)
		if err != nil {
			t.Fatal(err)
		}
		if want := oracleAfter(t, path, c); after != want {
			t.Fatalf("keep %s: ContextAfter = %d, written %d", keep, after, want)
		}
		n := 1 + int(plannedAt)%len(path)
		s := Settings{Enabled: true, KeepRecentTokens: 200 + int(keepAt)*4}
		planned, err := Prepare(path[:n], s)
		if err != nil {
			return
		}
		for _, e := range path[n:] {
			if e.Type == session.TypeCompaction {
				return // overtaken: the agent drops such a summary
			}
		}
		fresh, err := Prepare(path, s)
		if err != nil {
			return
		}
		bg := &session.CompactionEntry{Summary: "background", FirstKeptEntryID: planned.FirstKeptEntryID, TokensBefore: planned.TokensBefore,
			Details: Details{ReadFiles: []string{}, ModifiedFiles: []string{}}.Encode()}
		got, gotErr := UpdatePreparation(path, n, bg, fresh)
		want, wantErr := oracleUpdate(t, path, n, bg, fresh)
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("planned after %d: error %v, written %v", n, gotErr, wantErr)
		}
		if gotErr == nil {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			if string(g) != string(w) {
				t.Fatalf("planned after %d:\n got %s\nwant %s", n, g, w)
			}
		}
	})
}
