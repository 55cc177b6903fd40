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
		ThinkingLevel: c.thinking, Busy: c.busy, Compacting: c.compacting, Streaming: c.busy && !c.manual,
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
}

// Stats adds up the session's messages and usage. The sums are kept: a
// call reads only the entries appended since the last (the first call on a
// long session reads every message back from the file).
func (a *Agent) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := &a.stats
	if c.s != a.s || c.n > a.s.Len() {
		*c = statsCache{s: a.s}
	}
	for _, e := range a.s.EntriesFrom(c.n) {
		c.st.add(e)
		c.n++
	}
	return c.st
}

// statsCache is Stats of the first n entries of the session s.
type statsCache struct {
	s  *session.Session
	n  int
	st Stats
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
