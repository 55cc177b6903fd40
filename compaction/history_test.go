package compaction_test

import (
	"fmt"
	"testing"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/internal/pifixtures"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
)

// TestContextHistoryMatchesEstimateNext checks the one-pass series against
// its definition: at every reply and after every compaction of every leaf's
// path, the estimate of the context built from the path ending there.
func TestContextHistoryMatchesEstimateNext(t *testing.T) {
	files := map[string][]byte{}
	for i, o := range []sessiongen.Options{
		{Entries: 600, Seed: 1, ContextWindow: 24_000, KeepRecentTokens: 4000, ReserveTokens: 4000, BranchRate: 0.1, ImageRate: 0.05},
		{Entries: 600, Seed: 2, ContextWindow: 24_000, KeepRecentTokens: 4000, ReserveTokens: 4000, Pi16: true, BranchRate: 0.1},
		{Entries: 300, Seed: 3, NoCompactions: true},
	} {
		files[fmt.Sprintf("gen%d", i)] = sessiongen.Bytes(o)
	}
	for _, c := range sessiongen.EdgeCases() {
		files[c.Name] = c.Data
	}
	if _, ok := pifixtures.Dir(); ok {
		for name, data := range pifixtures.ReadAll(t) {
			files["pi/"+name] = data
		}
	}
	compactions := 0
	for name, data := range files {
		s, err := session.Parse(name, data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, leaf := range s.Leaves() {
			path := s.Path(leaf.ID)
			h, err := compaction.ContextHistory(path)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			compactions += len(h.Drops)
			want := func(i int) int {
				ctx, err := session.BuildContext(path[:i+1])
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return ctx.EstimateNext().Tokens
			}
			for _, p := range h.Points {
				if w := want(p.Index); p.Tokens != w {
					t.Fatalf("%s leaf %s: reply %s (path index %d): %d tokens, EstimateNext says %d", name, leaf.ID, p.EntryID, p.Index, p.Tokens, w)
				}
			}
			for _, d := range h.Drops {
				if w := want(d.Index); d.TokensAfter != w {
					t.Fatalf("%s leaf %s: compaction %s: %d tokens after, EstimateNext says %d", name, leaf.ID, d.EntryID, d.TokensAfter, w)
				}
			}
		}
	}
	if compactions == 0 {
		t.Fatal("no compaction met: the test checks nothing about them")
	}
}

func TestSparkline(t *testing.T) {
	h := &compaction.History{}
	for _, tokens := range []int{0, 10, 20, 40, 80, 100, 30, 60} {
		h.Points = append(h.Points, compaction.HistoryPoint{Tokens: tokens})
	}
	for _, c := range []struct {
		width, top int
		want       string
	}{
		{8, 100, "▁▁▂▄▇█▃▅"},
		{4, 100, "▁▄█▅"},
		{20, 0, "▁▁▂▄▇█▃▅"},
		{8, 200, "▁▁▁▂▄▅▂▃"},
		{0, 100, ""},
	} {
		if got := h.Sparkline(c.width, c.top); got != c.want {
			t.Errorf("Sparkline(%d, %d) = %q, want %q", c.width, c.top, got, c.want)
		}
	}
	if got := (&compaction.History{}).Sparkline(10, 100); got != "" {
		t.Errorf("no points: %q", got)
	}
}

// BenchmarkContextHistory measures the series of a 100,000-entry session's
// path (what /context's sparkline and the HTML export's chart cost).
func BenchmarkContextHistory(b *testing.B) {
	s, err := session.Parse("big.jsonl", sessiongen.Bytes(sessiongen.Options{Entries: 100_000, Seed: 1}))
	if err != nil {
		b.Fatal(err)
	}
	path := s.LeafPath()
	b.ResetTimer()
	for range b.N {
		if _, err := compaction.ContextHistory(path); err != nil {
			b.Fatal(err)
		}
	}
}
