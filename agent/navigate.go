package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/registry"
	"github.com/prime-agent/prime/session"
)

// NavigateRequest asks to move to another point of the session tree.
type NavigateRequest struct {
	// TargetID is the entry navigated to.
	TargetID string
	// FromID is the entry navigated from; empty means the current leaf.
	FromID string
	// Summarize asks for a summary of the branch being left, appended where
	// the conversation continues.
	Summarize bool
	// Instructions are the user's focus for the summary, added to Prime's
	// task with high priority; with ReplaceInstructions they are the
	// whole task.
	Instructions        string
	ReplaceInstructions bool
	// Summarizer says which model writes the summary.
	Summarizer SummarizerChoice
}

// NavigationPlan is a navigation decided but not made: the branch being left,
// where the leaf goes, and what a summary would cover.
type NavigationPlan struct {
	Summarize           bool
	Instructions        string
	ReplaceInstructions bool
	// Branch holds the entry navigated from (OldLeafID, "" for an empty
	// session), the target, their common ancestor and the entries of the
	// branch being left.
	Branch compaction.Branch
	// NewLeafID is where the leaf moves ("" is before the first entry): the
	// parent of a user or custom message target, else the target.
	NewLeafID string
	// EditorText is the target's text when it is a user or custom message,
	// handed back for the user to edit and send again.
	EditorText string
	// AtTarget reports that the target is the entry navigated from:
	// nothing to do.
	AtTarget bool
	// Preparation is the part of the branch that fits the summarizer's
	// budget, and the files the whole branch touched.
	Preparation *compaction.BranchPreparation
	// Budget is the token budget for the summary's messages: ContextWindow
	// (the summarizer's) less ReserveTokens (branchSummary.reserveTokens).
	Budget, ReserveTokens int
	ContextWindow         int
	ContextWindowSource   string
	// ThinkingLevel is the session's at the entry navigated from.
	ThinkingLevel llm.ThinkingLevel
	// Summarizer is the model that would write the summary.
	Summarizer Summarizer

	reg *registry.Registry
}

// NavigationResult is a navigation made.
type NavigationResult struct {
	Plan *NavigationPlan
	// LeafID is the leaf after the navigation: the summary entry when one
	// was written, else Plan.NewLeafID.
	LeafID string
	// EditorText is Plan.EditorText.
	EditorText string
	// SummaryEntry is the branch_summary entry appended, a child of
	// Plan.NewLeafID whose fromId is the entry navigated from; nil when
	// none was written.
	SummaryEntry *session.Entry
	// Summary is the summarizer's result, nil without a summary.
	Summary *compaction.BranchResult
	// NotSummarized says why no summary was written although one was asked
	// for: compaction's *NotCompactableError wrapping
	// ErrNothingToSummarize (the branch holds no message).
	NotSummarized error
	// Migrated is as in [CompactionResult].
	Migrated bool
}

// Written reports whether the navigation wrote to the session file. Only a
// branch summary is written: like pi, Prime does not store a bare move of the
// leaf (the file's leaf is the last entry appended), so without a summary
// the move lasts as long as this agent's session.
func (r *NavigationResult) Written() bool { return r.SummaryEntry != nil }

// Navigate moves to another point of the session tree, summarizing the
// branch left when asked: [Agent.PlanNavigation], then [Agent.RunNavigation].
func (a *Agent) Navigate(ctx context.Context, req NavigateRequest) (*NavigationResult, error) {
	plan, err := a.PlanNavigation(ctx, req)
	if err != nil {
		return nil, err
	}
	return a.RunNavigation(ctx, plan)
}

// PlanNavigation decides a navigation without asking any model or writing
// anything: compaction.CollectBranch between the two points,
// compaction.NewLeaf for the target, and compaction.PrepareBranch with the
// summarizer's budget. An unknown id wraps session.ErrNotFound.
func (a *Agent) PlanNavigation(ctx context.Context, req NavigateRequest) (*NavigationPlan, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	target := a.s.Entry(req.TargetID)
	if req.TargetID == "" || target == nil {
		return nil, fmt.Errorf("target %q: %w", req.TargetID, session.ErrNotFound)
	}
	from := req.FromID
	if from == "" {
		from = a.s.LeafID()
	} else if a.s.Entry(from) == nil {
		return nil, fmt.Errorf("entry %s to navigate from: %w", from, session.ErrNotFound)
	}
	var oldPath []*session.Entry
	if from != "" {
		oldPath = a.s.Path(from)
	}
	plan := &NavigationPlan{
		Summarize: req.Summarize, Instructions: strings.TrimSpace(req.Instructions), ReplaceInstructions: req.ReplaceInstructions,
		Branch:   compaction.CollectBranch(oldPath, a.s.Path(target.ID)),
		AtTarget: from == target.ID,
	}
	var err error
	if plan.NewLeafID, plan.EditorText, err = compaction.NewLeaf(target); err != nil {
		return nil, fmt.Errorf("target %s: %w", target.ID, err)
	}
	sctx, err := session.BuildContext(oldPath)
	if err != nil {
		return nil, err
	}
	plan.ThinkingLevel = sctx.ThinkingLevel
	reg, regErr := a.models(OpBranchSummary)
	var win window
	plan.Summarizer, win = a.chooseSummarizer(reg, regErr, req.Summarizer, sctx.Model)
	plan.reg = reg
	plan.ContextWindow, plan.ContextWindowSource = win.tokens, win.source
	if w := plan.Summarizer.Model.ContextWindow; plan.Summarizer.Err == nil && !plan.Summarizer.Offline() && w > 0 {
		plan.ContextWindow = w
		if req.Summarizer.ContextWindow <= 0 {
			plan.ContextWindowSource = SourceModel
		}
	}
	plan.ReserveTokens = a.settings().BranchSummary().ReserveTokens
	plan.Budget = compaction.BranchBudget(llm.Model{ContextWindow: plan.ContextWindow}, plan.ReserveTokens)
	if plan.Preparation, err = compaction.PrepareBranch(plan.Branch.Entries, plan.Budget); err != nil {
		return nil, err
	}
	return plan, nil
}

// RunNavigation carries out a plan. With a summary asked for and a branch
// that has messages, the summary (the model's, or code's) is appended as a
// child of the new leaf (session.AppendAt; fromId is the entry navigated
// from) and becomes the leaf: the one write, which makes the move survive a
// reload. Otherwise nothing is written and the leaf moves in this agent's
// session only (see [NavigationResult.Written]).
//
// The steps, and where extension hooks run:
//
//  1. session_before_tree, always (may cancel, supply the summary, or
//     override the instructions and label);
//  2. the summary, when asked for (compaction.SummarizeBranch);
//  3. the append, or the move of the leaf in memory;
//  4. session_tree.
//
// A cancelled ctx before the append returns a *CancelledError; nothing is
// written and the leaf does not move.
func (a *Agent) RunNavigation(ctx context.Context, plan *NavigationPlan) (res *NavigationResult, err error) {
	res = &NavigationResult{Plan: plan, LeafID: plan.NewLeafID, EditorText: plan.EditorText}
	if plan.AtTarget {
		res.LeafID, res.EditorText = plan.Branch.OldLeafID, ""
		return res, nil
	}
	// Hook point: session_before_tree, with targetId, oldLeafId,
	// commonAncestorId, entriesToSummarize (plan.Branch.Entries),
	// userWantsSummary (plan.Summarize), the instructions and ctx as the
	// signal. A cancel returns &CancelledError{Op: OpBranchSummary, ...}
	// here; a summary it supplies (used only when plan.Summarize) becomes
	// `payload` below with FromHook set, skipping SummarizeBranch; its
	// instruction overrides replace plan.Instructions and
	// plan.ReplaceInstructions for step 2.

	var payload *session.BranchSummaryEntry
	switch {
	case !plan.Summarize:
	case len(plan.Preparation.Messages) == 0:
		// Known before any model is needed: a navigation offline or
		// without a key to a branch with no messages still works.
		_, res.NotSummarized = compaction.SummarizeBranch(ctx, plan.Preparation, compaction.Options{})
	default:
		p, model, err := provider(ctx, plan.reg, &plan.Summarizer)
		if err != nil {
			return nil, cancelled(ctx, OpBranchSummary, err)
		}
		out, err := a.summarizeBranch(ctx, plan, p, model)
		if err != nil {
			return nil, err
		}
		res.Summary, payload = out, out.Entry(plan.Branch.OldLeafID)
	}

	if payload != nil {
		entry, err := a.appendAt(ctx, plan.NewLeafID, payload)
		if err != nil {
			return nil, cancelled(ctx, OpBranchSummary, err)
		}
		res.SummaryEntry, res.LeafID, res.Migrated = entry, entry.ID, a.migrated
	} else {
		if err := ctx.Err(); err != nil {
			return nil, &CancelledError{Op: OpBranchSummary, Cause: err}
		}
		if plan.NewLeafID == "" {
			a.s.ResetLeaf()
		} else if err := a.s.SetLeaf(plan.NewLeafID); err != nil {
			return nil, err
		}
	}
	// Hook point: session_tree, with newLeafId (res.LeafID), oldLeafId,
	// the summary entry, and whether a hook supplied it.
	return res, nil
}

// summarizeBranch writes the summary of the branch being left, between an
// EventStart and an EventEnd.
func (a *Agent) summarizeBranch(ctx context.Context, plan *NavigationPlan, p llm.Provider, model llm.Model) (out *compaction.BranchResult, err error) {
	a.emit(Event{Kind: EventStart, Op: OpBranchSummary, Summarizer: plan.Summarizer.Ref})
	defer func() {
		err = cancelled(ctx, OpBranchSummary, err)
		a.emit(Event{Kind: EventEnd, Op: OpBranchSummary, Err: err, Aborted: isCancelled(err)})
	}()
	return compaction.SummarizeBranch(ctx, plan.Preparation, compaction.Options{
		Provider: p, Model: model, ThinkingLevel: plan.ThinkingLevel,
		CustomInstructions: plan.Instructions, ReplaceInstructions: plan.ReplaceInstructions,
		ReserveTokens: plan.ReserveTokens, Progress: a.progress(OpBranchSummary),
	})
}
