package tui

import (
	"errors"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/agent"
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
func pinnedText(p agent.Pin) string {
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
func pinsText(v *view, pins []agent.Pin) string {
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

// pinsRenewed says what an undone compaction did to the pins: a pin carried
// over with a new id (its text the same), a pin no longer on the branch,
// one on it again. "" when the pins are the same.
func pinsRenewed(before, after []agent.Pin) []string {
	was, now := map[string]bool{}, map[string]bool{}
	for _, p := range before {
		was[p.ID] = true
	}
	byText := map[string]agent.Pin{}
	for _, p := range after {
		now[p.ID] = true
		if !was[p.ID] {
			byText[p.Text] = p
		}
	}
	var out []string
	for _, p := range before {
		if now[p.ID] {
			continue
		}
		text := cutRunes(oneLine(p.Text), 60)
		if q, ok := byText[p.Text]; ok {
			delete(byText, p.Text)
			out = append(out, "The pin "+p.ID+" is now "+q.ID+": "+text+" (/unpin "+q.ID+" removes it)")
			continue
		}
		out = append(out, "The pin "+p.ID+": "+text+" is no longer on this branch: the model no longer sees it (/pin it again to keep it)")
	}
	for _, q := range after {
		if _, ok := byText[q.Text]; ok && !was[q.ID] {
			delete(byText, q.Text)
			out = append(out, "The pin "+q.ID+": "+cutRunes(oneLine(q.Text), 60)+" is on this branch again: the model sees it")
		}
	}
	return out
}
