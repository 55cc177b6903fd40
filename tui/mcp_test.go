package tui

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/internal/npmtest"
	"github.com/prime-agent/prime/llm/llmtest"
)

// TestMCPCommand: /mcp shows the servers with their tools, the model
// calls one, /mcp disable saves the choice and the tools leave the next
// request, /mcp enable and /mcp reconnect bring them back.
func TestMCPCommand(t *testing.T) {
	fsBin := npmtest.Bin(t, "mcp-server-filesystem")
	dir := t.TempDir()
	write(t, filepath.Join(dir, "hello.txt"), "hello from MCP")
	h := newHarness(t, setup{mcp: `{"mcpServers": {"files": {"command": "` + fsBin + `", "args": ["` + dir + `"]}}}`})
	h.waitText("v0.0.0-test")
	// /mcp shows a server still connecting as such; this test wants it
	// connected.
	if err := h.ag.MCPWait(t.Context()); err != nil {
		t.Fatal(err)
	}
	h.send("/mcp")
	h.waitText("files: connected (stdio", "mcp__files__read_text_file")

	h.srv.Reply(llmtest.ToolCall("c1", "mcp__files__read_text_file", `{"path":"`+filepath.Join(dir, "hello.txt")+`"}`), llmtest.Usage(100, 5))
	h.srv.Reply(llmtest.Text("It says hello."), llmtest.Usage(120, 5))
	h.send("read hello.txt")
	h.waitIdle("It says hello.")
	if r := h.srv.LastRequest().Text(); !strings.Contains(r, "hello from MCP") {
		t.Errorf("the tool result did not reach the model: %.300s", r)
	}

	h.send("/mcp disable files")
	h.waitText("MCP server files disabled (saved)")
	h.send("/mcp")
	h.waitText("files: disabled")
	h.srv.Reply(llmtest.Text("No tools now."), llmtest.Usage(130, 5))
	h.send("anything?")
	h.waitIdle("No tools now.")
	var req struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := h.srv.LastRequest().Decode(&req); err != nil {
		t.Fatal(err)
	}
	if len(req.Tools) != 0 {
		t.Errorf("a disabled server's tools were offered: %v", req.Tools)
	}
	h.send("/mcp enable files")
	h.waitText("MCP server files enabled (saved)")
	h.send("/mcp reconnect files")
	h.waitText("MCP server files connected")
	h.send("/mcp frob")
	h.waitText("/mcp reconnect NAME")
}

// TestMCPFailureShownAtOnce: a server that cannot start is reported on the
// screen without waiting for a prompt.
func TestMCPFailureShownAtOnce(t *testing.T) {
	h := newHarness(t, setup{mcp: `{"mcpServers": {"gone": {"command": "` + filepath.Join(t.TempDir(), "no-such-server") + `"}}}`})
	h.waitText("MCP server gone did not connect", "no-such-server")
}
