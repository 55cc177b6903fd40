package compaction

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/prime-agent/prime/internal/pifixtures"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// TestPiFilesRecorded compares Prime's preparation on pi's two real session
// files with pi 1.6's answers, recorded with internal/pioracle/harness (prepare FILE
// --leaf #N --keep-recent-tokens K) so that the comparison runs without
// node. Leaves are entry positions in file order; the first kept entry too.
// Both files are version 1: Prime and pi migrate them the same way.
func TestPiFilesRecorded(t *testing.T) {
	type want struct {
		leaf, keep, firstKept int
		split                 bool
		history, prefix       int
		tokensBefore          int
		previousSummary       int // length in UTF-16 units
		read, modified        int
	}
	for _, file := range []struct {
		name  string
		cases []want
	}{
		{pifixtures.LargeSession, []want{
			{1017, 1, 1017, true, 882, 31, 177657, 0, 6, 23},
			{1017, 2000, 1007, true, 882, 21, 177657, 0, 6, 23},
			{1017, 20000, 837, true, 730, 3, 177657, 0, 7, 20},
			{1017, 50000, 394, true, 361, 7, 177657, 0, 6, 15},
			{300, 1, 300, true, 271, 3, 86119, 0, 4, 13},
			{300, 2000, 292, true, 249, 17, 86119, 0, 4, 12},
			{300, 20000, 123, true, 67, 55, 86119, 0, 6, 7},
			{300, 50000, 19, true, 15, 3, 86119, 0, 5, 1},
			{600, 1, 600, true, 541, 5, 121676, 0, 6, 17},
			{600, 2000, 566, true, 501, 21, 121676, 0, 6, 17},
			{600, 20000, 330, true, 293, 11, 121676, 0, 5, 13},
			{600, 50000, 63, true, 31, 31, 121676, 0, 5, 3},
			{900, 1, 899, true, 792, 3, 156882, 0, 6, 21},
			{900, 2000, 895, true, 782, 9, 156882, 0, 6, 21},
			{900, 20000, 692, true, 587, 1, 156882, 0, 6, 18},
			{900, 50000, 284, true, 249, 9, 156882, 0, 5, 11},
		}},
		{pifixtures.BeforeCompaction, []want{
			{1001, 1, 1000, false, 444, 0, 180820, 3649, 2, 12},
			{1001, 2000, 1000, false, 444, 0, 180820, 3649, 2, 12},
			{1001, 20000, 946, true, 383, 7, 180820, 3649, 2, 12},
			{1001, 50000, 790, true, 233, 1, 180820, 3649, 1, 6},
			{300, 1, 299, true, 288, 7, 156119, 0, 4, 8},
			{300, 2000, 291, true, 190, 97, 156119, 0, 4, 7},
			{300, 20000, 171, true, 86, 81, 156119, 0, 3, 4},
			{300, 50000, 85, true, 51, 30, 156119, 0, 3, 4},
			{600, 1, 599, true, 257, 49, 174387, 4291, 3, 5},
			{600, 2000, 593, true, 257, 43, 174387, 4291, 3, 5},
			{600, 20000, 485, true, 165, 27, 174387, 4291, 3, 5},
			{600, 50000, 463, true, 165, 5, 174387, 4291, 3, 4},
			{900, 1, 899, true, 324, 19, 147734, 3649, 3, 11},
			{900, 2000, 881, true, 324, 1, 147734, 3649, 2, 11},
			{900, 20000, 790, true, 233, 1, 147734, 3649, 1, 6},
			{900, 50000, 733, true, 158, 19, 147734, 3649, 0, 2},
		}},
	} {
		s, err := session.Load(pifixtures.Path(t, file.name))
		if err != nil {
			t.Fatal(err)
		}
		index := map[string]int{}
		for i, e := range s.Entries() {
			index[e.ID] = i
		}
		for _, w := range file.cases {
			t.Run(fmt.Sprintf("%s/#%d/keep-%d", file.name, w.leaf, w.keep), func(t *testing.T) {
				p := mustPrepare(t, s.Path(s.Entries()[w.leaf].ID), keep(w.keep))
				got := want{
					leaf: w.leaf, keep: w.keep, firstKept: index[p.FirstKeptEntryID], split: p.IsSplitTurn,
					history: len(p.MessagesToSummarize), prefix: len(p.TurnPrefixMessages), tokensBefore: p.TokensBefore,
					previousSummary: llm.UTF16Len(p.PreviousSummary), read: len(p.ReadFiles()), modified: len(p.ModifiedFiles()),
				}
				if got != w {
					t.Errorf("Prime %+v\npi 1.6 %+v", got, w)
				}
			})
		}
	}
}

// TestPiLargeSessionDefault spells out the best-known case, pi's large
// session compacted with the default settings, file lists included.
func TestPiLargeSessionDefault(t *testing.T) {
	s, err := session.Load(pifixtures.Path(t, pifixtures.LargeSession))
	if err != nil {
		t.Fatal(err)
	}
	path := s.LeafPath()
	p := mustPrepare(t, path, DefaultSettings())
	if first := s.Entry(p.FirstKeptEntryID); path[837] != first {
		t.Errorf("first kept entry is not the 838th on the path")
	}
	if !p.IsSplitTurn || len(p.MessagesToSummarize) != 730 || len(p.TurnPrefixMessages) != 3 || p.TokensBefore != 177657 {
		t.Errorf("split %v, %d+%d messages, %d tokens before; pi: split, 730+3, 177657",
			p.IsSplitTurn, len(p.MessagesToSummarize), len(p.TurnPrefixMessages), p.TokensBefore)
	}
	wantRead := []string{"AGENTS.md", "packages/coding-agent/src/tui/custom-editor.ts", "packages/coding-agent/src/tui/model-selector.ts",
		"packages/coding-agent/src/tui/oauth-selector.ts", "packages/coding-agent/src/tui/theme-selector.ts",
		"packages/coding-agent/src/tui/tool-execution.ts", "packages/coding-agent/src/tui/user-message.ts"}
	if got := p.ReadFiles(); !slices.Equal(got, wantRead) {
		t.Errorf("read files %q", got)
	}
	if m := p.ModifiedFiles(); len(m) != 20 || m[0] != "packages/coding-agent/README.md" || m[19] != "~/.pi/agent/themes/nord.json" {
		t.Errorf("modified files %q", m)
	}
	// Preparing again right after the compaction: already compacted (pi:
	// nothing to prepare).
	res, err := Compact(t.Context(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Prepare(appended(t, path, "cNew", res.Entry()), DefaultSettings()); !errors.Is(err, ErrAlreadyCompacted) {
		t.Errorf("preparing again: %v", err)
	}
}
