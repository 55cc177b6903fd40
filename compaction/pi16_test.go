package compaction

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/prime-agent/prime/session/sessiongen"
)

// edgeFile writes sessiongen's edge case name to a temporary file and loads
// it as the oracle comparison does.
func edgeFile(t *testing.T, name string) *oracleFile {
	t.Helper()
	for _, c := range sessiongen.EdgeCases() {
		if c.Name == name {
			path := filepath.Join(t.TempDir(), name+".jsonl")
			if err := os.WriteFile(path, c.Data, 0o600); err != nil {
				t.Fatal(err)
			}
			f := loadOracleFile(t, name, path)
			f.edge = true
			return f
		}
	}
	t.Fatalf("no edge case %s", name)
	return nil
}

// TestPi16Recorded compares Prime's preparations and branch walks on the
// edge cases with pi 1.6's transcript features (system messages, patches,
// context edits, compactions carrying the system state) with pi 1.6's
// answers, recorded with internal/pioracle/harness (prepare FILE --leaf #N
// --keep-recent-tokens K; branch FILE --to #T --context-window W) so that
// the comparison runs without node. Positions are entries in file order.
// A preparation marked fix6 is one where Prime's fix of §10.1 #6 applies:
// the same first kept entry, but the turn pi calls a split turn's prefix
// is history. Branch walks are compared under pi's rules (see primeBranch).
func TestPi16Recorded(t *testing.T) {
	type prepared struct {
		file            string
		leaf, keep      int
		firstKept       int // -1: nothing to compact
		split           bool
		history, prefix int
		tokensBefore    int
		read, modified  int
		fix6            bool
	}
	for _, w := range []prepared{
		{"pi16-compaction-system", 16, 1, 16, false, 4, 0, 364, 1, 1, false},
		{"pi16-compaction-system", 16, 40, 13, false, 2, 0, 364, 1, 1, false},
		{"pi16-compaction-system", 16, 400, -1, false, 0, 0, 0, 0, 0, false},
		{"pi16-edits", 22, 1, 20, true, 3, 2, 250, 1, 0, true},
		{"pi16-edits", 22, 40, 20, true, 3, 2, 250, 1, 0, true},
		{"pi16-edits", 22, 400, -1, false, 0, 0, 0, 0, 0, false},
		{"pi16-hidden-compaction", 8, 1, 8, true, 2, 1, 200, 0, 0, false},
		{"pi16-hidden-compaction", 8, 40, 6, true, 0, 2, 200, 0, 0, true},
		{"pi16-hidden-compaction", 8, 400, -1, false, 0, 0, 0, 0, 0, false},
		{"pi16-retries", 19, 1, 18, true, 6, 1, 911, 0, 1, false},
		{"pi16-retries", 19, 40, 18, true, 6, 1, 911, 0, 1, false},
		{"pi16-retries", 19, 400, 8, true, 0, 3, 911, 1, 0, false},
		{"pi16-system-edits", 15, 1, 13, true, 4, 3, 3800, 0, 1, false},
		{"pi16-system-edits", 15, 40, 8, false, 4, 0, 3800, 0, 0, false},
		{"pi16-system-edits", 15, 400, -1, false, 0, 0, 0, 0, 0, false},
		{"pi16-system-shapes", 5, 1, 5, false, 2, 0, 335, 0, 0, false},
		{"pi16-system-shapes", 5, 40, -1, false, 0, 0, 0, 0, 0, false},
		{"pi16-system-untimed", 2, 1, 2, true, 0, 1, 300, 0, 0, false},
		{"pi16-system-untimed", 2, 40, -1, false, 0, 0, 0, 0, 0, false},
	} {
		t.Run(fmt.Sprintf("%s/#%d/keep-%d", w.file, w.leaf, w.keep), func(t *testing.T) {
			f := edgeFile(t, w.file)
			got := primePrepare(t, f, f.s.Path(f.s.Entries()[w.leaf].ID), w.keep)
			want := w
			if w.fix6 {
				want.split, want.history, want.prefix = false, w.history+w.prefix, 0
			}
			have := prepared{file: w.file, leaf: w.leaf, keep: w.keep, firstKept: -1, fix6: w.fix6}
			if got.Compactable {
				have.firstKept, have.split, have.history, have.prefix = got.FirstKept.Index, got.IsSplitTurn, got.MessagesToSummarize.Count, got.TurnPrefixMessages.Count
				have.tokensBefore, have.read, have.modified = got.TokensBefore, len(got.ReadFiles), len(got.ModifiedFiles)
			}
			if have != want {
				t.Errorf("Prime  %+v\nwant   %+v (pi 1.6 %+v)", have, want, w)
			}
		})
	}

	type branched struct {
		file                string
		to, window          int
		collected, messages int
		totalTokens         int
		read, modified      int
	}
	for _, w := range []branched{
		{"pi16-compaction-system", 0, 0, 16, 14, 710, 1, 1},
		{"pi16-compaction-system", 0, 16584, 16, 6, 99, 0, 0},
		{"pi16-compaction-system", 8, 0, 8, 8, 236, 0, 0},
		{"pi16-edits", 0, 0, 22, 11, 354, 2, 0},
		{"pi16-edits", 0, 16584, 22, 5, 198, 2, 0},
		{"pi16-hidden-compaction", 0, 0, 8, 7, 346, 0, 0},
		{"pi16-hidden-compaction", 0, 16584, 8, 4, 89, 0, 0},
		{"pi16-retries", 0, 0, 19, 6, 527, 0, 1},
		{"pi16-retries", 9, 0, 10, 3, 273, 0, 1},
		{"pi16-retries", 0, 16584, 19, 0, 0, 0, 0},
		{"pi16-system-edits", 0, 0, 15, 8, 267, 0, 1},
		{"pi16-system-edits", 0, 16584, 15, 7, 145, 0, 1},
		{"pi16-system-shapes", 2, 0, 3, 3, 36, 0, 0},
		{"pi16-system-untimed", 0, 0, 2, 2, 3, 0, 0},
	} {
		t.Run(fmt.Sprintf("%s/branch-to-#%d/window-%d", w.file, w.to, w.window), func(t *testing.T) {
			f := edgeFile(t, w.file)
			got := primeBranch(t, f, f.s.LeafPath(), w.to, w.window)
			have := branched{w.file, w.to, w.window, got.Collected.Count, got.Messages.Count, got.TotalTokens, len(got.ReadFiles), len(got.ModifiedFiles)}
			if have != w {
				t.Errorf("Prime  %+v\npi 1.6 %+v", have, w)
			}
		})
	}
}
