package mcp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/prime-agent/prime/llm"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestLoad(t *testing.T) {
	agent, project := t.TempDir(), t.TempDir()
	write(t, UserFile(agent), `{
  "mcpServers": {
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "~/src"], "env": {"KEY": "${TOOLS_KEY}", "B": "x$y ${UNSET}"}, "cwd": "sub"},
    "docs": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}, "description": "Docs", "timeout": 2.5},
    "internal-tools": {"command": "it", "exposure": "direct"},
    "old": {"type": "sse", "url": "https://example.com/sse"},
    "bad name": {"command": "x"},
    "both": {"command": "x", "url": "https://x"},
    "neither": {},
    "internal_tools": {"command": "other"}
  },
  "other": {"kept": true}
}`)
	write(t, ProjectFile(project), `{"mcpServers": {"internal-tools": {"enabled": false}, "docs": {"command": "local-docs"}, "extra": {"command": "e"}}}`)
	opts := LoadOptions{AgentDir: agent, ProjectDir: project, Trusted: true, CWD: "/work", Home: "/home/u",
		Getenv: env(map[string]string{"TOOLS_KEY": "k1", "DOCS_TOKEN": "tok"})}
	cfg := Load(opts)

	type row struct {
		Name, Transport, Command, URL, Dir string
		Args, Env                          []string
		Headers                            map[string]string
		Enabled, Project                   bool
		Timeout                            time.Duration
		Warnings                           []string
	}
	var got []row
	for _, s := range cfg.Servers {
		got = append(got, row{s.Name, s.Transport, s.Command, s.URL, s.Dir, s.Args, s.Env, s.Headers, s.Enabled, s.Project, s.Timeout, s.Warnings})
	}
	want := []row{
		{Name: "filesystem", Transport: "stdio", Command: "npx", Dir: "/work/sub",
			Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/home/u/src"}, Env: []string{"B=x$y ", "KEY=k1"},
			Enabled: true, Timeout: DefaultTimeout, Warnings: []string{"env B uses ${UNSET}, which is not set"}},
		{Name: "docs", Transport: "stdio", Command: "local-docs", Enabled: true, Project: true, Timeout: DefaultTimeout},
		{Name: "internal-tools", Transport: "stdio", Command: "it", Enabled: false, Project: true, Timeout: DefaultTimeout},
		{Name: "extra", Transport: "stdio", Command: "e", Enabled: true, Project: true, Timeout: DefaultTimeout},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("servers (-want +got):\n%s", d)
	}
	var probs []string
	for _, p := range cfg.Problems {
		probs = append(probs, p.Server+": "+p.Err.Error())
	}
	wantProbs := []string{
		"bad name: a server name may hold only letters, digits, _ and -",
		"old: the SSE transport is not supported; servers often offer streamable HTTP too, commonly at /mcp instead of /sse",
		"both: an entry has either command or url, not both",
		"neither: an entry needs a command (stdio) or a url (streamable HTTP)",
		`internal_tools: the name is the same as "internal-tools"'s (- and _ count alike in tool names)`,
	}
	if d := cmp.Diff(wantProbs, probs); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}

	// The user's own entry for docs, before the project replaces it.
	opts.Trusted = false
	cfg = Load(opts)
	if cfg.Untrusted != ProjectFile(project) {
		t.Errorf("untrusted %q", cfg.Untrusted)
	}
	for _, s := range cfg.Servers {
		if s.Project {
			t.Errorf("a project server loaded without trust: %s", s.Name)
		}
		if s.Name == "docs" && (s.URL != "https://example.com/mcp" || s.Headers["Authorization"] != "Bearer tok" || s.Timeout != 2500*time.Millisecond) {
			t.Errorf("docs %+v", s)
		}
	}
}

func TestLoadBadFiles(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"syntax", `{"mcpServers": {`, "not valid JSON"},
		{"array", `[1]`, "the file holds an array, not an object"},
		{"servers", `{"mcpServers": 3}`, "mcpServers is a number, not an object"},
		{"entry", `{"mcpServers": {"a": 3}}`, `server "a": not a server entry`},
		{"timeout", `{"mcpServers": {"a": {"command": "x", "timeout": -1}}}`, "timeout -1 is not a number of seconds between 0 and 86400"},
		{"timeout overflowing a duration", `{"mcpServers": {"a": {"command": "x", "timeout": 1e300}}}`, "timeout 1e+300 is not a number of seconds"},
		{"url", `{"mcpServers": {"a": {"url": "ftp://x"}}}`, `url "ftp://x" is not an http`},
		{"type", `{"mcpServers": {"a": {"type": "ws", "url": "https://x"}}}`, `type "ws" is not stdio, http or streamable-http`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, UserFile(dir), tc.text)
			cfg := Load(LoadOptions{AgentDir: dir})
			if len(cfg.Problems) != 1 || !strings.Contains(cfg.Problems[0].Error(), tc.want) || len(cfg.Servers) != 0 {
				t.Errorf("problems %v, servers %v; want %q", cfg.Problems, cfg.Servers, tc.want)
			}
		})
	}
	if cfg := Load(LoadOptions{AgentDir: t.TempDir()}); len(cfg.Problems)+len(cfg.Servers) != 0 {
		t.Errorf("no file: %+v", cfg)
	}
}

func TestExpand(t *testing.T) {
	vars := env(map[string]string{"A": "1", "B_2": "two"})
	for _, tc := range []struct {
		in, want string
		missing  []string
	}{
		{"plain", "plain", nil},
		{"${A}", "1", nil},
		{"x${A}y${B_2}z", "x1ytwoz", nil},
		{"$A ${ A} ${} ${", "$A ${ A} ${} ${", nil},
		{"${NOPE}-${A}", "-1", []string{"NOPE"}},
		{"price $5 ${A}", "price $5 1", nil},
	} {
		got, missing := Expand(tc.in, vars)
		if got != tc.want || !cmp.Equal(missing, tc.missing) {
			t.Errorf("Expand(%q) = %q, %v; want %q, %v", tc.in, got, missing, tc.want, tc.missing)
		}
	}
}

func TestToolNames(t *testing.T) {
	long := strings.Repeat("x", 70)
	got := ToolNames("dev-radius", []string{"get.item", "get-item", "list", long})
	if got[2] != "mcp__dev_radius__list" {
		t.Errorf("list: %s", got[2])
	}
	if got[0] == got[1] || !strings.HasPrefix(got[0], "mcp__dev_radius__get_item_") || !strings.HasPrefix(got[1], "mcp__dev_radius__get_item_") {
		t.Errorf("colliding names: %v", got[:2])
	}
	if len(got[3]) != MaxToolName || !strings.HasPrefix(got[3], "mcp__dev_radius__xxx") {
		t.Errorf("long name %q (%d)", got[3], len(got[3]))
	}
	if again := ToolNames("dev-radius", []string{"get.item", "get-item", "list", long}); !cmp.Equal(again, got) {
		t.Errorf("names are not stable: %v then %v", got, again)
	}
}

func TestEditKeepsTheRest(t *testing.T) {
	file := filepath.Join(t.TempDir(), "agent", FileName)
	if err := Add(file, "fs", Entry{Command: "npx", Args: []string{"-y", "pkg"}}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("new file: %v %v", fi, err)
	}
	write(t, file, `{
  "theme": "dark",
  "mcpServers": {
    "keep": {"command": "k", "exposure": "direct"}
  }
}
`)
	if err := Add(file, "docs", Entry{URL: "https://x/mcp", Headers: map[string]string{"Authorization": "Bearer ${T}"}}); err != nil {
		t.Fatal(err)
	}
	if err := SetEnabled(file, "keep", false); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(file)
	want := `{
  "theme": "dark",
  "mcpServers": {
    "keep": {"command": "k", "exposure": "direct", "enabled": false},
    "docs": {
      "url": "https://x/mcp",
      "headers": {
        "Authorization": "Bearer ${T}"
      }
    }
  }
}
`
	if string(data) != want {
		t.Errorf("after add and disable:\n%s\nwant:\n%s", data, want)
	}
	if err := Remove(file, "docs"); err != nil {
		t.Fatal(err)
	}
	if err := Remove(file, "docs"); !errors.Is(err, ErrNoServer) {
		t.Errorf("removing twice: %v", err)
	}
	if err := Add(file, "bad name", Entry{Command: "x"}); err == nil {
		t.Error("a bad name was added")
	}
	write(t, file, `{"mcpServers": {`)
	if err := Add(file, "x", Entry{Command: "x"}); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("adding to a broken file: %v", err)
	}
	if data, _ := os.ReadFile(file); string(data) != `{"mcpServers": {` {
		t.Errorf("a broken file was changed: %s", data)
	}
}

// A streamable HTTP server gets the entry's headers, expanded.
func TestStreamableHTTP(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "web", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: r.Extra.Header.Get("Authorization")}}}, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close) // after the managers close: it waits for their event streams
	dir := t.TempDir()
	write(t, UserFile(dir), `{"mcpServers": {"web": {"url": "`+hs.URL+`", "headers": {"Authorization": "Bearer ${WEB_TOKEN}"}}}}`)
	cfg := Load(LoadOptions{AgentDir: dir, Getenv: env(map[string]string{"WEB_TOKEN": "s3cret"})})
	m, _ := startManager(t, cfg.Servers...)
	res, err := call(t, findTool(t, m, "mcp__web__whoami"), `{}`)
	if err != nil || llm.TextOf(res.Content) != "Bearer s3cret" {
		t.Errorf("whoami: %+v %v", res, err)
	}

	cfg = Load(LoadOptions{AgentDir: dir, Getenv: env(nil)})
	m2, _ := startManager(t, cfg.Servers...)
	if st := m2.Status()[0]; st.State != StateFailed || len(st.Warnings) != 1 {
		t.Errorf("without the token: %s %q %v", st.State, st.Error, st.Warnings)
	}
}

func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{"mcpServers": {"a": {"command": "x", "args": ["y"], "env": {"K": "${V}"}}, "b": {"url": "https://x", "headers": {"H": "v"}}}}`))
	f.Add([]byte(`{"mcpServers": {"a": {"type": "sse"}, "a": {"enabled": false}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, _ := parseEntries("f", data)
		for _, e := range entries {
			s, err := e.e.server(e.name, LoadOptions{Getenv: env(nil)})
			if err == nil && s.Transport != TransportStdio && s.Transport != TransportHTTP {
				t.Fatalf("a usable entry without a transport: %+v", s)
			}
		}
	})
}

func FuzzExpand(f *testing.F) {
	f.Add("a${B}c${")
	f.Fuzz(func(t *testing.T, s string) {
		out, missing := Expand(s, env(map[string]string{"B": "b"}))
		if !strings.Contains(s, "${") && out != s {
			t.Fatalf("%q changed to %q", s, out)
		}
		for _, m := range missing {
			if !strings.Contains(s, "${"+m+"}") {
				t.Fatalf("missing %q not in %q", m, s)
			}
		}
	})
}
