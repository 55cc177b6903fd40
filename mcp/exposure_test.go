package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/prime-agent/prime/llm"
)

// TestToolExposureHides: pi 1.6's exposure and toolExposure, as its
// mcp.md shows them, decide which tools the model is offered: a hidden
// tool is not offered (nor callable), exact names win over patterns and
// the first pattern wins; codemode and deferred are offered directly with
// a warning saying so.
func TestToolExposureHides(t *testing.T) {
	agent := t.TempDir()
	write(t, UserFile(agent), `{"mcpServers": {
  "faults": {"command": "x", "exposure": "deferred",
             "toolExposure": {"echo": "direct", "p*": "hidden", "pid": "direct", "*ai*": "codemode", "fail": "hidden"}}
}}`)
	cfg := Load(LoadOptions{AgentDir: agent})
	if len(cfg.Problems) != 0 || len(cfg.Servers) != 1 {
		t.Fatalf("config %+v", cfg)
	}
	got := cfg.Servers[0]
	self := selfServer(t, "faults", "tools")
	self.Exposure, self.ToolExposure = got.Exposure, got.ToolExposure
	m, rep := startManager(t, self)
	var offered []string
	for _, tl := range m.Tools() {
		offered = append(offered, strings.TrimPrefix(tl.Spec().Name, "mcp__faults__"))
	}
	want := "big crash echo hang log pid" // picture and progress match p*, fail is hidden by name; pid is named
	if strings.Join(offered, " ") != want {
		t.Errorf("offered %v, want %s", offered, want)
	}
	st := m.Status()[0]
	hidden := strings.Join(st.Hidden, "\n")
	for _, w := range []string{`tool "picture" not offered: toolExposure "p*" is "hidden"`, `tool "fail" not offered: toolExposure "fail" is "hidden"`} {
		if !strings.Contains(hidden, w) {
			t.Errorf("hidden notes %q lack %q", hidden, w)
		}
	}
	if strings.Contains(rep.text(), "picture") {
		t.Errorf("a tool hidden on purpose was reported as a problem: %q", rep.text())
	}
	warns := strings.Join(got.Warnings, "\n")
	if !strings.Contains(warns, `exposure "deferred"`) || !strings.Contains(warns, `toolExposure "*ai*" is "codemode"`) {
		t.Errorf("warnings %q", warns)
	}
}

func TestExposureConfig(t *testing.T) {
	agent, project := t.TempDir(), t.TempDir()
	write(t, UserFile(agent), `{"mcpServers": {
  "all-hidden": {"command": "a", "exposure": "hidden", "toolExposure": {"search_code": "direct"}},
  "alias": {"command": "b", "exposure": "codemode-deferred"},
  "bad": {"command": "c", "exposure": "visible"},
  "badtool": {"command": "d", "toolExposure": {"x": "sometimes"}},
  "notmap": {"command": "e", "toolExposure": ["x"]},
  "github": {"url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer t"}}
}}`)
	write(t, ProjectFile(project), `{"mcpServers": {"github": {"toolExposure": {"delete_*": "hidden"}}}}`)
	cfg := Load(LoadOptions{AgentDir: agent, ProjectDir: project, Trusted: true})
	byName := map[string]Server{}
	for _, s := range cfg.Servers {
		byName[s.Name] = s
	}
	if e, _ := byName["all-hidden"].ToolExposureOf("search_code"); e != ExposureDirect {
		t.Errorf("search_code exposure %q", e)
	}
	if e, _ := byName["all-hidden"].ToolExposureOf("other"); e != ExposureHidden {
		t.Errorf("other exposure %q", e)
	}
	if byName["alias"].Exposure != ExposureCodemode {
		t.Errorf("alias exposure %q", byName["alias"].Exposure)
	}
	gh := byName["github"]
	if e, _ := gh.ToolExposureOf("delete_repo"); e != ExposureHidden || gh.Headers["Authorization"] != "Bearer t" || gh.URL == "" {
		t.Errorf("project override of exposures: %+v", gh)
	}
	probs := ""
	for _, p := range cfg.Problems {
		probs += p.Error() + "\n"
	}
	for _, w := range []string{`server "bad": exposure "visible" is not one of`, `server "badtool": toolExposure "x": "sometimes" is not one of`,
		`server "notmap": toolExposure must map tool names to exposures`} {
		if !strings.Contains(probs, w) {
			t.Errorf("problems %q lack %q", probs, w)
		}
	}
}

func TestStarMatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"get_*", "get_issue", true}, {"get_*", "get_", true}, {"get_*", "xget_a", false},
		{"*", "", true}, {"*_repo", "delete_repo", true}, {"a*b*c", "aXbYc", true}, {"a*b*c", "acb", false},
		{"a*a", "a", false}, {"a.b*", "aXb", false}, {"**", "x", true},
	}
	for _, tt := range tests {
		if got := starMatch(tt.pattern, tt.name); got != tt.want {
			t.Errorf("starMatch(%q, %q) = %v", tt.pattern, tt.name, got)
		}
	}
}

// TestCommandValues: a header (or env) value written "!command", as pi's
// mcp.md shows ("Authorization": "!echo Bearer $(gh auth token)"), is the
// command's output when the server connects; a command that fails stops
// that server with an error naming the header, not the command's output.
func TestCommandValues(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "web", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: r.Extra.Header.Get("Authorization") + "|" + r.Extra.Header.Get("X-Team")}}}, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer from-cmd" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	dir := t.TempDir()
	write(t, UserFile(dir), `{"mcpServers": {
  "web": {"url": "`+hs.URL+`", "headers": {"Authorization": "!echo Bearer $(printf from-cmd)", "X-Team": "t1"}},
  "broken": {"url": "`+hs.URL+`", "headers": {"Authorization": "!echo leaked-secret; exit 4"}}
}}`)
	cfg := Load(LoadOptions{AgentDir: dir, Getenv: env(nil)})
	if len(cfg.Problems) != 0 || len(cfg.Servers) != 2 || cfg.Servers[0].Headers["Authorization"] != "" {
		t.Fatalf("config %+v", cfg)
	}
	m, _ := startManager(t, cfg.Servers...)
	res, err := call(t, findTool(t, m, "mcp__web__whoami"), `{}`)
	if err != nil || llm.TextOf(res.Content) != "Bearer from-cmd|t1" {
		t.Errorf("whoami: %+v %v", res, err)
	}
	st := m.Status()[1]
	if st.State != StateFailed || !strings.Contains(st.Error, "header Authorization: its command failed") || strings.Contains(st.Error, "leaked-secret") {
		t.Errorf("broken: %s %q", st.State, st.Error)
	}
}

// TestClaudeCodeEntries: a Claude Code .mcp.json's mcpServers entries, as
// its docs show them (type stdio and http, ${VAR} and ${VAR:-default} in
// command, args, env, url and headers), copied into mcp.json, load as
// Claude Code reads them; its sse type is refused with a reason.
func TestClaudeCodeEntries(t *testing.T) {
	agent := t.TempDir()
	write(t, UserFile(agent), `{"mcpServers": {
  "api-server": {"type": "http", "url": "${API_BASE_URL:-https://api.example.com}/mcp",
                 "headers": {"Authorization": "Bearer ${API_KEY}", "X-Region": "${REGION:-eu}"}},
  "local": {"type": "stdio", "command": "${TOOLS_BIN:-/usr/local/bin}/tools", "args": ["--root", "${PROJECT_ROOT}", "--mode=${MODE:-fast}"],
            "env": {"CACHE": "${CACHE_DIR:-/tmp/cache}"}},
  "legacy": {"type": "sse", "url": "https://example.com/sse"},
  "badurl": {"type": "http", "url": "${NOT_SET_URL}"}
}}`)
	cfg := Load(LoadOptions{AgentDir: agent, Getenv: env(map[string]string{"API_KEY": "k1", "PROJECT_ROOT": "/src/p"})})
	byName := map[string]Server{}
	for _, s := range cfg.Servers {
		byName[s.Name] = s
	}
	api := byName["api-server"]
	if api.URL != "https://api.example.com/mcp" || api.Headers["Authorization"] != "Bearer k1" || api.Headers["X-Region"] != "eu" {
		t.Errorf("http entry %+v", api)
	}
	local := byName["local"]
	if local.Command != "/usr/local/bin/tools" || strings.Join(local.Args, " ") != "--root /src/p --mode=fast" ||
		strings.Join(local.Env, " ") != "CACHE=/tmp/cache" || len(local.Warnings) != 0 {
		t.Errorf("stdio entry %+v", local)
	}
	probs := ""
	for _, p := range cfg.Problems {
		probs += p.Error() + "\n"
	}
	if !strings.Contains(probs, `server "legacy": the SSE transport is not supported`) ||
		!strings.Contains(probs, `server "badurl": url "${NOT_SET_URL}" is not an http:// or https:// address once its variables are expanded`) {
		t.Errorf("problems %q", probs)
	}
}
