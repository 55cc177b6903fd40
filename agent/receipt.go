package agent

import (
	"errors"
	"fmt"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// Receipt is what a compaction did: the expanded [compaction] block of a
// user interface. Prime records it in the entry's details (members
// "receipt", "ledgerCheck"); for a compaction it did not record (pi's, a
// hook's, an older Prime's) only what the entry itself holds is known, and
// Recorded is false.
type Receipt struct {
	// EntryID is the compaction entry.
	EntryID string
	// Recorded reports that the details hold Prime's receipt: the embedded
	// fields (reason, model, tokens after, messages summarized, duration,
	// background) are known.
	Recorded bool
	compaction.Receipt
	// Instructions are the user's /compact instructions.
	Instructions string
	// FromHook reports that a hook supplied the summary.
	FromHook bool
	// Deterministic reports that code built the summary, and why.
	Deterministic       bool
	DeterministicReason string
	// Usage is what the summary requests cost (nil when no model was
	// asked).
	Usage *llm.Usage
	// Ledger is what the check against the must-survive ledger found and
	// repaired; nil when not recorded.
	Ledger *compaction.LedgerCheck
}

// ErrNotCompaction means an entry named as a compaction is something else.
var ErrNotCompaction = errors.New("not a compaction entry")

// ReceiptOf reads the receipt of a compaction entry.
func ReceiptOf(e *session.Entry) (*Receipt, error) {
	if e.Type != session.TypeCompaction {
		return nil, fmt.Errorf("entry %s: %w", e.ID, ErrNotCompaction)
	}
	p, err := e.Payload()
	if err != nil {
		return nil, err
	}
	c := p.(*session.CompactionEntry)
	r := &Receipt{EntryID: e.ID, Instructions: c.CustomInstructions, FromHook: c.FromHook, Usage: c.Usage}
	r.TokensBefore = c.TokensBefore
	if c.FromHook {
		return r, nil
	}
	d, ok := compaction.ParseDetails(c.Details)
	if !ok {
		return r, nil
	}
	r.Deterministic = d.Summarizer == compaction.SummarizerDeterministic
	r.DeterministicReason = d.DeterministicReason
	r.Ledger = d.LedgerCheck
	if d.Receipt != nil {
		r.Recorded = true
		r.Receipt = *d.Receipt
		r.TokensBefore = c.TokensBefore
	}
	return r, nil
}

// Receipt returns the receipt of the compaction entryID, or of the latest
// compaction on the current path when entryID is empty.
func (a *Agent) Receipt(entryID string) (*Receipt, error) {
	a.mu.Lock()
	e, err := a.compactionEntryLocked(entryID)
	a.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return ReceiptOf(e)
}

// ErrNoCompaction means the path holds no compaction to show or undo.
var ErrNoCompaction = errors.New("no compaction on the current path")

// compactionEntryLocked returns the compaction entry id names, or the
// latest on the path when id is empty.
func (a *Agent) compactionEntryLocked(id string) (*session.Entry, error) {
	if id == "" {
		path := a.s.LeafPath()
		for i := len(path) - 1; i >= 0; i-- {
			if path[i].Type == session.TypeCompaction {
				return path[i], nil
			}
		}
		return nil, ErrNoCompaction
	}
	e := a.s.Entry(id)
	if e == nil {
		return nil, fmt.Errorf("compaction %q: %w", id, session.ErrNotFound)
	}
	if e.Type != session.TypeCompaction {
		return nil, fmt.Errorf("entry %s is a %s: %w", id, e.Type, ErrNotCompaction)
	}
	return e, nil
}

// ReadableSummary returns a compaction's stored summary as a user should
// read it, without the scaffolding the model is given around a split turn
// (see compaction.Readable).
func ReadableSummary(summary string) string { return compaction.Readable(summary) }
