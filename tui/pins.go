package tui

import (
	"errors"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
)

// Pins: texts the model sees word for word after any number of
// compactions (/pin TEXT, Shift-P on a message in /tree), listed by /pins,
// removed by /unpin ID or /unpin TEXT. The agent stores them; the UI only
// says what became of each command.

// pinCommand is /pin TEXT.
func (m *Model) pinCommand(text string) tea.Cmd {
	if text == "" {
		m.warn("/pin TEXT pins a text; to pin a message, press shift+p on it in /tree")
		return nil
	}
	ag := m.ag
	return m.call(func() resultMsg {
		p, err := ag.Pin(text)
		return report(err, func(*Model) string { return pinnedText(p) })
	})
}

// pinnedText is the status line after a pin.
func pinnedText(p compaction.Pin) string {
	return "Pinned " + p.ID + ": " + cutRunes(oneLine(p.Text), 80) + " (the model sees it word for word until /unpin)"
}

// unpinCommand is /unpin ID|TEXT.
func (m *Model) unpinCommand(ref string) tea.Cmd {
	if ref == "" {
		m.warn("/unpin ID or /unpin TEXT removes a pin; /pins lists them")
		return nil
	}
	ag := m.ag
	return m.call(func() resultMsg {
		p, err := ag.Unpin(ref)
		if errors.Is(err, agent.ErrNoPin) {
			return func(m *Model) tea.Cmd {
				m.fail("no pin " + quoteShort(ref) + " on this branch: /pins lists them with their ids")
				return nil
			}
		}
		return report(err, func(*Model) string { return "Unpinned " + p.ID + ": " + cutRunes(oneLine(p.Text), 80) })
	})
}

// quoteShort quotes what the user typed, cut to one short line.
func quoteShort(s string) string {
	return `"` + cutRunes(oneLine(s), 60) + `"`
}

// pinsCommand is /pins: the pins of the current branch with their ids.
func (m *Model) pinsCommand() {
	pins := m.ag.Pins()
	if len(pins) == 0 {
		m.status("No pins on this branch: /pin TEXT pins one, shift+p pins a message in /tree")
		return
	}
	m.add(&textItem{text: func(v *view) string { return pinsText(v, pins) }})
}

// pinsText renders the /pins block: each pin's id, then its text, wrapped
// and indented under it; where it came from when a message was pinned.
func pinsText(v *view, pins []compaction.Pin) string {
	var b strings.Builder
	b.WriteString(v.st.blockTitle.Render("[pins]") + v.st.muted.Render(" the model sees these word for word; /unpin ID removes one"))
	for _, p := range pins {
		b.WriteString("\n" + v.st.accent.Render(p.ID))
		if p.MessageID != "" {
			b.WriteString(v.st.muted.Render(" from message " + p.MessageID))
		}
		for _, l := range strings.Split(wrap(p.Text, max(v.width-2, 10)), "\n") {
			b.WriteString("\n  " + l)
		}
	}
	return b.String()
}

// pinEntry is Shift-P in the tree: it pins the selected message's text,
// then shows the tree again at the same entry, now marked pinned.
func (m *Model) pinEntry(id string, f treeFilter) tea.Cmd {
	m.overlay = nil
	ag := m.ag
	return m.call(func() resultMsg {
		p, err := ag.PinMessage(id)
		return func(m *Model) tea.Cmd {
			if err != nil {
				m.fail(err.Error())
				return m.openTreeAt(id, f)
			}
			m.status(pinnedText(p))
			return m.openTreeAt(id, f)
		}
	})
}
