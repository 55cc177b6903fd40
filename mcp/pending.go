package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/prime-agent/prime/tool"
)

// Pending returns stand-ins for tools the conversation already declares
// (from an earlier run of the session) whose servers are still connecting:
// keeping them declared spares the session a removal and a re-addition of
// the same tools (and the model's cache a break), and a call waits for its
// server, then runs the tool of that name. decls are the declarations;
// those of no connecting server are left out.
func (m *Manager) Pending(decls []tool.Spec) []tool.Tool {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []tool.Tool
	for _, s := range m.servers {
		if !s.enabled || s.attempt == nil || len(s.tools) > 0 {
			continue
		}
		prefix := "mcp__" + sanitize(s.cfg.Name) + "__"
		for _, d := range decls {
			if strings.HasPrefix(d.Name, prefix) {
				out = append(out, &pendingTool{m: m, s: s, spec: d})
			}
		}
	}
	return out
}

// pendingTool is a declared tool of a server not yet connected.
type pendingTool struct {
	m    *Manager
	s    *server
	spec tool.Spec
}

func (t *pendingTool) Spec() tool.Spec { return t.spec }

// Server is the name of the tool's server.
func (t *pendingTool) Server() string { return t.s.cfg.Name }

// Run waits for the server and runs its tool of this name.
func (t *pendingTool) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	if _, err := t.m.session(ctx, t.s); err != nil {
		return tool.Result{}, err
	}
	for _, tl := range t.m.Tools() {
		if tl.Spec().Name == t.spec.Name {
			return tl.Run(ctx, call)
		}
	}
	return tool.Result{}, fmt.Errorf("MCP server %s no longer offers the tool %s", t.s.cfg.Name, t.spec.Name)
}
