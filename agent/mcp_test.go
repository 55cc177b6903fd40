package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
)

// pagesServer is an MCP server (streamable HTTP, in this process) with a
// tool returning long pages: the conversation's largest part.
func pagesServer(t *testing.T) string {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "pages", Version: "1"}, nil)
	schema := map[string]any{"type": "object", "properties": map[string]any{"page": map[string]any{"type": "integer", "description": "page number"}}, "required": []any{"page"}}
	srv.AddTool(&sdk.Tool{Name: "fetch_page", Description: "Fetches one page of the manual.", InputSchema: schema},
		func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			page := strings.Trim(string(r.Params.Arguments), "{}")
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "PAGE " + page + " " + strings.Repeat("manual text ", 1500)}}}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs.URL
}

// A scripted run: the model sees the MCP tool with its schema, calls it
// three times, and a compaction of the conversation (mostly MCP results)
// shrinks it; the file holds ordinary toolResult messages.
func TestMCPToolsInAConversation(t *testing.T) {
	url := pagesServer(t)
	srv := llmtest.NewAnthropic(t)
	for i := 1; i <= 3; i++ {
		srv.Reply(llmtest.ToolCall(fmt.Sprintf("c%d", i), "mcp__pages__fetch_page", fmt.Sprintf(`{"page":%d}`, i)), llmtest.Usage(100, 10))
	}
	srv.Reply(llmtest.Text("The manual has three pages."), llmtest.Usage(30000, 10))

	dir := agentDir(t, srv)
	if err := os.WriteFile(filepath.Join(dir, "mcp.json"), []byte(`{"mcpServers": {"pages": {"url": "`+url+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s, err := session.Create(path, session.Options{CWD: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var ev events
	cfg := config(dir, testSettings(t, "compaction.keepRecentTokens", "2000"), &ev)
	cfg.Model = srv.Model().Provider + "/" + srv.Model().ID
	cfg.NoContextFiles = true
	cfg.MCP = true
	ag := agent.New(s, cfg)
	t.Cleanup(func() { ag.Close() })

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := ag.MCPWait(ctx); err != nil {
		t.Fatal(err)
	}
	st := ag.MCPStatus()
	if len(st.Servers) != 1 || st.Servers[0].State != "connected" || len(st.Servers[0].Tools) != 1 || st.Servers[0].Tools[0].Name != "mcp__pages__fetch_page" {
		t.Fatalf("status %+v", st)
	}
	send(t, ag, "read the manual")

	// The model was offered the tool with its schema as given.
	var req struct {
		Tools []struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			InputSchema map[string]any `json:"input_schema"`
		} `json:"tools"`
	}
	if err := srv.Requests()[0].Decode(&req); err != nil {
		t.Fatal(err)
	}
	if len(req.Tools) != 1 || req.Tools[0].Name != "mcp__pages__fetch_page" || req.Tools[0].Description != "Fetches one page of the manual." ||
		fmt.Sprint(req.Tools[0].InputSchema["required"]) != "[page]" {
		t.Fatalf("tools sent: %+v", req.Tools)
	}
	if sys := srv.Requests()[0].System(); !strings.Contains(sys, "- mcp__pages__*: the tools of the MCP server pages") || strings.Contains(sys, "no tools") {
		t.Errorf("system prompt: %s", sys)
	}
	if r := srv.Requests()[3].Text(); !strings.Contains(r, `PAGE "page":3`) {
		t.Errorf("the last request lacks the third page: %.200s", r)
	}

	b, err := ag.ContextBreakdown(ctx, agent.BreakdownRequest{})
	if err != nil {
		t.Fatal(err)
	}
	results, tools := b.Tokens(compaction.KindToolResults), b.Tokens(compaction.KindTools)
	if tools == 0 || results < b.Total/2 {
		t.Errorf("breakdown: tool definitions %d, tool results %d of %d", tools, results, b.Total)
	}
	res, err := ag.Compact(ctx, agent.CompactRequest{Summarizer: agent.SummarizerChoice{Offline: true}})
	if err != nil {
		t.Fatal(err)
	}
	if res.TokensBefore <= 0 {
		t.Errorf("tokens before %d", res.TokensBefore)
	}
	after, err := ag.ContextBreakdown(ctx, agent.BreakdownRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if after.Tokens(compaction.KindToolResults) >= results {
		t.Errorf("tool results after compacting: %d, before %d", after.Tokens(compaction.KindToolResults), results)
	}

	// The file holds the results as ordinary toolResult messages.
	loaded, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range loaded.Entries() {
		m, err := e.Message()
		if err != nil || m == nil {
			continue
		}
		if tr, ok := m.(*llm.ToolResultMessage); ok {
			n++
			if tr.ToolName != "mcp__pages__fetch_page" || tr.IsError || !strings.HasPrefix(llm.TextOf(tr.Content), "PAGE ") {
				t.Errorf("result %+v", tr)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d tool results in the file", n)
	}
	// pi 1.6 reads the file with the same context (opt-in: PRIME_PIORACLE).
	if os.Getenv("PRIME_PIORACLE") != "" {
		ag.Close()
		comparePiContext(t, "a conversation of MCP results", path, "", piContext(t, path, ""))
	}
}

// An agent's MCP servers that cannot connect are told as notices at the
// next prompt and do not keep it from running.
func TestMCPServerFailureIsANotice(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.Text("hi"), llmtest.Usage(10, 1))
	dir := agentDir(t, srv)
	if err := os.WriteFile(filepath.Join(dir, "mcp.json"), []byte(`{"mcpServers": {"gone": {"command": "/nonexistent/mcp-server"}, "bad": {"type": "sse", "url": "http://x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := session.Create(filepath.Join(t.TempDir(), "s.jsonl"), session.Options{CWD: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var ev events
	cfg := config(dir, testSettings(t), &ev)
	cfg.Model = srv.Model().Provider + "/" + srv.Model().ID
	cfg.NoContextFiles, cfg.MCP = true, true
	ag := agent.New(s, cfg)
	t.Cleanup(func() { ag.Close() })
	if err := ag.MCPWait(t.Context()); err != nil {
		t.Fatal(err)
	}
	send(t, ag, "hello")
	var notices []string
	for _, e := range ev.all() {
		if n, ok := e.(agent.Notice); ok {
			notices = append(notices, n.Text)
		}
	}
	all := strings.Join(notices, "\n")
	if !strings.Contains(all, "MCP server gone did not connect") || !strings.Contains(all, "SSE transport is not supported") {
		t.Errorf("notices:\n%s", all)
	}
	st := ag.MCPStatus()
	if len(st.Servers) != 1 || st.Servers[0].State != "failed" || len(st.Problems) != 1 {
		t.Errorf("status %+v", st)
	}
	if err := ag.MCPSetEnabled("gone", false); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "mcp.json"))
	if !strings.Contains(string(data), `"enabled": false`) || ag.MCPStatus().Servers[0].State != "disabled" {
		t.Errorf("after disabling: %s, %+v", data, ag.MCPStatus())
	}
}

// TestMCPReload: /reload reads mcp.json again: a server added meanwhile
// connects, one removed is stopped.
func TestMCPReload(t *testing.T) {
	url := pagesServer(t)
	srv := llmtest.NewAnthropic(t)
	dir := agentDir(t, srv)
	s, err := session.Create(filepath.Join(t.TempDir(), "s.jsonl"), session.Options{CWD: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config(dir, testSettings(t), nil)
	cfg.Model = srv.Model().Provider + "/" + srv.Model().ID
	cfg.NoContextFiles, cfg.MCP = true, true
	ag := agent.New(s, cfg)
	t.Cleanup(func() { ag.Close() })
	if st := ag.MCPStatus(); len(st.Servers) != 0 || st.Off {
		t.Fatalf("before: %+v", st)
	}
	file := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(file, []byte(`{"mcpServers": {"pages": {"url": "`+url+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := ag.MCPWait(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := ag.MCPStatus(); len(st.Servers) != 1 || st.Servers[0].State != "connected" {
		t.Fatalf("after adding: %+v", st)
	}
	if err := os.WriteFile(file, []byte(`{"mcpServers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := ag.MCPStatus(); len(st.Servers) != 0 {
		t.Errorf("after removing: %+v", st)
	}
}

// TestMCPResumeWhileConnecting: a resumed session whose MCP server is still
// connecting keeps the server's tools declared (no removal and re-addition
// in the file), and the model's call to one waits for the server.
func TestMCPResumeWhileConnecting(t *testing.T) {
	url := pagesServer(t)
	gate := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(open)
	gated := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-gate
		req, err := http.NewRequestWithContext(r.Context(), r.Method, url+r.URL.Path, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				w.Write(buf[:n])
				if f, ok := w.(http.Flusher); ok {
					f.Flush()
				}
			}
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(gated.Close)

	srv := llmtest.NewAnthropic(t)
	dir := agentDir(t, srv)
	if err := os.WriteFile(filepath.Join(dir, "mcp.json"), []byte(`{"mcpServers": {"pages": {"url": "`+gated.URL+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s, err := session.Create(path, session.Options{CWD: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config(dir, testSettings(t), nil)
	cfg.Model = srv.Model().Provider + "/" + srv.Model().ID
	cfg.NoContextFiles, cfg.MCP = true, true
	// The first run: the server connects and its tool is declared.
	open()
	ag := agent.New(s, cfg)
	if err := ag.MCPWait(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv.Reply(llmtest.Text("ready"), llmtest.Usage(10, 1))
	send(t, ag, "hello")
	ag.Close()
	s.Close()
	systems := strings.Count(entryKinds(t, path), "system")

	// The second run, resumed while the server does not answer yet.
	gate = make(chan struct{})
	once = sync.Once{}
	ag2, err := agent.Open(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ag2.Close() })
	srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		if strings.Contains(r.Text(), "PAGE ") {
			return llmtest.Reply{Parts: []llmtest.Part{llmtest.Text("read it"), llmtest.Usage(20, 2)}}
		}
		open() // the model asks for the tool; the server answers from now on
		return llmtest.Reply{Parts: []llmtest.Part{llmtest.ToolCall("c1", "mcp__pages__fetch_page", `{"page":1}`), llmtest.Usage(20, 2)}}
	})
	send(t, ag2, "read page 1")
	var req struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	reqs := srv.Requests()
	if err := reqs[len(reqs)-2].Decode(&req); err != nil {
		t.Fatal(err)
	}
	if len(req.Tools) != 1 || req.Tools[0].Name != "mcp__pages__fetch_page" {
		t.Errorf("tools offered while connecting: %+v", req.Tools)
	}
	if r := reqs[len(reqs)-1].Text(); !strings.Contains(r, "PAGE ") {
		t.Errorf("the call did not reach the server: %.200s", r)
	}
	if n := strings.Count(entryKinds(t, path), "system"); n != systems {
		t.Errorf("%d system messages after the resumed run, %d before: the tools were removed and added again", n, systems)
	}
}
