package compaction

import (
	"fmt"
	"sort"

	"github.com/prime-agent/prime/internal/numfmt"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// Preparation is everything a compaction decides before any model is asked:
// where the kept part starts, what is summarized, and the numbers around it.
// Its JSON form uses pi's field names (CompactionPreparation), because hooks
// hand it to extensions, which may replace the two message arrays.
type Preparation struct {
	// FirstKeptEntryID is the id of the first entry kept verbatim after the
	// summary.
	FirstKeptEntryID string `json:"firstKeptEntryId"`
	// MessagesToSummarize is the history before the kept part (or before the
	// split turn), from the previous compaction's kept boundary on.
	MessagesToSummarize []session.Message `json:"messagesToSummarize"`
	// TurnPrefixMessages is the first part of a turn the cut splits: from the
	// turn's start to the first kept entry. Empty unless IsSplitTurn.
	TurnPrefixMessages []session.Message `json:"turnPrefixMessages"`
	// IsSplitTurn reports that the cut falls inside a turn, so the turn's
	// beginning is summarized on its own and merged after the history.
	IsSplitTurn bool `json:"isSplitTurn"`
	// TokensBefore is the size of the context the compaction replaces.
	TokensBefore int `json:"tokensBefore"`
	// PreviousSummary is the latest earlier compaction's summary, which the
	// new one updates; empty when there is none.
	PreviousSummary string `json:"previousSummary,omitzero"`
	// FileOps are the files touched: the previous compaction's lists plus
	// the tool calls in both arrays.
	FileOps FileOps `json:"fileOps"`
	// Settings are the settings the preparation was made with.
	Settings Settings `json:"settings"`

	// Ledger is what the summary must keep (see [Ledger]): the previous
	// compaction's ledger and those of the branch summaries in the span,
	// with what the span adds; and the pins of the path. Prepare extracts
	// it from the span as the path holds it, so a hook replacing the
	// messages to summarize does not change it. Prime's addition to pi's
	// form ("ledger"), for hooks that write summaries of their own.
	Ledger *Ledger `json:"ledger,omitzero"`

	// PreviousSummarizer is the previous compaction's details.summarizer,
	// SummarizerDeterministic when code wrote it. Prime's addition: the
	// update prompt then asks the model to rewrite it properly.
	PreviousSummarizer string `json:"previousSummarizer,omitzero"`
}

// ReadFiles and ModifiedFiles are the file lists the summary will carry.
func (p *Preparation) ReadFiles() []string { r, _ := p.FileOps.Lists(); return r }

// ModifiedFiles returns the files written or edited, sorted.
func (p *Preparation) ModifiedFiles() []string { _, m := p.FileOps.Lists(); return m }

// node is one entry of the projection with the message it shows the model.
type node struct {
	entry *session.Entry
	// msg is what the model sees of the entry: nil for metadata, an empty
	// branch summary, a context edit, an entry one hides, or an older
	// compaction inside the latest's kept range; the summary for the
	// latest compaction (which also shows the projection's lead, its
	// system state); else its one message.
	msg session.Message
	// tokens is the messages' estimate (chars/4) plus one, or 0 when it
	// has not been computed yet (see [projection.tokens]).
	tokens int
}

// visible reports whether the model sees the entry.
func (n *node) visible() bool { return n.msg != nil }

// compaction reports whether the entry is a compaction, which is never a
// cut point or a turn start, and which stops the scan-back.
func (n *node) compaction() bool { return n.entry.Type == session.TypeCompaction }

// cutPoint reports whether the kept part may start at the entry: one the
// model sees as a user, assistant, bash execution, custom or summary
// message (pi 1.6's isCutPointMessage), never a tool result (which must
// stay with its call), a system message or a compaction.
func (n *node) cutPoint() bool {
	if n.compaction() {
		return false
	}
	switch n.msg.(type) {
	case *llm.UserMessage, *llm.AssistantMessage, *session.BashExecution, *session.CustomMessage,
		*session.BranchSummaryMessage, *session.CompactionSummaryMessage:
		return true
	}
	return false
}

// turnStart reports whether a turn begins at the entry: user messages,
// bash executions, custom messages and summaries (as pi 1.6 has it).
// Assistant messages and tool results continue a turn; a compaction entry
// starts none.
func (n *node) turnStart() bool {
	if n.compaction() {
		return false
	}
	switch n.msg.(type) {
	case *llm.UserMessage, *session.BashExecution, *session.CustomMessage,
		*session.BranchSummaryMessage, *session.CompactionSummaryMessage:
		return true
	}
	return false
}

// projection is the path as the model sees it: the latest compaction, the
// entries it kept, then the entries after it (pi 1.6, see
// [session.Context.Projection]). Invisible entries (metadata, context
// edits and what they hide, older compactions) stay in it, because the cut
// may be pulled back onto them or stopped by them.
type projection struct {
	// ctx is the context the projection was made from, unless pending:
	// then it is one of a pending compaction (pending.go), made from no
	// context.
	ctx     session.Context
	pending bool
	nodes   []node
	// lead is the latest compaction's system state, which the model sees
	// before its summary (nodes[0]), or nil.
	lead session.Message
	// start is the first index eligible for summarizing: 1 after a
	// compaction the model sees (the compaction itself is node 0), else 0.
	start int
	// after is the index of the first node that comes after the latest
	// compaction on the path (len(nodes) when there is none).
	after int
	// compaction is the latest compaction on the path when the model sees
	// it (a context edit may hide it), or nil.
	compaction *session.CompactionEntry
}

// tokens returns node i's estimate, computing it on first use: a
// preparation usually needs only the newest messages' estimates (the
// keep-recent walk stops early), and counting the characters of a long
// history costs as much as reading it.
func (p *projection) tokens(i int) int {
	n := &p.nodes[i]
	if n.tokens == 0 {
		n.tokens = 1
		if n.msg != nil {
			n.tokens += session.EstimateTokens(n.msg)
		}
		if i == 0 && p.lead != nil {
			n.tokens += session.EstimateTokens(p.lead)
		}
	}
	return n.tokens - 1
}

// project builds the projection of a context (whose messages were decoded
// on every core, and are not decoded again when the caller built the same
// context and still holds it).
func project(ctx session.Context) (*projection, error) {
	p := &projection{ctx: ctx, nodes: make([]node, 0, len(ctx.Entries)+1)}
	for e, msgs := range ctx.Projection() {
		n := node{entry: e}
		switch {
		case len(msgs) == 2 && len(p.nodes) == 0:
			p.lead, n.msg = msgs[0], msgs[1]
		case len(msgs) == 1:
			n.msg = msgs[0]
		case len(msgs) > 1:
			return nil, fmt.Errorf("entry %s shows the model %d messages", e.ID, len(msgs))
		}
		p.nodes = append(p.nodes, n)
	}
	p.after = ctx.AfterCompaction()
	if len(p.nodes) > 0 && p.nodes[0].compaction() && p.nodes[0].visible() {
		payload, err := p.nodes[0].entry.Payload()
		if err != nil {
			return nil, err
		}
		p.compaction = payload.(*session.CompactionEntry)
		p.start = 1
	}
	return p, nil
}

// cut is where the kept part begins and how the turn around it is split.
type cut struct {
	// first is the index of the first kept node (after the scan-back).
	first int
	// anchor is the cut the keep-recent walk chose, before the scan-back
	// pulled preceding invisible entries into the kept part; -1 when the
	// span has no cut point.
	anchor int
	// turnStart is the index where the split turn begins, or -1.
	turnStart int
	split     bool
}

// findCut chooses the first kept node in nodes[start:] so that roughly
// keepRecent tokens stay verbatim (pi 1.6's cut on the projection):
//
//  1. Walk from the newest node back, adding each node's tokens (system
//     messages included); at the node where the sum reaches keepRecent,
//     the cut is the first cut point at or after it. If there is none (the
//     newest tool results alone exceed the budget), the cut is the last
//     cut point, so their assistant is kept and the rest summarized.
//     If the sum never reaches keepRecent, the cut is the first cut point:
//     everything is kept.
//  2. When the sum was reached and everything after the cut is a failed
//     attempt the model no longer sees (a hidden assistant reply, with
//     its hidden tool results and the context edits hiding them, and
//     nothing else the model could see), the cut moves to the entry after
//     it: the last input is then the turn's beginning (pi 1.6, for the
//     recovery from an overflowing or cut-off reply).
//  3. Scan back: invisible entries right before the cut (model or thinking
//     changes, labels, empty branch summaries, context edits and what they
//     hide) join the kept part; the scan stops at any entry the model sees
//     and at a compaction (an older one inside the kept range).
//  4. The turn is split when the cut (of step 2) is not a turn start: the
//     turn's beginning, found by walking back to the nearest turn start,
//     becomes the turn prefix. Prime decides this on that cut, not on the
//     entry the scan-back moved to: pi decides on the latter and so calls
//     a complete previous turn a split-turn prefix whenever a metadata
//     entry precedes a user message.
func findCut(p *projection, start, keepRecent int) cut {
	nodes := p.nodes
	end := len(nodes)
	var points []int
	for i := start; i < end; i++ {
		if nodes[i].cutPoint() {
			points = append(points, i)
		}
	}
	if len(points) == 0 {
		return cut{first: start, anchor: -1, turnStart: -1}
	}
	anchor := points[0]
	acc := 0
	for i := end - 1; i >= start; i-- {
		t := p.tokens(i)
		if t == 0 {
			continue
		}
		acc += t
		if acc >= keepRecent {
			if j := sort.SearchInts(points, i); j < len(points) {
				anchor = points[j]
			} else {
				anchor = points[len(points)-1]
			}
			if omittedAttempt(nodes[anchor+1 : end]) {
				anchor++
			}
			break
		}
	}
	c := cut{first: anchor, anchor: anchor, turnStart: -1}
	for c.first > start && !nodes[c.first-1].compaction() && !nodes[c.first-1].visible() {
		c.first--
	}
	if !nodes[anchor].turnStart() {
		for i := anchor - 1; i >= start; i-- {
			if nodes[i].turnStart() {
				c.turnStart, c.split = i, true
				break
			}
		}
	}
	return c
}

// omittedAttempt reports whether suffix, the entries after a cut, is a
// failed attempt the model no longer sees (pi 1.6's recovery-omission
// suffix): every entry that would show the model something is hidden by a
// context edit, one of them is an assistant message, none is a
// compaction, and no edit in it replaces the content of an entry outside
// what it hides.
func omittedAttempt(suffix []node) bool {
	assistant := false
	for i := range suffix {
		n := &suffix[i]
		if n.compaction() {
			return false
		}
		if !shows(n.entry) {
			continue
		}
		if n.visible() {
			return false
		}
		if role, err := n.entry.MessageRole(); err == nil && role == llm.RoleAssistant {
			assistant = true
		}
	}
	if !assistant {
		return false
	}
	omitted := map[string]bool{}
	for i := range suffix {
		if n := &suffix[i]; shows(n.entry) {
			omitted[n.entry.ID] = true
		}
	}
	for i := range suffix {
		e := suffix[i].entry
		if e.Type != session.TypeContextEdit {
			continue
		}
		p, err := e.Payload()
		if err != nil {
			return false
		}
		if edit := p.(*session.ContextEditEntry); edit.Replacement != nil && !omitted[edit.TargetID] {
			return false
		}
	}
	return true
}

// shows reports whether an entry would show the model something were it
// not hidden: a message, a custom message, a non-empty branch summary, a
// compaction.
func shows(e *session.Entry) bool {
	switch e.Type {
	case session.TypeMessage, session.TypeCustomMessage, session.TypeCompaction:
		return true
	case session.TypeBranchSummary:
		m, err := session.ContextMessage(e)
		return err == nil && m != nil
	}
	return false
}

// spanMessages returns the messages of nodes to summarize: every message
// the model sees, except system messages (pi 1.6: prompt state, which the
// compaction entry carries), the summary of a compaction, and messages of
// roles Prime does not know.
func spanMessages(nodes []node) []session.Message {
	out := make([]session.Message, 0, len(nodes))
	for i := range nodes {
		if nodes[i].compaction() {
			continue
		}
		switch nodes[i].msg.(type) {
		case nil, *session.SystemMessage, *session.UnknownMessage:
			continue
		}
		out = append(out, nodes[i].msg)
	}
	return out
}

// Prepare decides a compaction of the conversation at the end of path, a
// root→leaf list of entries (pi 1.6's prepareCompaction, with the fixes the
// package documentation lists):
//
//   - The span to summarize starts at the previous compaction's first kept
//     entry (or right after the compaction when that entry is not on the
//     path), so what it kept is summarized now or kept again.
//   - The cut is found on the projection (see [findCut]).
//   - TokensBefore estimates the context being replaced (see [tokensBefore]).
//   - File operations accumulate: the previous compaction's lists (unless a
//     hook wrote it), tool calls in both spans, and the lists of branch
//     summaries inside the span.
//
// When there is nothing to do, the error is a [*NotCompactableError]
// wrapping [ErrAlreadyCompacted] (the last entry is a compaction, or nothing
// the model sees follows it) or [ErrNothingToCompact]. Other errors name an
// entry that cannot be decoded.
func Prepare(path []*session.Entry, s Settings) (*Preparation, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if len(path) == 0 {
		return nil, notCompactable(ErrNothingToCompact, "the session has no entries")
	}
	if path[len(path)-1].Type == session.TypeCompaction {
		return nil, leafCompacted()
	}
	ctx, err := session.BuildContext(path)
	if err != nil {
		return nil, err
	}
	return prepare(ctx, Pins(path), s)
}

// leafCompacted is why a path ending in a compaction is not compacted.
func leafCompacted() error {
	return notCompactable(ErrAlreadyCompacted, "the last entry is a compaction; nothing was added since")
}

// PrepareContext is [Prepare] of the conversation whose context c is (see
// [session.Session.Context]): the same decision, made from the context's
// projection, without the whole path to the leaf at hand. pins are the
// pins in force at the leaf (see [PinsOf]): they may come from before the
// context's compaction, where the context does not reach.
func PrepareContext(c session.Context, pins []Pin, s Settings) (*Preparation, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	n := 0
	var first *session.Entry
	for e := range c.Projection() {
		if n == 0 {
			first = e
		}
		n++
	}
	if n == 0 {
		return nil, notCompactable(ErrNothingToCompact, "the session has no entries")
	}
	if first.Type == session.TypeCompaction && c.AfterCompaction() == n {
		return nil, leafCompacted() // nothing after the latest compaction: it is the leaf
	}
	return prepare(c, pins, s)
}

// prepare is Prepare of a context, with the pins in force at its leaf.
func prepare(ctx session.Context, pins []Pin, s Settings) (*Preparation, error) {
	proj, err := project(ctx)
	if err != nil {
		return nil, err
	}
	return prepareProjection(proj, pins, s)
}

// prepareProjection is Prepare of a projection, with the pins in force at
// its leaf.
func prepareProjection(proj *projection, pins []Pin, s Settings) (*Preparation, error) {
	nodes := proj.nodes
	c := findCut(proj, proj.start, s.KeepRecentTokens)
	prep := spans(proj, c, s)
	if prep.empty() && s.Manual {
		if latest, ok := latestExchange(proj); ok {
			c = latest
			prep = spans(proj, c, s)
		}
	}
	if prep.empty() {
		return nil, nothingToCompact(proj, s)
	}
	historyEnd := c.first
	if c.split {
		historyEnd = c.turnStart
	}
	first := nodes[c.first].entry
	if first.ID == "" {
		return nil, fmt.Errorf("the first kept entry (line %d) has no id; the session needs migrating", first.Line)
	}
	prep.FirstKeptEntryID = first.ID
	prep.TokensBefore = tokensBefore(proj)

	var files fileTracker
	led := newLedgerScan()
	if pc := proj.compaction; pc != nil {
		prep.PreviousSummary = pc.Summary
		if !pc.FromHook {
			if d, ok := ParseDetails(pc.Details); ok {
				files.addDetails(d)
				prep.PreviousSummarizer = d.Summarizer
				led.absorb(d.Ledger)
			}
		}
	}
	spanEnd := historyEnd
	if c.split {
		spanEnd = c.first
	}
	for i := proj.start; i < spanEnd; i++ {
		n := &nodes[i]
		if n.entry.Type == session.TypeBranchSummary && (n.visible() || emptyBranchSummary(n.entry)) {
			// An empty one is not in the context, but the files its
			// details list were read and changed on that branch.
			addBranchSummaryFiles(&files, n.entry, led)
		}
		if n.msg != nil {
			files.addMessage(n.msg)
			led.message(n.msg)
		}
	}
	prep.FileOps = files.ops()
	for i := spanEnd; i < len(nodes); i++ {
		if nodes[i].msg != nil {
			led.kept(nodes[i].msg)
		}
	}
	prep.Ledger = led.done(keptRequest(nodes[c.first:]))
	system := ""
	if sys := proj.system(); sys != nil {
		system = sys.Prompt()
	}
	prep.Ledger.Pins = ledgerPins(pins, system)
	return prep, nil
}

// spans returns the preparation's messages for cut c: those summarized
// before the cut, and the turn prefix when the cut splits a turn.
func spans(proj *projection, c cut, s Settings) *Preparation {
	historyEnd := c.first
	if c.split {
		historyEnd = c.turnStart
	}
	prep := &Preparation{
		MessagesToSummarize: spanMessages(proj.nodes[proj.start:historyEnd]),
		TurnPrefixMessages:  []session.Message{},
		IsSplitTurn:         c.split,
		Settings:            s,
	}
	if c.split {
		prep.TurnPrefixMessages = spanMessages(proj.nodes[c.turnStart:c.first])
	}
	return prep
}

// empty reports whether a preparation summarizes nothing.
func (p *Preparation) empty() bool {
	return len(p.MessagesToSummarize) == 0 && len(p.TurnPrefixMessages) == 0
}

// latestExchange is the cut of a manual compaction that keepRecentTokens
// would not make: the kept part begins with the latest turn (its user
// message, or the bash execution, custom message or summary that began it),
// with the invisible entries right before it, and everything the model sees
// before that is summarized. ok is false when nothing would be: the
// conversation (since the latest compaction) is that one exchange.
func latestExchange(proj *projection) (c cut, ok bool) {
	nodes := proj.nodes
	last := -1
	for i := len(nodes) - 1; i > proj.start; i-- {
		if nodes[i].turnStart() {
			last = i
			break
		}
	}
	if last < 0 || len(spanMessages(nodes[proj.start:last])) == 0 {
		return cut{}, false
	}
	c = cut{first: last, anchor: last, turnStart: -1}
	for c.first > proj.start && !nodes[c.first-1].compaction() && !nodes[c.first-1].visible() {
		c.first--
	}
	return c, true
}

// keptRequest reports whether the kept part shows the model a user message
// with text: the request being worked on is then there word for word.
func keptRequest(kept []node) bool {
	for i := range kept {
		if u, ok := kept[i].msg.(*llm.UserMessage); ok && userText(u) != "" {
			return true
		}
	}
	return false
}

// addBranchSummaryFiles adds the file lists of a branch summary written by
// Prime or pi (not by a hook), and its ledger to led when led is not nil.
// pi forgets them on compaction.
func addBranchSummaryFiles(files *fileTracker, e *session.Entry, led *ledgerScan) {
	p, err := e.Payload()
	if err != nil {
		return
	}
	if bs, ok := p.(*session.BranchSummaryEntry); ok && !bs.FromHook {
		if d, ok := ParseDetails(bs.Details); ok {
			files.addDetails(d)
			if led != nil {
				led.absorb(d.Ledger)
			}
		}
	}
}

// emptyBranchSummary reports whether e is a branch summary whose summary
// is empty (which the context leaves out), as opposed to one hidden by a
// context edit.
func emptyBranchSummary(e *session.Entry) bool {
	p, err := e.Payload()
	if err != nil {
		return false
	}
	bs, ok := p.(*session.BranchSummaryEntry)
	return ok && bs.Summary == ""
}

// nothingToCompact explains why a preparation came out empty.
func nothingToCompact(proj *projection, s Settings) error {
	if proj.compaction != nil {
		newer := false
		for i := proj.after; i < len(proj.nodes); i++ {
			if proj.nodes[i].visible() {
				newer = true
				break
			}
		}
		if !newer {
			return notCompactable(ErrAlreadyCompacted, "nothing the model sees was added since the last compaction")
		}
	}
	system, conversation := 0, 0
	for i := proj.start; i < len(proj.nodes); i++ {
		if _, ok := proj.nodes[i].msg.(*session.SystemMessage); ok {
			system += proj.tokens(i)
		} else {
			conversation += proj.tokens(i)
		}
	}
	since := "the conversation"
	if proj.compaction != nil {
		since = "since the last compaction, the conversation"
	}
	switch {
	case conversation == 0:
		return notCompactable(ErrNothingToCompact, "the conversation has no messages to summarize")
	case s.Manual:
		return notCompactable(ErrNothingToCompact,
			"%s is one exchange (%s tokens), with nothing before it to summarize", since, numfmt.Commas(conversation))
	case conversation < s.KeepRecentTokens:
		return notCompactable(ErrNothingToCompact,
			"the conversation's %s tokens fit in the %s kept verbatim (keepRecentTokens), so a summary would replace nothing",
			numfmt.Commas(conversation), numfmt.Commas(s.KeepRecentTokens))
	}
	return notCompactable(ErrNothingToCompact,
		"the newest %s tokens kept verbatim (keepRecentTokens) reach into the first message, and nothing before it can be summarized (%s tokens of conversation, %s of system prompt and tools)",
		numfmt.Commas(s.KeepRecentTokens), numfmt.Commas(conversation), numfmt.Commas(system))
}

// tokensBefore estimates the context the compaction replaces, as pi 1.6
// does: [session.Context.EstimateNext], the newest valid usage plus
// chars/4 for what follows it, unless that usage comes from before the
// latest context edit or compaction, in which case every message is
// estimated (the system state once).
func tokensBefore(proj *projection) int {
	if proj.pending {
		return 0 // a pending compaction's: its caller says
	}
	return proj.ctx.EstimateNext().Tokens
}
