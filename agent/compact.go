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

// CompactRequest asks for a compaction of the conversation at one leaf.
type CompactRequest struct {
	// Reason is why the compaction runs; empty means ReasonManual.
	Reason Reason
	// LeafID is the entry whose conversation is compacted; empty means the
	// session's current leaf. The compaction entry becomes its child.
	LeafID string
	// Instructions are the user's focus for the summary (/compact TEXT),
	// passed with high priority and stored on the entry.
	Instructions string
	// Summarizer says which model writes the summary.
	Summarizer SummarizerChoice
}

// CompactionPlan is a compaction decided but not made: everything a dry run
// reports, and what [Agent.RunCompaction] carries out.
type CompactionPlan struct {
	Reason       Reason
	LeafID       string
	Instructions string
	// Preparation is the cut, the spans to summarize, the previous summary,
	// the file lists and tokensBefore.
	Preparation *compaction.Preparation
	// Path is the root→leaf entries the preparation was made from (the
	// branchEntries of session_before_compact).
	Path []*session.Entry
	// ThinkingLevel and SessionModel are the session's at the leaf.
	ThinkingLevel llm.ThinkingLevel
	SessionModel  *session.ModelRef
	// Summarizer is the model that will write the summary.
	Summarizer Summarizer
	// ContextWindow is the window of the conversation's model, and
	// ContextWindowSource where the figure came from (SourceRequest,
	// SourceSession, SourceModel: the summarizer's, or SourceDefault).
	ContextWindow       int
	ContextWindowSource string
	// Threshold is the context size above which automatic compaction
	// starts: ContextWindow less reserveTokens.
	Threshold int

	reg *registry.Registry
}

// CompactionResult is a compaction made and written.
type CompactionResult struct {
	Plan *CompactionPlan
	// Entry is the compaction entry appended, a child of Plan.LeafID.
	Entry *session.Entry
	// Compaction is the summarizer's result: the summary, its details and
	// usage, and whether code built it and why.
	Compaction *compaction.Result
	// TokensBefore is the context size the compaction replaced;
	// TokensAfter the size of the context rebuilt after it (by chars/4:
	// every usage on the path measured the context before).
	TokensBefore, TokensAfter int
	// Context is what the model sees at the new leaf: the summary first.
	Context session.Context
	// Migrated reports that the file was in an older format version and
	// was rewritten as version 3 (the original kept as FILE.bak) to append
	// the entry.
	Migrated bool
}

// Compact compacts the conversation at a leaf: [Agent.PlanCompaction], then
// [Agent.RunCompaction]. Nothing is written unless it succeeds.
func (a *Agent) Compact(ctx context.Context, req CompactRequest) (*CompactionResult, error) {
	plan, err := a.PlanCompaction(ctx, req)
	if err != nil {
		return nil, err
	}
	return a.RunCompaction(ctx, plan)
}

// PlanCompaction decides a compaction without asking any model or writing
// anything: it resolves the settings (per-model overrides for the session's
// model, falling back to the summarizer's) and the summarizer, and runs
// compaction.Prepare on the path to the leaf. When there is nothing to do
// the error is compaction's *NotCompactableError. A summarizer that cannot
// be used is not an error here: it is recorded in Summarizer.Err, for
// RunCompaction to fail with and a dry run to report.
func (a *Agent) PlanCompaction(ctx context.Context, req CompactRequest) (*CompactionPlan, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	reason := req.Reason
	if reason == "" {
		reason = ReasonManual
	}
	leaf := req.LeafID
	if leaf == "" {
		leaf = a.s.LeafID()
		if leaf == "" {
			return nil, &compaction.NotCompactableError{Err: compaction.ErrNothingToCompact, Reason: "the session has no entries"}
		}
	} else if a.s.Entry(leaf) == nil {
		return nil, fmt.Errorf("leaf %s: %w", leaf, session.ErrNotFound)
	}
	path := a.s.Path(leaf)
	sctx, err := session.BuildContext(path)
	if err != nil {
		return nil, err
	}
	reg, regErr := a.models(OpCompaction)
	sum, win := a.chooseSummarizer(reg, regErr, req.Summarizer, sctx.Model)
	modelKey := sum.Ref
	if m := sctx.Model; m != nil && m.Provider != "" && m.ModelID != "" {
		modelKey = m.Provider + "/" + m.ModelID
	}
	cs := a.settings().Compaction(modelKey)
	settings := compaction.Settings{Enabled: cs.Enabled, ReserveTokens: cs.ReserveTokens, KeepRecentTokens: cs.KeepRecentTokens}
	prep, err := compaction.Prepare(path, settings)
	if err != nil {
		return nil, err
	}
	return &CompactionPlan{
		Reason: reason, LeafID: leaf, Instructions: strings.TrimSpace(req.Instructions),
		Preparation: prep, Path: path, ThinkingLevel: sctx.ThinkingLevel, SessionModel: sctx.Model,
		Summarizer: sum, ContextWindow: win.tokens, ContextWindowSource: win.source,
		Threshold: win.tokens - settings.ReserveTokens, reg: reg,
	}, nil
}

// RunCompaction makes the compaction a plan describes and appends it: one
// compaction entry, a child of the plan's leaf (session.AppendAt), with the
// summary, the first kept entry, tokensBefore, the file lists (and, when code
// built the summary, why) in details, the user's instructions and the
// summary requests' usage. Then the context is rebuilt from the new leaf.
//
// The steps, and where extension hooks run:
//
//  1. session_before_compact (may cancel, replace the two message arrays,
//     or supply the compaction itself);
//  2. the summary (compaction.Compact: the model, or code);
//  3. the append, the one write;
//  4. session_compact — or session_compact_failed when any step failed
//     or was cancelled.
//
// A cancelled ctx (Ctrl-C) at any point before the append returns a
// *CancelledError and writes nothing; so does any failure.
func (a *Agent) RunCompaction(ctx context.Context, plan *CompactionPlan) (res *CompactionResult, err error) {
	// No model or no key: fail before anything starts (as pi does).
	p, model, err := provider(ctx, plan.reg, &plan.Summarizer)
	if err != nil {
		return nil, cancelled(ctx, OpCompaction, err)
	}
	a.emit(Event{Kind: EventStart, Op: OpCompaction, Reason: plan.Reason, Summarizer: plan.Summarizer.Ref})
	defer func() {
		err = cancelled(ctx, OpCompaction, err)
		// Hook point: session_compact_failed, when err != nil and res ==
		// nil (nothing was written), with the plan's reason, err, aborted =
		// errors.Is(err, ErrCancelled) and willRetry = (reason ==
		// ReasonOverflow).
		a.emit(Event{Kind: EventEnd, Op: OpCompaction, Reason: plan.Reason, Err: err, Aborted: isCancelled(err)})
	}()

	prep := plan.Preparation
	// Hook point: session_before_compact, with the preparation (pi's field
	// names: prep's JSON form), plan.Path as branchEntries,
	// plan.Instructions, plan.Reason and ctx as the signal. A handler's
	// cancel returns &CancelledError{Op: OpCompaction, Cause: <why>} here.
	// A preparation result replaces prep with a copy whose
	// MessagesToSummarize and TurnPrefixMessages are the handler's (later
	// handlers see them). A valid custom compaction becomes `payload` below,
	// with FromHook set and no call to compaction.Compact.

	out, err := compaction.Compact(ctx, prep, compaction.Options{
		Provider: p, Model: model, ThinkingLevel: plan.ThinkingLevel,
		CustomInstructions: plan.Instructions, Progress: a.progress(OpCompaction),
	})
	if err != nil {
		return nil, err
	}
	payload := out.Entry()

	entry, err := a.appendAt(ctx, plan.LeafID, payload)
	if err != nil {
		return nil, err
	}
	res = &CompactionResult{Plan: plan, Entry: entry, Compaction: out, TokensBefore: payload.TokensBefore, Migrated: a.migrated}
	if res.Context, err = a.s.Context(entry.ID); err != nil {
		// Not expected: the path decoded when the plan was made.
		return res, fmt.Errorf("compaction %s written, but the context after it cannot be built: %w", entry.ID, err)
	}
	res.TokensAfter = estimateAll(res.Context.Messages)
	// Hook point: session_compact, with entry (fromHook as written) and
	// whether a hook supplied it.
	return res, nil
}
