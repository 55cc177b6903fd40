package tui

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm"
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
	tr := m.ag.Transcript()
	items = append(items, transcriptItems(tr)...)
	if compactions := tr.Compactions; compactions > 0 {
		items = append(items, &noticeItem{text: fmt.Sprintf("Session compacted %d %s", compactions, plural(compactions, "time", "times"))})
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

// transcriptItems turns the agent's transcript into items.
func transcriptItems(tr agent.Transcript) []item {
	var items []item
	tools := map[string]*toolItem{}
	for _, it := range tr.Items {
		switch it.Kind {
		case agent.TranscriptUser:
			items = append(items, &userItem{text: userText(it.Message.(*llm.UserMessage).Content)})
		case agent.TranscriptAssistant:
			msg := it.Message.(*llm.AssistantMessage)
			a := &assistantItem{}
			a.finish(msg)
			items = append(items, a)
			for _, c := range msg.ToolCalls() {
				t := &toolItem{id: c.ID, name: c.Name, args: c.Arguments}
				tools[c.ID] = t
				items = append(items, t)
			}
		case agent.TranscriptToolResult:
			msg := it.Message.(*llm.ToolResultMessage)
			t := tools[msg.ToolCallID]
			if t == nil {
				t = &toolItem{id: msg.ToolCallID, name: msg.ToolName}
				items = append(items, t)
			}
			t.output, t.details, t.isError = llm.TextOf(msg.Content), msg.Details, msg.IsError
			t.done, t.took = true, time.Duration(msg.DurationMs)*time.Millisecond
		case agent.TranscriptBash:
			b := it.Bash
			items = append(items, &bashItem{command: b.Command, exclude: b.ExcludeFromContext, output: b.Output, done: true,
				exitCode: b.ExitCode, cancelled: b.Cancelled, truncated: b.Truncated, fullPath: b.FullOutputPath})
		case agent.TranscriptCustom:
			items = append(items, &customItem{customType: it.CustomType, text: llm.TextOf(it.Content)})
		case agent.TranscriptCompaction:
			c := it.Compaction
			items = append(items, &compactionItem{tokensBefore: c.TokensBefore, instructions: c.Instructions, summary: c.Summary, receipt: c.Receipt})
		case agent.TranscriptBranchSummary:
			items = append(items, &branchItem{summary: it.Summary})
		}
	}
	// A call whose result never came (an interrupted session) is shown as
	// it was left.
	for _, t := range tools {
		t.done = true
	}
	return items
}
