package agent

import (
	"context"
	"fmt"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/session"
)

// Undoing a compaction. The session tree keeps every entry a compaction
// summarized, so undoing one is a move of the leaf: back to the entry the
// compaction was appended after, where the model sees the full history
// again. The compaction stays in the tree, a side branch, and can be
// navigated to.
//
// The move must last. A session file has no record of "the leaf moved": pi
// and Prime take its last entry as the leaf when they load it. So Uncompact appends an entry at the leaf before the compaction: a
// custom entry (customType CustomTypeUncompact, data {"compactionId"}),
// which the model never sees and pi ignores as extension state it does not
// know. It becomes the leaf; the conversation continues below it. Entries
// after the compaction on the old path (work done since) stay on the side
// branch with it; the result counts them, for the front end to say so.
//
// Pins are the user's, not a branch's: the pins in force before the undo
// stay in force after it. Pins made (or unpins) since the compaction would
// be left on the side branch, so the undo appends them again below its
// entry: a pin entry with the same text, id and time for each pin the old
// leaf had and
// the entry before the compaction has not, an unpin entry for each pin the
// entry before the compaction has and the old leaf had not.

// CustomTypeUncompact is the customType of the entry that records an
// undone compaction.
const CustomTypeUncompact = "prime.uncompact"

// UncompactResult is a compaction undone.
type UncompactResult struct {
	// Compaction is the compaction entry undone; it stays in the tree.
	Compaction *session.Entry
	// Entry is the custom entry appended at the leaf before the
	// compaction; the conversation continues below it (after the pin
	// entries that keep the pins, when some were needed).
	Entry *session.Entry
	// Left counts the entries after the compaction on the old path, left
	// on its side branch.
	Left int
	// Context is what the model sees now: the history before the
	// compaction, whole. Tokens is its size (the threshold's estimate) and
	// Window the model's context window (0 when unknown): a context
	// larger than the window less reserveTokens is compacted again by the
	// next automatic check.
	Context session.Context
	Tokens  int
	Window  int
	// Migrated is as in [CompactionResult].
	Migrated bool
}

// CompactionUndone reports a compaction undone: front ends redraw the
// conversation from the new leaf.
type CompactionUndone struct{ Result *UncompactResult }

// EventType names the event.
func (CompactionUndone) EventType() string { return "compaction_undone" }

// Uncompact undoes the compaction compactionID (empty: the latest on the
// current path): the conversation moves back to the leaf it was made at,
// durably (see above). A run in progress is aborted first, as for a manual
// compaction. An id that is not a compaction wraps ErrNotCompaction, an
// unknown one session.ErrNotFound; a path without compaction gives
// ErrNoCompaction.
func (a *Agent) Uncompact(ctx context.Context, compactionID string) (*UncompactResult, error) {
	ctx, release, err := a.beginManual(ctx, false)
	if err != nil {
		return nil, err
	}
	defer release()
	a.mu.Lock()
	c, err := a.compactionEntryLocked(compactionID)
	if err != nil {
		a.mu.Unlock()
		return nil, err
	}
	pinsBefore := compaction.PinsOf(a.s.LeafView())
	left := 0
	path := a.s.LeafPath()
	for i := len(path) - 1; i >= 0 && path[i] != c; i-- {
		left++
	}
	if left == len(path) {
		left = 0 // not on the current path: nothing of it is left behind
	}
	if c.ParentID == "" {
		a.mu.Unlock()
		return nil, fmt.Errorf("compaction %s has no entry before it to go back to", c.ID)
	}
	data, err := json.Marshal(struct {
		CompactionID string `json:"compactionId"`
	}{c.ID})
	if err != nil {
		a.mu.Unlock()
		return nil, err
	}
	e, err := a.appendAtLocked(ctx, c.ParentID, &session.CustomEntry{CustomType: CustomTypeUncompact, Data: data})
	if err != nil {
		a.mu.Unlock()
		return nil, cancelled(ctx, OpCompaction, err)
	}
	res := &UncompactResult{Compaction: c, Entry: e, Left: left, Migrated: a.migrated}
	appended := []*session.Entry{e}
	carried, carryErr := a.keepPinsLocked(pinsBefore)
	appended = append(appended, carried...)
	res.Context, err = a.s.Context("")
	if m := a.conv.model; m != nil {
		res.Window = m.ContextWindow
	}
	a.mu.Unlock()
	for _, e := range appended {
		a.emit(EntryAppended{Entry: e})
	}
	if carryErr != nil {
		a.notice(NoticeError, fmt.Sprintf("compaction %s undone, but the pins could not all be kept: %v (/pins shows those in force)", c.ID, carryErr))
	}
	if err != nil {
		return nil, fmt.Errorf("compaction %s undone, but the context before it cannot be built: %w", c.ID, err)
	}
	res.Tokens = res.Context.EstimateNext().Tokens
	a.emit(CompactionUndone{Result: res})
	if len(carried) > 0 {
		a.pinsChanged()
	}
	return res, nil
}

// keepPinsLocked makes the pins at the leaf those of want (compared by
// text): it appends a pin entry for each pin of want the leaf lacks and an
// unpin entry for each pin of the leaf want lacks, and returns the entries
// appended.
func (a *Agent) keepPinsLocked(want []compaction.Pin) ([]*session.Entry, error) {
	have := compaction.PinsOf(a.s.LeafView())
	texts := func(pins []compaction.Pin) map[string]bool {
		m := make(map[string]bool, len(pins))
		for _, p := range pins {
			m[p.Text] = true
		}
		return m
	}
	wanted, had := texts(want), texts(have)
	var out []*session.Entry
	for _, p := range have {
		if !wanted[p.Text] {
			e, err := a.appendLocked(compaction.UnpinEntry(p.ID))
			if err != nil {
				return out, err
			}
			out = append(out, e)
		}
	}
	for _, p := range want {
		if !had[p.Text] {
			e, err := a.appendLocked(compaction.CarriedPinEntry(p))
			if err != nil {
				return out, err
			}
			out = append(out, e)
		}
	}
	return out, nil
}
