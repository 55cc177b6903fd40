package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/hook"
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
	// Label, when not blank, bookmarks where the navigation lands (pi's
	// label option): a label entry is appended for the summary entry, or
	// for the target when there is no summary, and becomes the leaf.
	Label string
	// Summarizer says which model writes the summary.
	Summarizer SummarizerChoice
}

// NavigationPlan is a navigation decided but not made: the branch being left,
// where the leaf goes, and what a summary would cover.
type NavigationPlan struct {
	Summarize           bool
	Instructions        string
	ReplaceInstructions bool
	// Label is the request's, trimmed.
	Label string
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
	// Summary is the summarizer's result, nil without a summary. When a
	// hook supplied the summary (FromHook), it holds the hook's text and
	// details.
	Summary *compaction.BranchResult
	// FromHook reports that a session_before_tree hook supplied the
	// summary (stored with fromHook true); Hook names it.
	FromHook bool
	Hook     string
	// Label is the label after the hooks' overrides, and LabelEntry the
	// label entry appended for it (the summary entry's, else the
	// target's); nil without a label.
	Label      string
	LabelEntry *session.Entry
	// Instructions and ReplaceInstructions are what the summary was asked
	// with, after the hooks' overrides.
	Instructions        string
	ReplaceInstructions bool
	// NotSummarized says why no summary was written although one was asked
	// for: compaction's *NotCompactableError wrapping
	// ErrNothingToSummarize (the branch holds no message).
	NotSummarized error
	// Migrated is as in [CompactionResult].
	Migrated bool
}

// Written reports whether the navigation wrote to the session file: a
// branch summary, a label, or both. Like pi, Prime does not store a bare
// move of the leaf (the file's leaf is the last entry appended), so without
// either the move lasts as long as this agent's session.
func (r *NavigationResult) Written() bool { return r.SummaryEntry != nil || r.LabelEntry != nil }

// Navigate moves to another point of the session tree, summarizing the
// branch left when asked: [Agent.PlanNavigation], then [Agent.RunNavigation].
func (a *Agent) Navigate(ctx context.Context, req NavigateRequest) (*NavigationResult, error) {
	ctx, release, err := a.beginManual(ctx, req.Summarize)
	if err != nil {
		return nil, err
	}
	defer release()
	return a.navigateBegun(ctx, req)
}

// navigateBegun is Navigate once the agent is busy with it.
func (a *Agent) navigateBegun(ctx context.Context, req NavigateRequest) (*NavigationResult, error) {
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
	a.mu.Lock()
	target := a.s.Entry(req.TargetID)
	if req.TargetID == "" || target == nil {
		a.mu.Unlock()
		return nil, fmt.Errorf("target %q: %w", req.TargetID, session.ErrNotFound)
	}
	from := req.FromID
	if from == "" {
		from = a.s.LeafID()
	} else if a.s.Entry(from) == nil {
		a.mu.Unlock()
		return nil, fmt.Errorf("entry %s to navigate from: %w", from, session.ErrNotFound)
	}
	var oldPath []*session.Entry
	if from != "" {
		oldPath = a.s.Path(from)
	}
	targetPath := a.s.Path(target.ID)
	a.mu.Unlock()
	plan := &NavigationPlan{
		Summarize: req.Summarize, Instructions: strings.TrimSpace(req.Instructions), ReplaceInstructions: req.ReplaceInstructions,
		Label:    strings.TrimSpace(req.Label),
		Branch:   compaction.CollectBranch(oldPath, targetPath),
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
// that has messages, the summary (the model's, code's, or a hook's) is
// appended as a child of the new leaf (session.AppendAt; fromId is the entry
// navigated from) and becomes the leaf: the one write, which makes the move
// survive a reload. With a label, a label entry follows it (or, without a
// summary, is appended at the new leaf for the target), as pi's
// navigateTree does. Otherwise nothing is written and the leaf moves in
// this agent's session only (see [NavigationResult.Written]).
//
// The steps, with the extension hooks of [Config].Hooks:
//
//  1. when a model will write the summary, its provider (the API key); a
//     model that cannot be used fails here unless a session_before_tree
//     handler exists, which may supply the summary;
//  2. session_before_tree, on every navigation, summary asked for or not
//     (as in pi): a handler may cancel (a *CancelledError naming it; the
//     leaf stays, nothing is written), supply the summary (used only when
//     the user asked for one), or override the instructions and the label;
//  3. the summary, when asked for and no hook supplied one
//     (compaction.SummarizeBranch);
//  4. the appends (summary, label), or the move of the leaf in memory;
//  5. session_tree.
//
// A cancelled ctx before the first append returns a *CancelledError;
// nothing is written and the leaf does not move. Once the summary is
// written, its label is written too.
func (a *Agent) RunNavigation(ctx context.Context, plan *NavigationPlan) (res *NavigationResult, err error) {
	res = &NavigationResult{Plan: plan, LeafID: plan.NewLeafID, EditorText: plan.EditorText}
	if plan.AtTarget {
		res.LeafID, res.EditorText = plan.Branch.OldLeafID, ""
		return res, nil
	}
	op := OpNavigation
	if plan.Summarize {
		op = OpBranchSummary
	}
	hooks := a.hooks(plan.Branch.OldLeafID, hook.EventBeforeTree, hook.EventTree)
	var p llm.Provider
	var model llm.Model
	var modelErr error
	if plan.Summarize && len(plan.Preparation.Messages) > 0 {
		p, model, modelErr = provider(ctx, plan.reg, &plan.Summarizer)
		if modelErr != nil && !hooks.Handles(hook.EventBeforeTree) {
			return nil, cancelled(ctx, op, modelErr)
		}
	}

	a.hookStart(hooks, hook.EventBeforeTree)
	d, err := hooks.BeforeTree(ctx, &hook.BeforeTreeEvent{Preparation: hook.TreePreparation{
		TargetID: plan.Branch.TargetID, OldLeafID: plan.Branch.OldLeafID, CommonAncestorID: plan.Branch.CommonAncestorID,
		EntriesToSummarize: plan.Branch.Entries, UserWantsSummary: plan.Summarize,
		CustomInstructions: plan.Instructions, ReplaceInstructions: plan.ReplaceInstructions, Label: plan.Label,
	}, Transcript: branchTranscript(hooks, plan)})
	a.hookReports(d.Reports)
	if err != nil {
		return nil, &CancelledError{Op: op, Cause: err}
	}
	if d.Cancelled {
		return nil, hookCancelled(op, d.CancelledBy)
	}
	res.Instructions = strings.TrimSpace(d.Preparation.CustomInstructions)
	res.ReplaceInstructions = d.Preparation.ReplaceInstructions
	res.Label = strings.TrimSpace(d.Preparation.Label)

	var payload *session.BranchSummaryEntry
	switch {
	case d.Summary != nil:
		payload = d.Summary.Entry(plan.Branch.OldLeafID)
		res.Summary = &compaction.BranchResult{Summary: payload.Summary, Details: payload.Details}
		res.FromHook, res.Hook = true, d.SummaryBy
	case !plan.Summarize:
	case len(plan.Preparation.Messages) == 0:
		// Known before any model is needed: a navigation offline or
		// without a key to a branch with no messages still works.
		_, res.NotSummarized = compaction.SummarizeBranch(ctx, plan.Preparation, compaction.Options{})
	case modelErr != nil:
		return nil, cancelled(ctx, op, modelErr)
	default:
		out, err := a.summarizeBranch(ctx, plan, res, p, model)
		if err != nil {
			return nil, err
		}
		res.Summary, payload = out, out.Entry(plan.Branch.OldLeafID)
	}

	if err := a.land(ctx, plan, res, payload); err != nil {
		return nil, cancelled(ctx, op, err)
	}
	nctx, cancel := notifyContext(ctx)
	defer cancel()
	a.hookStart(hooks, hook.EventTree)
	a.hookReports(hooks.Tree(nctx, &hook.TreeEvent{
		NewLeafID: res.LeafID, OldLeafID: plan.Branch.OldLeafID, SummaryEntry: res.SummaryEntry,
		FromExtension: res.FromHook && res.SummaryEntry != nil,
	}))
	return res, nil
}

// land writes the navigation's entries and moves the leaf: the summary
// (payload, when not nil) as a child of the new leaf, then the label entry
// as a child of whatever is the leaf by then. Without a summary the leaf
// moves in memory first (a label entry then records the move). Nothing is
// written when ctx is done before the first append; once the summary is
// written, its label is written regardless.
func (a *Agent) land(ctx context.Context, plan *NavigationPlan, res *NavigationResult, payload *session.BranchSummaryEntry) error {
	labelTarget := plan.Branch.TargetID
	if payload != nil {
		entry, err := a.appendAt(ctx, plan.NewLeafID, payload)
		if err != nil {
			return err
		}
		res.SummaryEntry, res.LeafID, res.Migrated = entry, entry.ID, a.migrated
		labelTarget, ctx = entry.ID, context.WithoutCancel(ctx)
	} else if res.Label == "" {
		if err := ctx.Err(); err != nil {
			return err
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if plan.NewLeafID == "" {
			a.s.ResetLeaf()
			return nil
		}
		return a.s.SetLeaf(plan.NewLeafID)
	}
	if res.Label == "" {
		return nil
	}
	entry, err := a.appendAt(ctx, res.LeafID, &session.LabelEntry{TargetID: labelTarget, Label: res.Label})
	if err != nil {
		if res.SummaryEntry != nil {
			return fmt.Errorf("branch summary %s written, but not its label: %w", res.SummaryEntry.ID, err)
		}
		return err
	}
	res.LabelEntry, res.LeafID, res.Migrated = entry, entry.ID, a.migrated
	return nil
}

// summarizeBranch writes the summary of the branch being left, between a
// BranchSummaryStart and a BranchSummaryEnd.
func (a *Agent) summarizeBranch(ctx context.Context, plan *NavigationPlan, res *NavigationResult, p llm.Provider, model llm.Model) (out *compaction.BranchResult, err error) {
	a.emit(BranchSummaryStart{Summarizer: plan.Summarizer.Ref})
	defer func() {
		err = cancelled(ctx, OpBranchSummary, err)
		end := BranchSummaryEnd{Err: err, Aborted: isCancelled(err)}
		if end.Aborted {
			end.Err = nil
		}
		a.emit(end)
	}()
	return compaction.SummarizeBranch(ctx, plan.Preparation, compaction.Options{
		Provider: p, Model: model, ThinkingLevel: plan.ThinkingLevel,
		CustomInstructions: res.Instructions, ReplaceInstructions: res.ReplaceInstructions,
		ReserveTokens: plan.ReserveTokens, Progress: a.progress(OpBranchSummary),
	})
}
