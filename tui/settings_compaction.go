package tui

import (
	"cmp"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// compactionKeys are the compaction settings /settings edits besides
// auto-compaction itself; they are saved to the global settings file, and
// the running session reads them again before its next prompt.
var compactionKeys = []struct{ key, label string }{
	{"compaction.reserveTokens", "reserve tokens"},
	{"compaction.keepRecentTokens", "keep recent tokens"},
	{"compaction.background", "background summary"},
	{"compaction.backgroundThreshold", "background threshold %"},
	{"compaction.model", "summary model"},
}

// compactionEntries are /settings' rows for compactionKeys.
func (m *Model) compactionEntries() []listEntry {
	p := m.ag.Preferences()
	notes := map[string]string{
		"compaction.reserveTokens":       strconv.Itoa(p.ReserveTokens),
		"compaction.keepRecentTokens":    strconv.Itoa(p.KeepRecentTokens),
		"compaction.background":          map[bool]string{true: "on", false: "off"}[p.Background],
		"compaction.backgroundThreshold": strconv.Itoa(p.BackgroundPercent),
		"compaction.model":               cmp.Or(p.SummaryModel, "(the session's model)"),
	}
	var out []listEntry
	for _, k := range compactionKeys {
		out = append(out, listEntry{label: k.label, note: notes[k.key], value: k.key})
	}
	return out
}

// editCompactionSetting changes one of compactionKeys: background is
// switched; the others are typed (an empty model goes back to the
// session's).
func (m *Model) editCompactionSetting(key string) (tea.Cmd, bool) {
	var label string
	for _, k := range compactionKeys {
		if k.key == key {
			label = k.label
		}
	}
	if label == "" {
		return nil, false
	}
	if key == "compaction.background" {
		return m.saveSetting(key, boolText(!m.ag.Preferences().Background)), true
	}
	cur := ""
	for _, e := range m.compactionEntries() {
		if e.value == key && !strings.HasPrefix(e.note, "(") {
			cur = e.note
		}
	}
	m.overlay = newDialog("New value of "+key+" ("+label+")", cur, func(m *Model, text string) tea.Cmd {
		m.overlay = nil
		return m.saveSetting(key, strings.TrimSpace(text))
	})
	return nil, true
}

// saveSetting writes key = value (value "" unsets it) into the global
// settings file and says so once it is written; a value the settings
// refuse is reported and nothing is written.
func (m *Model) saveSetting(key, value string) tea.Cmd {
	ctx, ag := m.ctx, m.ag
	return async(func() resultMsg {
		err := ag.SaveSetting(ctx, key, value)
		return func(m *Model) tea.Cmd {
			if err != nil {
				m.fail("could not save " + key + ": " + err.Error())
				return nil
			}
			m.status("Saved " + key + " = " + cmp.Or(value, "(unset)") + " (used from the next prompt)")
			return nil
		}
	})
}
