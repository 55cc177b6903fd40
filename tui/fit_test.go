package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
)

// TestItemsFit renders the transcript's blocks at narrow widths: no line is
// wider than the screen (the terminal would wrap it where it likes, and the
// rows counted would no longer be the rows drawn), and the key hint is never
// broken inside a word.
func TestItemsFit(t *testing.T) {
	st := newStyles()
	receipt := &agent.Receipt{EntryID: "c1", Recorded: true, Receipt: compaction.Receipt{Reason: "manual", Model: "fake/fake-model",
		TokensBefore: 3_204, TokensAfter: 984, Messages: 8, DurationMs: 5}}
	items := map[string]item{
		"compaction": &compactionItem{tokensBefore: 3_204, instructions: "focus on the notes and the parser", summary: "## Goal\nShip it.", receipt: receipt},
		"branch":     &branchItem{summary: "## Goal\nShip it."},
		"header":     &headerItem{version: "v0.0.0-20261202-311bfd9adaeb", contextFiles: []string{"/home/someone/projects/a/very/long/path/to/the/project/AGENTS.md"}, ready: true},
		"custom":     &customItem{customType: "a-long-extension-message-type", text: "what the extension says"},
		"notice":     &noticeItem{level: agent.NoticeWarning, text: "no model: set ANTHROPIC_API_KEY, or run /login, or pass --model PROVIDER/ID"},
	}
	for _, width := range []int{20, 30, 40, 80} {
		for _, expanded := range []bool{false, true} {
			v := &view{width: width, expanded: expanded, st: &st, md: &replies{}}
			for name, it := range items {
				out := it.render(v)
				for _, l := range strings.Split(out, "\n") {
					if w := ansi.StringWidth(l); w > width {
						t.Errorf("%s at %d columns (expanded %v): line %q is %d cells wide", name, width, expanded, ansi.Strip(l), w)
					}
				}
				plain := ansi.Strip(out)
				if strings.Contains(plain, "(ctrl+o") && !strings.Contains(strings.ReplaceAll(plain, "\n", " "), "(ctrl+o to expand)") {
					t.Errorf("%s at %d columns: the key hint is broken inside a word:\n%s", name, width, plain)
				}
			}
		}
	}
}

// TestKeyLines: the selectors' lines of keys are cut at a separator, and the
// header's list of keys wraps at its separators, never inside a key.
func TestKeyLines(t *testing.T) {
	for _, c := range []struct {
		width int
		want  string
	}{
		{80, "  ↑↓ move · enter select · escape cancel"},
		{30, "  ↑↓ move · enter select"},
		{20, "  ↑↓ move"},
		{6, "  ↑↓ …"},
	} {
		if got := keysLine(c.width, "↑↓ move", "enter select", "escape cancel"); got != c.want {
			t.Errorf("keysLine at %d = %q, want %q", c.width, got, c.want)
		}
	}
	got := wrapKeys(80, "escape interrupt", "ctrl+c clear, twice to exit", "ctrl+d exit", "/ commands", "! bash", "ctrl+o more")
	want := "escape interrupt · ctrl+c clear, twice to exit · ctrl+d exit · / commands\n! bash · ctrl+o more"
	if got != want {
		t.Errorf("wrapKeys at 80:\n%s\nwant\n%s", got, want)
	}
	for _, w := range []int{10, 20, 40} {
		for _, l := range strings.Split(wrapKeys(w, "escape interrupt", "ctrl+c clear, twice to exit", "! bash"), "\n") {
			if ansi.StringWidth(l) > w {
				t.Errorf("wrapKeys at %d: line %q is too wide", w, l)
			}
		}
	}
}
