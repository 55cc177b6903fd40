package compaction

import (
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// Threshold is the context size above which automatic compaction starts:
// the model's context window less reserveTokens.
func Threshold(contextWindow int, s Settings) int { return contextWindow - s.ReserveTokens }

// ShouldCompact reports whether a context of contextTokens in a window of
// contextWindow tokens calls for automatic compaction: it is enabled and the
// context has grown past the [Threshold] (strictly).
func ShouldCompact(contextTokens, contextWindow int, s Settings) bool {
	return s.Enabled && contextTokens > Threshold(contextWindow, s)
}

// ThresholdTokens is the size of the context c for the threshold check, as
// pi 1.6 measures it after reply, the last reply on the path: when
// projected (between the turns of a run, and whenever failed attempts are
// hidden), the projected estimate ([session.Context.EstimateNext]); after a
// failed or unmeasured reply, the classic estimate
// ([session.EstimateContextTokens]), unless its only usage was measured
// before the latest compaction (then ok is false: there is nothing to
// check); else the reply's own usage.
func ThresholdTokens(c session.Context, reply *llm.AssistantMessage, projected bool) (tokens int, ok bool) {
	if projected {
		return c.EstimateNext().Tokens, true
	}
	if reply.StopReason == llm.StopReasonError || reply.Usage.ContextTokens() == 0 {
		est := session.EstimateContextTokens(c.Messages)
		if est.LastUsageIndex < 0 {
			return 0, false
		}
		if first := c.Entries[0]; first.Type == session.TypeCompaction && c.Entries[est.LastUsageIndex].Line < first.Line {
			return 0, false
		}
		return est.Tokens, true
	}
	return reply.Usage.ContextTokens(), true
}

// BackgroundMark is the context size past which the summary of the next
// compaction may be written in the background, while the conversation goes
// on: percent (compaction.backgroundThreshold) of the [Threshold].
func BackgroundMark(contextWindow, percent int, s Settings) int {
	return Threshold(contextWindow, s) * percent / 100
}

// BackgroundUse says how a compaction used a summary written in the
// background, for its [Receipt].
type BackgroundUse struct {
	// PlannedAt is the leaf the summary was planned at.
	PlannedAt string
	// Updated reports that an update request brought it up to date.
	Updated bool
	// Took is how long the background request took; Waited how long the
	// conversation waited once the threshold was crossed.
	Took, Waited time.Duration
	// Messages counts the messages the background summary covered.
	Messages int
}

// ReceiptOf is what a compaction made from prep did, for its details:
// reason is why it ran, summarizer the model asked ("provider/id", left out
// when code built the summary), took how long its own summary request took,
// tokensAfter the size of the context it leaves (see [ContextAfter]; 0 when
// unknown), and bg how it used a background summary (nil: none). A summary
// written in the background took that request's time, plus the update's
// when one brought it up to date, which then also summarized the
// background summary's messages.
func ReceiptOf(reason string, prep *Preparation, out *Result, summarizer string, took time.Duration, tokensAfter int, bg *BackgroundUse) *Receipt {
	r := &Receipt{
		Reason:       reason,
		TokensBefore: out.TokensBefore,
		TokensAfter:  tokensAfter,
		Messages:     len(prep.MessagesToSummarize) + len(prep.TurnPrefixMessages),
		DurationMs:   took.Milliseconds(),
	}
	if !out.Deterministic {
		r.Model = summarizer
	}
	if bg != nil {
		r.Background, r.Updated, r.PlannedAt = true, bg.Updated, bg.PlannedAt
		r.DurationMs = bg.Took.Milliseconds()
		r.WaitMs = bg.Waited.Milliseconds()
		if bg.Updated {
			r.DurationMs += took.Milliseconds()
			r.Messages += bg.Messages
		}
	}
	return r
}

// WithReceipt returns details (a compaction's, as Prime writes them) with r
// recorded in them; ok is false, and details unchanged, when they are not
// Prime's (a hook's, or none).
func WithReceipt(details jsontext.Value, r *Receipt) (_ jsontext.Value, ok bool) {
	d, ok := ParseDetails(details)
	if !ok {
		return details, false
	}
	d.Receipt = r
	return d.Encode(), true
}
