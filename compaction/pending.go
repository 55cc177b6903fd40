package compaction

import (
	"errors"
	"fmt"

	"github.com/prime-agent/prime/session"
)

// A pending compaction is one not written (yet): a summary the agent holds,
// or one it is about to append. What the model would see after it follows
// [session.BuildContext]'s rule for a path whose latest compaction is the
// pending one, built here from the compaction's fields so that no entry is
// made for it: the compaction (its system state and summary), the entries
// before it from its first kept entry on (system messages left out: the
// compaction carries their state), then the entries after it; the latest
// context edit in that projection that targets an entry hides it or
// replaces its content, and older compactions in it show nothing. A test
// holds this against session.BuildContext of the path with the entry
// written.

// errCompactedSince means a path holds a compaction after the point where a
// pending one was planned.
var errCompactedSince = errors.New("the conversation was compacted since")

// projectPending is the projection of path with c pending after its first n
// entries (path[n:] following it). It fails when path[n:] holds a
// compaction (the pending one would not be the latest) or an entry the
// model sees cannot be decoded.
func projectPending(path []*session.Entry, n int, c *session.CompactionEntry, timestamp int64) (*projection, error) {
	kept := -1
	if c.FirstKeptEntryID != "" {
		for i := range n {
			if path[i].ID == c.FirstKeptEntryID {
				kept = i
				break
			}
		}
	}
	size := len(path) - n
	if kept >= 0 {
		size += n - kept
	}
	entries := make([]*session.Entry, 0, size)
	if kept >= 0 {
		for _, e := range path[kept:n] {
			if e.Type == session.TypeMessage {
				if role, err := e.MessageRole(); err == nil && role == session.RoleSystem {
					continue
				}
			}
			entries = append(entries, e)
		}
	}
	after := len(entries) + 1
	for _, e := range path[n:] {
		if e.Type == session.TypeCompaction {
			return nil, errCompactedSince
		}
		entries = append(entries, e)
	}
	edits, err := contextEdits(entries)
	if err != nil {
		return nil, err
	}
	p := &projection{pending: true, nodes: make([]node, 0, len(entries)+1), start: 1, after: after, compaction: c}
	if c.SystemMessage != nil {
		p.lead = c.SystemMessage
	}
	p.nodes = append(p.nodes, node{
		entry: &session.Entry{Type: session.TypeCompaction},
		msg:   &session.CompactionSummaryMessage{Summary: c.Summary, TokensBefore: c.TokensBefore, Timestamp: timestamp},
	})
	for _, e := range entries {
		nd := node{entry: e}
		edit, edited := edits[e.ID]
		if e.Type != session.TypeCompaction && !(edited && edit.Replacement == nil) {
			m, err := session.ContextMessage(e)
			if err != nil {
				return nil, err
			}
			nd.msg = session.ApplyContextEdit(m, edit)
		}
		p.nodes = append(p.nodes, nd)
	}
	return p, nil
}

// contextEdits returns the latest context edit among entries for each
// entry one targets.
func contextEdits(entries []*session.Entry) (map[string]*session.ContextEditEntry, error) {
	edits := map[string]*session.ContextEditEntry{}
	for _, e := range entries {
		if e.Type != session.TypeContextEdit {
			continue
		}
		p, err := e.Payload()
		if err != nil {
			return nil, err
		}
		edit := p.(*session.ContextEditEntry)
		edits[edit.TargetID] = edit
	}
	return edits, nil
}

// system is the system state in force at the end of the projection.
func (p *projection) system() *session.SystemMessage {
	if p.pending {
		msgs := make([]session.Message, 0, len(p.nodes)+1)
		if p.lead != nil {
			msgs = append(msgs, p.lead)
		}
		for i := range p.nodes {
			if p.nodes[i].msg != nil {
				msgs = append(msgs, p.nodes[i].msg)
			}
		}
		return session.ReplaySystem(msgs)
	}
	return p.ctx.System()
}

// ContextAfter is the size of the context once the compaction c is
// appended at the end of path (the threshold's estimate: chars/4 of every
// message, since each usage on the path measured the context before it),
// with c's system state and summary first.
func ContextAfter(path []*session.Entry, c *session.CompactionEntry) (int, error) {
	p, err := projectPending(path, len(path), c, 0)
	if err != nil {
		return 0, err
	}
	tokens := 0
	if sys := p.system(); sys != nil {
		tokens = session.EstimateTokens(sys)
	}
	for i := range p.nodes {
		if _, system := p.nodes[i].msg.(*session.SystemMessage); !system && p.nodes[i].msg != nil {
			tokens += session.EstimateTokens(p.nodes[i].msg)
		}
	}
	return tokens, nil
}

// UpdatePreparation is the preparation of a request that brings a summary
// written earlier up to date: background is the compaction that summary
// makes, planned after path[:n] (what followed is path[n:]), and fresh the
// preparation made now at the end of path. Prepared as if background had
// been written where it was planned, with fresh's settings, it summarizes
// what lies between background's cut and fresh's, updating background's
// summary (its previous summary, files and ledger), and keeps what fresh
// keeps; TokensBefore is fresh's. It fails when the update would keep from
// another entry than fresh, or cannot be prepared.
func UpdatePreparation(path []*session.Entry, n int, background *session.CompactionEntry, fresh *Preparation) (*Preparation, error) {
	if n <= 0 || n > len(path) {
		return nil, fmt.Errorf("the update cannot be prepared: the summary was planned at entry %d of a path of %d", n, len(path))
	}
	prep, err := preparePending(path, n, background, fresh.Settings)
	if err != nil {
		return nil, fmt.Errorf("the update cannot be prepared: %w", err)
	}
	if prep.FirstKeptEntryID != fresh.FirstKeptEntryID {
		return nil, fmt.Errorf("the update would keep from %s, not %s", prep.FirstKeptEntryID, fresh.FirstKeptEntryID)
	}
	prep.TokensBefore = fresh.TokensBefore
	return prep, nil
}

// preparePending is [Prepare] of path with c pending after path[:n]; its
// TokensBefore is left 0 (no usage on the path measured that context).
func preparePending(path []*session.Entry, n int, c *session.CompactionEntry, s Settings) (*Preparation, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if n == len(path) {
		return nil, leafCompacted()
	}
	proj, err := projectPending(path, n, c, path[n-1].Millis())
	if err != nil {
		return nil, err
	}
	return prepareProjection(proj, Pins(path), s)
}
