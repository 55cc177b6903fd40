package mcp

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonedit"
)

// FileName is the name of the configuration file in the agent directory
// (~/.prime/agent/mcp.json) and in the project's .prime directory.
const FileName = "mcp.json"

// DefaultTimeout bounds one request to a server when its entry sets no
// timeout, as pi's default.
const DefaultTimeout = 60 * time.Second

// maxTimeoutSeconds is the longest timeout an entry may set (a day): a
// larger number of seconds would overflow a time.Duration.
const maxTimeoutSeconds = 24 * 60 * 60

// Transports a server entry can select.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
)

// Server is one usable entry of mcpServers, after the user's and the
// project's files are merged and its variables expanded.
type Server struct {
	// Name is the entry's key; tools are named mcp__Name__tool.
	Name string
	// Transport is TransportStdio (Command) or TransportHTTP (URL).
	Transport string
	// Command, Args, Env and Dir run a stdio server. Env holds the
	// entry's variables, added to Prime's environment.
	Command string
	Args    []string
	Env     []string
	Dir     string
	// URL and Headers reach a streamable HTTP server.
	URL     string
	Headers map[string]string
	// Enabled is false for an entry kept without connecting to it.
	Enabled bool
	// Timeout bounds each request (initialize, tools/list, each call).
	Timeout time.Duration
	// Description says what the server offers, in a sentence.
	Description string
	// File is the mcp.json the entry comes from; Project is set when that
	// is the project's.
	File    string
	Project bool
	// EnvCommands and HeaderCommands are the env and header values written
	// "!command", by name: each is the output of its command (run by sh
	// when the server is connected), as in pi.
	EnvCommands, HeaderCommands map[string]string
	// Exposure is the entry's exposure ("" when it sets none) and
	// ToolExposure its per-tool exposures in the file's order: a hidden
	// tool is not offered (see [Server.ToolExposureOf]).
	Exposure     string
	ToolExposure []ExposureRule
	// Warnings are problems that do not stop the entry from being used
	// (a variable that is not set).
	Warnings []string
}

// Problem is an entry or file that could not be used; the other entries
// are still used.
type Problem struct {
	File   string
	Server string // empty for the file as a whole
	Err    error
}

func (p Problem) Error() string {
	if p.Server == "" {
		return fmt.Sprintf("%s: %v", p.File, p.Err)
	}
	return fmt.Sprintf("%s: server %q: %v", p.File, p.Server, p.Err)
}

// LoadOptions says where the configuration is and how to expand it.
type LoadOptions struct {
	// AgentDir holds the user's mcp.json.
	AgentDir string
	// ProjectDir is the project whose .prime/mcp.json is read when
	// Trusted is set; when not, the file is only reported as Untrusted.
	ProjectDir string
	Trusted    bool
	// CWD resolves a relative cwd of a stdio server; Home a leading "~/".
	CWD, Home string
	// Getenv expands ${VAR} in env and header values; nil means os.Getenv.
	Getenv func(string) string
}

// Config is the merged configuration.
type Config struct {
	Servers  []Server
	Problems []Problem
	// Untrusted is the project's mcp.json when it exists and was not read
	// because the project is not trusted.
	Untrusted string
}

// UserFile is the user's configuration file in agentDir.
func UserFile(agentDir string) string { return filepath.Join(agentDir, FileName) }

// ProjectFile is the project's configuration file.
func ProjectFile(projectDir string) string { return filepath.Join(projectDir, ".prime", FileName) }

// entry is one mcpServers member as written.
type entry struct {
	Type        string            `json:"type,omitempty"`
	Command     *string           `json:"command,omitempty"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	CWD         string            `json:"cwd,omitempty"`
	URL         *string           `json:"url,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	Enabled     *bool             `json:"enabled,omitempty"`
	Timeout     *float64          `json:"timeout,omitempty"`
	Description string            `json:"description,omitempty"`
	// Exposure and ToolExposure are pi's (exposure.go).
	Exposure     *string        `json:"exposure,omitempty"`
	ToolExposure jsontext.Value `json:"toolExposure,omitempty"`
	// Other members (oauth, …) are left in the file and not read.
}

type namedEntry struct {
	name string
	e    entry
	file string
}

var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

// Load reads the user's and (when trusted) the project's mcp.json and
// merges them: a project entry replaces the user's entry of the same name,
// except that one with no command, url or type changes only enabled,
// exposure and toolExposure.
// A missing file is no error; a file or entry that cannot be used is a
// Problem and the rest are still used.
func Load(opts LoadOptions) Config {
	var cfg Config
	user, probs := readFile(UserFile(opts.AgentDir))
	cfg.Problems = append(cfg.Problems, probs...)
	var project []namedEntry
	if opts.ProjectDir != "" {
		pf := ProjectFile(opts.ProjectDir)
		if opts.Trusted {
			project, probs = readFile(pf)
			cfg.Problems = append(cfg.Problems, probs...)
		} else if _, err := os.Stat(pf); err == nil {
			cfg.Untrusted = pf
		}
	}
	merged := user
	for _, p := range project {
		i := indexOf(merged, p.name)
		switch {
		case i < 0:
			merged = append(merged, p)
		case p.e.Command == nil && p.e.URL == nil && p.e.Type == "":
			// As pi: such an entry overrides only enabled and the
			// exposures, and keeps the rest of the user's entry.
			if p.e.Enabled != nil {
				merged[i].e.Enabled = p.e.Enabled
				merged[i].file = p.file
			}
			if p.e.Exposure != nil {
				merged[i].e.Exposure = p.e.Exposure
			}
			if len(p.e.ToolExposure) > 0 {
				merged[i].e.ToolExposure = p.e.ToolExposure
			}
		default:
			merged[i] = p
		}
	}
	seen := map[string]string{}
	for _, n := range merged {
		key := strings.ReplaceAll(n.name, "-", "_")
		if other, ok := seen[key]; ok {
			cfg.Problems = append(cfg.Problems, Problem{File: n.file, Server: n.name,
				Err: fmt.Errorf("the name is the same as %q's (- and _ count alike in tool names)", other)})
			continue
		}
		s, err := n.e.server(n.name, opts)
		if err != nil {
			cfg.Problems = append(cfg.Problems, Problem{File: n.file, Server: n.name, Err: err})
			continue
		}
		seen[key] = n.name
		s.File, s.Project = n.file, opts.ProjectDir != "" && n.file == ProjectFile(opts.ProjectDir)
		cfg.Servers = append(cfg.Servers, s)
	}
	return cfg
}

func indexOf(es []namedEntry, name string) int {
	for i, e := range es {
		if e.name == name {
			return i
		}
	}
	return -1
}

// readFile reads the entries of one file in the order written.
func readFile(path string) ([]namedEntry, []Problem) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []Problem{{File: path, Err: err}}
	}
	return parseEntries(path, data)
}

// parseEntries reads the entries of one file's text.
func parseEntries(path string, data []byte) ([]namedEntry, []Problem) {
	servers, err := serversNode(data)
	if err != nil {
		return nil, []Problem{{File: path, Err: err}}
	}
	if servers == nil {
		return nil, nil
	}
	var out []namedEntry
	var probs []Problem
	for _, m := range servers.node.Members {
		raw := servers.doc.Raw(m.Value)
		var e entry
		if err := json.Unmarshal(raw, &e); err != nil {
			probs = append(probs, Problem{File: path, Server: m.Name, Err: fmt.Errorf("not a server entry: %w", err)})
			continue
		}
		if !validName().MatchString(m.Name) {
			probs = append(probs, Problem{File: path, Server: m.Name, Err: errors.New("a server name may hold only letters, digits, _ and -")})
			continue
		}
		if i := indexOf(out, m.Name); i >= 0 {
			out = append(out[:i], out[i+1:]...) // the last of a repeated name wins, as JSON.parse
		}
		out = append(out, namedEntry{name: m.Name, e: e, file: path})
	}
	return out, probs
}

type docNode struct {
	doc  *jsonedit.Doc
	node *jsonedit.Node
}

// serversNode parses a file and finds its mcpServers object (nil when the
// file has none).
func serversNode(data []byte) (*docNode, error) {
	doc, err := jsonedit.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if doc.Root == nil {
		return nil, nil
	}
	if doc.Root.Kind != '{' {
		return nil, fmt.Errorf("the file holds %s, not an object", jsonedit.KindName(doc.Root.Kind))
	}
	n := doc.Root.Get("mcpServers")
	if n == nil || n.Kind == 'n' {
		return nil, nil
	}
	if n.Kind != '{' {
		return nil, fmt.Errorf("mcpServers is %s, not an object", jsonedit.KindName(n.Kind))
	}
	return &docNode{doc: doc, node: n}, nil
}

// server checks an entry and expands its values.
func (e entry) server(name string, opts LoadOptions) (Server, error) {
	s := Server{Name: name, Enabled: e.Enabled == nil || *e.Enabled, Description: e.Description, Timeout: DefaultTimeout}
	switch e.Type {
	case "", TransportStdio, TransportHTTP, "streamable-http":
	case "sse":
		return s, errors.New(`the SSE transport is not supported; servers often offer streamable HTTP too, commonly at /mcp instead of /sse`)
	default:
		return s, fmt.Errorf("type %q is not stdio, http or streamable-http", e.Type)
	}
	switch {
	case e.Command != nil && e.URL != nil:
		return s, errors.New("an entry has either command or url, not both")
	case e.Command != nil:
		if e.Type != "" && e.Type != TransportStdio {
			return s, fmt.Errorf("type %q has no command", e.Type)
		}
		if strings.TrimSpace(*e.Command) == "" {
			return s, errors.New("command is empty")
		}
		s.Transport = TransportStdio
	case e.URL != nil:
		if e.Type == TransportStdio {
			return s, errors.New("type stdio needs a command, not a url")
		}
		if u := *e.URL; !strings.HasPrefix(u, "${") && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return s, fmt.Errorf("url %q is not an http:// or https:// address", u)
		}
		s.Transport = TransportHTTP
	default:
		return s, errors.New("an entry needs a command (stdio) or a url (streamable HTTP)")
	}
	if e.Exposure != nil {
		v, err := exposureValue(*e.Exposure)
		if err != nil {
			return s, fmt.Errorf("exposure %w", err)
		}
		s.Exposure = v
	}
	rules, err := parseToolExposure(e.ToolExposure)
	if err != nil {
		return s, err
	}
	s.ToolExposure = rules
	s.Warnings = append(s.Warnings, s.exposureWarnings()...)
	if e.Timeout != nil {
		if !(*e.Timeout > 0 && *e.Timeout <= maxTimeoutSeconds) {
			return s, fmt.Errorf("timeout %v is not a number of seconds between 0 and %d", *e.Timeout, maxTimeoutSeconds)
		}
		s.Timeout = time.Duration(*e.Timeout * float64(time.Second))
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	expand := func(what, v string) string {
		out, missing := Expand(v, getenv)
		for _, m := range missing {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s uses ${%s}, which is not set", what, m))
		}
		return out
	}
	if s.Transport == TransportStdio {
		// As Claude Code, variables are expanded in the command and its
		// arguments too (pi expands env and headers only; a pi file holds
		// no ${…} elsewhere).
		s.Command = home(expand("command", *e.Command), opts.Home)
		for i, a := range e.Args {
			s.Args = append(s.Args, home(expand(fmt.Sprintf("args[%d]", i), a), opts.Home))
		}
		for _, k := range sortedKeys(e.Env) {
			if cmd, ok := strings.CutPrefix(e.Env[k], "!"); ok {
				s.EnvCommands = setCommand(s.EnvCommands, k, cmd)
				continue
			}
			s.Env = append(s.Env, k+"="+expand("env "+k, e.Env[k]))
		}
		if e.CWD != "" {
			s.Dir = home(e.CWD, opts.Home)
			if !filepath.IsAbs(s.Dir) {
				s.Dir = filepath.Join(opts.CWD, s.Dir)
			}
		}
		return s, nil
	}
	s.URL = expand("url", *e.URL)
	if !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") {
		return s, fmt.Errorf("url %q is not an http:// or https:// address once its variables are expanded", *e.URL)
	}
	if len(e.Headers) > 0 {
		s.Headers = map[string]string{}
		for k, v := range e.Headers {
			if cmd, ok := strings.CutPrefix(v, "!"); ok {
				s.HeaderCommands = setCommand(s.HeaderCommands, k, cmd)
				continue
			}
			s.Headers[k] = expand("header "+k, v)
		}
	}
	return s, nil
}

func setCommand(m map[string]string, k, cmd string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = cmd
	return m
}

// home replaces a leading "~/" by the home directory.
func home(v, dir string) string {
	if rest, ok := strings.CutPrefix(v, "~/"); ok && dir != "" {
		return filepath.Join(dir, rest)
	}
	return v
}

// Expand replaces ${NAME} in v by the variable's value, and
// ${NAME:-default} by it or, when it is unset or empty, by default (as
// Claude Code's .mcp.json does); it returns the names that were not set
// and had no default (they expand to nothing). "$$" is not special and a
// "$" not followed by "{NAME}" or "{NAME:-…}" is kept as written, so
// values with a literal dollar sign survive.
func Expand(v string, getenv func(string) string) (string, []string) {
	var b strings.Builder
	var missing []string
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			b.WriteString(v)
			return b.String(), missing
		}
		j := strings.IndexByte(v[i:], '}')
		body := ""
		if j > 0 {
			body = v[i+2 : i+j]
		}
		name, def, hasDef := strings.Cut(body, ":-")
		if !envName().MatchString(name) {
			b.WriteString(v[:i+2])
			v = v[i+2:]
			continue
		}
		b.WriteString(v[:i])
		val := getenv(name)
		switch {
		case val != "":
		case hasDef:
			val = def
		default:
			missing = append(missing, name)
		}
		b.WriteString(val)
		v = v[i+j+1:]
	}
}

var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
