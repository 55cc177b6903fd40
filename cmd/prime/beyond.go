package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/internal/numfmt"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
)

// uncompactCommands are the commands that review and undo compactions.
func uncompactCommands() []*command {
	return []*command{{
		name:    "uncompact",
		usage:   "FILE [--compaction ID] [--json] [--cwd DIR]",
		summary: "undo a compaction (the latest on the path by default): the conversation goes back to the leaf before it; one entry is appended",
		run:     runUncompact,
	}}
}

// uncompactJSON is "prime uncompact --json".
type uncompactJSON struct {
	CompactionID string `json:"compactionId"`
	EntryID      string `json:"entryId"`
	LeafID       string `json:"leafId"`
	// Left counts the entries after the compaction left on its branch.
	Left     int  `json:"left"`
	Messages int  `json:"messages"`
	Tokens   int  `json:"tokens"`
	Migrated bool `json:"migrated,omitzero"`
}

func runUncompact(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("uncompact", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	id := fs.String("compaction", "", "the compaction entry `ID` to undo (default: the latest on the path)")
	var sf settingsFlags
	sf.register(fs)
	path, err := oneFile(fs, args)
	if err != nil {
		return err
	}
	st, err := loadSettings(ctx, a, sf)
	if err != nil {
		return err
	}
	ag, err := agent.Open(path, agent.Config{Settings: st, Getenv: a.getenv})
	if err != nil {
		return sessionFileErr(err)
	}
	defer ag.Close()
	printWarnings(a, ag.Session())
	res, err := ag.Uncompact(ctx, *id)
	switch {
	case errors.Is(err, agent.ErrNoCompaction), errors.Is(err, agent.ErrNotCompaction):
		return badInput(fmt.Errorf("%s: %w", path, err))
	case err != nil:
		return operationError(err)
	}
	if *asJSON {
		return writeJSON(a.stdout, uncompactJSON{
			CompactionID: res.Compaction.ID, EntryID: res.Entry.ID, LeafID: res.Entry.ParentID, Left: res.Left,
			Messages: len(res.Context.Messages), Tokens: res.Tokens, Migrated: res.Migrated,
		})
	}
	w := a.stdout
	fmt.Fprintf(w, "compaction %s undone: the conversation continues from %s, before it (entry %s appended)\n", res.Compaction.ID, res.Entry.ParentID, res.Entry.ID)
	fmt.Fprintf(w, "context: %d messages, %s tokens\n", len(res.Context.Messages), numfmt.Commas(res.Tokens))
	if res.Left > 0 {
		fmt.Fprintf(w, "%d entries made after the compaction stay on its branch (prime session tree %s shows them)\n", res.Left, path)
	}
	return nil
}

// runContextBreakdown is "prime session context FILE --breakdown": what
// fills the context, by kind, as a bar the width of the terminal.
func runContextBreakdown(ctx context.Context, a *app, s *session.Session, leaf string, window, width int, asJSON bool, st *settings.Settings) error {
	path := s.File()
	ag := agent.New(s, agent.Config{Settings: st, Getenv: a.getenv})
	defer ag.Close()
	b, err := ag.ContextBreakdown(ctx, agent.BreakdownRequest{LeafID: leaf, ContextWindow: window})
	if err != nil {
		return badInput(fmt.Errorf("%s: %w", path, err))
	}
	if asJSON {
		return writeJSON(a.stdout, b)
	}
	printWarnings(a, ag.Session())
	if width <= 0 {
		width = 80
		if n, err := strconv.Atoi(a.getenv("COLUMNS")); err == nil && n > 0 {
			width = n
		}
	}
	printBreakdown(a.stdout, b, width)
	return nil
}

// printBreakdown writes a breakdown for people.
func printBreakdown(w io.Writer, b *agent.ContextBreakdown, width int) {
	pct := 0.0
	if b.Window > 0 {
		pct = float64(b.Total) / float64(b.Window) * 100
	}
	fmt.Fprintf(w, "context at %s: %s tokens of a %s-token window (%.1f%%; %s)\n", orNone(b.LeafID), numfmt.Commas(b.Total), numfmt.Commas(b.Window), pct, windowSource(b.WindowSource))
	fmt.Fprintln(w, b.Bar(width))
	fmt.Fprintln(w, b.Legend())
	for _, p := range b.Parts {
		if p.Tokens > 0 {
			fmt.Fprintf(w, "  %-17s %9s\n", compaction.KindName(p.Kind), numfmt.Commas(p.Tokens))
		}
	}
	fmt.Fprintf(w, "next request: ~%s tokens (the last usage and what followed it)\n", numfmt.Commas(b.Estimate))
	fmt.Fprintf(w, "automatic compaction above %s tokens (|)", numfmt.Commas(b.Threshold))
	if b.BackgroundMark > 0 {
		fmt.Fprintf(w, ", background summary above %s (:)", numfmt.Commas(b.BackgroundMark))
	}
	fmt.Fprintln(w)
	if c := b.Compaction; c != nil {
		split := ""
		if c.IsSplitTurn {
			split = ", splitting a turn"
		}
		fmt.Fprintf(w, "a compaction now: summarizes %d messages (%s tokens), keeps %d from %s (%s tokens)%s\n",
			c.SummarizeMessages, numfmt.Commas(c.SummarizeTokens), c.KeepMessages, c.FirstKeptEntryID, numfmt.Commas(c.KeepTokens), split)
	} else {
		fmt.Fprintf(w, "a compaction now: nothing to compact (%s)\n", b.NotCompactable)
	}
}

// printLedgerCheck says what the check against the must-survive ledger
// found, when one was made.
func printLedgerCheck(w io.Writer, c *compaction.LedgerCheck) {
	if c == nil {
		return
	}
	fmt.Fprintf(w, "must-survive items: %d checked, %d kept by the summary, %d put back", c.Checked, c.Kept, len(c.Repaired))
	if len(c.Unfit) > 0 {
		fmt.Fprintf(w, ", %d without room (kept for the next compaction)", len(c.Unfit))
	}
	fmt.Fprintf(w, "; %s → %s tokens (at most %s)\n", numfmt.Commas(c.SummaryTokens), numfmt.Commas(c.RepairedTokens), numfmt.Commas(c.Bound))
}
