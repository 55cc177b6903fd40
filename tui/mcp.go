package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
)

// mcpUsage is what /mcp accepts.
const mcpUsage = "/mcp shows the MCP servers; /mcp reconnect NAME, /mcp enable NAME, /mcp disable NAME"

// mcpCommand is /mcp: the servers' state and tools, or an action on one
// (enable and disable are saved in the mcp.json defining the server; the
// tools change from the next prompt).
func (m *Model) mcpCommand(args string) tea.Cmd {
	verb, name, _ := strings.Cut(strings.TrimSpace(args), " ")
	name = strings.TrimSpace(name)
	ctx, ag := m.ctx, m.ag
	switch {
	case verb == "":
		st := ag.MCPStatus()
		m.add(&textItem{text: func(*view) string { return strings.TrimRight(st.Text(true), "\n") }})
		return nil
	case name == "" || strings.Contains(name, " "):
		m.warn(mcpUsage)
		return nil
	case verb == "reconnect":
		m.status("Reconnecting MCP server " + name + "…")
		return m.call(func() resultMsg {
			err := ag.MCPReconnect(ctx, name)
			return report(err, func(*Model) string {
				return "MCP server " + name + " connected; its tools are offered from the next prompt"
			})
		})
	case verb == "enable" || verb == "disable":
		on := verb == "enable"
		return m.call(func() resultMsg {
			err := ag.MCPSetEnabled(name, on)
			return report(err, func(*Model) string {
				return "MCP server " + name + " " + verb + "d (saved); its tools change from the next prompt"
			})
		})
	}
	m.warn(mcpUsage)
	return nil
}
