package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/hook"
	"github.com/prime-agent/prime/internal/numfmt"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// branchDryRunJSON is "prime branch --dry-run --json".
type branchDryRunJSON struct {
	FromID string `json:"fromId"`
	// TargetID is the entry navigated to; CommonAncestorID is null when the
	// two points share no entry.
	TargetID            string   `json:"targetId"`
	CommonAncestorID    *string  `json:"commonAncestorId"`
	EntriesCollected    int      `json:"entriesCollected"`
	MessagesAfterBudget int      `json:"messagesAfterBudget"`
	TotalTokens         int      `json:"totalTokens"`
	ReadFiles           []string `json:"readFiles"`
	ModifiedFiles       []string `json:"modifiedFiles"`
}

// branchJSON is "prime branch --json" after a navigation.
type branchJSON struct {
	FromID   string `json:"fromId"`
	TargetID string `json:"targetId"`
	// LeafID is the leaf afterwards, null for the position before the
	// first entry.
	LeafID *string `json:"leafId"`
	// EditorText is the target's text when it is a user message, to edit
	// and send again; null otherwise.
	EditorText *string `json:"editorText"`
	// Written reports whether the file changed: only a branch summary and
	// a label are written (see the README).
	Written             bool           `json:"written"`
	SummaryEntryID      *string        `json:"summaryEntryId"`
	Summary             *string        `json:"summary"`
	Details             jsontext.Value `json:"details,omitzero"`
	Usage               *llm.Usage     `json:"usage"`
	Deterministic       bool           `json:"deterministic"`
	DeterministicReason string         `json:"deterministicReason,omitzero"`
	// Note says why nothing was written.
	Note string `json:"note,omitzero"`
	// FromHook reports that a session_before_tree hook wrote the summary
	// (Hook names it).
	FromHook bool   `json:"fromHook"`
	Hook     string `json:"hook,omitzero"`
	// Label and LabelEntryID are the label appended (the user's or a
	// hook's) and its entry; absent without one.
	Label        string  `json:"label,omitzero"`
	LabelEntryID *string `json:"labelEntryId,omitzero"`
	// HookReports lists the hooks skipped, failed, timed out or answered
	// invalidly during the run.
	HookReports []hook.Report `json:"hookReports"`
}

// branchHookEvents are the events "prime branch" dispatches.
var branchHookEvents = []string{hook.EventBeforeTree, hook.EventTree}

// notStored says why a navigation without a summary leaves the file as it
// is.
const notStored = "nothing written: the session file stores no move of the leaf by itself " +
	"(its leaf is the last entry appended, as in pi); pass --summarize to record the move with a summary of the branch left, " +
	"or --label to record it with a label"

func runBranch(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("branch", flag.ContinueOnError)
	var f summaryFlags
	f.register(fs)
	to := fs.String("to", "", "the entry `ID` to move to")
	from := fs.String("from", "", "the entry `ID` to move from (default: the file's leaf)")
	summarize := fs.Bool("summarize", false, "append a summary of the branch left where the conversation continues")
	label := fs.String("label", "", "bookmark where the conversation continues with `TEXT` (a label entry for the summary, else the target)")
	path, err := oneFile(fs, args)
	if err != nil {
		return err
	}
	if *to == "" {
		return usageErrorf("--to ID is required")
	}
	if f.instructions != "" && !*summarize {
		return usageErrorf("--instructions applies to the summary: add --summarize")
	}
	choice, err := f.choice(fs)
	if err != nil {
		return err
	}
	p := newProgress(a)
	defer p.close()
	ag, hooks, err := newAgent(ctx, a, "branch", path, &f, branchHookEvents, nil, p)
	if err != nil {
		return err
	}
	defer ag.Close()
	plan, err := ag.PlanNavigation(ctx, agent.NavigateRequest{
		TargetID: *to, FromID: *from, Summarize: *summarize, Instructions: f.instructions, Label: *label, Summarizer: choice,
	})
	if err != nil {
		return operationError(err)
	}
	if f.dryRun {
		return printBranchPlan(a, path, plan, hooks, f.asJSON)
	}
	res, err := ag.RunNavigation(ctx, plan)
	p.close()
	if err != nil {
		return operationError(err)
	}
	return printNavigation(a, path, res, p.hookReports(), f.asJSON)
}

func printBranchPlan(a *app, path string, plan *agent.NavigationPlan, hooks *hook.Runner, asJSON bool) error {
	b, prep := plan.Branch, plan.Preparation
	if asJSON {
		j := branchDryRunJSON{
			FromID: b.OldLeafID, TargetID: b.TargetID, EntriesCollected: prep.EntriesCollected,
			MessagesAfterBudget: len(prep.Messages), TotalTokens: prep.TotalTokens,
		}
		if b.CommonAncestorID != "" {
			j.CommonAncestorID = &b.CommonAncestorID
		}
		j.ReadFiles, j.ModifiedFiles = prep.FileOps.Lists()
		j.ReadFiles, j.ModifiedFiles = nonNil(j.ReadFiles), nonNil(j.ModifiedFiles)
		return writeJSON(a.stdout, j)
	}
	w := a.stdout
	fmt.Fprintf(w, "move in %s from %s to %s (dry run: nothing written)\n", path, b.OldLeafID, b.TargetID)
	if plan.AtTarget {
		fmt.Fprintln(w, "  already there: nothing to do")
		return nil
	}
	fmt.Fprintf(w, "  common ancestor:  %s\n", orNone(b.CommonAncestorID))
	fmt.Fprintf(w, "  new leaf:         %s\n", leafName(plan.NewLeafID))
	if plan.NewLeafID != b.TargetID {
		fmt.Fprintf(w, "  editor text:      %q\n", clip(plan.EditorText, 100))
	}
	fmt.Fprintf(w, "  branch left:      %d entries; %d messages (%s tokens) fit the budget of %s\n",
		prep.EntriesCollected, len(prep.Messages), numfmt.Commas(prep.TotalTokens), numfmt.Commas(plan.Budget))
	fmt.Fprintf(w, "  budget:           window %s (%s) less branchSummary.reserveTokens %s\n",
		numfmt.Commas(plan.ContextWindow), windowSource(plan.ContextWindowSource), numfmt.Commas(plan.ReserveTokens))
	readFiles, modifiedFiles := prep.FileOps.Lists()
	fmt.Fprintf(w, "  files:            %d read, %d modified\n", len(readFiles), len(modifiedFiles))
	switch {
	case plan.Summarize:
		fmt.Fprintf(w, "  summarizer:       %s\n", describeSummarizer(&plan.Summarizer))
	case plan.Label == "":
		fmt.Fprintf(w, "  summary:          not asked for (--summarize); without a label, a real run writes nothing\n")
	default:
		fmt.Fprintf(w, "  summary:          not asked for (--summarize)\n")
	}
	if plan.Label != "" {
		fmt.Fprintf(w, "  label:            %q\n", plan.Label)
	}
	fmt.Fprintf(w, "  hooks:            %s\n", describeHooks(hooks, branchHookEvents))
	return nil
}

func printNavigation(a *app, path string, res *agent.NavigationResult, reports []hook.Report, asJSON bool) error {
	plan := res.Plan
	b := plan.Branch
	hasEditor := !plan.AtTarget && plan.NewLeafID != b.TargetID
	note := ""
	switch {
	case plan.AtTarget:
		note = "already at " + b.TargetID + ": nothing to do"
	case res.NotSummarized != nil && res.Written():
		note = "no summary (" + res.NotSummarized.Error() + ")"
	case res.NotSummarized != nil:
		note = "no summary (" + res.NotSummarized.Error() + "); " + notStored
	case !res.Written():
		note = notStored
	}
	if asJSON {
		j := branchJSON{FromID: b.OldLeafID, TargetID: b.TargetID, Written: res.Written(), Note: note,
			FromHook: res.FromHook, Hook: res.Hook, HookReports: reports}
		if res.LabelEntry != nil {
			j.Label, j.LabelEntryID = res.Label, &res.LabelEntry.ID
		}
		if res.LeafID != "" {
			j.LeafID = &res.LeafID
		}
		if hasEditor {
			j.EditorText = &res.EditorText
		}
		if s := res.Summary; s != nil {
			j.SummaryEntryID, j.Summary = &res.SummaryEntry.ID, &s.Summary
			j.Details, j.Usage, j.Deterministic, j.DeterministicReason = s.Details, s.Usage, s.Deterministic, s.FallbackReason
		}
		return writeJSON(a.stdout, j)
	}
	w := a.stdout
	if s := res.Summary; s != nil {
		fmt.Fprintln(w, strings.TrimRight(s.Summary, "\n"))
		fmt.Fprintln(w)
		if res.Migrated {
			fmt.Fprintf(w, "%s was in an older format version: rewritten as version 3 to append (the original is %s.bak)\n", path, path)
		}
		fmt.Fprintf(w, "branch summary %s appended to %s after %s (summarizing the branch from %s)\n",
			res.SummaryEntry.ID, path, leafName(plan.NewLeafID), b.OldLeafID)
		printLabel(w, res)
		fmt.Fprintf(w, "leaf: %s\n", res.LeafID)
		printSummaryOrigin(w, &plan.Summarizer, res.Hook, s.Deterministic, s.FallbackReason, s.Usage)
	} else {
		printLabel(w, res)
		if !plan.AtTarget {
			fmt.Fprintf(w, "leaf: %s (was %s)\n", leafName(res.LeafID), b.OldLeafID)
		}
		if note != "" {
			fmt.Fprintln(w, note)
		}
	}
	if hasEditor {
		fmt.Fprintf(w, "text of %s, to edit and send again:\n%s\n", b.TargetID, res.EditorText)
	}
	return nil
}

// printLabel says which label entry a navigation appended, if any.
func printLabel(w io.Writer, res *agent.NavigationResult) {
	if e := res.LabelEntry; e != nil {
		p, err := e.Payload()
		if l, ok := p.(*session.LabelEntry); err == nil && ok {
			fmt.Fprintf(w, "label %q appended for %s (entry %s)\n", l.Label, l.TargetID, e.ID)
		}
	}
}

// leafName shows a leaf id, "" being the position before the first entry.
func leafName(id string) string {
	if id == "" {
		return "(before the first entry)"
	}
	return id
}
