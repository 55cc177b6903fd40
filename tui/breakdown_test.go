package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
)

// parts lists every kind in order, as a breakdown holds them, with the
// tokens given.
func parts(tokens map[compaction.ContextKind]int) []compaction.ContextPart {
	var out []compaction.ContextPart
	for _, k := range []compaction.ContextKind{compaction.KindSystem, compaction.KindTools, compaction.KindSummaries, compaction.KindUser,
		compaction.KindAssistant, compaction.KindThinking, compaction.KindToolCalls, compaction.KindToolResults, compaction.KindImages, compaction.KindOther} {
		out = append(out, compaction.ContextPart{Kind: k, Tokens: tokens[k]})
	}
	return out
}

// TestBreakdownText: /context's block at two widths, for a context with
// something to compact and for one without.
func TestBreakdownText(t *testing.T) {
	st := newStyles()
	b := &agent.ContextBreakdown{ContextBreakdown: compaction.ContextBreakdown{
		Parts: parts(map[compaction.ContextKind]int{compaction.KindSystem: 2_000, compaction.KindTools: 3_000,
			compaction.KindUser: 1_000, compaction.KindAssistant: 4_000, compaction.KindToolResults: 10_000}),
		Total: 20_000, Estimate: 20_400, Window: 40_000, Threshold: 30_000, BackgroundMark: 24_000,
		Compaction: &compaction.CutPreview{FirstKeptEntryID: "k1", SummarizeMessages: 12, SummarizeTokens: 14_000, KeepMessages: 4, KeepTokens: 3_000, IsSplitTurn: true, LedgerTokens: 420, LedgerBudget: 3000},
	}}
	want40 := `[context] 20,400 tokens of a 40,000-token window (51.0%)
PPPPTTTTTTUUAAAAAAAAAOOOOOOOOOOOOOOOOOOOOO........:............|....................
  P system prompt        2,000   10.0%
  T tool definitions     3,000   15.0%
  U user                 1,000    5.0%
  A assistant text       4,000   20.0%
  O tool results        10,000   50.0%
  the kinds at 4 characters a token: ~20,000
auto-compaction above 30,000 (|) · background summary above 24,000 (:)
A compaction now would summarize 12 messages (14,000 tokens) and keep 4 word for
word (3,000 tokens), cutting a turn in two; its summary would carry the user's rules
and words, 420 tokens (budget 3,000)
  kept from user: fix the lexer`
	if got := ansi.Strip(breakdownText(&view{width: 84, st: &st}, b, "user: fix the lexer")); got != want40 {
		t.Errorf("at 84 columns:\n%s\nwant\n%s", got, want40)
	}
	narrow := ansi.Strip(breakdownText(&view{width: 42, st: &st}, b, "user: fix the lexer in lexer.go before the parser"))
	lines := strings.Split(narrow, "\n")
	// The title takes two lines.
	if bar := lines[2]; len(bar) != 42 || !strings.HasPrefix(bar, "PPTTTUAAAAOOOOOOOOOO") || bar[31] != '|' || bar[25] != ':' {
		t.Errorf("the bar at 42 columns: %q", bar)
	}
	for _, l := range lines {
		if ansi.StringWidth(l) > 42 {
			t.Errorf("a line wider than 42 columns: %q", l)
		}
	}
	b.Compaction, b.NotCompactable = nil, "the last entry is a compaction; nothing was added since"
	b.Window, b.Threshold, b.BackgroundMark = 0, 0, 0
	got := ansi.Strip(breakdownText(&view{width: 60, st: &st}, b, ""))
	if !strings.HasPrefix(got, "[context] 20,400 tokens\n") || !strings.HasSuffix(got, "\n  the kinds at 4 characters a token: ~20,000\nNothing to compact now: the last entry is a compaction;\nnothing was added since") {
		t.Errorf("nothing to compact, no window:\n%s", got)
	}
}

// TestContextCommand: /context on a real session, at 80 columns and,
// after the terminal narrows, at 50: the bar is as wide as the terminal.
func TestContextCommand(t *testing.T) {
	h := newHarness(t, setup{settings: compactSettings, agentCWD: "/home/me/proj"})
	twoTurns(h)
	h.send("/context")
	// The block's last line is its history: a tall block is printed in
	// pieces, so only that line says all of it is on the screen.
	f := h.waitText("[context]", "A compaction now would summarize", "History ")
	frameGolden(t, "80", f)
	h.emu.Resize(50, termHeight)
	h.tm.Send(tea.WindowSizeMsg{Width: 50, Height: termHeight})
	// The transcript is printed again in pieces that fit the screen; the
	// frame counts once the last piece (the block's history line) is
	// there at the new width, and the footer under it.
	f = h.waitFor("the transcript at 50 columns", func(f string) bool {
		return strings.Contains(f, "\n"+strings.Repeat("─", 50)+"\n") && strings.Contains(f, "[context]") &&
			strings.Contains(f, "History ") && strings.Contains(f, "claude-test") && maxWidth(f) <= 50
	})
	frameGolden(t, "50", f)
	for _, l := range strings.Split(f, "\n") {
		if ansi.StringWidth(l) > 50 {
			t.Errorf("a line wider than 50 columns: %q", l)
		}
	}
}

// maxWidth is the width of a frame's widest line.
func maxWidth(frame string) int {
	w := 0
	for _, l := range strings.Split(frame, "\n") {
		w = max(w, ansi.StringWidth(l))
	}
	return w
}
