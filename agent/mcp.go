package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/prime-agent/prime/mcp"
	"github.com/prime-agent/prime/tool"
)

// MCP servers (Config.MCP): the servers of the user's mcp.json and, once
// the project is trusted, the project's .prime/mcp.json connect in the
// background when the agent is made; their tools join the conversation's
// at the next prompt once connected (the session records them as it
// records every tool declaration, so they count in the context estimates).
// A server that fails, stops or has tools left out is told as a notice when
// it happens; the configuration's problems at the first prompt.
// A server starts with Prime's environment less its secrets (as the bash
// tool's), plus its entry's env: an MCP server is a third party's program,
// and Prime's model keys are not its business.

// mcpState is the agent's MCP connections.
type mcpState struct {
	mu      sync.Mutex
	m       *mcp.Manager
	cfg     mcp.Config
	opts    mcp.LoadOptions
	pending []string // the configuration's problems, not yet told
}

// MCPStatus is what a front end shows of the MCP servers (/mcp, RPC).
type MCPStatus struct {
	// Servers are the usable entries, in the files' order.
	Servers []MCPServer `json:"servers"`
	// Problems are entries and files that could not be used.
	Problems []string `json:"problems,omitzero"`
	// Untrusted is the project's mcp.json left unread because the project
	// is not trusted.
	Untrusted string `json:"untrusted,omitzero"`
	// Off is set when the session connects no MCP servers (--no-mcp).
	Off bool `json:"off,omitzero"`
}

// MCPServer is one MCP server's state and tools.
type MCPServer struct {
	Name string `json:"name"`
	// Transport is "stdio" or "http"; Target its command line or URL.
	Transport   string `json:"transport"`
	Target      string `json:"target"`
	Description string `json:"description,omitzero"`
	// File is the mcp.json defining it; Project is set for the project's.
	File    string `json:"file"`
	Project bool   `json:"project,omitzero"`
	Enabled bool   `json:"enabled"`
	// State is "connecting", "connected", "failed", "disconnected" or
	// "disabled".
	State string `json:"state"`
	// Error is why it is not connected, with the end of its stderr.
	Error   string    `json:"error,omitzero"`
	Tools   []MCPTool `json:"tools"`
	Skipped []string  `json:"skipped,omitzero"`
	// Hidden are the tools the entry's exposure or toolExposure hides.
	Hidden   []string `json:"hidden,omitzero"`
	Warnings []string `json:"warnings,omitzero"`
}

// MCPTool is one tool of a server: Name is what the model calls it
// (mcp__server__tool, what permission rules name), Remote the server's.
type MCPTool struct {
	Name        string `json:"name"`
	Remote      string `json:"remote"`
	Description string `json:"description,omitzero"`
}

// ErrNoMCP is returned by the MCP methods of an agent made without
// Config.MCP.
var ErrNoMCP = errors.New("MCP servers are off in this session")

// startMCP reads the MCP configuration and starts connecting its servers.
func (a *Agent) startMCP() {
	if !a.cfg.MCP {
		return
	}
	st := a.settings()
	cwd := a.cwd()
	project := st.ProjectDir()
	if project == "" {
		project = cwd
	}
	opts := mcp.LoadOptions{AgentDir: a.agentDir(), ProjectDir: project, Trusted: st.Trusted(project), CWD: cwd,
		Home: a.getenv("HOME"), Getenv: a.getenv}
	a.mcp.mu.Lock()
	defer a.mcp.mu.Unlock()
	a.mcp.opts = opts
	a.mcp.cfg = mcp.Load(opts)
	a.mcp.m = a.newMCPManager(a.mcp.cfg)
	for _, p := range a.mcp.cfg.Problems {
		a.mcp.pending = append(a.mcp.pending, "MCP: "+p.Error())
	}
	if a.mcp.cfg.Untrusted != "" {
		a.mcp.pending = append(a.mcp.pending, fmt.Sprintf("%s not read: the project is not trusted, and its MCP servers would run commands; "+
			"if you trust it, run \"prime trust\" in it", a.mcp.cfg.Untrusted))
	}
	a.mcp.m.Start()
}

func (a *Agent) newMCPManager(cfg mcp.Config) *mcp.Manager {
	env, _ := a.secretsPolicy().Filter(os.Environ())
	logFile := ""
	if dir := a.agentDir(); dir != "" {
		logFile = filepath.Join(dir, "mcp.log")
	}
	return mcp.NewManager(cfg.Servers, mcp.Options{Environ: env, HTTPClient: a.cfg.HTTPClient, LogFile: logFile,
		// A server that fails or stops is told at once (every front end
		// takes events from any goroutine), not only at the next prompt.
		OnReport: func(r mcp.Report) { a.notice(NoticeWarning, r.Message) }})
}

// closeMCP stops every MCP server.
func (a *Agent) closeMCP() error {
	a.mcp.mu.Lock()
	m := a.mcp.m
	a.mcp.m = nil
	a.mcp.mu.Unlock()
	if m == nil {
		return nil
	}
	return m.Close()
}

// reloadMCP reads the MCP configuration again; when it changed, the
// servers are stopped and the new ones started.
func (a *Agent) reloadMCP() {
	a.mcp.mu.Lock()
	if a.mcp.m == nil {
		a.mcp.mu.Unlock()
		return
	}
	cfg := mcp.Load(a.mcp.opts)
	if reflect.DeepEqual(cfg.Servers, a.mcp.cfg.Servers) {
		a.mcp.cfg = cfg
		a.mcp.mu.Unlock()
		return
	}
	old := a.mcp.m
	a.mcp.cfg, a.mcp.m = cfg, a.newMCPManager(cfg)
	for _, p := range cfg.Problems {
		a.mcp.pending = append(a.mcp.pending, "MCP: "+p.Error())
	}
	a.mcp.m.Start()
	a.mcp.mu.Unlock()
	old.Close()
}

// mcpTools returns the tools of the connected MCP servers, and tells the
// configuration's problems not yet told as notices.
func (a *Agent) mcpTools() []tool.Tool {
	a.mcp.mu.Lock()
	m := a.mcp.m
	pending := a.mcp.pending
	a.mcp.pending = nil
	a.mcp.mu.Unlock()
	for _, p := range pending {
		a.notice(NoticeWarning, p)
	}
	if m == nil {
		return nil
	}
	return m.Tools()
}

// refreshTools makes the conversation's tools the configured ones and those
// of the MCP servers connected by now; called before each prompt, so that a
// run keeps one set of tools from start to end.
func (a *Agent) refreshTools() {
	if !a.cfg.MCP {
		return
	}
	extra := a.mcpTools()
	extra = append(extra, a.pendingMCPTools(extra)...)
	if a.cfg.MCPTools != nil {
		extra = slices.DeleteFunc(extra, func(t tool.Tool) bool {
			return !slices.ContainsFunc(a.cfg.MCPTools, func(p string) bool {
				ok, _ := path.Match(p, t.Spec().Name)
				return ok
			})
		})
	}
	lines := a.mcpPromptLines(extra)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.conv.model == nil {
		return
	}
	a.conv.tools = append(slices.Clone(a.cfg.Tools), extra...)
	if p := a.conv.prompt; p != nil && !slices.Equal(p.mcp, lines) {
		spec := *p
		spec.mcp = lines
		a.conv.prompt = &spec
	}
}

// pendingMCPTools are stand-ins for the MCP tools the session declares
// whose servers are still connecting (see mcp.Manager.Pending), so that a
// resumed session keeps them and a call waits for the server.
func (a *Agent) pendingMCPTools(have []tool.Tool) []tool.Tool {
	a.mcp.mu.Lock()
	m := a.mcp.m
	a.mcp.mu.Unlock()
	if m == nil {
		return nil
	}
	a.mu.Lock()
	sctx, err := a.s.Context("")
	a.mu.Unlock()
	if err != nil {
		return nil
	}
	var decls []tool.Spec
	for _, d := range sctx.Tools() {
		if strings.HasPrefix(d.Name, "mcp__") && !slices.ContainsFunc(have, func(t tool.Tool) bool { return t.Spec().Name == d.Name }) {
			decls = append(decls, tool.Spec{Name: d.Name, Description: d.Description, Parameters: d.Parameters})
		}
	}
	if len(decls) == 0 {
		return nil
	}
	return m.Pending(decls)
}

// mcpServerTool is an MCP tool, connected or a stand-in, which names its
// server.
type mcpServerTool interface{ Server() string }

// mcpPromptLines are the system prompt's lines for the servers whose tools
// are offered: one per server (its tools are declared with their own
// descriptions), with what the server says it offers.
func (a *Agent) mcpPromptLines(tools []tool.Tool) []string {
	var out []string
	seen := map[string]bool{}
	status := map[string]mcp.Status{}
	a.mcp.mu.Lock()
	if a.mcp.m != nil {
		for _, s := range a.mcp.m.Status() {
			status[s.Name] = s
		}
	}
	a.mcp.mu.Unlock()
	for _, t := range tools {
		mt, ok := t.(mcpServerTool)
		if !ok || seen[mt.Server()] {
			continue
		}
		seen[mt.Server()] = true
		name := t.Spec().Name
		prefix := name
		if i := strings.Index(name[len("mcp__"):], "__"); i >= 0 {
			prefix = name[:len("mcp__")+i+2]
		}
		line := "- " + prefix + "*: the tools of the MCP server " + mt.Server()
		s := status[mt.Server()]
		about := s.Description
		if about == "" {
			about, _, _ = strings.Cut(strings.TrimSpace(s.Instructions), "\n")
		}
		if about != "" {
			line += " (" + about + ")"
		}
		out = append(out, line)
	}
	return out
}

func (a *Agent) mcpManager() (*mcp.Manager, error) {
	a.mcp.mu.Lock()
	defer a.mcp.mu.Unlock()
	if a.mcp.m == nil {
		return nil, ErrNoMCP
	}
	return a.mcp.m, nil
}

// MCPStatus reports the MCP servers: their state and tools.
func (a *Agent) MCPStatus() MCPStatus {
	a.mcp.mu.Lock()
	m, cfg := a.mcp.m, a.mcp.cfg
	a.mcp.mu.Unlock()
	if m == nil {
		return MCPStatus{Servers: []MCPServer{}, Off: true}
	}
	return MCPStatusOf(cfg, m.Status())
}

// MCPStatusOf is the status of servers loaded from cfg ("prime mcp list"
// reports the servers it connected itself in the same form).
func MCPStatusOf(cfg mcp.Config, servers []mcp.Status) MCPStatus {
	out := MCPStatus{Untrusted: cfg.Untrusted, Servers: []MCPServer{}}
	for _, p := range cfg.Problems {
		out.Problems = append(out.Problems, p.Error())
	}
	for _, s := range servers {
		srv := MCPServer{Name: s.Name, Transport: s.Transport, Target: s.Target, Description: s.Description, File: s.File,
			Project: s.Project, Enabled: s.Enabled, State: string(s.State), Error: s.Error, Skipped: s.Skipped, Hidden: s.Hidden,
			Warnings: s.Warnings, Tools: []MCPTool{}}
		for _, t := range s.Tools {
			srv.Tools = append(srv.Tools, MCPTool{Name: t.Name, Remote: t.Remote, Description: t.Description})
		}
		out.Servers = append(out.Servers, srv)
	}
	return out
}

// MCPWait waits until no MCP server is still connecting, or ctx is done.
func (a *Agent) MCPWait(ctx context.Context) error {
	m, err := a.mcpManager()
	if err != nil {
		return err
	}
	return m.Wait(ctx)
}

// MCPReconnect stops the server name and connects it again, waiting for
// the outcome; its tools are those of the next prompt.
func (a *Agent) MCPReconnect(ctx context.Context, name string) error {
	m, err := a.mcpManager()
	if err != nil {
		return err
	}
	return m.Reconnect(ctx, name)
}

// MCPSetEnabled turns the server name on or off, now and in the file that
// defines it (the project's, for a project server; the user's otherwise).
func (a *Agent) MCPSetEnabled(name string, on bool) error {
	m, err := a.mcpManager()
	if err != nil {
		return err
	}
	file := ""
	for _, s := range m.Status() {
		if s.Name == name {
			file = s.File
		}
	}
	if file == "" {
		return fmt.Errorf("%w %q", mcp.ErrNoServer, name)
	}
	if err := mcp.SetEnabled(file, name, on); err != nil {
		return err
	}
	if err := m.SetEnabled(name, on); err != nil {
		return err
	}
	a.mcp.mu.Lock()
	a.mcp.cfg = mcp.Load(a.mcp.opts)
	a.mcp.mu.Unlock()
	return nil
}
