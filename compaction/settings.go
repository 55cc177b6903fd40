package compaction

import (
	"errors"
	"fmt"
)

// Settings are the compaction settings a preparation is made with, under
// pi's names (the "compaction" object of settings.json).
type Settings struct {
	// Enabled turns automatic compaction on; manual compaction ignores it.
	Enabled bool `json:"enabled"`
	// ReserveTokens is the room kept free in the context window for the
	// model's answer. Automatic compaction triggers when the context grows
	// past the window minus this; the summary's own output limit is 80 % of
	// it.
	ReserveTokens int `json:"reserveTokens"`
	// KeepRecentTokens is roughly how much of the newest conversation stays
	// verbatim after the summary.
	KeepRecentTokens int `json:"keepRecentTokens"`
	// Manual marks a compaction the user asked for: when keepRecentTokens
	// would keep the whole conversation, everything before its latest
	// exchange is summarized instead, and only a conversation with nothing
	// before that exchange is left alone. Off, the decision is pi 1.6's
	// (automatic compaction, and an explicit keepRecentTokens).
	Manual bool `json:"-"`
}

// Defaults, as in pi.
const (
	DefaultReserveTokens              = 16384
	DefaultKeepRecentTokens           = 20000
	DefaultBranchSummaryReserveTokens = 16384
	// DefaultContextWindow stands in for a model whose context window is
	// unknown (pi uses the same figure for branch summaries).
	DefaultContextWindow = 128000
)

// DefaultSettings returns pi's defaults: enabled, 16384 reserved, 20000 kept.
func DefaultSettings() Settings {
	return Settings{Enabled: true, ReserveTokens: DefaultReserveTokens, KeepRecentTokens: DefaultKeepRecentTokens}
}

// Validate reports a setting that cannot be used: negative token counts.
func (s Settings) Validate() error {
	if s.ReserveTokens < 0 {
		return fmt.Errorf("reserveTokens is %d, want 0 or more", s.ReserveTokens)
	}
	if s.KeepRecentTokens < 0 {
		return fmt.Errorf("keepRecentTokens is %d, want 0 or more", s.KeepRecentTokens)
	}
	return nil
}

// Outcomes of a preparation that finds nothing to do. They are not failures:
// a caller reports them and writes nothing. Both reach the caller wrapped in
// a [*NotCompactableError] that says why in words a user can read.
var (
	// ErrNothingToCompact means every message would be kept verbatim (or
	// there are none), so a summary would replace nothing.
	ErrNothingToCompact = errors.New("nothing to compact")
	// ErrAlreadyCompacted means nothing was added to the conversation since
	// the latest compaction.
	ErrAlreadyCompacted = errors.New("already compacted")
	// ErrNothingToSummarize means the branch being left holds no message a
	// summary could describe, so no branch summary is written.
	ErrNothingToSummarize = errors.New("nothing to summarize")
)

// NotCompactableError says why there is no compaction (or branch summary) to
// make. Err is [ErrNothingToCompact], [ErrAlreadyCompacted] or
// [ErrNothingToSummarize], so callers branch with errors.Is.
type NotCompactableError struct {
	Err error
	// Reason explains the outcome in a sentence, e.g. "the 1,204 tokens of
	// conversation fit in the 20,000 kept verbatim".
	Reason string
}

// Error returns "nothing to compact: <reason>".
func (e *NotCompactableError) Error() string { return e.Err.Error() + ": " + e.Reason }

// Unwrap returns the outcome, one of the sentinel errors.
func (e *NotCompactableError) Unwrap() error { return e.Err }

func notCompactable(err error, format string, args ...any) error {
	return &NotCompactableError{Err: err, Reason: fmt.Sprintf(format, args...)}
}
