package tui

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// load builds the transcript again from the session's current path: the
// header, then, when the path holds a compaction, the [compaction] block
// first and the messages it kept after it, then what followed. first is set
// for the transcript shown at startup, which is printed below whatever the
// terminal showed; later loads (another session, a navigation) repaint.
func (m *Model) load(first bool) {
	h := &headerItem{version: m.opts.Version, ready: !first}
	m.fillHeader(h)
	items := []item{h}
	var compactions int
	m.ag.View(func(s *session.Session) {
		var rest []item
		rest, compactions = pathItems(s.LeafPath())
		items = append(items, rest...)
	})
	if compactions > 0 {
		items = append(items, &noticeItem{text: fmt.Sprintf("Session compacted %d time(s)", compactions)})
	}
	// Status lines not printed yet (a command's result that came before
	// the agent's SessionChanged) stay, after the new transcript.
	for _, it := range m.items[min(m.printed, len(m.items)):] {
		if n, ok := it.(*noticeItem); ok {
			items = append(items, n)
		}
	}
	m.items, m.printed = items, 0
	m.repaint = !first
	m.cur, m.tools, m.streamTools = nil, map[string]*toolItem{}, map[int]*toolItem{}
}

// fillHeader lists the context files in the header.
func (m *Model) fillHeader(h *headerItem) {
	h.contextFiles = nil
	for _, f := range m.ag.ContextFiles() {
		h.contextFiles = append(h.contextFiles, m.shortPath(f.Path))
	}
}

// shortPath writes a path with the home directory as ~.
func (m *Model) shortPath(p string) string {
	if h := m.opts.Home; h != "" && strings.HasPrefix(p, h+string(filepath.Separator)) {
		return "~" + p[len(h):]
	}
	return p
}

// pathItems turns the entries of a root-to-leaf path into transcript
// items, and counts the compactions on it.
func pathItems(path []*session.Entry) ([]item, int) {
	last, count := -1, 0
	hidden := map[string]bool{}
	for i, e := range path {
		switch e.Type {
		case session.TypeCompaction:
			last = i
			count++
		case session.TypeContextEdit:
			if p, err := e.Payload(); err == nil {
				if ce, ok := p.(*session.ContextEditEntry); ok && ce.Replacement == nil {
					hidden[ce.TargetID] = true
				}
			}
		}
	}
	var items []item
	entries := path
	if last >= 0 {
		if c, ok := entryItem(path[last]); ok {
			items = append(items, c)
		}
		kept := session.KeptStart(path, last)
		if kept < 0 {
			kept = last
		}
		entries = append(append([]*session.Entry(nil), path[kept:last]...), path[last+1:]...)
	}
	tools := map[string]*toolItem{}
	for _, e := range entries {
		if hidden[e.ID] || e.Type == session.TypeCompaction {
			continue
		}
		if e.Type != session.TypeMessage {
			if it, ok := entryItem(e); ok {
				items = append(items, it)
			}
			continue
		}
		msg, err := e.Message()
		if err != nil {
			continue
		}
		switch msg := msg.(type) {
		case *llm.UserMessage:
			items = append(items, &userItem{text: userText(msg.Content)})
		case *llm.AssistantMessage:
			a := &assistantItem{}
			a.finish(msg)
			items = append(items, a)
			for _, c := range msg.ToolCalls() {
				t := &toolItem{id: c.ID, name: c.Name, args: c.Arguments}
				tools[c.ID] = t
				items = append(items, t)
			}
		case *llm.ToolResultMessage:
			t := tools[msg.ToolCallID]
			if t == nil {
				t = &toolItem{id: msg.ToolCallID, name: msg.ToolName}
				items = append(items, t)
			}
			t.output, t.details, t.isError = llm.TextOf(msg.Content), msg.Details, msg.IsError
			t.done, t.took = true, time.Duration(msg.DurationMs)*time.Millisecond
		case *session.BashExecution:
			items = append(items, &bashItem{command: msg.Command, exclude: msg.ExcludeFromContext, output: msg.Output, done: true,
				exitCode: msg.ExitCode, cancelled: msg.Cancelled, truncated: msg.Truncated, fullPath: msg.FullOutputPath})
		case *session.CustomMessage:
			if msg.Display {
				items = append(items, &customItem{customType: msg.CustomType, text: llm.TextOf(msg.Content)})
			}
		}
	}
	// A call whose result never came (an interrupted session) is shown as
	// it was left.
	for _, t := range tools {
		t.done = true
	}
	return items, count
}

// entryItem is the item of an entry that is not a message: the
// [compaction] and [branch] blocks and displayed custom messages.
func entryItem(e *session.Entry) (item, bool) {
	p, err := e.Payload()
	if err != nil {
		return nil, false
	}
	switch p := p.(type) {
	case *session.CompactionEntry:
		return &compactionItem{tokensBefore: p.TokensBefore, instructions: p.CustomInstructions, summary: p.Summary}, true
	case *session.BranchSummaryEntry:
		return &branchItem{summary: p.Summary}, true
	case *session.CustomMessageEntry:
		if p.Display {
			return &customItem{customType: p.CustomType, text: llm.TextOf(p.Content)}, true
		}
	}
	return nil, false
}
