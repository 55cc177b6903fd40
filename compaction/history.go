package compaction

import (
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// History is how full the context was along a path, reply by reply, and
// where compactions emptied it: the series the HTML export's chart and
// /context's sparkline draw.
type History struct {
	// Points holds one point per assistant reply on the path, in order.
	Points []HistoryPoint `json:"points"`
	// Drops holds one drop per compaction on the path, in order.
	Drops []HistoryDrop `json:"drops"`
}

// HistoryPoint is the context's size right after one assistant reply: what
// the threshold check would measure at that moment
// ([session.Context.EstimateNext] of the path ending there).
type HistoryPoint struct {
	// EntryID is the reply's entry; Index its position on the path.
	EntryID string `json:"entryId"`
	Index   int    `json:"index"`
	// Tokens is the context's size.
	Tokens int `json:"tokens"`
	// Measured reports that Tokens is the reply's own usage as the
	// provider reported it; otherwise it is the estimate (the last usage
	// that can be trusted plus chars/4 of what followed, or chars/4 of the
	// whole context).
	Measured bool `json:"measured"`
}

// HistoryDrop is a compaction on the path.
type HistoryDrop struct {
	// EntryID is the compaction entry; Index its position on the path.
	EntryID string `json:"entryId"`
	Index   int    `json:"index"`
	// Replies is the number of points before it.
	Replies int `json:"replies"`
	// TokensBefore is the context's size the compaction recorded;
	// TokensAfter the estimate of the context it left.
	TokensBefore int `json:"tokensBefore"`
	TokensAfter  int `json:"tokensAfter"`
}

// ContextHistory measures the context along path, a root→leaf list of
// entries, in one pass: each point equals the estimate
// [session.Context.EstimateNext] gives for the path ending at that reply,
// without building every one of those contexts (a compaction rereads only
// the entries it keeps).
func ContextHistory(path []*session.Entry) (*History, error) {
	h := &History{Points: []HistoryPoint{}, Drops: []HistoryDrop{}}
	var m meter
	for i, e := range path {
		switch e.Type {
		case session.TypeCompaction:
			if err := m.compact(path, i); err != nil {
				return nil, err
			}
			p, err := e.Payload()
			if err != nil {
				return nil, err
			}
			h.Drops = append(h.Drops, HistoryDrop{EntryID: e.ID, Index: i, Replies: len(h.Points),
				TokensBefore: p.(*session.CompactionEntry).TokensBefore, TokensAfter: m.tokens()})
			continue
		case session.TypeContextEdit:
			if err := m.edit(e); err != nil {
				return nil, err
			}
			m.trusted = false
			continue
		}
		msg, err := session.ContextMessage(e)
		if err != nil || msg == nil {
			if err != nil {
				return nil, err
			}
			continue
		}
		m.add(e, msg)
		if _, reply := msg.(*llm.AssistantMessage); reply {
			_, measured := session.ValidUsage(msg)
			h.Points = append(h.Points, HistoryPoint{EntryID: e.ID, Index: i, Tokens: m.tokens(), Measured: measured && e.ID != ""})
		}
	}
	return h, nil
}

// meter keeps the estimate of the context at the end of a growing path.
type meter struct {
	// items are the messages of the context since the latest compaction,
	// at holds their positions by entry id.
	items []meterItem
	at    map[string]int
	// nonSystem is the estimate of the visible messages that are not
	// system messages; system is that of the replayed system state,
	// systemDirty set when it must be computed again.
	nonSystem   int
	system      int
	systemDirty bool
	// trusted reports a valid usage since the latest compaction or
	// context edit: the context is then usage plus trailing.
	trusted  bool
	usage    int
	trailing int
}

// meterItem is one message of the context.
type meterItem struct {
	msg    session.Message // as stored
	tokens int             // its estimate as it is shown (0 when hidden)
	hidden bool
}

func (m *meter) tokens() int {
	if m.trusted {
		return m.usage + m.trailing
	}
	if m.systemDirty {
		var msgs []session.Message
		for _, it := range m.items {
			if _, ok := it.msg.(*session.SystemMessage); ok && !it.hidden {
				msgs = append(msgs, it.msg)
			}
		}
		m.system = 0
		if sys := session.ReplaySystem(msgs); sys != nil {
			m.system = session.EstimateTokens(sys)
		}
		m.systemDirty = false
	}
	return m.system + m.nonSystem
}

// add appends a message of entry e; a reply with a usage that can be
// trusted starts a new trailing count.
func (m *meter) add(e *session.Entry, msg session.Message) {
	m.push(e.ID, msg)
	if u, ok := session.ValidUsage(msg); ok && e.ID != "" {
		m.trusted, m.usage, m.trailing = true, u.ContextTokens(), 0
		return
	}
	m.trailing += session.EstimateTokens(msg)
}

// push appends a message to the context without touching the usage.
func (m *meter) push(id string, msg session.Message) {
	if m.at == nil {
		m.at = map[string]int{}
	}
	it := meterItem{msg: msg, tokens: session.EstimateTokens(msg)}
	if id != "" {
		m.at[id] = len(m.items)
	}
	m.items = append(m.items, it)
	m.count(it, 1)
}

// count adds (sign 1) or removes (-1) an item's share of the estimate.
func (m *meter) count(it meterItem, sign int) {
	if it.hidden {
		return
	}
	if _, ok := it.msg.(*session.SystemMessage); ok {
		m.systemDirty = true
		return
	}
	m.nonSystem += sign * it.tokens
}

// edit applies a context_edit entry to its target, when the target is in
// the context: the target is hidden, or shows the replacement instead of
// its own content (the latest edit of an entry wins over the earlier ones).
func (m *meter) edit(e *session.Entry) error {
	p, err := e.Payload()
	if err != nil {
		return err
	}
	ed := p.(*session.ContextEditEntry)
	j, ok := m.at[ed.TargetID]
	if !ok {
		return nil
	}
	it := &m.items[j]
	m.count(*it, -1)
	shown := session.ApplyContextEdit(it.msg, ed)
	it.hidden = shown == nil
	it.tokens = 0
	if shown != nil {
		it.tokens = session.EstimateTokens(shown)
	}
	m.count(*it, 1)
	return nil
}

// compact starts the context again at the compaction path[i]: its system
// state and summary, then the entries it kept (system messages left out,
// context edits among them applied); no usage before it is trusted.
func (m *meter) compact(path []*session.Entry, i int) error {
	*m = meter{}
	p, err := path[i].Payload()
	if err != nil {
		return err
	}
	c := p.(*session.CompactionEntry)
	if c.SystemMessage != nil {
		m.push("", c.SystemMessage)
	}
	summary, err := session.ContextMessage(path[i])
	if err != nil {
		return err
	}
	m.push(path[i].ID, summary)
	kept := session.KeptStart(path[:i+1], i)
	for j := kept; kept >= 0 && j < i; j++ {
		e := path[j]
		switch e.Type {
		case session.TypeCompaction:
			continue
		case session.TypeContextEdit:
			if err := m.edit(e); err != nil {
				return err
			}
			continue
		}
		msg, err := session.ContextMessage(e)
		if err != nil {
			return err
		}
		if _, system := msg.(*session.SystemMessage); msg == nil || system {
			continue
		}
		m.push(e.ID, msg)
	}
	return nil
}

// sparkLevels are the heights of a sparkline's columns.
const sparkLevels = "▁▂▃▄▅▆▇█"

// Sparkline draws the points in width columns, each the fullest context
// among its replies, scaled so that top tokens (the window; the fullest
// point when top is not positive) is the tallest bar. It is "" when there
// are no points.
func (h *History) Sparkline(width, top int) string {
	n := len(h.Points)
	if n == 0 || width <= 0 {
		return ""
	}
	if top <= 0 {
		for _, p := range h.Points {
			top = max(top, p.Tokens)
		}
	}
	levels := []rune(sparkLevels)
	cols := min(width, n)
	out := make([]rune, cols)
	for c := range cols {
		peak := 0
		for _, p := range h.Points[c*n/cols : (c+1)*n/cols] {
			peak = max(peak, p.Tokens)
		}
		l := peak * len(levels) / max(top, 1)
		out[c] = levels[min(max(l, 0), len(levels)-1)]
	}
	return string(out)
}
