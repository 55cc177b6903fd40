package tui

import (
	"cmp"
	"errors"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm"
)

// submit sends what the user typed: a command, a shell command, or a
// message for the model (held back while a compaction runs).
func (m *Model) submit(text string, behavior agent.Behavior) tea.Cmd {
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return nil
	}
	if name, args, ok := parseCommand(trimmed); ok {
		return m.command(name, args)
	}
	if w := unknownCommand(trimmed); w != "" && !m.resourceCommand(w) {
		m.warn("Unknown command " + w + ": type / to see the commands")
		if m.editor.value() == "" {
			m.editor.setValue(text)
		}
		return nil
	}
	if cmd, ok := strings.CutPrefix(trimmed, "!!"); ok {
		return m.runBash(strings.TrimSpace(cmd), true)
	}
	if cmd, ok := strings.CutPrefix(trimmed, "!"); ok {
		return m.runBash(strings.TrimSpace(cmd), false)
	}
	if m.compacting != "" || m.manual || m.navigating {
		m.held = append(m.held, heldMessage{text: text, behavior: behavior})
		m.status("Queued message for after compaction")
		return nil
	}
	return m.prompt(text, behavior)
}

// prompt hands a message to the agent. A message the agent refuses goes
// back into the editor, so that nothing typed is lost.
func (m *Model) prompt(text string, behavior agent.Behavior) tea.Cmd {
	ctx, ag := m.ctx, m.ag
	return m.call(func() resultMsg {
		_, err := ag.Prompt(ctx, text, agent.PromptOptions{Behavior: behavior})
		return func(m *Model) tea.Cmd {
			if err != nil {
				m.fail(noModelHint(err))
				if m.editor.value() == "" {
					m.editor.setValue(text)
				}
			}
			return nil
		}
	})
}

// releaseHeld sends the messages held during a compaction.
func (m *Model) releaseHeld() tea.Cmd {
	held := m.held
	m.held = nil
	var cmds []tea.Cmd
	for _, h := range held {
		cmds = append(cmds, m.prompt(h.text, h.behavior))
	}
	return tea.Batch(cmds...)
}

// onEvent applies one agent event.
func (m *Model) onEvent(e agent.Event) tea.Cmd {
	switch e := e.(type) {
	case agent.AgentStart:
		m.busy = true
	case agent.AgentSettled:
		m.busy = false
		m.retry = nil
		m.releaseFailed()
		if e.Aborted && !m.showsAbort() {
			m.add(&assistantItem{done: true, stop: llm.StopReasonAborted})
		}
		return m.branchCmd()
	case agent.MessageStart:
		switch msg := e.Message.(type) {
		case *llm.UserMessage:
			m.add(&userItem{text: userText(msg.Content)})
		case *llm.AssistantMessage:
			m.cur = &assistantItem{}
			m.streamTools = map[int]*toolItem{}
			m.add(m.cur)
		}
	case agent.MessageUpdate:
		m.onStream(e.Event)
	case agent.MessageEnd:
		if am, ok := e.Message.(*llm.AssistantMessage); ok {
			if m.cur == nil {
				m.cur = &assistantItem{}
				m.add(m.cur)
			}
			m.cur.finish(am)
			m.holdFailed(m.cur)
			for _, c := range am.ToolCalls() {
				if t := m.tools[c.ID]; t != nil {
					t.args = c.Arguments
				}
			}
			m.cur = nil
		}
	case agent.ToolStart:
		t := m.tool(e.Call.ID, e.Call.Name)
		t.args, t.running, t.started = e.Call.Arguments, true, m.clock()
	case agent.ToolUpdate:
		m.tool(e.Call.ID, e.Call.Name).setResult(e.Partial)
	case agent.ToolEnd:
		t := m.tool(e.Call.ID, e.Call.Name)
		t.args = e.Call.Arguments
		t.setResult(e.Result)
		t.isError = t.isError || e.IsError
		t.done, t.running, t.took = true, false, e.Duration
		delete(m.tools, e.Call.ID)
	case agent.QueueUpdate:
		m.steering, m.followUp = e.Steering, e.FollowUp
	case agent.AgentEnd:
		m.onAgentEnd(e)
	case agent.RetryStart:
		r := e
		m.retry, m.retryAt = &r, m.clock().Add(e.Delay)
	case agent.RetryEnd:
		m.onRetryEnd(e)
	case agent.CompactionStart:
		m.compacting, m.compactNote = e.Reason, ""
		m.cprog = compactProgress{since: m.clock()}
	case *agent.Progress:
		m.onProgress(e)
	case agent.CompactionEnd:
		return m.onCompactionEnd(e)
	case agent.CompactionUndone:
		return m.onUndone(e.Result)
	case agent.BackgroundCompaction:
		m.onBackground(e)
	case agent.BranchSummaryStart:
		m.summarizing = true
	case agent.BranchSummaryEnd:
		m.summarizing = false
	case agent.SessionChanged:
		m.load(false)
		if m.checkLong(); m.statsPending {
			m.footer.stats = agent.Stats{} // not the last session's
			return m.statsCmd()
		}
	case agent.Notice:
		m.add(&noticeItem{level: e.Level, text: e.Text})
	case agent.ApprovalAsked:
		m.onApproval(e.Request)
	case agent.ApprovalSettled:
		m.onApprovalSettled(e)
	case agent.BashUpdate:
		if m.bash != nil && m.bash.id == e.ID {
			m.bash.output += e.Delta
		}
	}
	return nil
}

// onBackground says what became of a summary written in the background
// when it cost something for nothing: it failed, or no longer fit the
// conversation. (Started, ready and used show in the footer and in the
// compaction's receipt; a cancel follows the user's own Escape.)
func (m *Model) onBackground(e agent.BackgroundCompaction) {
	switch e.Kind {
	case agent.BackgroundFailed:
		why := "unknown error"
		if e.Err != nil {
			why = e.Err.Error()
		}
		m.warn("The background summary failed (" + why + "); a compaction at the threshold writes its own")
	case agent.BackgroundOvertaken:
		m.status("Background summary dropped: " + cmp.Or(e.Why, "it no longer fits the conversation"))
	}
}

// showsAbort reports whether the last reply shown says it was aborted.
func (m *Model) showsAbort() bool {
	for i := len(m.items) - 1; i >= 0; i-- {
		if a, ok := m.items[i].(*assistantItem); ok {
			return a.stop == llm.StopReasonAborted
		}
		if _, ok := m.items[i].(*userItem); ok {
			return false
		}
	}
	return false
}

// tool returns the block of a call, making it when the call is new.
func (m *Model) tool(id, name string) *toolItem {
	if t := m.tools[id]; t != nil {
		return t
	}
	t := &toolItem{id: id, name: name}
	m.tools[id] = t
	m.add(t)
	return t
}

// onStream applies a streamed step of the reply.
func (m *Model) onStream(e llm.Event) {
	if m.cur == nil {
		return
	}
	switch e.Type {
	case llm.EventToolCallStart:
		var id, name string
		if c, ok := e.Content.(llm.ToolCall); ok {
			id, name = c.ID, c.Name
		}
		if id == "" {
			return
		}
		m.streamTools[e.Index] = m.tool(id, name)
	case llm.EventToolCallDelta:
		if t := m.streamTools[e.Index]; t != nil {
			t.rawArgs += e.Delta
		}
	case llm.EventToolCallEnd:
		if c, ok := e.Content.(llm.ToolCall); ok {
			m.tool(c.ID, c.Name).args = c.Arguments
		}
	default:
		m.cur.delta(e)
	}
}

// onProgress shows what a compaction or branch summary is doing.
func (m *Model) onProgress(p *agent.Progress) {
	m.onCompactProgress(p)
	switch p.Kind {
	case agent.ProgressRetry:
		m.compactNote = "(the provider failed; attempt " + itoa(p.Attempt+1) + " in " + p.Delay.Round(time.Second).String() + ")"
	case agent.ProgressOverflowRetry:
		m.compactNote = "(too large for the summarizer; sending less)"
	case agent.ProgressFallback:
		m.compactNote = "(no model can write it; building the summary by code)"
	case agent.ProgressHookReport:
		if p.HookReport != nil {
			m.warn(p.HookReport.Error())
		}
	}
}

// onCompactionEnd shows a compaction's outcome: the [compaction] block, or
// why there is none, then sends what was typed meanwhile.
func (m *Model) onCompactionEnd(e agent.CompactionEnd) tea.Cmd {
	m.compacting, m.compactNote = "", ""
	switch {
	case e.Result != nil:
		r := e.Result
		instr := r.Plan.Instructions
		summary := ""
		if r.Compaction != nil {
			summary = r.Compaction.Summary
		}
		m.add(&compactionItem{tokensBefore: r.TokensBefore, instructions: instr, summary: summary, receipt: r.Receipt})
	case e.Aborted:
		if e.Reason == agent.ReasonManual {
			m.fail("Compaction cancelled")
		} else {
			m.status("Auto-compaction cancelled")
		}
	case e.Err != nil:
		var nc *agent.NotCompactableError
		if errors.As(e.Err, &nc) && e.Reason == agent.ReasonManual {
			m.warn(nc.Error())
		} else {
			m.fail(strings.TrimPrefix(agent.CompactionErrorText(e.Reason, e.Err), "Error: "))
		}
	}
	if m.manual {
		return nil // the /compact command's result releases the held messages
	}
	return m.releaseHeld()
}
