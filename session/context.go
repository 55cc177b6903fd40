package session

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
)

// Context is what the model sees at one point of the tree.
type Context struct {
	// Messages is the conversation in order: the latest compaction's summary
	// first when there is one, then the kept and later messages.
	Messages []Message
	// Entries holds, for each message, the entry it came from (a compaction
	// entry for the summary).
	Entries []*Entry
	// ThinkingLevel is the last thinking level set on the path ("off" when
	// none was).
	ThinkingLevel llm.ThinkingLevel
	// Model is the model last selected or used on the path, or nil.
	Model *ModelRef

	// kept is the number of messages after the summary that the latest
	// compaction kept from before it (0 without a compaction).
	kept int
}

// ModelRef names a model by provider and id.
type ModelRef struct {
	Provider string `json:"provider"`
	ModelID  string `json:"modelId"`
}

// BuildContext computes what the model sees at the end of path, a root→leaf
// list of entries (pi's buildSessionContext, latest behaviour):
//
//   - the thinking level is the last thinking_level_change on the path, and
//     the model the last model_change or assistant message;
//   - without a compaction every entry contributes its context message (see
//     [ContextMessage]);
//   - with one, the latest compaction's summary comes first, then the entries
//     before it starting at its firstKeptEntryId (none when that id is not on
//     the path), then every entry after it. Older compactions inside the kept
//     range add nothing: the latest summary already folds them in.
//
// It fails only when a message entry on the path cannot be decoded; the
// error names the entry's line. Messages are decoded on every core when
// there are many, and shared with any other caller that decoded the same
// entries while they are in use (see [Entry.Message]): they must not be
// modified.
func BuildContext(path []*Entry) (Context, error) {
	ctx := Context{ThinkingLevel: llm.ThinkingOff}
	var err error
	if ctx.ThinkingLevel, ctx.Model, err = pathSettings(path); err != nil {
		return Context{}, err
	}
	latest := -1
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type == TypeCompaction {
			latest = i
			break
		}
	}

	// The entries that may contribute a message, in context order.
	from := make([]*Entry, 0, len(path)+1)
	visible := path
	keptEnd := 0 // from[1:keptEnd] are the entries kept from before the compaction
	if latest >= 0 {
		from = append(from, path[latest])
		visible = path[latest+1:]
		if kept := KeptStart(path, latest); kept >= 0 {
			for _, e := range path[kept:latest] {
				if e.Type != TypeCompaction && contributes(e) {
					from = append(from, e)
				}
			}
		}
		keptEnd = len(from)
	}
	for _, e := range visible {
		if contributes(e) {
			from = append(from, e)
		}
	}
	msgs, err := contextMessages(from)
	if err != nil {
		return Context{}, err
	}
	// Keep the entries that gave a message, in place.
	n := 0
	for i, m := range msgs {
		if m != nil {
			if i > 0 && i < keptEnd {
				ctx.kept++
			}
			msgs[n], from[n] = m, from[i]
			n++
		}
	}
	ctx.Messages, ctx.Entries = msgs[:n:n], from[:n:n]
	return ctx, nil
}

// EstimateNext estimates the context the model will be sent next, as pi 1.6
// sizes a compaction's tokensBefore. It is [EstimateContextTokens] of the
// messages, except that a usage reported by a message the latest compaction
// kept from before it is not trusted: that usage measured the context before
// the compaction, so right after a compaction every message is estimated by
// characters instead. (EstimateContextTokens, pi's own context estimate,
// keeps that stale usage until the next reply.)
func (c Context) EstimateNext() ContextEstimate {
	est := EstimateContextTokens(c.Messages)
	if c.kept > 0 && est.LastUsageIndex >= 1 && est.LastUsageIndex <= c.kept {
		est = ContextEstimate{LastUsageIndex: -1}
		for _, m := range c.Messages {
			est.TrailingTokens += EstimateTokens(m)
		}
		est.Tokens = est.TrailingTokens
	}
	return est
}

// contributes reports whether an entry's type can put a message in the
// context.
func contributes(e *Entry) bool {
	switch e.Type {
	case TypeMessage, TypeCustomMessage, TypeBranchSummary, TypeCompaction:
		return true
	}
	return false
}

// parallelDecodeBytes is the amount of message text from which
// contextMessages decodes on several goroutines.
const parallelDecodeBytes = 1 << 20

// contextMessages returns the context message of each entry (nil for none),
// decoding in batches (see decodeBatch), on every core when there is much
// to decode. It fails with the error of the first entry, in order, that
// cannot be decoded.
func contextMessages(entries []*Entry) ([]Message, error) {
	msgs := make([]Message, len(entries))
	size := 0
	for _, e := range entries {
		size += len(e.raw)
	}
	batches := (len(entries) + maxBatch - 1) / maxBatch
	// errs[b] is the error of the first entry of batch b that cannot be
	// decoded.
	errs := make([]error, batches)
	workers := min(runtime.GOMAXPROCS(0), max(1, size/parallelDecodeBytes), batches)
	var next atomic.Int64
	work := func() {
		var common sharedArena
		for {
			start := int(next.Add(maxBatch)) - maxBatch
			if start >= len(entries) {
				return
			}
			end := min(start+maxBatch, len(entries))
			errs[start/maxBatch] = decodeBatch(entries[start:end], msgs[start:end], &common)
		}
	}
	if workers <= 1 {
		work()
	} else {
		var wg sync.WaitGroup
		for range workers {
			wg.Go(work)
		}
		wg.Wait()
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return msgs, nil
}

// pathSettings finds the thinking level and model in force at the end of
// path: the last thinking_level_change, and the last model_change or
// assistant message (whichever comes later). Only the entries after the
// last of each are examined.
func pathSettings(path []*Entry) (llm.ThinkingLevel, *ModelRef, error) {
	level := llm.ThinkingOff
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type == TypeThinkingLevelChange {
			p, err := path[i].Payload()
			if err != nil {
				return "", nil, err
			}
			level = p.(*ThinkingLevelChangeEntry).ThinkingLevel
			break
		}
	}
	for i := len(path) - 1; i >= 0; i-- {
		switch path[i].Type {
		case TypeModelChange:
			p, err := path[i].Payload()
			if err != nil {
				return "", nil, err
			}
			mc := p.(*ModelChangeEntry)
			return level, &ModelRef{Provider: mc.Provider, ModelID: mc.ModelID}, nil
		case TypeMessage:
			m, err := path[i].Message()
			if err != nil {
				return "", nil, err
			}
			if a, ok := m.(*llm.AssistantMessage); ok {
				return level, &ModelRef{Provider: a.Provider, ModelID: a.Model}, nil
			}
		}
	}
	return level, nil, nil
}

// KeptStart returns the index in path of the first entry kept by the
// compaction at path[compaction] (its firstKeptEntryId), or -1 when that
// entry is not on the path before the compaction.
func KeptStart(path []*Entry, compaction int) int {
	p, err := path[compaction].Payload()
	if err != nil {
		return -1
	}
	c, ok := p.(*CompactionEntry)
	if !ok || c.FirstKeptEntryID == "" {
		return -1
	}
	for i := 0; i < compaction; i++ {
		if path[i].ID == c.FirstKeptEntryID {
			return i
		}
	}
	return -1
}

// ContextMessage returns the message an entry contributes to the model's
// context, or nil when it contributes none:
//
//   - message: the stored message;
//   - custom_message: a [CustomMessage] (displayed or not);
//   - branch_summary with a non-empty summary: a [BranchSummaryMessage];
//   - compaction: a [CompactionSummaryMessage];
//   - anything else: nil.
//
// Summary and custom messages take the entry's timestamp. As with
// [Entry.Message], the message is shared while in use and must not be
// modified.
func ContextMessage(e *Entry) (Message, error) {
	switch e.Type {
	case TypeMessage:
		return e.Message()
	case TypeCustomMessage, TypeBranchSummary, TypeCompaction:
	default:
		return nil, nil
	}
	if m := e.remembered(); m != nil {
		return m, nil
	}
	p, err := e.Payload()
	if err != nil {
		return nil, err
	}
	ts := jsonwire.ISOMillis(e.Timestamp)
	var m Message
	switch p := p.(type) {
	case *CustomMessageEntry:
		m = &CustomMessage{CustomType: p.CustomType, Content: p.Content, Display: p.Display, Details: p.Details, Timestamp: ts}
	case *BranchSummaryEntry:
		if p.Summary == "" {
			return nil, nil
		}
		m = &BranchSummaryMessage{Summary: p.Summary, FromID: p.FromID, Timestamp: ts}
	case *CompactionEntry:
		m = &CompactionSummaryMessage{Summary: p.Summary, TokensBefore: p.TokensBefore, Timestamp: ts}
	default:
		return nil, nil
	}
	e.remember(m)
	return m, nil
}
