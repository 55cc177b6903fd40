package tui

import (
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// overlay is a component that takes the editor's place and its keys while
// it is open: the selectors, the dialogs, the tree, the session picker.
type overlay interface {
	key(m *Model, k tea.KeyPressMsg) tea.Cmd
	paste(m *Model, s string) tea.Cmd
	render(m *Model, v *view) string
}

// listEntry is one choice of a list.
type listEntry struct {
	label, note string
	value       any
}

// matchesWords reports whether text holds every word of query, ignoring
// case: how the selectors, the tree and the picker search.
func matchesWords(text, query string) bool {
	text = strings.ToLower(text)
	for _, w := range strings.Fields(strings.ToLower(query)) {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return true
}

// list is a selector over a few choices: Up and Down move, Enter picks,
// Escape cancels, typing filters (when typeToFilter).
type list struct {
	title        string
	entries      []listEntry
	filter       string
	typeToFilter bool
	sel          int
	pick         func(m *Model, e listEntry) tea.Cmd
	cancel       func(m *Model) tea.Cmd
}

func newList(title string, entries []listEntry, pick func(m *Model, e listEntry) tea.Cmd) *list {
	return &list{title: title, entries: entries, pick: pick}
}

// selectValue highlights the entry holding v.
func (l *list) selectValue(v any) {
	for i, e := range l.visible() {
		if e.value == v {
			l.sel = i
		}
	}
}

func (l *list) visible() []listEntry {
	if l.filter == "" {
		return l.entries
	}
	var out []listEntry
	for _, e := range l.entries {
		if matchesWords(e.label+" "+e.note, l.filter) {
			out = append(out, e)
		}
	}
	return out
}

func (l *list) key(m *Model, k tea.KeyPressMsg) tea.Cmd {
	vis := l.visible()
	switch k.String() {
	case "up":
		if len(vis) > 0 {
			l.sel = (l.sel - 1 + len(vis)) % len(vis)
		}
	case "down":
		if len(vis) > 0 {
			l.sel = (l.sel + 1) % len(vis)
		}
	case "enter":
		if l.sel < len(vis) {
			return l.pick(m, vis[l.sel])
		}
	case "esc", "ctrl+c":
		if l.typeToFilter && l.filter != "" && k.String() == "esc" {
			l.filter, l.sel = "", 0
			return nil
		}
		m.overlay = nil
		if l.cancel != nil {
			return l.cancel(m)
		}
	case "backspace":
		if l.typeToFilter && l.filter != "" {
			r := []rune(l.filter)
			l.filter, l.sel = string(r[:len(r)-1]), 0
		}
	default:
		if l.typeToFilter && k.Text != "" {
			l.filter += k.Text
			l.sel = 0
		}
	}
	return nil
}

func (l *list) paste(m *Model, s string) tea.Cmd {
	if l.typeToFilter {
		l.filter += oneLine(s)
		l.sel = 0
	}
	return nil
}

func (l *list) render(m *Model, v *view) string {
	var b strings.Builder
	b.WriteString(v.st.rule.Render(strings.Repeat("─", v.width)) + "\n")
	b.WriteString(v.st.bold.Render(truncate(l.title, v.width)) + "\n")
	if l.typeToFilter {
		b.WriteString(v.st.muted.Render("  Type to search: ") + v.st.accent.Render(l.filter) + "\n")
	}
	vis := l.visible()
	shown := max(min(10, m.height-8), 3)
	start := 0
	if l.sel >= shown {
		start = l.sel - shown + 1
	}
	if len(vis) == 0 {
		b.WriteString(v.st.muted.Render("  No match") + "\n")
	}
	// The notes of the rows shown start in one column, after the widest
	// label (up to half the width, so a long label does not push every
	// note off the screen).
	pad := 0
	for i := start; i < len(vis) && i < start+shown; i++ {
		if vis[i].note != "" {
			pad = max(pad, min(lipgloss.Width(vis[i].label), v.width/2))
		}
	}
	for i := start; i < len(vis) && i < start+shown; i++ {
		e := vis[i]
		cursor := "  "
		label := e.label
		if gap := pad - lipgloss.Width(label); e.note != "" && gap > 0 {
			label += strings.Repeat(" ", gap)
		}
		if i == l.sel {
			cursor = v.st.accent.Render("› ")
			label = v.st.accent.Render(label)
		}
		line := cursor + label
		if e.note != "" {
			line += "  " + v.st.muted.Render(e.note)
		}
		b.WriteString(truncate(line, v.width) + "\n")
	}
	b.WriteString(v.st.muted.Render(keysLine(v.width, "↑↓ move", "enter select", "escape cancel")) + "\n")
	b.WriteString(v.st.rule.Render(strings.Repeat("─", v.width)))
	return b.String()
}

// dialog asks for one line of text: Enter submits, Escape cancels.
type dialog struct {
	title  string
	input  textinput.Model
	submit func(m *Model, text string) tea.Cmd
	cancel func(m *Model) tea.Cmd
}

func newDialog(title, value string, submit func(m *Model, text string) tea.Cmd) *dialog {
	in := textinput.New()
	in.Prompt = "> "
	in.SetValue(value)
	in.CursorEnd()
	in.Focus()
	return &dialog{title: title, input: in, submit: submit}
}

func (d *dialog) key(m *Model, k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "enter":
		return d.submit(m, d.input.Value())
	case "esc", "ctrl+c":
		m.overlay = nil
		if d.cancel != nil {
			return d.cancel(m)
		}
		return nil
	}
	var cmd tea.Cmd
	d.input, cmd = d.input.Update(k)
	return cmd
}

func (d *dialog) paste(m *Model, s string) tea.Cmd {
	var cmd tea.Cmd
	d.input, cmd = d.input.Update(tea.PasteMsg{Content: oneLine(s)})
	return cmd
}

func (d *dialog) render(m *Model, v *view) string {
	d.input.SetWidth(max(v.width-4, 10))
	var b strings.Builder
	b.WriteString(v.st.rule.Render(strings.Repeat("─", v.width)) + "\n")
	b.WriteString(v.st.bold.Render(truncate(d.title, v.width)) + "\n")
	b.WriteString(d.input.View() + "\n")
	b.WriteString(v.st.muted.Render(keysLine(v.width, "enter confirm", "escape cancel")) + "\n")
	b.WriteString(v.st.rule.Render(strings.Repeat("─", v.width)))
	return b.String()
}
