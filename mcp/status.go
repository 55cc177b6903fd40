package mcp

import "strings"

// Status is what a user is shown of one server.
type Status struct {
	Name string
	// Transport is TransportStdio or TransportHTTP; Target the command
	// line or the URL.
	Transport, Target string
	Description       string
	// File is the mcp.json the entry comes from; Project is set when that
	// is the project's.
	File    string
	Project bool
	Enabled bool
	State   State
	// Error is why the server is not connected (with the end of its
	// stderr), empty when it is.
	Error string
	// Instructions are the server's, from initialize.
	Instructions string
	// Tools are the server's tools as last listed; Skipped the tools left
	// out and why; Hidden the tools the entry's exposure or toolExposure
	// hides, and by which; Warnings the entry's problems that did not stop
	// it.
	Tools    []ToolStatus
	Skipped  []string
	Hidden   []string
	Warnings []string
}

// ToolStatus is one tool of a server.
type ToolStatus struct {
	// Name is what the model calls it (mcp__server__tool); Remote the
	// server's own name.
	Name, Remote, Description string
}

// Status reports every configured server, in the configuration's order.
func (m *Manager) Status() []Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Status, 0, len(m.servers))
	for _, s := range m.servers {
		st := Status{Name: s.cfg.Name, Transport: s.cfg.Transport, Target: target(s.cfg), Description: s.cfg.Description,
			File: s.cfg.File, Project: s.cfg.Project, Enabled: s.enabled, State: s.state, Instructions: s.instructions,
			Skipped: append([]string(nil), s.skipped...), Hidden: append([]string(nil), s.hidden...), Warnings: append([]string(nil), s.cfg.Warnings...)}
		if s.err != nil {
			st.Error = s.err.Error()
		}
		for _, t := range s.tools {
			st.Tools = append(st.Tools, ToolStatus{Name: t.name, Remote: t.remote.Name, Description: t.remote.Description})
		}
		out = append(out, st)
	}
	return out
}

func target(s Server) string {
	if s.Transport == TransportHTTP {
		return s.URL
	}
	return strings.Join(append([]string{s.Command}, s.Args...), " ")
}
