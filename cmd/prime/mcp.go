package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm/registry"
	"github.com/prime-agent/prime/mcp"
	"github.com/prime-agent/prime/settings"
)

func mcpCommands() []*command {
	return []*command{
		{name: "mcp add", usage: "NAME [-l] [--env K=V]... [--cwd DIR] [--description TEXT] -- COMMAND [ARGS...] | NAME [-l] --url URL [--header K=V]... [--bearer-token-env-var VAR]",
			summary: "add (or replace) an MCP server in ~/.prime/agent/mcp.json (-l: the project's .prime/mcp.json)", run: runMCPAdd},
		{name: "mcp remove", usage: "NAME [-l]", summary: "remove an MCP server from mcp.json (-l: the project's)", run: runMCPRemove},
		{name: "mcp list", usage: "[--json] [--cwd DIR]", summary: "connect to every enabled MCP server and show its state and tools; exit 1 if one is not connected", run: runMCPList},
	}
}

// kvList is a repeatable KEY=VALUE flag.
type kvList map[string]string

func (l kvList) String() string { return "" }

func (l kvList) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not KEY=VALUE", v)
	}
	l[k] = val
	return nil
}

// mcpFile is the mcp.json a command changes: the user's, or with local the
// project's (the project found from the working directory).
func mcpFile(ctx context.Context, a *app, local bool) (string, error) {
	st, err := loadSettings(ctx, a, settingsFlags{})
	if err != nil {
		return "", err
	}
	if !local {
		return mcp.UserFile(st.AgentDir()), nil
	}
	project := st.ProjectDir()
	if project == "" {
		if project, err = os.Getwd(); err != nil {
			return "", err
		}
	}
	return mcp.ProjectFile(project), nil
}

// runMCPAdd is prime mcp add, as pi's: a stdio server after "--", or a
// streamable HTTP one with --url. It does not connect; "prime mcp list"
// checks the server.
func runMCPAdd(ctx context.Context, a *app, args []string) error {
	var command []string
	if i := indexOf(args, "--"); i >= 0 {
		args, command = args[:i], args[i+1:]
	}
	fs := flag.NewFlagSet("mcp add", flag.ContinueOnError)
	var local bool
	var url, cwd, desc, bearer string
	envs, headers := kvList{}, kvList{}
	fs.BoolVar(&local, "l", false, "write the project's .prime/mcp.json")
	fs.BoolVar(&local, "local", false, "write the project's .prime/mcp.json")
	fs.StringVar(&url, "url", "", "the streamable HTTP server at `URL`")
	fs.Var(envs, "env", "set `KEY=VALUE` in a stdio server's environment (${VAR} is expanded when it starts; repeatable)")
	fs.StringVar(&cwd, "cwd", "", "run a stdio server in `DIR`")
	fs.Var(headers, "header", "send `KEY=VALUE` as a header to an HTTP server (repeatable)")
	fs.StringVar(&bearer, "bearer-token-env-var", "", "send Authorization: Bearer ${`VAR`} to an HTTP server")
	fs.StringVar(&desc, "description", "", "what the server offers, in a sentence")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageErrorf("want one server NAME, then -- COMMAND [ARGS...] or --url URL")
	}
	name := rest[0]
	e := mcp.Entry{Description: desc}
	switch {
	case url != "" && len(command) > 0:
		return usageErrorf("a server has either a command (after --) or --url, not both")
	case url != "":
		e.URL = url
		if len(headers) > 0 {
			e.Headers = headers
		}
		if bearer != "" {
			if e.Headers == nil {
				e.Headers = map[string]string{}
			}
			e.Headers["Authorization"] = "Bearer ${" + bearer + "}"
		}
		if len(envs) > 0 || cwd != "" {
			return usageErrorf("--env and --cwd are for a stdio server, not --url")
		}
	case len(command) > 0:
		e.Command, e.Args, e.CWD = command[0], command[1:], cwd
		if len(envs) > 0 {
			e.Env = envs
		}
		if len(headers) > 0 || bearer != "" {
			return usageErrorf("--header and --bearer-token-env-var are for an HTTP server (--url)")
		}
	default:
		return usageErrorf("give the server's command after -- (prime mcp add %s -- npx -y PACKAGE) or --url URL", name)
	}
	file, err := mcpFile(ctx, a, local)
	if err != nil {
		return err
	}
	if err := mcp.Add(file, name, e); err != nil {
		return badInput(err)
	}
	fmt.Fprintf(a.stdout, "Added MCP server %s to %s; run \"prime mcp list\" to check it.\n", name, file)
	return nil
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// runMCPRemove is prime mcp remove.
func runMCPRemove(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("mcp remove", flag.ContinueOnError)
	var local bool
	fs.BoolVar(&local, "l", false, "change the project's .prime/mcp.json")
	fs.BoolVar(&local, "local", false, "change the project's .prime/mcp.json")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageErrorf("want one server NAME")
	}
	file, err := mcpFile(ctx, a, local)
	if err != nil {
		return err
	}
	if err := mcp.Remove(file, rest[0]); err != nil {
		if errors.Is(err, mcp.ErrNoServer) {
			return badInput(err)
		}
		return err
	}
	fmt.Fprintf(a.stdout, "Removed MCP server %s from %s.\n", rest[0], file)
	return nil
}

// mcpListWait bounds how long "prime mcp list" waits for the servers
// beyond their own timeouts (a server's timeout bounds its connection).
const mcpListWait = 5 * time.Minute

// runMCPList is prime mcp list: it connects to every enabled server (the
// project's only when the project is trusted), prints what it found, and
// stops them.
func runMCPList(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("mcp list", flag.ContinueOnError)
	var asJSON bool
	var sf settingsFlags
	sf.register(fs)
	fs.BoolVar(&asJSON, "json", false, "print the status as JSON")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErrorf("unexpected argument %q", rest[0])
	}
	st, err := loadSettings(ctx, a, sf)
	if err != nil {
		return err
	}
	cfg, m := mcpManager(a, st, sf.cwd)
	defer m.Close()
	m.Start()
	wctx, cancel := context.WithTimeout(ctx, mcpListWait)
	defer cancel()
	if err := m.Wait(wctx); err != nil {
		return err
	}
	status := agent.MCPStatusOf(cfg, m.Status())
	if asJSON {
		b, err := json.Marshal(status, json.Deterministic(true))
		if err != nil {
			return err
		}
		fmt.Fprintln(a.stdout, string(b))
	} else {
		fmt.Fprint(a.stdout, status.Text(true))
	}
	if !status.Healthy() {
		return &exitError{code: exitFailed, err: errors.New("not every MCP server is usable")}
	}
	return nil
}

// mcpManager loads the MCP configuration as a session would and returns a
// manager for it, its servers given Prime's environment less its secrets.
func mcpManager(a *app, st *settings.Settings, cwd string) (mcp.Config, *mcp.Manager) {
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	project := st.ProjectDir()
	if project == "" {
		project = cwd
	}
	cfg := mcp.Load(mcp.LoadOptions{AgentDir: st.AgentDir(), ProjectDir: project, Trusted: st.Trusted(project), CWD: cwd,
		Home: a.getenv("HOME"), Getenv: a.getenv})
	reg, _ := registry.Load(registry.Options{AgentDir: st.AgentDir(), Getenv: a.getenv})
	env, _ := agent.SecretsPolicy(st.Permissions(), reg).Filter(os.Environ())
	return cfg, mcp.NewManager(cfg.Servers, mcp.Options{Version: version(), Environ: env})
}

// printMCPWait is how long print and JSON modes wait for MCP servers
// still connecting before their one prompt, as pi's first prompt waits for
// servers with direct tools: without it a one-shot prompt would never see
// a server's tools. The interactive modes never wait.
const printMCPWait = 10 * time.Second

// waitMCP waits for the MCP servers before print mode's prompt.
func waitMCP(ctx context.Context, ag *agent.Agent) {
	ctx, cancel := context.WithTimeout(ctx, printMCPWait)
	defer cancel()
	_ = ag.MCPWait(ctx) // those still connecting join a later prompt
}

// splitToolList takes the entries naming MCP tools (mcp__…, patterns with
// *) out of a --tools list, as pi's: MCP tools are kept unless an entry
// starts with mcp__, and then only those the entries match are. A list of
// MCP entries alone selects no built-in tool.
func splitToolList(list string) (builtins string, mcpTools []string, err error) {
	var rest []string
	for e := range strings.SplitSeq(list, ",") {
		e = strings.TrimSpace(e)
		switch {
		case strings.HasPrefix(e, "mcp__"):
			if _, err := path.Match(e, ""); err != nil {
				return "", nil, usageErrorf("--tools: %q is not a pattern: %v", e, err)
			}
			mcpTools = append(mcpTools, e)
		case strings.HasPrefix(e, "+mcp__") || strings.HasPrefix(e, "-mcp__"):
			return "", nil, usageErrorf("--tools: %q: MCP tools are chosen by name (mcp__server__*), not added or removed; --no-mcp connects none", e)
		case e != "":
			rest = append(rest, e)
		}
	}
	return strings.Join(rest, ","), mcpTools, nil
}
