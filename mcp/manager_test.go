package mcp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/tool"
)

// bound is the generous limit on waiting for a server: the machine may be
// busy, and nothing here measures speed.
const bound = 2 * time.Minute

func startManager(t *testing.T, servers ...Server) (*Manager, *reports) {
	t.Helper()
	rep := &reports{}
	m := NewManager(servers, Options{OnReport: rep.add, TempDir: t.TempDir()})
	t.Cleanup(func() { m.Close() })
	m.Start()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	return m, rep
}

type reports struct {
	mu   sync.Mutex
	list []Report
}

func (r *reports) add(rep Report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, rep)
}

func (r *reports) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, rep := range r.list {
		b.WriteString(rep.Message + "\n")
	}
	return b.String()
}

func findTool(t *testing.T, m *Manager, name string) tool.Tool {
	t.Helper()
	for _, tl := range m.Tools() {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s among %v", name, m.Status())
	return nil
}

func call(t *testing.T, tl tool.Tool, args string) (tool.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	return tl.Run(ctx, tool.Call{ID: "c1", Args: jsontext.Value(args)})
}

func TestToolsAndResults(t *testing.T) {
	m, rep := startManager(t, selfServer(t, "faults", "tools"))
	st := m.Status()
	if len(st) != 1 || st[0].State != StateConnected {
		t.Fatalf("status %+v", st)
	}
	if st[0].Instructions != "Tools for fault tests." {
		t.Errorf("instructions %q", st[0].Instructions)
	}
	// The tool whose schema is invalid is left out, and the user is told.
	for _, tl := range m.Tools() {
		if strings.Contains(tl.Spec().Name, "badschema") {
			t.Errorf("badschema offered: %s", tl.Spec().Parameters)
		}
	}
	if len(st[0].Skipped) != 1 || !strings.Contains(st[0].Skipped[0], `"badschema"`) || !strings.Contains(rep.text(), "badschema") {
		t.Errorf("skipped %v, reports %q", st[0].Skipped, rep.text())
	}

	echo := findTool(t, m, "mcp__faults__echo")
	if got := string(echo.Spec().Parameters); !strings.Contains(got, `"text"`) {
		t.Errorf("schema %s", got)
	}
	res, err := call(t, echo, `{"text":"hi"}`)
	if err != nil || res.IsError || llm.TextOf(res.Content) != `echo: {"text":"hi"}` {
		t.Fatalf("echo: %+v, %v", res, err)
	}

	res, err = call(t, findTool(t, m, "mcp__faults__fail"), `{}`)
	if err != nil || !res.IsError || llm.TextOf(res.Content) != "no such record" {
		t.Errorf("fail: %+v, %v", res, err)
	}

	res, err = call(t, findTool(t, m, "mcp__faults__picture"), `{}`)
	if err != nil || len(res.Content) != 2 {
		t.Fatalf("picture: %+v, %v", res, err)
	}
	if img, ok := res.Content[1].(llm.Image); !ok || img.MIMEType != "image/png" || img.Data != "iVBORyBmYWtl" {
		t.Errorf("image %#v", res.Content[1])
	}

	res, err = call(t, findTool(t, m, "mcp__faults__big"), `{}`)
	if err != nil {
		t.Fatal(err)
	}
	text := llm.TextOf(res.Content)
	if len(text) > DefaultMaxResultBytes+200 || !strings.HasPrefix(text, "START") || !strings.HasSuffix(text, "END") {
		t.Fatalf("big result not bounded: %d bytes", len(text))
	}
	i := strings.Index(text, "the whole output is in ")
	if i < 0 || !strings.Contains(text, "chars truncated") {
		t.Fatalf("no truncation note in %q", text[DefaultMaxResultBytes/2-10:DefaultMaxResultBytes/2+200])
	}
	path := strings.TrimSuffix(strings.SplitN(text[i+len("the whole output is in "):], ")", 2)[0], ")")
	full, err := os.ReadFile(path)
	if err != nil || string(full) != "START"+strings.Repeat("é", 30000)+"END" {
		t.Errorf("full output %s: %d bytes, %v", path, len(full), err)
	}
}

// A server that crashes during a call fails the call with what it said on
// stderr, is reported, and is started again by the next call.
func TestCrashMidCallRestartsOnNextCall(t *testing.T) {
	m, rep := startManager(t, selfServer(t, "faults", "tools"))
	pid := findTool(t, m, "mcp__faults__pid")
	res, err := call(t, pid, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	first := llm.TextOf(res.Content)

	_, err = call(t, findTool(t, m, "mcp__faults__crash"), `{}`)
	if err == nil || !strings.Contains(err.Error(), "stopped") || !strings.Contains(err.Error(), "the crash tool crashes") {
		t.Fatalf("crash call: %v", err)
	}
	if st := m.Status()[0]; st.State != StateDisconnected && st.State != StateConnecting {
		t.Errorf("after the crash: %s", st.State)
	}

	res, err = call(t, pid, `{}`)
	if err != nil {
		t.Fatalf("the call after the crash: %v (reports %q)", err, rep.text())
	}
	if second := llm.TextOf(res.Content); second == first || second == "" {
		t.Errorf("the server was not started again: pid %s then %s", first, second)
	}
	if st := m.Status()[0]; st.State != StateConnected {
		t.Errorf("after the restart: %s %s", st.State, st.Error)
	}
}

// A server that never answers initialize fails after its timeout, and the
// rest of the servers connect all the same.
func TestNeverInitializes(t *testing.T) {
	silent := selfServer(t, "silent", "noinit")
	silent.Timeout = 500 * time.Millisecond
	m, rep := startManager(t, silent, selfServer(t, "faults", "tools"))
	st := m.Status()
	if st[0].State != StateFailed || !strings.Contains(st[0].Error, "no answer within 500ms") {
		t.Errorf("silent: %s %q", st[0].State, st[0].Error)
	}
	if st[1].State != StateConnected {
		t.Errorf("faults: %s %q", st[1].State, st[1].Error)
	}
	if !strings.Contains(rep.text(), "MCP server silent did not connect") {
		t.Errorf("reports %q", rep.text())
	}
	_, err := call(t, findTool(t, m, "mcp__faults__echo"), `{}`)
	if err != nil {
		t.Error(err)
	}
}

func TestExitsAtStart(t *testing.T) {
	m, _ := startManager(t, selfServer(t, "broken", "exit"))
	st := m.Status()[0]
	if st.State != StateFailed || !strings.Contains(st.Error, "boom: the server's configuration is missing") {
		t.Errorf("%s %q", st.State, st.Error)
	}
	if len(m.Tools()) != 0 {
		t.Errorf("tools of a failed server: %v", m.Tools())
	}
	if err := m.Reconnect(context.Background(), "broken"); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("reconnect: %v", err)
	}
}

func TestCommandNotFound(t *testing.T) {
	m, _ := startManager(t, Server{Name: "gone", Transport: TransportStdio, Command: filepath.Join(t.TempDir(), "no-such-server"), Enabled: true, Timeout: DefaultTimeout})
	if st := m.Status()[0]; st.State != StateFailed || !strings.Contains(st.Error, "no-such-server") {
		t.Errorf("%s %q", st.State, st.Error)
	}
}

// Close stops the server and the children in its process group.
func TestCloseLeavesNoProcess(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	m, _ := startManager(t, selfServer(t, "faults", "tools", envPIDFile+"="+pidFile))
	pids := readPIDs(t, pidFile)
	for _, p := range pids {
		if !alive(p) {
			t.Fatalf("process %d is not running before Close", p)
		}
	}
	if err := m.Close(); err != nil {
		t.Logf("close: %v", err) // the server exits with a status when its input closes
	}
	for _, p := range pids {
		waitGone(t, p)
	}
	if _, err := call(t, findToolAfterClose(m), `{}`); !errors.Is(err, ErrClosed) {
		t.Errorf("a call after Close: %v", err)
	}
}

func findToolAfterClose(m *Manager) tool.Tool { return m.Tools()[0] }

func readPIDs(t *testing.T, file string) []int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		p, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// alive reports whether pid runs (a zombie does not count).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !os.IsNotExist(err)
	}
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Close while a server is still initializing stops it too.
func TestCloseWhileConnecting(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	m := NewManager([]Server{selfServer(t, "silent", "noinit", envPIDFile+"="+pidFile)}, Options{})
	m.Start()
	waitFor(t, func() bool {
		data, err := os.ReadFile(pidFile)
		return err == nil && strings.HasSuffix(string(data), "\n")
	})
	pids := readPIDs(t, pidFile)
	if st := m.Status()[0]; st.State != StateConnecting {
		t.Errorf("state %s", st.State)
	}
	m.Close()
	waitGone(t, pids[0])
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A call longer than the entry's timeout goes on while the server reports
// progress (each report starts the timeout again, and is passed on as a
// partial result); one that says nothing fails when the timeout passes.
func TestProgressExtendsTheTimeout(t *testing.T) {
	srv := selfServer(t, "faults", "tools")
	srv.Timeout = 2 * time.Second
	m, _ := startManager(t, srv)
	var mu sync.Mutex
	var updates []string
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	res, err := findTool(t, m, "mcp__faults__progress").Run(ctx, tool.Call{Args: jsontext.Value(`{}`), Update: func(r tool.Result) {
		mu.Lock()
		defer mu.Unlock()
		updates = append(updates, llm.TextOf(r.Content))
	}})
	if err != nil || llm.TextOf(res.Content) != "done" {
		t.Fatalf("progress: %+v %v", res, err)
	}
	mu.Lock()
	// The last notifications may be handled after the answer, and are
	// then dropped.
	if len(updates) == 0 || len(updates) > 15 || updates[0] != "progress 1/15: step" {
		t.Errorf("updates %q", updates)
	}
	mu.Unlock()

	_, err = findTool(t, m, "mcp__faults__hang").Run(ctx, tool.Call{Args: jsontext.Value(`{}`)})
	if err == nil || !strings.Contains(err.Error(), "did not answer within 2s") {
		t.Errorf("hang: %v", err)
	}
	if _, err := call(t, findTool(t, m, "mcp__faults__echo"), `{}`); err != nil {
		t.Errorf("the server after a timeout: %v", err)
	}
}

// The servers' log messages go to the log file, info and above.
func TestServerLog(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "mcp.log")
	m := NewManager([]Server{selfServer(t, "faults", "tools")}, Options{LogFile: logFile})
	t.Cleanup(func() { m.Close() })
	m.Start()
	if err := m.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, findTool(t, m, "mcp__faults__log"), `{}`); err != nil {
		t.Fatal(err)
	}
	// The messages may come after the answer.
	var text string
	waitFor(t, func() bool {
		data, _ := os.ReadFile(logFile)
		text = string(data)
		return strings.Count(text, "\n") >= 2
	})
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], " [faults] warning faults: disk almost\\nfull") ||
		!strings.HasSuffix(lines[1], ` [faults] error db: {"code":7}`) {
		t.Errorf("log:\n%s", text)
	}
}

func TestLogRotates(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "mcp.log")
	write(t, logFile, strings.Repeat("x", maxLogSize-10)+"\n")
	m := NewManager(nil, Options{LogFile: logFile})
	m.log("s", &sdk.LoggingMessageParams{Level: "info", Logger: "l", Data: "after the move"})
	old, _ := os.ReadFile(logFile + ".1")
	cur, _ := os.ReadFile(logFile)
	if len(old) != maxLogSize-9 || !strings.HasSuffix(string(cur), " [s] info l: after the move\n") {
		t.Errorf("old %d bytes, current %q", len(old), cur)
	}
}

func TestDisableAndEnable(t *testing.T) {
	m, _ := startManager(t, selfServer(t, "faults", "tools"))
	echo := findTool(t, m, "mcp__faults__echo")
	if err := m.SetEnabled("faults", false); err != nil {
		t.Fatal(err)
	}
	if len(m.Tools()) != 0 || m.Status()[0].State != StateDisabled {
		t.Fatalf("disabled: %d tools, %s", len(m.Tools()), m.Status()[0].State)
	}
	if _, err := call(t, echo, `{}`); !errors.Is(err, ErrDisabled) {
		t.Errorf("call to a disabled server: %v", err)
	}
	if err := m.SetEnabled("faults", true); err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, echo, `{}`); err != nil {
		t.Errorf("call after enabling: %v", err)
	}
	if err := m.SetEnabled("nobody", true); !errors.Is(err, ErrNoServer) {
		t.Errorf("unknown server: %v", err)
	}
}

// A call the user aborts returns at once with the context's error.
func TestAbortedCall(t *testing.T) {
	m, _ := startManager(t, selfServer(t, "faults", "tools"))
	hang := findTool(t, m, "mcp__faults__hang")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := hang.Run(ctx, tool.Call{Args: jsontext.Value(`{}`)})
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("aborted call: %v", err)
		}
	case <-time.After(bound):
		t.Fatal("the aborted call did not return")
	}
	if _, err := call(t, findTool(t, m, "mcp__faults__echo"), `{}`); err != nil {
		t.Errorf("the server after an aborted call: %v", err)
	}
}
