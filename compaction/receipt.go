package compaction

// Receipt is what a compaction did, recorded in its entry's details
// (member "receipt") by whoever made it (the agent): what the expanded
// [compaction] block of a user interface shows beside the ledger's check.
type Receipt struct {
	// Reason is why it ran: "manual", "threshold" or "overflow".
	Reason string `json:"reason"`
	// Model is the summarizer ("provider/id"); empty when code built the
	// summary.
	Model string `json:"model,omitzero"`
	// TokensBefore and TokensAfter are the context's size before and
	// after the compaction (by the estimate the threshold uses).
	TokensBefore int `json:"tokensBefore"`
	TokensAfter  int `json:"tokensAfter"`
	// Messages counts the messages summarized (the history and the first
	// part of a split turn).
	Messages int `json:"messages"`
	// DurationMs is how long the summary took to write, in milliseconds:
	// for a background compaction, the background request's time.
	DurationMs int64 `json:"durationMs"`
	// Background reports that the summary was written in the background
	// while the conversation went on; WaitMs is then how long the
	// conversation waited for the compaction at the threshold. Updated
	// reports that a short update request brought it up to date first.
	Background bool  `json:"background,omitzero"`
	WaitMs     int64 `json:"waitMs,omitzero"`
	Updated    bool  `json:"updated,omitzero"`
	// PlannedAt is the leaf a background summary was planned at.
	PlannedAt string `json:"plannedAt,omitzero"`
}
