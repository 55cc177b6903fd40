package session

import (
	"iter"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
)

// Context is what the model sees at one point of the tree.
type Context struct {
	// Messages is the conversation in order: after a compaction, its
	// system message (when it has one) and its summary first, then the
	// kept and later messages. System messages are among them (see
	// [SystemMessage]); [ToLLM] leaves them out.
	Messages []Message
	// Entries holds, for each message, the entry it came from (the
	// compaction entry for its system message and its summary).
	Entries []*Entry
	// ThinkingLevel is the last thinking level set on the path ("off" when
	// none was).
	ThinkingLevel llm.ThinkingLevel
	// Model is the model last selected or used on the path, or nil.
	Model *ModelRef

	// projected is the projection's entries (see [Context.Projection]);
	// after is the index in it of the first entry after the latest
	// compaction (len(projected) without one), and trusted the index from
	// which its entries come after the latest compaction or context edit
	// on the path (see EstimateNext).
	projected      []*Entry
	after, trusted int
}

// ModelRef names a model by provider and id.
type ModelRef struct {
	Provider string `json:"provider"`
	ModelID  string `json:"modelId"`
}

// BuildContext computes what the model sees at the end of path, a root→leaf
// list of entries, exactly as pi 1.6's buildSessionProjection does:
//
//   - the thinking level is the last thinking_level_change on the path, and
//     the model the last model_change or assistant message;
//   - the projection is the path itself without a compaction; with one, the
//     latest compaction, then the entries before it starting at its
//     firstKeptEntryId (none when that id is not on the path) except system
//     messages, whose state the compaction carries, then every entry after
//     it;
//   - every entry of the projection contributes its context message (see
//     [ContextMessage]), except that the latest compaction contributes its
//     system message (when it has one) and then its summary, older
//     compactions in the kept range contribute nothing (the latest summary
//     folds them in), and context edits apply: the latest context_edit in
//     the projection that targets an entry hides it, or replaces the
//     content of its user, assistant, tool-result or custom message.
//
// It fails only when an entry that contributes cannot be decoded; the error
// names the entry's line. Messages are decoded on every core when there are
// many, and shared with any other caller that decoded the same entries
// while they are in use (see [Entry.Message]): they must not be modified.
// An edited message is a copy with the replacement content.
func BuildContext(path []*Entry) (Context, error) { return buildContext(entryPath(path)) }

// pathReader is a root→leaf path: a list of entries ([entryPath]), or a
// session's index ([PathView]), whose entries are made only when asked for.
type pathReader interface {
	Len() int
	// Type returns the type of entry i, Entry the entry.
	Type(i int) string
	Entry(i int) *Entry
	// idIs reports whether entry i's id is id.
	idIs(i int, id string) bool
	// role is entry i's MessageRole.
	role(i int) (string, error)
}

// entryPath is a path given as its entries.
type entryPath []*Entry

func (p entryPath) Len() int                   { return len(p) }
func (p entryPath) Type(i int) string          { return p[i].Type }
func (p entryPath) Entry(i int) *Entry         { return p[i] }
func (p entryPath) idIs(i int, id string) bool { return p[i].ID == id }
func (p entryPath) role(i int) (string, error) { return p[i].MessageRole() }

// buildContext is BuildContext of any path; only the entries of the
// projection and those that set the thinking level and model are made.
func buildContext(path pathReader) (Context, error) {
	var ctx Context
	var err error
	if ctx.ThinkingLevel, ctx.Model, err = pathSettings(path); err != nil {
		return Context{}, err
	}
	var skipped []*Entry
	ctx.projected, ctx.after, ctx.trusted, skipped = projectedEntries(path)
	var edits map[string]*ContextEditEntry
	for _, e := range ctx.projected {
		if e.Type != TypeContextEdit {
			continue
		}
		p, err := e.Payload()
		if err != nil {
			// pi 1.6 cannot apply such an edit either: not skipped.
			return Context{}, err
		}
		if edits == nil {
			edits = make(map[string]*ContextEditEntry)
		}
		edit := p.(*ContextEditEntry)
		edits[edit.TargetID] = edit
	}

	// The entries that may contribute a message, in context order.
	from := make([]*Entry, 0, len(ctx.projected)+1)
	for i, e := range ctx.projected {
		if !contributes(e) || e.Type == TypeCompaction && i > 0 {
			continue
		}
		if edit, ok := edits[e.ID]; ok && edit.Replacement == nil {
			continue // hidden: not even decoded
		}
		from = append(from, e)
	}
	for i, e := range ctx.projected {
		if !contributes(e) && e.Type != TypeContextEdit || e.Type == TypeCompaction && i > 0 {
			skipped = append(skipped, e)
		}
	}
	if err := confirmUnread(skipped); err != nil {
		return Context{}, err
	}
	msgs, err := contextMessages(from)
	if err != nil {
		return Context{}, err
	}
	// Keep the entries that gave a message, in place.
	n := 0
	for i, m := range msgs {
		if m == nil {
			continue
		}
		if edit, ok := edits[from[i].ID]; ok {
			m = withContent(m, edit.Replacement.Content)
		}
		msgs[n], from[n] = m, from[i]
		n++
	}
	msgs, from = msgs[:n], from[:n]
	if n > 0 && from[0].Type == TypeCompaction {
		if c, ok := msgs[0].(*CompactionSummaryMessage); ok && c.system != nil {
			msgs = slices.Insert(msgs, 0, Message(c.system))
			from = slices.Insert(from, 0, from[0])
		}
	}
	ctx.Messages, ctx.Entries = msgs[:len(msgs):len(msgs)], from[:len(from):len(from)]
	return ctx, nil
}

// projectedEntries returns the entries of path the context is built from
// (pi 1.6's buildContextEntries): path itself without a compaction; with
// one, the latest compaction, the entries it kept except system messages,
// and every entry after it. after is the index in it of the first entry
// after the compaction (its length without one), trusted that of the
// first entry after the latest compaction or context edit; skipped are
// the kept entries left out as system messages.
func projectedEntries(path pathReader) (out []*Entry, after, trusted int, skipped []*Entry) {
	n := path.Len()
	latest, invalid := -1, -1
	for i := n - 1; i >= 0; i-- {
		switch path.Type(i) {
		case TypeContextEdit:
			invalid = max(invalid, i)
		case TypeCompaction:
			invalid = max(invalid, i)
			latest = i
		}
		if latest >= 0 {
			break
		}
	}
	if latest < 0 {
		out = make([]*Entry, n)
		for i := range out {
			out[i] = path.Entry(i)
		}
		return out, n, invalid + 1, nil
	}
	kept := keptStart(path, latest)
	size := n - latest
	if kept >= 0 {
		size += latest - kept
	}
	out = make([]*Entry, 0, size)
	out = append(out, path.Entry(latest))
	if kept >= 0 {
		for i := kept; i < latest; i++ {
			if path.Type(i) == TypeMessage {
				if role, err := path.role(i); err == nil && role == RoleSystem {
					skipped = append(skipped, path.Entry(i))
					continue
				}
			}
			out = append(out, path.Entry(i))
		}
	}
	after = len(out)
	for i := latest + 1; i < n; i++ {
		out = append(out, path.Entry(i))
	}
	return out, after, after + invalid - latest, skipped
}

// ApplyContextEdit returns what the model sees of m after edit (pi 1.6's
// projectContextEntry): nil when the edit hides it, a copy with the
// replacement content for a user, assistant, tool-result or custom
// message, m itself for any other message or when edit is nil.
func ApplyContextEdit(m Message, edit *ContextEditEntry) Message {
	switch {
	case edit == nil:
		return m
	case edit.Replacement == nil:
		return nil
	}
	return withContent(m, edit.Replacement.Content)
}

// withContent returns a copy of m showing content instead of its own, for
// the roles a context edit replaces (user, assistant, tool result,
// custom); any other message unchanged.
func withContent(m Message, content []llm.Content) Message {
	switch m := m.(type) {
	case *llm.UserMessage:
		c := *m
		c.Content = content
		return &c
	case *llm.AssistantMessage:
		c := *m
		c.Content = content
		return &c
	case *llm.ToolResultMessage:
		c := *m
		c.Content = content
		return &c
	case *CustomMessage:
		c := *m
		c.Content = content
		return &c
	}
	return m
}

// Projection yields the entries the context was built from, in order, each
// with the messages it contributes (a subslice of Messages): pi 1.6's
// projection, which compactions cut. They are the path's entries without a
// compaction; with one, the latest compaction (its system message and
// summary), the entries it kept except system messages, then every entry
// after it. Entries the model does not see are there with no messages:
// metadata, empty branch summaries, context edits, the entries they hide,
// and older compactions inside the kept range.
func (c Context) Projection() iter.Seq2[*Entry, []Message] {
	return func(yield func(*Entry, []Message) bool) {
		j := 0
		for _, e := range c.projected {
			k := j
			for k < len(c.Entries) && c.Entries[k] == e {
				k++
			}
			if !yield(e, c.Messages[j:k:k]) {
				return
			}
			j = k
		}
	}
}

// AfterCompaction returns the index, in [Context.Projection], of the first
// entry that comes after the latest compaction on the path (the entries
// before it are the compaction and those it kept); without a compaction, the
// projection's length.
func (c Context) AfterCompaction() int { return c.after }

// EstimateNext estimates the context the model will be sent next, exactly
// as pi 1.6's estimateProjectedContextTokens (which sizes thresholds and a
// compaction's tokensBefore). It is [EstimateContextTokens] of the
// messages, unless the newest valid usage belongs to an entry at or before
// the latest context_edit or compaction on the path: that usage measured a
// context that has since changed, so then every message is estimated by
// characters instead, the system messages once, as their replayed state
// ([ReplaySystem]). (EstimateContextTokens, pi's own context estimate,
// keeps that stale usage until the next reply.) The context must come from
// [BuildContext].
func (c Context) EstimateNext() ContextEstimate {
	est := EstimateContextTokens(c.Messages)
	if est.LastUsageIndex >= 0 {
		// pi finds the usage entry on the path by its id (one without an
		// id is not found) and trusts it only after the latest context
		// edit or compaction. Ids on a path are distinct: a repeated id
		// names the later entry, so an earlier one is on no path.
		if e := c.Entries[est.LastUsageIndex]; e.ID != "" && slices.Contains(c.projected[min(c.trusted, len(c.projected)):], e) {
			return est
		}
	}
	tokens := 0
	if sys := ReplaySystem(c.Messages); sys != nil {
		tokens = EstimateTokens(sys)
	}
	for _, m := range c.Messages {
		if _, system := m.(*SystemMessage); !system {
			tokens += EstimateTokens(m)
		}
	}
	return ContextEstimate{Tokens: tokens, TrailingTokens: tokens, LastUsageIndex: -1}
}

// contributes reports whether an entry's type can put a message in the
// context.
func contributes(e *Entry) bool { return contributesType(e.Type) }

func contributesType(t string) bool {
	switch t {
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
	msgs := make([]Message, len(entries), len(entries)+1) // room for a compaction's system message
	size := 0
	for _, e := range entries {
		size += int(e.n)
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
func pathSettings(path pathReader) (llm.ThinkingLevel, *ModelRef, error) {
	level := llm.ThinkingOff
	for i := path.Len() - 1; i >= 0; i-- {
		if path.Type(i) == TypeThinkingLevelChange {
			p, err := path.Entry(i).Payload()
			if isUnreadable(err) {
				continue
			}
			if err != nil {
				return "", nil, err
			}
			level = p.(*ThinkingLevelChangeEntry).ThinkingLevel
			break
		}
	}
	for i := path.Len() - 1; i >= 0; i-- {
		switch path.Type(i) {
		case TypeModelChange:
			p, err := path.Entry(i).Payload()
			if isUnreadable(err) {
				continue
			}
			if err != nil {
				return "", nil, err
			}
			mc := p.(*ModelChangeEntry)
			return level, &ModelRef{Provider: mc.Provider, ModelID: mc.ModelID}, nil
		case TypeMessage:
			m, err := path.Entry(i).Message()
			if isUnreadable(err) {
				continue
			}
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
func KeptStart(path []*Entry, compaction int) int { return keptStart(entryPath(path), compaction) }

// keptStart is KeptStart of any path.
func keptStart(path pathReader, compaction int) int {
	e := path.Entry(compaction)
	k := e.kept.Load()
	switch {
	case k == nil:
		k = &keptAt{dist: -1, id: keptID(e)}
	case k.dist < 0:
		return -1
	case k.dist <= compaction && path.idIs(compaction-k.dist, k.id):
		return compaction - k.dist
	}
	// The first entry of the path with that id, as pi finds it. The
	// distance is remembered: the same entry has the same ancestors on
	// every path through it.
	if k.id != "" {
		for i := 0; i < compaction; i++ {
			if path.idIs(i, k.id) {
				e.kept.Store(&keptAt{dist: compaction - i, id: k.id})
				return i
			}
		}
	}
	e.kept.Store(&keptAt{dist: -1, id: k.id})
	return -1
}

// keptAt is what a compaction entry remembers of its first kept entry: its
// id, and how far before the compaction it is on the compaction's path (-1:
// not on it).
type keptAt struct {
	dist int
	id   string
}

// keptID returns a compaction entry's firstKeptEntryId ("" for none).
func keptID(e *Entry) string {
	p, err := e.Payload()
	if err != nil {
		return ""
	}
	c, ok := p.(*CompactionEntry)
	if !ok {
		return ""
	}
	return c.FirstKeptEntryID
}

// ContextMessage returns the message an entry contributes to the model's
// context, or nil when it contributes none:
//
//   - message: the stored message;
//   - custom_message: a [CustomMessage] (displayed or not);
//   - branch_summary with a non-empty summary: a [BranchSummaryMessage];
//   - compaction: a [CompactionSummaryMessage] (in a context, the
//     compaction's system message comes before it; see [BuildContext]);
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
	line, err := e.line()
	if err != nil {
		return nil, err
	}
	return contextMessageOf(e, line)
}

// contextMessageOf is ContextMessage of a custom_message, branch_summary or
// compaction entry whose line is line.
func contextMessageOf(e *Entry, line []byte) (Message, error) {
	p, err := tolerant(e, line, func(l []byte) (Payload, error) { return decodePayload(e.Type, l) })
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
		m = &CompactionSummaryMessage{Summary: p.Summary, TokensBefore: p.TokensBefore, Timestamp: ts, system: p.SystemMessage}
	default:
		return nil, nil
	}
	e.remember(m)
	return m, nil
}
