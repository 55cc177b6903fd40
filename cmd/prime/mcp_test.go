package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/internal/npmtest"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/mcp"
)

// TestMCPCommands: prime mcp add, list and remove against the real
// filesystem server, then a print-mode run whose model calls one of its
// tools; no server process outlives Prime.
func TestMCPCommands(t *testing.T) {
	fsBin := npmtest.Bin(t, "mcp-server-filesystem")
	srv := llmtest.NewAnthropic(t)
	e := newAgentEnv(t, srv, 0, "")
	writeFile(t, filepath.Join(e.project, "notes.txt"), "the answer is 42\n")

	out, errOut, code := e.sub(t, "mcp", "add", "fs", "--", fsBin, e.project)
	mcpFile := filepath.Join(e.agentDir, "mcp.json")
	if code != 0 || !strings.Contains(out, "Added MCP server fs to "+mcpFile) {
		t.Fatalf("add: exit %d %q %q", code, out, errOut)
	}
	out, errOut, code = e.sub(t, "mcp", "add", "broken", "--", filepath.Join(e.project, "no-such-server"))
	if code != 0 {
		t.Fatalf("add broken: exit %d %q %q", code, out, errOut)
	}
	out, _, code = e.sub(t, "mcp", "list")
	if code != 1 || !strings.Contains(out, "fs: connected (stdio "+fsBin) || !strings.Contains(out, "  mcp__fs__read_text_file  ") ||
		!strings.Contains(out, "broken: failed") {
		t.Fatalf("list with a broken server: exit %d\n%s", code, out)
	}
	if _, _, code = e.sub(t, "mcp", "remove", "broken"); code != 0 {
		t.Fatalf("remove: exit %d", code)
	}
	if _, errOut, code = e.sub(t, "mcp", "remove", "broken"); code != exitBadUsage || !strings.Contains(errOut, `no such server "broken"`) {
		t.Errorf("removing twice: exit %d %q", code, errOut)
	}
	out, _, code = e.sub(t, "mcp", "list", "--json")
	if code != 0 || !strings.Contains(out, `"name":"mcp__fs__read_text_file"`) || !strings.Contains(out, `"state":"connected"`) {
		t.Fatalf("list --json: exit %d\n%s", code, out)
	}
	for _, bad := range [][]string{{"mcp", "add", "x"}, {"mcp", "add", "x", "--url", "https://x", "--", "cmd"}, {"mcp", "add", "bad name", "--", "x"}} {
		if _, errOut, code := e.sub(t, bad...); code != exitBadUsage {
			t.Errorf("%v: exit %d %q", bad, code, errOut)
		}
	}
	if left := serverProcesses(t, e.project); len(left) > 0 {
		t.Errorf("prime mcp list left servers running: %v", left)
	}

	notes := filepath.Join(e.project, "notes.txt")
	srv.Reply(llmtest.ToolCall("c1", "mcp__fs__read_text_file", `{"path":"`+notes+`"}`), llmtest.Usage(100, 10))
	srv.Reply(llmtest.Text("The notes say 42."), llmtest.Usage(120, 5))
	out, errOut, code = e.run(t, "", "-p", "what do the notes say?")
	if code != 0 || out != "The notes say 42.\n" {
		t.Fatalf("print mode: exit %d %q %q", code, out, errOut)
	}
	if r := srv.Requests()[1].Text(); !strings.Contains(r, "the answer is 42") {
		t.Errorf("the tool result did not reach the model: %.300s", r)
	}
	if left := serverProcesses(t, e.project); len(left) > 0 {
		t.Errorf("print mode left servers running: %v", left)
	}

	// --tools entries starting with mcp__ choose the MCP tools too.
	for _, tc := range []struct{ list, want string }{
		{"read,mcp__fs__read_text_file", "read mcp__fs__read_text_file"},
		{"mcp__fs__list_*", "mcp__fs__list_directory mcp__fs__list_directory_with_sizes mcp__fs__list_allowed_directories"},
		{"read,bash", "read bash mcp__fs__"}, // MCP tools kept: only the prefix is checked
	} {
		srv.Reply(llmtest.Text("ok"), llmtest.Usage(10, 1))
		if out, errOut, code := e.run(t, "", "--tools", tc.list, "-p", "hi"); code != 0 {
			t.Fatalf("--tools %s: exit %d %q %q", tc.list, code, out, errOut)
		}
		var req struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if err := srv.LastRequest().Decode(&req); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range req.Tools {
			names = append(names, tl.Name)
		}
		if got := strings.Join(names, " "); !strings.HasPrefix(got, tc.want) || (!strings.HasSuffix(tc.want, "__") && got != tc.want) {
			t.Errorf("--tools %s: the model was offered %s", tc.list, got)
		}
	}
	if _, errOut, code := e.run(t, "", "--tools", "+mcp__fs__x", "-p", "hi"); code != exitBadUsage || !strings.Contains(errOut, "chosen by name") {
		t.Errorf("--tools +mcp__: exit %d %q", code, errOut)
	}
}

// TestMCPOverRPC: the RPC command mcp reports the servers and disables
// one; a session stopped by SIGTERM stops its MCP servers too.
func TestMCPOverRPC(t *testing.T) {
	fsBin := npmtest.Bin(t, "mcp-server-filesystem")
	srv := llmtest.NewAnthropic(t)
	e := newAgentEnv(t, srv, 0, "")
	mcpFile := filepath.Join(e.agentDir, "mcp.json")
	writeFile(t, mcpFile, `{"mcpServers": {"fs": {"command": "`+fsBin+`", "args": ["`+e.project+`"]}}}`)
	cmd := e.command("--mode", "rpc", "--no-context-files")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	response := func(id string) map[string]any {
		t.Helper()
		for lines.Scan() {
			var m map[string]any
			if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
				t.Fatalf("%v: %s", err, lines.Bytes())
			}
			if m["type"] == "response" && m["id"] == id {
				return m
			}
		}
		t.Fatalf("no response %s: %v", id, lines.Err())
		return nil
	}
	waitFor(t, "the MCP server to start", func() bool { return len(serverProcesses(t, e.project)) > 0 })
	// "reconnect" waits for the connection, so the status after it is
	// settled.
	fmt.Fprintln(stdin, `{"id": "1", "type": "mcp", "action": "reconnect", "server": "fs"}`)
	r := response("1")
	data, _ := r["data"].(map[string]any)
	servers, _ := data["servers"].([]any)
	if r["success"] != true || len(servers) != 1 {
		t.Fatalf("mcp reconnect: %v", r)
	}
	fs, _ := servers[0].(map[string]any)
	tools, _ := fs["tools"].([]any)
	if fs["name"] != "fs" || fs["state"] != "connected" || len(tools) == 0 {
		t.Errorf("fs: %v", fs)
	}
	fmt.Fprintln(stdin, `{"id": "2", "type": "mcp", "action": "disable"}`)
	if r := response("2"); r["success"] != false || !strings.Contains(fmt.Sprint(r["error"]), `needs "server"`) {
		t.Errorf("disable without a server: %v", r)
	}
	fmt.Fprintln(stdin, `{"id": "3", "type": "mcp", "action": "disable", "server": "fs"}`)
	if r := response("3"); r["success"] != true || !strings.Contains(fmt.Sprint(r["data"]), "state:disabled") {
		t.Errorf("disable: %v", r)
	}
	if data, _ := os.ReadFile(mcpFile); !strings.Contains(string(data), `"enabled": false`) {
		t.Errorf("mcp.json after disable: %s", data)
	}
	waitFor(t, "the disabled server to stop", func() bool { return len(serverProcesses(t, e.project)) == 0 })
	fmt.Fprintln(stdin, `{"id": "4", "type": "mcp", "action": "enable", "server": "fs"}`)
	if r := response("4"); r["success"] != true {
		t.Errorf("enable: %v", r)
	}
	waitFor(t, "the enabled server to start", func() bool { return len(serverProcesses(t, e.project)) > 0 })

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, stdout)
	_ = cmd.Wait()
	waitFor(t, "the MCP servers to stop with Prime", func() bool { return len(serverProcesses(t, e.project)) == 0 })
}

// serverProcesses lists the running processes (zombies aside) whose
// command line names dir: the test's MCP servers.
func serverProcesses(t *testing.T, dir string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc to look for processes in")
	}
	var out []int
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + ent.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(cmdline), dir) || !strings.Contains(string(cmdline), "server-filesystem") {
			continue
		}
		stat, err := os.ReadFile("/proc/" + ent.Name() + "/stat")
		if err != nil {
			continue
		}
		if s := string(stat); strings.Contains(s[strings.LastIndexByte(s, ')')+1:], " Z ") {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// TestREADMEMCPExample runs the README's MCP commands with the filesystem
// server installed by npm (npx in the README fetches the same package):
// the server is added to ~/.prime/agent/mcp.json, and prime mcp list
// connects to it and lists its tools.
func TestREADMEMCPExample(t *testing.T) {
	fsBin := npmtest.Bin(t, "mcp-server-filesystem")
	block := readmeBlock(t, "prime mcp add filesystem", "prime mcp list")
	e := newAgentEnv(t, llmtest.NewAnthropic(t), 0, "")
	ran := 0
	for _, line := range block {
		cmdLine, _, _ := strings.Cut(line, "#")
		args := strings.Fields(cmdLine)
		if len(args) < 2 || args[0] != "prime" || args[1] != "mcp" {
			continue
		}
		if i := indexOf(args, "npx"); i >= 0 {
			if args[i+1] != "-y" || args[i+2] != "@modelcontextprotocol/server-filesystem" {
				t.Fatalf("the README's npx command changed: %q", line)
			}
			args = append(append(args[:i:i], fsBin), args[i+3:]...)
		}
		out, errOut, code := e.sub(t, args[1:]...)
		if code != 0 {
			t.Fatalf("%s: exit %d %q %q", line, code, out, errOut)
		}
		if args[2] == "list" && (!strings.Contains(out, "filesystem: connected") || !strings.Contains(out, "mcp__filesystem__read_text_file")) {
			t.Errorf("%s:\n%s", line, out)
		}
		ran++
	}
	if ran != 2 {
		t.Errorf("ran %d of the README's commands, want 2", ran)
	}
}

// TestREADMEMCPConfig: the README's mcp.json is one Prime reads without a
// problem.
func TestREADMEMCPConfig(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "mcp.json"), strings.Join(readmeBlock(t, `"mcpServers"`, "legacy-server"), "\n"))
	cfg := mcp.Load(mcp.LoadOptions{AgentDir: dir, Getenv: func(string) string { return "tok" }})
	if len(cfg.Problems) != 0 || len(cfg.Servers) != 3 || cfg.Servers[1].Headers["Authorization"] != "Bearer tok" || cfg.Servers[2].Enabled {
		t.Errorf("problems %v, servers %+v", cfg.Problems, cfg.Servers)
	}
}

// TestMCPAddForms: prime mcp add writes pi's entry shapes: env and cwd
// for a stdio server, headers and a bearer token variable for an HTTP
// one, the project's file with -l; bad combinations are usage errors.
func TestMCPAddForms(t *testing.T) {
	e := newAgentEnv(t, llmtest.NewAnthropic(t), 0, "")
	for _, args := range [][]string{
		{"mcp", "add", "tools", "--env", "API_KEY=${TOOLS_KEY}", "--cwd", "sub", "--", "uvx", "tools-mcp", "--verbose"},
		{"mcp", "add", "docs", "--url", "https://example.com/mcp", "--bearer-token-env-var", "DOCS_TOKEN", "--header", "X-Team=core", "--description", "Product docs"},
		{"mcp", "add", "-l", "local", "--", "./server"},
	} {
		if out, errOut, code := e.sub(t, args...); code != 0 {
			t.Fatalf("%v: exit %d %q %q", args, code, out, errOut)
		}
	}
	data, _ := os.ReadFile(filepath.Join(e.agentDir, "mcp.json"))
	for _, want := range []string{`"command": "uvx"`, `"args": [`, `"--verbose"`, `"API_KEY": "${TOOLS_KEY}"`, `"cwd": "sub"`,
		`"url": "https://example.com/mcp"`, `"Authorization": "Bearer ${DOCS_TOKEN}"`, `"X-Team": "core"`, `"description": "Product docs"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("mcp.json lacks %s:\n%s", want, data)
		}
	}
	local, err := os.ReadFile(filepath.Join(e.project, ".prime", "mcp.json"))
	if err != nil || !strings.Contains(string(local), `"command": "./server"`) || strings.Contains(string(data), "./server") {
		t.Errorf("-l: %s %v", local, err)
	}
	for _, bad := range [][]string{
		{"mcp", "add", "x", "--url", "https://x", "--env", "A=b"},
		{"mcp", "add", "x", "--header", "A=b", "--", "cmd"},
		{"mcp", "add", "x", "--env", "novalue", "--", "cmd"},
		{"mcp", "remove"},
	} {
		if _, errOut, code := e.sub(t, bad...); code != exitBadUsage {
			t.Errorf("%v: exit %d %q", bad, code, errOut)
		}
	}
}
