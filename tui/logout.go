package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/agent"
)

// logoutCommand is /logout [provider]: the provider's key leaves auth.json
// and the conversation stops using it. Without a provider, the providers
// whose key auth.json holds are offered.
func (m *Model) logoutCommand(provider string) tea.Cmd {
	if provider != "" {
		return m.logout(provider)
	}
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
				if p.Key == agent.KeyInAuthFile {
					entries = append(entries, listEntry{label: p.Name, note: "key in auth.json", value: p.Name})
				}
			}
			if len(entries) == 0 {
				m.status("No key is stored in auth.json; nothing to log out of")
				return nil
			}
			m.overlay = newList("Log out: the provider whose API key to remove", entries, func(m *Model, e listEntry) tea.Cmd {
				m.overlay = nil
				return m.logout(e.value.(string))
			})
			return nil
		}
	})
}

// logout has the agent remove provider's key and says what happened.
func (m *Model) logout(provider string) tea.Cmd {
	ctx, ag := m.ctx, m.ag
	return m.call(func() resultMsg {
		removed, err := ag.Logout(ctx, provider)
		return report(err, func(m *Model) string {
			if !removed {
				return "No key for " + provider + " in auth.json; nothing removed"
			}
			return "✓ Key for " + provider + " removed from auth.json"
		})
	})
}
