package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/internal/numfmt"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// contextCommand is /context: what fills the context now, measured by the
// agent, shown as a block that is drawn for the terminal's width (again
// when it changes).
func (m *Model) contextCommand() tea.Cmd {
	ctx, ag := m.ctx, m.ag
	return async(func() resultMsg {
		b, err := ag.ContextBreakdown(ctx, agent.BreakdownRequest{})
		kept := ""
		if err == nil && b.Compaction != nil {
			ag.View(func(s *session.Session) { kept = entryPreview(s.Entry(b.Compaction.FirstKeptEntryID)) })
		}
		return func(m *Model) tea.Cmd {
			if err != nil {
				m.fail("cannot measure the context: " + err.Error())
				return nil
			}
			m.add(&textItem{text: func(v *view) string { return breakdownText(v, b, kept) }})
			return nil
		}
	})
}

// kindColour is the colour of a kind's letter in the bar, one colour per
// kind, in the terminal's own palette.
func kindColour(k compaction.ContextKind) lipgloss.Style {
	c := lipgloss.White
	switch k {
	case compaction.KindSystem:
		c = lipgloss.Blue
	case compaction.KindTools:
		c = lipgloss.BrightBlue
	case compaction.KindSummaries:
		c = lipgloss.Magenta
	case compaction.KindUser:
		c = lipgloss.Green
	case compaction.KindAssistant:
		c = lipgloss.Cyan
	case compaction.KindThinking:
		c = lipgloss.BrightMagenta
	case compaction.KindToolCalls:
		c = lipgloss.Yellow
	case compaction.KindToolResults:
		c = lipgloss.BrightYellow
	case compaction.KindImages:
		c = lipgloss.BrightCyan
	}
	return lipgloss.NewStyle().Foreground(c)
}

// entryPreview is one line saying what an entry is, as the tree's rows
// say it ("user: …"); "" for none.
func entryPreview(e *session.Entry) string {
	if e == nil {
		return ""
	}
	if msg, err := e.Message(); err == nil {
		return cutRunes(oneLine((&treeNode{}).messageText(msg, map[string]llm.ToolCall{}, false)), 100)
	}
	return "[" + e.Type + "]"
}

// breakdownText renders /context: the total against the window, the bar
// the width of the terminal with the threshold (|) and the background mark
// (:), every kind that holds tokens, and what a compaction now would
// summarize and keep (kept: the first entry it would keep).
func breakdownText(v *view, b *agent.ContextBreakdown, kept string) string {
	var out strings.Builder
	title := fmt.Sprintf("%s tokens", numfmt.Commas(b.Total))
	if b.Window > 0 {
		title += fmt.Sprintf(" of a %s-token window (%.1f%%)", numfmt.Commas(b.Window), float64(b.Total)/float64(b.Window)*100)
	}
	out.WriteString(wrap(v.st.blockTitle.Render("[context]")+" "+title, v.width) + "\n")
	out.WriteString(colourBar(v, b, b.Bar(v.width)) + "\n")
	for _, p := range b.Parts {
		if p.Tokens == 0 {
			continue
		}
		letter := string(compaction.KindLetter(p.Kind))
		share := ""
		if b.Total > 0 {
			share = fmt.Sprintf("%5.1f%%", float64(p.Tokens)/float64(b.Total)*100)
		}
		out.WriteString("  " + kindColour(p.Kind).Render(letter) + " " + padRight(compaction.KindName(p.Kind), 17) +
			fmt.Sprintf("%9s", numfmt.Commas(p.Tokens)) + v.st.muted.Render("  "+share) + "\n")
	}
	var marks []string
	if b.Threshold > 0 {
		marks = append(marks, "auto-compaction above "+numfmt.Commas(b.Threshold)+" ("+v.st.warning.Render("|")+")")
	}
	if b.BackgroundMark > 0 {
		marks = append(marks, "background summary above "+numfmt.Commas(b.BackgroundMark)+" ("+v.st.warning.Render(":")+")")
	}
	line := "Next request ~" + numfmt.Commas(b.Estimate) + " tokens"
	if len(marks) > 0 {
		line += " · " + strings.Join(marks, " · ")
	}
	out.WriteString(wrap(line, v.width) + "\n")
	if c := b.Compaction; c != nil {
		text := fmt.Sprintf("A compaction now would summarize %d %s (%s tokens) and keep %d word for word (%s tokens)",
			c.SummarizeMessages, plural(c.SummarizeMessages, "message", "messages"), numfmt.Commas(c.SummarizeTokens),
			c.KeepMessages, numfmt.Commas(c.KeepTokens))
		if c.IsSplitTurn {
			text += ", cutting a turn in two"
		}
		out.WriteString(wrap(text, v.width))
		if kept != "" {
			out.WriteString("\n" + v.st.muted.Render(truncate("  kept from "+kept, v.width)))
		}
	} else {
		out.WriteString(wrap(v.st.muted.Render("Nothing to compact now: "+b.NotCompactable), v.width))
	}
	return out.String()
}

// colourBar colours a bar drawn by ContextBreakdown.Bar: each kind's
// letter in its colour, free room dim, the marks as warnings.
func colourBar(v *view, b *agent.ContextBreakdown, bar string) string {
	byLetter := map[byte]lipgloss.Style{}
	for _, p := range b.Parts {
		byLetter[compaction.KindLetter(p.Kind)] = kindColour(p.Kind)
	}
	var out strings.Builder
	for i := 0; i < len(bar); {
		j := i
		for j < len(bar) && bar[j] == bar[i] {
			j++
		}
		run := bar[i:j]
		switch st, ok := byLetter[bar[i]]; {
		case bar[i] == '.':
			out.WriteString(v.st.dim.Render(run))
		case bar[i] == '|' || bar[i] == ':':
			out.WriteString(v.st.warning.Render(run))
		case ok:
			out.WriteString(st.Render(run))
		default:
			out.WriteString(run)
		}
		i = j
	}
	return out.String()
}
