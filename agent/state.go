package agent

import (
	"fmt"
	"strings"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// State is a snapshot of what the agent is and does (RPC's get_state, the
// TUI's footer).
type State struct {
	// Model is the model in use; nil before one is chosen.
	Model         *llm.Model
	ThinkingLevel llm.ThinkingLevel
	// Busy is set while the agent works on a prompt (retries and
	// compactions included); Compacting while a compaction or a branch
	// summary runs.
	Busy, Compacting bool
	SteeringMode     QueueMode
	FollowUpMode     QueueMode
	// SessionFile is empty for a session kept in memory; SessionID is the
	// header's id.
	SessionFile, SessionID string
	SessionName            string
	AutoCompaction         bool
	AutoRetry              bool
	// MessageCount is the number of messages the model would see;
	// PendingMessageCount the number queued.
	MessageCount, PendingMessageCount int
	// Context is how full the model's context window is.
	Context ContextUsage

	// Streaming is set while a prompt's run goes on (its retries and
	// automatic compactions included), not during a manual compaction or
	// a navigation: when a prompt must say steer or followUp (pi's
	// isStreaming).
	Streaming bool
}

// ContextUsage says how much of the model's context window the conversation
// fills.
type ContextUsage struct {
	// Tokens is the estimate (the last usage the agent can trust plus
	// chars/4 of what followed it). Known is false right after a compaction,
	// until a reply measures the new context (the footer shows "?").
	Tokens int
	Known  bool
	// Window is the model's context window (0: no model).
	Window int
	// Percent is Tokens of Window, 0 when unknown.
	Percent float64
}

// State returns a snapshot of the agent's state.
func (a *Agent) State() State {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := &a.conv
	st := State{
		ThinkingLevel: c.thinking, Busy: c.phase.busy(), Compacting: c.phase.compacting(), Streaming: c.phase.prompting(),
		SteeringMode: c.steering.modeOrDefault(), FollowUpMode: c.followUp.modeOrDefault(),
		SessionFile: a.s.File(), SessionName: a.s.Name(),
		AutoCompaction: c.autoCompact, AutoRetry: c.autoRetry,
		PendingMessageCount: len(c.steering.items) + len(c.followUp.items),
	}
	a.initFlagsLocked()
	st.AutoCompaction, st.AutoRetry = c.autoCompact, c.autoRetry
	if c.model != nil {
		m := *c.model
		st.Model = &m
	}
	if h := a.s.Header(); h != nil {
		st.SessionID = h.ID
	}
	if sctx, err := a.s.Context(""); err == nil {
		st.MessageCount = len(sctx.Messages)
		st.Context = a.contextUsageLocked(sctx)
	}
	return st
}

// ContextUsage returns how full the context window is.
func (a *Agent) ContextUsage() ContextUsage {
	a.mu.Lock()
	defer a.mu.Unlock()
	sctx, err := a.s.Context("")
	if err != nil {
		return ContextUsage{}
	}
	return a.contextUsageLocked(sctx)
}

// contextUsageLocked is pi's getContextUsage: unknown after a compaction
// until a reply after it reported a usage; else the projected estimate.
func (a *Agent) contextUsageLocked(sctx session.Context) ContextUsage {
	u := ContextUsage{}
	if m := a.conv.model; m != nil {
		u.Window = m.ContextWindow
	}
	if u.Window <= 0 {
		return u
	}
	if len(sctx.Entries) > 0 && sctx.Entries[0].Type == session.TypeCompaction {
		measured := false
		after := sctx.Entries[0].Millis()
		for i, m := range sctx.Messages {
			if _, ok := session.ValidUsage(m); ok && sctx.Entries[i].Millis() > after {
				measured = true
				break
			}
		}
		if !measured {
			return u
		}
	}
	u.Known = true
	u.Tokens = sctx.EstimateNext().Tokens
	u.Percent = float64(u.Tokens) / float64(u.Window) * 100
	return u
}

// SetAutoCompaction turns automatic compaction on or off for this agent
// (front ends write the setting itself; /compact works either way).
func (a *Agent) SetAutoCompaction(on bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.initFlagsLocked()
	a.conv.autoCompact = on
}

// SetAutoRetry turns the automatic retry of failed replies on or off.
func (a *Agent) SetAutoRetry(on bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.initFlagsLocked()
	a.conv.autoRetry = on
}

// initFlagsLocked takes the switches and queue modes from the settings, once.
func (a *Agent) initFlagsLocked() {
	c := &a.conv
	if c.flagsSet {
		return
	}
	c.flagsSet = true
	model := ""
	if c.model != nil {
		model = c.model.Provider + "/" + c.model.ID
	}
	c.autoCompact = a.settings().Compaction(model).Enabled
	c.autoRetry = a.settings().Retry().Enabled
	cs := a.settings().Conversation()
	c.steering.mode, c.followUp.mode = QueueMode(cs.SteeringMode), QueueMode(cs.FollowUpMode)
}

// Messages returns what the model sees now: the projection of the session's
// path (the latest summary first, failed attempts hidden).
func (a *Agent) Messages() ([]session.Message, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	sctx, err := a.s.Context("")
	if err != nil {
		return nil, err
	}
	return sctx.Messages, nil
}

// SetSessionName names the session (a session_info entry; the name is
// folded to one line and trimmed). An empty name is an error: pi clears a
// name only with an explicit empty entry, which front ends do not offer.
func (a *Agent) SetSessionName(name string) error {
	name = strings.TrimSpace(strings.Join(strings.FieldsFunc(name, func(r rune) bool { return r == '\n' || r == '\r' }), " "))
	if name == "" {
		return fmt.Errorf("the session name cannot be empty")
	}
	a.mu.Lock()
	e, err := a.appendLocked(&session.SessionInfoEntry{Name: name})
	a.mu.Unlock()
	if err != nil {
		return err
	}
	a.emit(EntryAppended{Entry: e})
	a.emit(SessionInfoChanged{Name: name})
	return nil
}

// Stats are the totals of a session, over every entry (summaries
// included): what the footer and /session show.
type Stats struct {
	UserMessages, AssistantMessages, ToolCalls, ToolResults, TotalMessages int
	Tokens                                                                 llm.Usage
	Cost                                                                   float64
	// Last is the usage of the latest reply (the footer's cache-hit share).
	Last llm.Usage
}

// Stats adds up the session's messages and usage. The sums are kept and
// extended as the agent appends entries, so a call after the first costs
// nothing; the first (a long session's every message read back from the
// file) runs without the agent's lock, so State and the others never wait
// for it.
func (a *Agent) Stats() Stats {
	a.mu.Lock()
	if a.stats.current(a.s) {
		st := a.stats.st
		a.mu.Unlock()
		return st
	}
	a.mu.Unlock()
	// One sum at a time: a second caller waits for the first's and then
	// finds the sums current.
	a.statsMu.Lock()
	defer a.statsMu.Unlock()
	for {
		a.mu.Lock()
		c := &a.stats
		if c.s != a.s || c.n > a.s.Len() {
			*c = statsCache{s: a.s, gen: c.gen + 1}
		}
		if c.n == a.s.Len() {
			st := c.st
			a.mu.Unlock()
			return st
		}
		gen, from, st := c.gen, c.n, c.st
		// A part at a time, so the lock is held briefly (making the
		// entries of 100k costs some 10 ms).
		todo := a.s.EntriesBetween(from, from+statsPart)
		a.mu.Unlock()
		if a.sumHook != nil {
			a.sumHook()
		}
		// Entries are immutable and read back safely while the session
		// is in use (session.Session's doc): the sum needs no lock. It
		// goes on from the sums so far, in file order, so it is exactly
		// a recount's.
		for _, e := range todo {
			st.add(e)
		}
		a.mu.Lock()
		if c.gen == gen && c.n == from {
			c.st, c.n = st, from+len(todo)
		}
		a.mu.Unlock()
	}
}

// statsPart is how many entries a Stats sum takes under the lock at a time.
const statsPart = 4096

// statsCache is Stats of the first n entries of the session s. It is
// guarded by the agent's mu. gen changes whenever the sums are dropped, so
// a sum made without the lock is kept only if they were not meanwhile.
type statsCache struct {
	s   *session.Session
	n   int
	gen int
	st  Stats
}

// current reports whether the sums cover every entry of s.
func (c *statsCache) current(s *session.Session) bool {
	return c.s == s && c.n == s.Len()
}

// appended counts e, just appended to s, when the sums covered every entry
// before it; else the next Stats reads what they miss.
func (c *statsCache) appended(s *session.Session, e *session.Entry) {
	if c.s == s && c.n == s.Len()-1 {
		c.st.add(e)
		c.n++
	}
}

// reopened carries the sums of old over to s, the same file opened again
// for appending, when s begins with the entries they cover (the file only
// grew); else they are dropped and the next Stats sums s afresh.
func (c *statsCache) reopened(old, s *session.Session) {
	if c.s != old {
		return
	}
	if c.n > s.Len() || (c.n > 0 && !sameEntry(old.EntriesFrom(c.n - 1)[0], s.EntriesFrom(c.n - 1)[0])) {
		*c = statsCache{gen: c.gen + 1}
		return
	}
	c.s = s
}

// sameEntry reports whether a and b are one entry read twice.
func sameEntry(a, b *session.Entry) bool {
	return a.ID == b.ID && a.Type == b.Type && a.Timestamp == b.Timestamp && a.Line == b.Line
}

// add counts the entry e in st.
func (st *Stats) add(e *session.Entry) {
	usage := func(u *llm.Usage) {
		if u == nil {
			return
		}
		st.Tokens.Input += u.Input
		st.Tokens.Output += u.Output
		st.Tokens.CacheRead += u.CacheRead
		st.Tokens.CacheWrite += u.CacheWrite
		st.Tokens.TotalTokens += u.ContextTokens()
		st.Cost += u.Cost.Total
	}
	switch e.Type {
	case session.TypeMessage:
		// Only a reply is decoded: the role, which the index knows, says
		// the rest.
		role, err := e.MessageRole()
		if err != nil {
			return
		}
		var reply *llm.AssistantMessage
		if role == "assistant" {
			m, err := e.Message()
			if err != nil {
				return
			}
			reply, _ = m.(*llm.AssistantMessage)
		}
		st.TotalMessages++
		switch {
		case role == "user":
			st.UserMessages++
		case reply != nil:
			st.AssistantMessages++
			st.ToolCalls += len(reply.ToolCalls())
			usage(&reply.Usage)
			st.Last = reply.Usage
		case role == "toolResult":
			st.ToolResults++
		}
	case session.TypeCompaction, session.TypeBranchSummary:
		p, err := e.Payload()
		if err != nil {
			return
		}
		switch p := p.(type) {
		case *session.CompactionEntry:
			usage(p.Usage)
		case *session.BranchSummaryEntry:
			usage(p.Usage)
		}
	}
}
