package tui

import (
	"errors"
	"path/filepath"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/agent"
)

// loginCommand is /login [provider]: choose a provider, then type its API
// key in a field that shows only dots. The key goes to the agent, which
// stores it in auth.json and uses it at once; it is not kept in the
// editor's history, printed or written into the session.
func (m *Model) loginCommand(provider string) tea.Cmd {
	ag := m.ag
	return async(func() resultMsg {
		providers, err := ag.LoginProviders()
		return func(m *Model) tea.Cmd {
			if err != nil {
				m.fail(err.Error())
				return nil
			}
			var entries []listEntry
			for _, p := range providers {
				note := "no key"
				if p.HasKey {
					note = "key set (" + p.Key + ")"
				}
				if p.Name == provider {
					m.openKeyDialog(p.Name)
					return nil
				}
				entries = append(entries, listEntry{label: p.Name, note: note, value: p.Name})
			}
			if provider != "" {
				m.warn("No provider " + provider + " takes a key; choose one")
			}
			if len(entries) == 0 {
				m.warn("No provider takes a key; 'prime models' lists them")
				return nil
			}
			m.overlay = newList("Log in: the provider whose API key to store", entries, func(m *Model, e listEntry) tea.Cmd {
				m.openKeyDialog(e.value.(string))
				return nil
			})
			return nil
		}
	})
}

// openKeyDialog asks for provider's key, masked.
func (m *Model) openKeyDialog(provider string) {
	file := m.shortPath(filepath.Join(m.agentDir(), "auth.json"))
	d := newDialog("API key for "+provider+" (stored in "+file+", mode 0600)", "", func(m *Model, key string) tea.Cmd {
		m.overlay = nil
		return m.login(provider, key)
	})
	d.input.EchoMode = textinput.EchoPassword
	d.input.EchoCharacter = '•'
	m.overlay = d
}

// login hands the key to the agent and says what changed.
func (m *Model) login(provider, key string) tea.Cmd {
	if key == "" {
		m.warn("No key typed; nothing stored")
		return nil
	}
	ctx, ag := m.ctx, m.ag
	return m.call(func() resultMsg {
		md, switched, err := ag.Login(ctx, provider, key)
		return report(err, func(m *Model) string {
			text := "✓ Key for " + provider + " stored"
			if switched {
				text += "; model: " + md.ID + m.thinkingSuffix()
			} else {
				text += "; /model chooses one of its models"
			}
			return text
		})
	})
}

// agentDir is where the agent keeps auth.json and models.json.
func (m *Model) agentDir() string { return m.ag.Preferences().AgentDir }

// noModelHint is what the warning of a model that cannot be used (none
// found, no key) adds in the terminal UI: /login.
func noModelHint(err error) string {
	if errors.Is(err, agent.ErrNoConversationModel) || errors.Is(err, agent.ErrNoKey) {
		return err.Error() + "; or type /login to store a key now"
	}
	return err.Error()
}
