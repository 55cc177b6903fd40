package compaction

import (
	"fmt"
	"sort"

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
	msg   session.Message // nil when the entry is not in the model's context
	// tokens is the message's estimate (chars/4) plus one, or 0 when it has
	// not been computed yet (see [projection.tokens]).
	tokens int
}

// visible reports whether the model sees the entry.
func (n *node) visible() bool { return n.msg != nil }

// cutPoint reports whether the kept part may start at the entry: a message
// the model sees that is not a tool result (which must stay with its call)
// and not a summary of an earlier compaction.
func (n *node) cutPoint() bool {
	switch n.msg.(type) {
	case nil, *llm.ToolResultMessage, *session.CompactionSummaryMessage, *session.UnknownMessage:
		return false
	}
	return true
}

// turnStart reports whether a turn begins at the entry: user messages,
// bash executions, custom messages and summaries (pi 1.6, C6a/C6b).
// Assistant messages and tool results continue a turn.
func (n *node) turnStart() bool {
	switch n.msg.(type) {
	case *llm.UserMessage, *session.BashExecution, *session.CustomMessage,
		*session.BranchSummaryMessage, *session.CompactionSummaryMessage:
		return true
	}
	return false
}

// projection is the path as the model sees it: the latest compaction, the
// entries it kept, then the entries after it (pi 1.6). Invisible entries
// (metadata) stay in it, because the cut may be pulled back onto them.
type projection struct {
	nodes []node
	// start is the first index eligible for summarizing: 1 after a
	// compaction (the compaction itself is node 0), else 0.
	start int
	// after is the index of the first node that comes after the latest
	// compaction on the path (len(nodes) when there is none).
	after int
	// compaction is the latest compaction on the path, or nil.
	compaction *session.CompactionEntry
}

// tokens returns node i's estimate, computing it on first use: a
// preparation usually needs only the newest messages' estimates (the
// keep-recent walk and tokensBefore stop early), and counting the
// characters of a long history costs as much as reading it.
func (p *projection) tokens(i int) int {
	n := &p.nodes[i]
	if n.tokens == 0 {
		n.tokens = 1
		if n.msg != nil {
			n.tokens += session.EstimateTokens(n.msg)
		}
	}
	return n.tokens - 1
}

// project builds the projection of path. The messages are those of
// [session.BuildContext] (decoded on every core, and not decoded again when
// the caller built the same context and still holds it); the projection
// adds the entries the model does not see in between. Compactions older
// than the latest that fall inside its kept range are left out: the model
// never sees them, because the latest summary folds them in.
func project(path []*session.Entry) (*projection, error) {
	ctx, err := session.BuildContext(path)
	if err != nil {
		return nil, err
	}
	latest := -1
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type == session.TypeCompaction {
			latest = i
			break
		}
	}
	p := &projection{nodes: make([]node, 0, len(path))}
	next := 0 // the next of ctx's messages to place
	add := func(e *session.Entry) {
		n := node{entry: e}
		if next < len(ctx.Entries) && ctx.Entries[next] == e {
			n.msg = ctx.Messages[next]
			next++
		}
		p.nodes = append(p.nodes, n)
	}
	tail := path
	if latest >= 0 {
		payload, err := path[latest].Payload()
		if err != nil {
			return nil, err
		}
		p.compaction = payload.(*session.CompactionEntry)
		add(path[latest])
		p.start = 1
		if kept := session.KeptStart(path, latest); kept >= 0 {
			for _, e := range path[kept:latest] {
				if e.Type != session.TypeCompaction {
					add(e)
				}
			}
		}
		tail = path[latest+1:]
	}
	p.after = len(p.nodes)
	for _, e := range tail {
		add(e)
	}
	if next != len(ctx.Entries) {
		return nil, fmt.Errorf("the context does not follow the path (%d of %d messages placed)", next, len(ctx.Entries))
	}
	return p, nil
}

// cut is where the kept part begins and how the turn around it is split.
type cut struct {
	// first is the index of the first kept node (after the scan-back).
	first int
	// anchor is the cut point the keep-recent walk chose, before the
	// scan-back pulled preceding invisible entries into the kept part; -1
	// when the span has no cut point.
	anchor int
	// turnStart is the index where the split turn begins, or -1.
	turnStart int
	split     bool
}

// findCut chooses the first kept node in nodes[start:] so that roughly
// keepRecent tokens stay verbatim (pi 1.6's findCutPoint on the projection):
//
//  1. Walk from the newest node back, adding each node's tokens; at the
//     node where the sum reaches keepRecent, the cut is the first cut point
//     at or after it. If there is none (the newest tool results alone
//     exceed the budget), the cut is the last cut point, so their assistant
//     is kept and the rest summarized (C7b). If the sum never reaches
//     keepRecent, the cut is the first cut point: everything is kept.
//  2. Scan back: invisible entries right before the cut (model or thinking
//     changes, labels, empty branch summaries) join the kept part; the scan
//     stops at any entry the model sees (C7c).
//  3. The turn is split when the chosen cut point is not a turn start: the
//     turn's beginning, found by walking back to the nearest turn start,
//     becomes the turn prefix. Prime decides this on the chosen cut point,
//     not on the entry the scan-back moved to: pi decides on the latter and
//     so calls a complete previous turn a split-turn prefix whenever a
//     metadata entry precedes a user message (pi-reference §10.1 #6).
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
			break
		}
	}
	c := cut{first: anchor, anchor: anchor, turnStart: -1}
	for c.first > start && !nodes[c.first-1].visible() {
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

// spanMessages returns the messages of nodes to summarize: every message the
// model sees, except messages of roles Prime does not know (pi 1.6 never
// summarizes system messages; an unknown role is treated alike).
func spanMessages(nodes []node) []session.Message {
	out := make([]session.Message, 0, len(nodes))
	for i := range nodes {
		switch nodes[i].msg.(type) {
		case nil, *session.UnknownMessage:
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
		return nil, notCompactable(ErrAlreadyCompacted, "the last entry is a compaction; nothing was added since")
	}
	proj, err := project(path)
	if err != nil {
		return nil, fmt.Errorf("compaction: %w", err)
	}
	nodes := proj.nodes
	c := findCut(proj, proj.start, s.KeepRecentTokens)
	historyEnd := c.first
	if c.split {
		historyEnd = c.turnStart
	}
	prep := &Preparation{
		MessagesToSummarize: spanMessages(nodes[proj.start:historyEnd]),
		TurnPrefixMessages:  []session.Message{},
		IsSplitTurn:         c.split,
		Settings:            s,
	}
	if c.split {
		prep.TurnPrefixMessages = spanMessages(nodes[c.turnStart:c.first])
	}
	if len(prep.MessagesToSummarize) == 0 && len(prep.TurnPrefixMessages) == 0 {
		return nil, nothingToCompact(proj, s)
	}
	first := nodes[c.first].entry
	if first.ID == "" {
		return nil, fmt.Errorf("compaction: the first kept entry (line %d) has no id; the session needs migrating", first.Line)
	}
	prep.FirstKeptEntryID = first.ID
	prep.TokensBefore = tokensBefore(proj)

	var files fileTracker
	if pc := proj.compaction; pc != nil {
		prep.PreviousSummary = pc.Summary
		if !pc.FromHook {
			if d, ok := ParseDetails(pc.Details); ok {
				files.addDetails(d)
				prep.PreviousSummarizer = d.Summarizer
			}
		}
	}
	spanEnd := historyEnd
	if c.split {
		spanEnd = c.first
	}
	for i := proj.start; i < spanEnd; i++ {
		n := &nodes[i]
		if n.entry.Type == session.TypeBranchSummary {
			addBranchSummaryFiles(&files, n.entry)
		}
		if n.msg != nil {
			files.addMessage(n.msg)
		}
	}
	prep.FileOps = files.ops()
	return prep, nil
}

// addBranchSummaryFiles adds the file lists of a branch summary written by
// Prime or pi (not by a hook). pi forgets them on compaction (§10.1 #20).
func addBranchSummaryFiles(files *fileTracker, e *session.Entry) {
	p, err := e.Payload()
	if err != nil {
		return
	}
	if bs, ok := p.(*session.BranchSummaryEntry); ok && !bs.FromHook {
		if d, ok := ParseDetails(bs.Details); ok {
			files.addDetails(d)
		}
	}
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
	total := 0
	for i := proj.start; i < len(proj.nodes); i++ {
		total += proj.tokens(i)
	}
	if total == 0 {
		return notCompactable(ErrNothingToCompact, "the conversation has no messages to summarize")
	}
	return notCompactable(ErrNothingToCompact,
		"the %d tokens of conversation fit in the %d kept verbatim (keepRecentTokens), so a summary would replace nothing",
		total, s.KeepRecentTokens)
}

// tokensBefore estimates the context the compaction replaces, as pi 1.6
// does (C5): the context the model sees (the projection's messages) sized
// by the newest valid usage plus chars/4 for what follows it; but when that
// usage belongs to a message at or before the latest compaction (a kept
// message, typically right after a compaction), it measured a context that
// no longer exists, so every message is estimated instead.
func tokensBefore(proj *projection) int {
	total := 0
	for i := len(proj.nodes) - 1; i >= 0; i-- {
		n := &proj.nodes[i]
		if n.msg == nil {
			continue
		}
		if u, ok := session.ValidUsage(n.msg); ok {
			if i < proj.after {
				break // distrusted: estimate everything
			}
			return u.ContextTokens() + total
		}
		total += proj.tokens(i)
	}
	total = 0
	for i := range proj.nodes {
		total += proj.tokens(i)
	}
	return total
}
