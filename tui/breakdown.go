package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/internal/numfmt"
)

// contextCommand is /context: what fills the context now, measured by the
// agent, shown as a block that is drawn for the terminal's width (again
// when it changes).
func (m *Model) contextCommand() tea.Cmd {
	ctx, ag := m.ctx, m.ag
	return async(func() resultMsg {
		b, err := ag.ContextBreakdown(ctx, agent.BreakdownRequest{})
		h, herr := ag.ContextHistory(ctx)
		kept := ""
		if err == nil && b.Compaction != nil {
			if d, ok := ag.DescribeEntry(b.Compaction.FirstKeptEntryID); ok {
				kept = cutRunes(oneLine(d.Text), 100)
			}
		}
		return func(m *Model) tea.Cmd {
			if err != nil {
				m.fail("cannot measure the context: " + err.Error())
				return nil
			}
			m.add(&textItem{text: func(v *view) string {
				if herr != nil || len(h.Points) == 0 {
					return breakdownText(v, b, kept)
				}
				return breakdownText(v, b, kept) + "\n" + historyLine(v, h, b.Window)
			}})
			return nil
		}
	})
}

// kindColour is the colour of a kind's letter in the bar, one colour per
// kind, in the terminal's own palette.
func kindColour(k agent.ContextKind) lipgloss.Style {
	c := lipgloss.White
	switch k {
	case agent.KindSystem:
		c = lipgloss.Blue
	case agent.KindTools:
		c = lipgloss.BrightBlue
	case agent.KindSummaries:
		c = lipgloss.Magenta
	case agent.KindUser:
		c = lipgloss.Green
	case agent.KindAssistant:
		c = lipgloss.Cyan
	case agent.KindThinking:
		c = lipgloss.BrightMagenta
	case agent.KindToolCalls:
		c = lipgloss.Yellow
	case agent.KindToolResults:
		c = lipgloss.BrightYellow
	case agent.KindImages:
		c = lipgloss.BrightCyan
	}
	return lipgloss.NewStyle().Foreground(c)
}

// breakdownText renders /context: the size against the window, the bar
// the width of the terminal with the threshold (|) and the background mark
// (:), every kind that holds tokens, and what a compaction now would
// summarize and keep (kept: the first entry it would keep).
func breakdownText(v *view, b *agent.ContextBreakdown, kept string) string {
	var out strings.Builder
	// The size is the one the footer and the threshold go by: the last
	// usage the model measured and chars/4 of what followed. The kinds can
	// only be estimated (chars/4 each), so their sum may differ from it,
	// and then says so.
	size := b.Estimate
	if size == 0 {
		size = b.Total
	}
	title := fmt.Sprintf("%s tokens", numfmt.Commas(size))
	if b.Window > 0 {
		title += fmt.Sprintf(" of a %s-token window (%.1f%%)", numfmt.Commas(b.Window), float64(size)/float64(b.Window)*100)
	}
	out.WriteString(wrap(v.st.blockTitle.Render("[context]")+" "+title, v.width) + "\n")
	out.WriteString(colourBar(v, b, b.Bar(v.width)) + "\n")
	for _, p := range b.Parts {
		if p.Tokens == 0 {
			continue
		}
		letter := string(agent.ContextKindLetter(p.Kind))
		share := ""
		if b.Total > 0 {
			share = fmt.Sprintf("%5.1f%%", float64(p.Tokens)/float64(b.Total)*100)
		}
		out.WriteString("  " + kindColour(p.Kind).Render(letter) + " " + padRight(agent.ContextKindName(p.Kind), 17) +
			fmt.Sprintf("%9s", numfmt.Commas(p.Tokens)) + v.st.muted.Render("  "+share) + "\n")
	}
	var marks []string
	if b.Threshold > 0 {
		marks = append(marks, "auto-compaction above "+numfmt.Commas(b.Threshold)+" ("+v.st.warning.Render("|")+")")
	}
	if b.BackgroundMark > 0 {
		marks = append(marks, "background summary above "+numfmt.Commas(b.BackgroundMark)+" ("+v.st.warning.Render(":")+")")
	}
	if b.Total != size {
		out.WriteString(wrap(v.st.muted.Render(fmt.Sprintf("  the kinds at 4 characters a token: ~%s", numfmt.Commas(b.Total))), v.width) + "\n")
	}
	if len(marks) > 0 {
		out.WriteString(wrap(strings.Join(marks, " · "), v.width) + "\n")
	}
	if c := b.Compaction; c != nil {
		text := fmt.Sprintf("A compaction now would summarize %d %s (%s tokens) and keep %d word for word (%s tokens)",
			c.SummarizeMessages, plural(c.SummarizeMessages, "message", "messages"), numfmt.Commas(c.SummarizeTokens),
			c.KeepMessages, numfmt.Commas(c.KeepTokens))
		if c.IsSplitTurn {
			text += ", cutting a turn in two"
		}
		if c.LedgerBudget > 0 {
			text += fmt.Sprintf("; its summary would carry the user's rules and words, %s tokens (budget %s)",
				numfmt.Commas(c.LedgerTokens), numfmt.Commas(c.LedgerBudget))
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
		byLetter[agent.ContextKindLetter(p.Kind)] = kindColour(p.Kind)
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

// historyLine is /context's last line: the context after every reply of
// the path as a sparkline against the window, with the compactions counted.
func historyLine(v *view, h *agent.ContextHistoryPoints, window int) string {
	label := fmt.Sprintf(" %d %s, %d %s", len(h.Points), plural(len(h.Points), "reply", "replies"), len(h.Drops), plural(len(h.Drops), "compaction", "compactions"))
	return v.st.muted.Render("History ") + h.Sparkline(max(v.width-8-len(label), 1), window) + v.st.muted.Render(label)
}
