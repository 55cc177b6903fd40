package compaction

import (
	"context"
	"errors"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// Branch is what navigating from one point of the session tree to another
// leaves behind (pi's collectEntriesForBranchSummary).
type Branch struct {
	// OldLeafID is the entry navigated from, TargetID the entry navigated
	// to; CommonAncestorID is the deepest entry on both paths ("" when the
	// two share nothing).
	OldLeafID, TargetID, CommonAncestorID string
	// Entries are the entries of the old path after the common ancestor,
	// oldest first: the branch being left. Empty when the target is on the
	// old path below the old leaf, or the old path is empty.
	Entries []*session.Entry
}

// CollectBranch compares the root→leaf paths of the old leaf and of the
// target and returns the branch being left. The common ancestor is the
// first entry of targetPath, walking up from the target, that is also on
// oldPath; when the target is an ancestor of the old leaf it is the target
// itself. Every entry type is collected, compactions included.
func CollectBranch(oldPath, targetPath []*session.Entry) Branch {
	var b Branch
	if len(targetPath) > 0 {
		b.TargetID = targetPath[len(targetPath)-1].ID
	}
	if len(oldPath) == 0 {
		return b
	}
	b.OldLeafID = oldPath[len(oldPath)-1].ID
	onOld := make(map[string]int, len(oldPath))
	for i, e := range oldPath {
		onOld[e.ID] = i
	}
	from := 0
	for i := len(targetPath) - 1; i >= 0; i-- {
		if at, ok := onOld[targetPath[i].ID]; ok {
			b.CommonAncestorID = targetPath[i].ID
			from = at + 1
			break
		}
	}
	b.Entries = oldPath[from:]
	return b
}

// NewLeaf returns where the leaf moves when the user navigates to target:
// to a user message's (or custom message's) parent, handing its text back
// for the user to edit and send again; to the target itself for anything
// else. leafID "" means the root position (before the first entry).
func NewLeaf(target *session.Entry) (leafID, editorText string, err error) {
	switch target.Type {
	case session.TypeMessage:
		m, err := target.Message()
		if err != nil {
			return "", "", err
		}
		if u, ok := m.(*llm.UserMessage); ok {
			return target.ParentID, llm.TextOf(u.Content), nil
		}
	case session.TypeCustomMessage:
		p, err := target.Payload()
		if err != nil {
			return "", "", err
		}
		return target.ParentID, llm.TextOf(p.(*session.CustomMessageEntry).Content), nil
	}
	return target.ID, "", nil
}

// BranchPreparation is the part of a branch that fits the summarizer, and
// the files the whole branch touched.
type BranchPreparation struct {
	// Messages are the branch's messages that fit the token budget, oldest
	// first; the budget is filled from the newest back.
	Messages []session.Message `json:"messages"`
	// FileOps are the files touched anywhere in the branch, budget or not.
	FileOps FileOps `json:"fileOps"`
	// TotalTokens is the estimate of Messages.
	TotalTokens int `json:"totalTokens"`
	// EntriesCollected is the number of entries in the branch.
	EntriesCollected int `json:"entriesCollected"`
	// Ledger is what the summary must keep (see [Ledger]), from every
	// message of the branch, budget or not, and the ledgers of the
	// summaries in it.
	Ledger *Ledger `json:"-"`
}

// BranchBudget is the token budget for a branch summary's messages: the
// model's context window (128,000 when unknown) less reserveTokens
// (branchSummary.reserveTokens; 0 means the default).
func BranchBudget(m llm.Model, reserveTokens int) int {
	window := m.ContextWindow
	if window <= 0 {
		window = DefaultContextWindow
	}
	if reserveTokens <= 0 {
		reserveTokens = DefaultBranchSummaryReserveTokens
	}
	return window - reserveTokens
}

// PrepareBranch selects the messages of a branch to summarize, newest first
// until tokenBudget is reached (pi 1.6's prepareBranchEntries; a budget of
// 0 or less takes everything). A message that would pass the budget stops
// the walk, except a summary (compaction or branch) while less than 90 % of
// the budget is used, which is taken anyway.
//
// The messages are pi's: a compaction's summary (not its system state),
// every branch summary (an empty one too, which counts 0 tokens), system
// messages (they count, though no transcript shows them), and the messages
// of message and custom_message entries as the branch's latest context
// edit of each leaves them (hidden or with replaced content). Unlike pi,
// tool results are taken too (the summarizer sees what the tools
// returned), and file operations come from every entry of the
// branch: the tool calls of every message taken or not, and the file lists
// of the compactions and branch summaries in it that Prime or pi wrote.
func PrepareBranch(entries []*session.Entry, tokenBudget int) (*BranchPreparation, error) {
	return prepareBranch(entries, tokenBudget, false)
}

// prepareBranch is PrepareBranch; with piRules it leaves out what Prime
// adds (tool results, the compactions' file lists, the file
// operations of messages the walk does not reach), which makes it pi 1.6's
// prepareBranchEntries exactly: the comparison with pi checks the walk so.
func prepareBranch(entries []*session.Entry, tokenBudget int, piRules bool) (*BranchPreparation, error) {
	edits, err := contextEdits(entries)
	if err != nil {
		return nil, err
	}
	var files fileTracker
	led := newLedgerScan()
	msgs := make([]session.Message, len(entries))
	for i, e := range entries {
		m, err := branchMessage(e, edits)
		if err != nil {
			return nil, err
		}
		if _, result := m.(*llm.ToolResultMessage); result && piRules {
			m = nil
		}
		msgs[i] = m
		switch e.Type {
		case session.TypeBranchSummary:
			addBranchSummaryFiles(&files, e, led)
		case session.TypeCompaction:
			if piRules {
				break
			}
			p, err := e.Payload()
			if err != nil {
				return nil, err
			}
			if c := p.(*session.CompactionEntry); !c.FromHook {
				if d, ok := ParseDetails(c.Details); ok {
					files.addDetails(d)
					led.absorb(d.Ledger)
				}
			}
		}
		if m != nil && !piRules {
			files.addMessage(m)
			led.message(m)
		}
	}
	prep := &BranchPreparation{EntriesCollected: len(entries)}
	first := len(entries)
	for i := len(entries) - 1; i >= 0; i-- {
		m := msgs[i]
		if m == nil {
			continue
		}
		if piRules {
			files.addMessage(m)
		}
		t := session.EstimateTokens(m)
		if tokenBudget > 0 && prep.TotalTokens+t > tokenBudget {
			summary := entries[i].Type == session.TypeCompaction || entries[i].Type == session.TypeBranchSummary
			if summary && float64(prep.TotalTokens) < 0.9*float64(tokenBudget) {
				first = i
				prep.TotalTokens += t
			}
			break
		}
		first = i
		prep.TotalTokens += t
	}
	prep.FileOps = files.ops()
	prep.Ledger = led.done(true) // the branch was left: no current request
	prep.Messages = make([]session.Message, 0, len(entries)-first)
	for _, m := range msgs[first:] {
		if m != nil {
			prep.Messages = append(prep.Messages, m)
		}
	}
	return prep, nil
}

// branchMessage returns the message a branch entry contributes (see
// [PrepareBranch]), or nil.
func branchMessage(e *session.Entry, edits map[string]*session.ContextEditEntry) (session.Message, error) {
	switch e.Type {
	case session.TypeBranchSummary:
		p, err := e.Payload()
		if err != nil {
			return nil, err
		}
		bs := p.(*session.BranchSummaryEntry)
		return &session.BranchSummaryMessage{Summary: bs.Summary, FromID: bs.FromID, Timestamp: e.Millis()}, nil
	case session.TypeMessage, session.TypeCustomMessage:
		if edit, ok := edits[e.ID]; ok && edit.Replacement == nil {
			return nil, nil // hidden: not even decoded
		}
	}
	m, err := session.ContextMessage(e)
	if err != nil || m == nil {
		return nil, err
	}
	if _, unknown := m.(*session.UnknownMessage); unknown {
		return nil, nil
	}
	if e.Type == session.TypeCompaction {
		return m, nil
	}
	return session.ApplyContextEdit(m, edits[e.ID]), nil
}

// shownMessages returns the messages a summarizer can be shown: all but
// system messages (no transcript shows them) and empty branch summaries,
// which pi counts in a branch but which say nothing.
func shownMessages(msgs []session.Message) []session.Message {
	out := make([]session.Message, 0, len(msgs))
	for _, m := range msgs {
		switch m := m.(type) {
		case *session.SystemMessage:
			continue
		case *session.BranchSummaryMessage:
			if m.Summary == "" {
				continue
			}
		}
		out = append(out, m)
	}
	return out
}

// BranchResult is a finished branch summary, ready to be stored (see
// [BranchResult.Entry]).
type BranchResult struct {
	// Summary opens with the two-line preamble and ends with the file lists.
	Summary string
	// Details holds the file lists ([Details]) as JSON.
	Details jsontext.Value
	// Usage sums every request made; nil when no model was called.
	Usage *llm.Usage
	// Deterministic, FallbackReason and ModelError are as in [Result].
	Deterministic  bool
	FallbackReason string
	ModelError     error
	// LedgerCheck is what the check against the ledger found and repaired.
	LedgerCheck *LedgerCheck
}

// Entry returns the branch summary entry payload. fromID is the entry the
// user navigated away from (the old leaf); pi stores the new position
// there instead. The entry is appended
// as a child of the new leaf.
func (r *BranchResult) Entry(fromID string) *session.BranchSummaryEntry {
	return &session.BranchSummaryEntry{FromID: fromID, Summary: r.Summary, Details: r.Details, Usage: r.Usage}
}

// SummarizeBranch writes the summary of a branch being left. The model (or,
// without one or when it fails, the deterministic summarizer) summarizes
// prep.Messages with the same format and the same never-stuck ladder as a
// compaction; the summary opens with a two-line preamble and ends with the
// branch's file lists. System messages and empty branch summaries, which
// count in the budget as in pi, are not shown to it: they say nothing. A
// branch with no other message gives a [*NotCompactableError] wrapping
// [ErrNothingToSummarize]: no entry is written for it (pi stores a
// placeholder text). A cancelled ctx gives an error wrapping
// the context's error and no result.
func SummarizeBranch(ctx context.Context, prep *BranchPreparation, opts Options) (*BranchResult, error) {
	var msgs []session.Message
	if prep != nil {
		msgs = shownMessages(prep.Messages)
	}
	if len(msgs) == 0 {
		return nil, notCompactable(ErrNothingToSummarize, "the branch being left has no messages")
	}
	if err := ctx.Err(); err != nil {
		return nil, &cancelledError{err}
	}
	reserve := opts.ReserveTokens
	if reserve <= 0 {
		reserve = DefaultBranchSummaryReserveTokens
	}
	led := prep.Ledger
	if led == nil {
		led = LedgerOf(msgs)
		led.Request = ""
	}
	s := newSummarizer(opts, reserve)
	var fb *fallback
	var text string
	if opts.Provider == nil {
		fb = s.offline()
		text = deterministicSummary(msgs, "", opts.CustomInstructions, fb.reason, s.deterministicLimit(), led)
	} else {
		var err error
		text, err = s.summarizeSpan(ctx, kindBranch, msgs, "", false)
		var f *spanFailure
		switch {
		case errors.As(err, &f):
			b := s.fallbackFrom(PhaseBranch, f)
			fb = &b
			text = deterministicSummary(f.remaining, f.running, opts.CustomInstructions, fb.reason, s.deterministicLimit(), led)
		case err != nil:
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, &cancelledError{err}
	}
	text, check := led.repair(strings.TrimSpace(text), prep.FileOps.modified(), s.bound(spanTokens(msgs, ""), fb != nil))
	fileLists, details := finish(prep.FileOps, fb, led, check)
	res := &BranchResult{
		Summary:     branchPreamble + text + fileLists,
		Details:     details,
		Usage:       s.usagePtr(),
		LedgerCheck: check,
	}
	if fb != nil {
		res.Deterministic, res.FallbackReason, res.ModelError = true, fb.reason, fb.err
	}
	return res, nil
}
