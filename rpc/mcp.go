package rpc

import (
	"context"
	"fmt"

	"github.com/go-json-experiment/json"
)

// mcp is Prime's command for the MCP servers, as /mcp in the terminal UI:
// {"type": "mcp"} answers the servers' status (agent.MCPStatus: each
// server's state, tools and errors); with "action" "reconnect", "enable"
// or "disable" and "server" NAME it acts on one first (enable and disable
// are saved in the mcp.json defining it) and answers the status after.
func (s *Server) mcp(ctx context.Context, c *command) ([]byte, error) {
	action, _ := c.optStr("action")
	name, hasName := c.optStr("server")
	if c.err != nil {
		return nil, c.err
	}
	if action != "" && action != "status" && !hasName {
		return nil, fmt.Errorf(`action %q needs "server", the server's name`, action)
	}
	var err error
	switch action {
	case "", "status":
	case "reconnect":
		err = s.ag.MCPReconnect(ctx, name)
	case "enable", "disable":
		err = s.ag.MCPSetEnabled(name, action == "enable")
	default:
		return nil, fmt.Errorf(`unknown action %q: want "status", "reconnect", "enable" or "disable"`, action)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(s.ag.MCPStatus(), marshalOptions)
}
