package agent

import (
	"fmt"
	"strings"
)

// Text words the status for a terminal, as /mcp and "prime mcp list"
// show it: each server's state, what it runs and where it is configured,
// then its tools (with their descriptions' first lines when tools is set)
// and its problems; the configuration's problems last.
func (s MCPStatus) Text(tools bool) string {
	var b strings.Builder
	if s.Off {
		return "MCP servers are off in this session (--no-mcp).\n"
	}
	if len(s.Servers) == 0 {
		b.WriteString("No MCP servers are configured (add one with \"prime mcp add NAME -- COMMAND ARGS…\").\n")
	}
	for _, srv := range s.Servers {
		where := srv.File
		if srv.Project {
			where += ", the project's"
		}
		fmt.Fprintf(&b, "%s: %s (%s %s; %s)\n", srv.Name, srv.State, srv.Transport, srv.Target, where)
		if srv.Error != "" {
			fmt.Fprintf(&b, "  error: %s\n", srv.Error)
		}
		for _, w := range srv.Warnings {
			fmt.Fprintf(&b, "  warning: %s\n", w)
		}
		for _, sk := range srv.Skipped {
			fmt.Fprintf(&b, "  warning: %s\n", sk)
		}
		for _, h := range srv.Hidden {
			fmt.Fprintf(&b, "  %s\n", h)
		}
		switch {
		case len(srv.Tools) == 0:
		case tools:
			for _, t := range srv.Tools {
				desc, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
				if r := []rune(desc); len(r) > maxToolLine {
					desc = strings.TrimSpace(string(r[:maxToolLine-1])) + "…"
				}
				if desc != "" {
					desc = "  " + desc
				}
				fmt.Fprintf(&b, "  %s%s\n", t.Name, desc)
			}
		default:
			names := make([]string, len(srv.Tools))
			for i, t := range srv.Tools {
				names[i] = t.Remote
			}
			fmt.Fprintf(&b, "  %d tools: %s\n", len(srv.Tools), strings.Join(names, ", "))
		}
	}
	for _, p := range s.Problems {
		fmt.Fprintf(&b, "problem: %s\n", p)
	}
	if s.Untrusted != "" {
		fmt.Fprintf(&b, "%s is not read: the project is not trusted (run \"prime trust\" in it if you trust it)\n", s.Untrusted)
	}
	return b.String()
}

// maxToolLine bounds a tool's description in Text, in characters.
const maxToolLine = 100

// Healthy reports whether every entry could be used and every enabled
// server is connected ("prime mcp list" exits 1 otherwise, as pi's).
func (s MCPStatus) Healthy() bool {
	if len(s.Problems) > 0 {
		return false
	}
	for _, srv := range s.Servers {
		if srv.Enabled && srv.State != "connected" {
			return false
		}
	}
	return true
}
