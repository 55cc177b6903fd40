package tui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/charmbracelet/x/vt"
	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
	"github.com/prime-agent/prime/tool"
)

// The program-level tests run the real Model in a tea.Program (teatest)
// over a real agent talking to a loopback fake model, and read the screen
// the way a user sees it: the program's output goes through a terminal
// emulator (x/vt), whose scrollback and screen make a frame. Frames are
// compared with golden files in testdata (teatest's golden package, whose
// -update flag rewrites them; this test binary therefore does not use
// internal/golden, which registers the same flag).

const termWidth, termHeight = 80, 30

// harness is one UI under test.
type harness struct {
	t     *testing.T
	srv   *llmtest.Server
	ag    *agent.Agent
	tm    *teatest.TestModel
	emu   *vt.SafeEmulator
	file  string
	cwd   string
	agent string // the agent directory (models.json, settings.json)
	mu    sync.Mutex
	raw   bytes.Buffer // everything the program wrote, read by frame
}

// setup says how a harness starts.
type setup struct {
	window   int    // the fake model's context window (default 200,000)
	settings string // settings.json in the agent directory
	session  string // an existing session file to open
	tools    []tool.Tool
	builtins bool     // also Prime's own tools, working in the harness's directory
	prompts  []string // Options.Prompts
	// apiKey is the models.json apiKey of the fake's provider (default
	// llmtest.Key); a variable's name that is not set leaves it without.
	apiKey string
	// agentCWD, when set, is the directory the agent's system prompt
	// names instead of the temporary one, whose name varies in length:
	// a test that pins token counts sets it.
	agentCWD string
	// approvals puts the tools' calls through the permission mode of the
	// settings (no sandbox), the dialog answering what it asks.
	approvals bool
	// mcp is the agent directory's mcp.json; set, the agent connects
	// its servers.
	mcp string
}

func newHarness(t *testing.T, s setup) *harness {
	t.Helper()
	h := &harness{t: t, srv: llmtest.NewAnthropic(t), cwd: t.TempDir(), agent: t.TempDir()}
	m := h.srv.Model()
	window := s.window
	if window == 0 {
		window = 200000
	}
	models := map[string]any{"providers": map[string]any{m.Provider: map[string]any{
		"baseUrl": m.BaseURL, "api": m.API, "apiKey": cmpOr(s.apiKey, llmtest.Key),
		"models": []any{map[string]any{"id": m.ID, "name": m.Name, "reasoning": true, "input": m.Input,
			"contextWindow": window, "maxTokens": min(window/4, 32000), "cost": map[string]any{"input": 3, "output": 15}}},
	}}}
	b, err := json.Marshal(models, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(h.agent, "models.json"), string(b))
	write(t, filepath.Join(h.agent, "settings.json"), cmpOr(s.settings, `{"retry": {"enabled": false}}`))
	if s.mcp != "" {
		write(t, filepath.Join(h.agent, "mcp.json"), s.mcp)
	}
	st, err := settings.Load(context.Background(), settings.Options{AgentDir: h.agent})
	if err != nil {
		t.Fatal(err)
	}
	var sess *session.Session
	if s.session != "" {
		h.file = s.session
		sess, err = session.Open(s.session)
	} else {
		h.file = filepath.Join(t.TempDir(), "s.jsonl")
		sess, err = session.Create(h.file, session.Options{CWD: h.cwd})
	}
	if err != nil {
		t.Fatal(err)
	}
	tools := s.tools
	if s.builtins {
		tools = append(tools, tool.Builtins(tool.Env{CWD: h.cwd})...)
	}
	ev := NewEvents()
	cfg := agent.Config{
		Settings: st, AgentDir: h.agent, Getenv: func(string) string { return "" }, Events: ev.Send,
		Model: m.Provider + "/" + m.ID, Tools: tools, CWD: cmpOr(s.agentCWD, h.cwd), NoContextFiles: true,
		Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
		MCP: s.mcp != "",
	}
	if s.approvals {
		cfg.Approvals = agent.ApprovalsAsk
		cfg.Confinement = func() agent.Confinement { return agent.Confinement{NoSandbox: "none in this test"} }
	}
	h.ag = agent.New(sess, cfg)
	t.Cleanup(func() { h.ag.Abort(); h.ag.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	// The temporary directory is the home directory, so that the footer
	// says ~/001 whatever the directory's name.
	model := New(ctx, h.ag, Options{Version: "v0.0.0-test", CWD: h.cwd, Home: filepath.Dir(h.cwd), Prompts: s.prompts})
	h.tm = teatest.NewTestModel(t, model, teatest.WithInitialTermSize(termWidth, termHeight))
	h.emu = newEmulator(t)
	done := make(chan struct{})
	go func() { defer close(done); ev.Attach(ctx, h.tm.Send) }()
	t.Cleanup(func() {
		h.tm.Quit()
		h.tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
		cancel()
		<-done
	})
	return h
}

// newEmulator returns a terminal emulator whose answers to the program's
// queries are read and dropped until the test ends. (The pipe is closed
// directly: the emulator's Close races with its Read.)
func newEmulator(t *testing.T) *vt.SafeEmulator {
	emu := vt.NewSafeEmulator(termWidth, termHeight)
	done := make(chan struct{})
	go func() { defer close(done); io.Copy(io.Discard, emu) }()
	t.Cleanup(func() {
		if pw, ok := emu.InputPipe().(*io.PipeWriter); ok {
			pw.Close()
			<-done
		}
	})
	return emu
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// frame is what the terminal holds: its scrollback, then its screen, each
// line without trailing spaces, without the empty lines at the end.
func (h *harness) frame() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	buf := make([]byte, 64<<10)
	for {
		n, _ := h.tm.Output().Read(buf)
		if n == 0 {
			break
		}
		if os.Getenv("TUI_RAW") != "" {
			fmt.Printf("RAW %q\n", buf[:n])
		}
		// The program writes for a terminal that turns a line feed into
		// a carriage return and a line feed (ONLCR), as a tty does.
		h.raw.Write(buf[:n])
		h.emu.Write(bytes.ReplaceAll(buf[:n], []byte("\n"), []byte("\r\n")))
	}
	var lines []string
	if sb := h.emu.Scrollback(); sb != nil {
		for _, l := range sb.Lines() {
			lines = append(lines, strings.TrimRight(l.String(), " "))
		}
	}
	for _, l := range strings.Split(h.emu.String(), "\n") {
		lines = append(lines, strings.TrimRight(l, " "))
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return normalize(strings.Join(lines, "\n"))
}

var (
	durations = regexp.MustCompile(`([Tt]ook|Elapsed|waited) [0-9.ms]+`)
	spinner   = regexp.MustCompile(`[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]`)
)

// normalize replaces what changes from run to run: durations and the
// spinner's frame.
func normalize(s string) string {
	s = durations.ReplaceAllString(s, "$1 N.Ns")
	return spinner.ReplaceAllString(s, "*")
}

// waitFor waits until the frame satisfies ok (the UI works on its own
// goroutines) and stays the same for a while (the renderer draws at its
// own pace), failing after a generous time with the last frame.
func (h *harness) waitFor(what string, ok func(frame string) bool) string {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last string
	var since time.Time
	for {
		f := h.frame()
		switch {
		case !ok(f):
			since = time.Time{}
		case f != last || since.IsZero():
			since = time.Now()
		case time.Since(since) > 250*time.Millisecond:
			return f
		}
		last = f
		if time.Now().After(deadline) {
			h.t.Fatalf("waiting for %s; the screen:\n%s", what, f)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitText waits for every text to be on the screen.
func (h *harness) waitText(texts ...string) string {
	h.t.Helper()
	return h.waitFor(strings.Join(texts, ", "), func(f string) bool {
		for _, s := range texts {
			if !strings.Contains(f, s) {
				return false
			}
		}
		return true
	})
}

// waitIdle waits until the agent is idle and the screen shows the text.
func (h *harness) waitIdle(texts ...string) string {
	h.t.Helper()
	if err := h.ag.Wait(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	return h.waitFor("idle with "+strings.Join(texts, ", "), func(f string) bool {
		for _, s := range texts {
			if !strings.Contains(f, s) {
				return false
			}
		}
		return !strings.Contains(f, "working…") && !strings.Contains(f, "compacting…")
	})
}

func (h *harness) typeText(s string) { h.tm.Type(s) }

func (h *harness) key(code rune, mod ...tea.KeyMod) {
	k := tea.KeyPressMsg{Code: code}
	for _, m := range mod {
		k.Mod |= m
	}
	h.tm.Send(k)
}

func (h *harness) enter() { h.key(tea.KeyEnter) }

// send types a line and presses Enter.
func (h *harness) send(s string) {
	h.typeText(s)
	h.enter()
}

// golden compares a frame with testdata/<test name>.golden.
func (h *harness) golden(frame string) {
	h.t.Helper()
	golden.RequireEqual(h.t, frame+"\n")
}
