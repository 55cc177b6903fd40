package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// resourceSuggestions are the commands the agent's prompt templates and
// skills add ("/review", "/skill:pdf-tools") that start with w, with their
// descriptions (and a template's argument hint before it).
func (m *Model) resourceSuggestions(w string) []suggestion {
	var out []suggestion
	for _, c := range m.ag.Commands() {
		if !strings.HasPrefix("/"+c.Name, w) {
			continue
		}
		note := c.Description
		if c.ArgumentHint != "" {
			note = c.ArgumentHint + "  " + note
		}
		out = append(out, suggestion{text: "/" + c.Name, note: note, args: true})
	}
	return out
}

// resourceCommand reports whether word ("/review") is a command of a
// prompt template or skill, which goes to the agent as a message.
func (m *Model) resourceCommand(word string) bool {
	for _, c := range m.ag.Commands() {
		if "/"+c.Name == word {
			return true
		}
	}
	return false
}

// reload is /reload: skills, prompt templates, settings and context files
// read again.
func (m *Model) reload() tea.Cmd {
	ctx, ag := m.ctx, m.ag
	return m.call(func() resultMsg {
		res, err := ag.Reload(ctx)
		return report(err, func(*Model) string {
			return fmt.Sprintf("Reloaded: %d skills, %d prompt templates, %d context files", res.Skills, res.Templates, res.ContextFiles)
		})
	})
}
