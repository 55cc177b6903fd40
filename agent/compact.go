package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/hook"
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
	// ExactKeepRecent makes a manual compaction decide as automatic
	// compaction does (pi 1.6): when keepRecentTokens keeps the whole
	// conversation there is nothing to compact. Without it a manual
	// compaction then summarizes everything before the latest exchange
	// (prime compact sets it for an explicit --keep-recent-tokens).
	ExactKeepRecent bool
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
	// branchEntries of session_before_compact), read when something needs
	// them (a handler, the receipt, a background summary): nil in a plan
	// just made.
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
	// WillRetry says the reply that overflowed the context is sent again
	// once the compaction is written (an overflow recovery).
	WillRetry bool

	reg *registry.Registry
	// system is the system state in force at the leaf, which the
	// compaction entry carries (pi 1.6's appendCompaction).
	system *session.SystemMessage
	// announced is set when CompactionStart was emitted before the plan
	// was made (a manual compaction, as pi announces it).
	announced bool
	// background is set when a summary written in the background is used
	// (background.go): RunCompaction appends it instead of asking a model,
	// unless it asks for an update.
	background *backgroundUse
}

// CompactionResult is a compaction made and written.
type CompactionResult struct {
	Plan *CompactionPlan
	// Entry is the compaction entry appended, a child of Plan.LeafID.
	Entry *session.Entry
	// Compaction is the summarizer's result: the summary, its details and
	// usage, and whether code built it and why. When a hook supplied the
	// compaction, it holds the hook's fields (FromHook).
	Compaction *compaction.Result
	// FromHook reports that a session_before_compact hook supplied the
	// compaction (stored with fromHook true); Hook names it.
	FromHook bool
	Hook     string
	// TransformedBy names the hooks that replaced the messages to
	// summarize, in order.
	TransformedBy []string
	// TokensBefore is the context size the compaction replaced;
	// TokensAfter the size of the context rebuilt after it
	// (session.Context.EstimateNext: by chars/4, since every usage on the
	// path measured the context before).
	TokensBefore, TokensAfter int
	// Context is what the model sees at the new leaf: the system state and
	// the summary first.
	Context session.Context
	// Migrated reports that the file was in an older format version and
	// was rewritten as version 3 (the original kept as FILE.bak) to append
	// the entry.
	Migrated bool
	// Receipt is what the compaction did, as its details record it
	// (receipt.go).
	Receipt *Receipt
}

// Compact compacts the conversation at a leaf: [Agent.PlanCompaction], then
// [Agent.RunCompaction]. Nothing is written unless it succeeds. A reply being
// streamed is aborted first (pi's /compact), and the agent is busy until the
// compaction ends; [Agent.Abort] cancels it. CompactionStart comes before the
// plan is made, so a compaction that finds nothing to do ends with a
// CompactionEnd carrying the *compaction.NotCompactableError.
func (a *Agent) Compact(ctx context.Context, req CompactRequest) (*CompactionResult, error) {
	ctx, release, err := a.beginManual(ctx, true)
	if err != nil {
		return nil, err
	}
	defer release()
	return a.compactBegun(ctx, req)
}

// compactBegun is Compact once the agent is busy with it.
func (a *Agent) compactBegun(ctx context.Context, req CompactRequest) (*CompactionResult, error) {
	reason := req.Reason
	if reason == "" {
		reason = ReasonManual
	}
	a.emit(CompactionStart{Reason: reason})
	plan, err := a.PlanCompaction(ctx, req)
	if err != nil {
		a.emit(CompactionEnd{Reason: reason, Err: err})
		return nil, err
	}
	plan.announced = true
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
	a.mu.Lock()
	leaf := req.LeafID
	switch {
	case leaf == "":
		leaf = a.s.LeafID()
	case a.s.Entry(leaf) == nil:
		a.mu.Unlock()
		return nil, fmt.Errorf("leaf %s: %w", leaf, session.ErrNotFound)
	}
	if leaf == "" {
		a.mu.Unlock()
		return nil, &compaction.NotCompactableError{Err: compaction.ErrNothingToCompact, Reason: "the session has no entries"}
	}
	// The context, from the session's index: the path's entries are not
	// all made, only those the model sees and what sets its model.
	sctx, err := a.s.Context(leaf)
	var pins []compaction.Pin
	if view, ok := a.s.ViewOf(leaf); ok {
		pins = compaction.PinsOf(view)
	}
	a.mu.Unlock()
	if err != nil {
		return nil, err
	}
	reg, regErr := a.models(OpCompaction)
	sum, win := a.chooseSummarizer(reg, regErr, req.Summarizer, sctx.Model)
	modelKey := sum.Ref
	if m := sctx.Model; m != nil && m.Provider != "" && m.ModelID != "" {
		modelKey = m.Provider + "/" + m.ModelID
	}
	settings := a.compactionSettings(modelKey)
	settings.Manual = reason == ReasonManual && !req.ExactKeepRecent
	prep, err := compaction.PrepareContext(sctx, pins, settings)
	if err != nil {
		return nil, err
	}
	return &CompactionPlan{
		Reason: reason, LeafID: leaf, Instructions: strings.TrimSpace(req.Instructions),
		Preparation: prep, ThinkingLevel: sctx.ThinkingLevel, SessionModel: sctx.Model,
		Summarizer: sum, ContextWindow: win.tokens, ContextWindowSource: win.source,
		Threshold: compaction.Threshold(win.tokens, settings), reg: reg, system: sctx.System(),
	}, nil
}

// compactionSettings are the settings.json compaction settings for model
// ("provider/id"), per-model overrides applied.
func (a *Agent) compactionSettings(model string) compaction.Settings {
	cs := a.settings().Compaction(model)
	return compaction.Settings{Enabled: cs.Enabled, ReserveTokens: cs.ReserveTokens, KeepRecentTokens: cs.KeepRecentTokens}
}

// RunCompaction makes the compaction a plan describes and appends it: one
// compaction entry, a child of the plan's leaf (session.AppendAt), with the
// summary, the first kept entry, tokensBefore, the file lists (and, when code
// built the summary, why) in details, the user's instructions, the summary
// requests' usage, and the system state in force at the leaf (pi 1.6's
// systemMessage, also for a compaction a hook supplied). Then the context is
// rebuilt from the new leaf.
//
// The steps, with the extension hooks of [Config].Hooks:
//
//  1. the summarizer's provider (the API key); a model that cannot be used
//     fails here, before anything starts, unless a session_before_compact
//     handler exists: it may supply the compaction, so the failure waits
//     until one is needed;
//  2. session_before_compact: a handler may cancel (a *CancelledError
//     naming it), replace the two message arrays (the summarizer gets the
//     final ones), or supply the compaction (stored with fromHook true; no
//     model is asked);
//  3. the summary (compaction.Compact: the model, or code);
//  4. the append, the one write, and the rebuilt context;
//  5. session_compact with the entry appended — or, when any step failed
//     or was cancelled and nothing was written, session_compact_failed.
//
// A cancelled ctx (Ctrl-C) at any point before the append returns a
// *CancelledError and writes nothing; so does any failure.
func (a *Agent) RunCompaction(ctx context.Context, plan *CompactionPlan) (res *CompactionResult, err error) {
	started := time.Now()
	hooks := a.hooks(plan.LeafID, hook.EventBeforeCompact, hook.EventCompact, hook.EventCompactFailed)
	p, model, modelErr := provider(ctx, plan.reg, &plan.Summarizer)
	if modelErr != nil && !hooks.Handles(hook.EventBeforeCompact) {
		err = cancelled(ctx, OpCompaction, modelErr)
		a.compactFailed(ctx, hooks, plan, err, false)
		if plan.announced {
			a.emit(CompactionEnd{Reason: plan.Reason, Err: err})
		}
		return nil, err
	}
	if !plan.announced {
		a.emit(CompactionStart{Reason: plan.Reason, Summarizer: plan.Summarizer.Ref})
	}
	a.emit(plannedProgress(plan.Preparation))
	fromHook := false
	defer func() {
		err = cancelled(ctx, OpCompaction, err)
		if err != nil && res == nil {
			a.compactFailed(ctx, hooks, plan, err, fromHook)
		}
		end := CompactionEnd{Reason: plan.Reason, Result: res, Aborted: isCancelled(err), Err: err}
		if res != nil {
			end.WillRetry = plan.WillRetry
		}
		if end.Aborted {
			end.Err = nil
		}
		a.emit(end)
	}()

	if hooks.Handles(hook.EventBeforeCompact) {
		a.readPath(plan)
	}
	a.hookStart(hooks, hook.EventBeforeCompact)
	d, err := hooks.BeforeCompact(ctx, &hook.BeforeCompactEvent{
		Preparation: plan.Preparation, BranchEntries: plan.Path, CustomInstructions: plan.Instructions,
		Reason: hook.Reason(plan.Reason), WillRetry: plan.WillRetry,
		Transcript: compactTranscript(hooks, plan),
	})
	if d != nil {
		a.hookReports(d.Reports)
	}
	if err != nil {
		return nil, err
	}
	if d.Cancelled {
		fromHook = true
		return nil, hookCancelled(OpCompaction, d.CancelledBy)
	}

	out, payload, fromHook, err := a.compactionToAppend(ctx, plan, d, p, model, modelErr, started)
	if err != nil {
		return nil, err
	}
	entry, err := a.appendAt(ctx, plan.LeafID, payload)
	if err != nil {
		return nil, err
	}
	res = &CompactionResult{
		Plan: plan, Entry: entry, Compaction: out, TokensBefore: payload.TokensBefore, Migrated: a.migrated,
		FromHook: fromHook, Hook: d.CompactionBy, TransformedBy: d.TransformedBy,
	}
	res.Receipt, _ = ReceiptOf(entry) // the entry was just written: it decodes
	a.mu.Lock()
	res.Context, err = a.s.Context(entry.ID)
	a.mu.Unlock()
	if err != nil {
		// Not expected: the path decoded when the plan was made.
		err = fmt.Errorf("compaction %s written, but the context after it cannot be built: %w", entry.ID, err)
	}
	res.TokensAfter = res.Context.EstimateNext().Tokens
	nctx, cancel := notifyContext(ctx)
	defer cancel()
	a.hookStart(hooks, hook.EventCompact)
	a.hookReports(hooks.Compact(nctx, &hook.CompactEvent{
		CompactionEntry: entry, FromExtension: fromHook, Reason: hook.Reason(plan.Reason), WillRetry: plan.WillRetry,
	}))
	return res, err
}

// compactionToAppend is the compaction entry RunCompaction appends and the
// result it reports: the one a session_before_compact hook supplied
// (fromHook), or else the summary (the background one when it is ready,
// else the summarizer's, which fails with modelErr when the summarizer
// cannot be used); the entry carries the system state in force at the leaf
// and, for Prime's own, the receipt.
func (a *Agent) compactionToAppend(ctx context.Context, plan *CompactionPlan, d *hook.CompactDecision,
	p llm.Provider, model llm.Model, modelErr error, started time.Time,
) (out *compaction.Result, payload *session.CompactionEntry, fromHook bool, err error) {
	payload = d.Compaction
	if payload != nil {
		fromHook = true
		out = &compaction.Result{
			Summary: payload.Summary, FirstKeptEntryID: payload.FirstKeptEntryID, TokensBefore: payload.TokensBefore,
			Details: payload.Details, Usage: payload.Usage, CustomInstructions: payload.CustomInstructions,
		}
	} else {
		if out = plan.background.ready(); out == nil {
			if modelErr != nil {
				return nil, nil, false, modelErr
			}
			out, err = compaction.Compact(ctx, d.Preparation, compaction.Options{
				Provider: p, Model: model, ThinkingLevel: plan.ThinkingLevel,
				CustomInstructions: plan.Instructions, Progress: a.progress(OpCompaction),
			})
			if err != nil {
				return nil, nil, false, err
			}
		}
		payload = out.Entry()
	}
	if plan.system != nil {
		// Hook-supplied or not, the entry carries the system state; the
		// session stamps it with the entry's time.
		withSystem := *payload
		withSystem.SystemMessage = plan.system
		payload = &withSystem
	}
	if !fromHook {
		payload = a.withReceipt(plan, out, payload, started)
		withDetails := *out
		withDetails.Details = payload.Details // the result shows what was stored
		out = &withDetails
	}

	return out, payload, fromHook, nil
}

// readPath returns plan.Path, reading it from the session first when the
// plan was made without it (see [CompactionPlan]).
func (a *Agent) readPath(plan *CompactionPlan) []*session.Entry {
	a.mu.Lock()
	defer a.mu.Unlock()
	if plan.Path == nil {
		plan.Path = a.s.Path(plan.LeafID)
	}
	return plan.Path
}

// withReceipt returns payload with the compaction's receipt in its details
// (Prime's own details only: a hook's are the hook's): what the summary
// covered, by which model, how long it took since started, and the size of
// the context it leaves, computed on the path as it will be once payload is
// appended.
func (a *Agent) withReceipt(plan *CompactionPlan, out *compaction.Result, payload *session.CompactionEntry, started time.Time) *session.CompactionEntry {
	var bg *compaction.BackgroundUse
	if u := plan.background; u != nil {
		bg = &compaction.BackgroundUse{PlannedAt: u.plannedAt, Updated: u.updated, Took: u.duration, Waited: time.Since(u.waitStart), Messages: u.messages}
	}
	after, err := compaction.ContextAfter(a.readPath(plan), payload)
	if err != nil {
		after = 0 // unknown
	}
	r := compaction.ReceiptOf(string(plan.Reason), plan.Preparation, out, plan.Summarizer.Ref, time.Since(started), after, bg)
	details, ok := compaction.WithReceipt(payload.Details, r)
	if !ok {
		return payload
	}
	withReceipt := *payload
	withReceipt.Details = details
	return &withReceipt
}

// compactFailed dispatches session_compact_failed for a compaction that
// wrote nothing. fromHook reports that a hook cancelled it or supplied the
// compaction that could not be stored.
func (a *Agent) compactFailed(ctx context.Context, hooks *hook.Runner, plan *CompactionPlan, err error, fromHook bool) {
	if !hooks.Handles(hook.EventCompactFailed) {
		return
	}
	nctx, cancel := notifyContext(ctx)
	defer cancel()
	a.hookStart(hooks, hook.EventCompactFailed)
	a.hookReports(hooks.CompactFailed(nctx, &hook.CompactFailedEvent{
		Reason: hook.Reason(plan.Reason), ErrorMessage: err.Error(), Aborted: isCancelled(err),
		WillRetry: plan.WillRetry, FromExtension: fromHook,
	}))
}

// plannedProgress says how much a compaction summarizes.
func plannedProgress(prep *compaction.Preparation) *Progress {
	e := &Progress{Kind: ProgressPlanned, Op: OpCompaction}
	for _, msgs := range [][]session.Message{prep.MessagesToSummarize, prep.TurnPrefixMessages} {
		for _, m := range msgs {
			e.Tokens += session.EstimateTokens(m)
			e.Messages++
		}
	}
	return e
}
