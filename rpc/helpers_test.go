package rpc_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/internal/proctest"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/rpc"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
	"github.com/prime-agent/prime/tool"
)

// lineTimeout guards against a server that never answers: a deadlock fails
// the test instead of hanging it. No test asserts how fast anything is.
const lineTimeout = 60 * time.Second

// writeModels writes a models.json in dir that points srv's provider at it.
func writeModels(t testing.TB, dir string, srv *llmtest.Server) {
	t.Helper()
	m := srv.Model()
	doc := map[string]any{"providers": map[string]any{m.Provider: map[string]any{
		"baseUrl": m.BaseURL, "api": m.API, "apiKey": llmtest.Key,
		"models": []any{map[string]any{
			"id": m.ID, "name": m.Name, "reasoning": m.Reasoning, "input": m.Input,
			"contextWindow": m.ContextWindow, "maxTokens": m.MaxTokens,
		}},
	}}}
	b, err := json.Marshal(doc, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "models.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// settingsFor returns the defaults with retries off (a failing fake fails
// at once) and the overrides given ("key", "value", ...).
func settingsFor(t testing.TB, kv ...string) *settings.Settings {
	t.Helper()
	st, err := settings.Defaults().WithOverride("retry.enabled", "false")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if st, err = st.WithOverride(kv[i], kv[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// settingsIn returns settingsFor's settings as read from files in the agent
// directory dir, so that the changes a client makes are saved there.
func settingsIn(t testing.TB, dir string) *settings.Settings {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"retry": {"enabled": false}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := settings.Load(context.Background(), settings.Options{AgentDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// echo answers a conversation with "reply to: <last user text>" and a
// summary request with a summary.
func echo(r *llmtest.Request) llmtest.Reply {
	text := r.LastUserText()
	if strings.Contains(text, "<conversation>") {
		return llmtest.Stream(llmtest.Text("## Goal\nSummarized by the fake model."), llmtest.Usage(llm.UTF16Len(r.Text())/4, 20))
	}
	return llmtest.Stream(llmtest.Text("reply to: "+text), llmtest.Usage(llm.UTF16Len(r.Text())/4+1, 8))
}

// harness is a server running in the test process over pipes, for an agent
// on a session file in a temporary directory.
type harness struct {
	t    testing.TB
	srv  *llmtest.Server
	ag   *agent.Agent
	path string
	in   *io.PipeWriter
	out  *lines
	diag *proctest.Buffer
	done chan error
	stop context.CancelFunc
}

// start runs a server for a new agent talking to srv with the given tools.
func start(t testing.TB, srv *llmtest.Server, st *settings.Settings, tools ...tool.Tool) *harness {
	t.Helper()
	s, err := session.Create(filepath.Join(t.TempDir(), "s.jsonl"), session.Options{CWD: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return startOn(t, s, srv, st, tools...)
}

// startOn is start for the session s.
func startOn(t testing.TB, s *session.Session, srv *llmtest.Server, st *settings.Settings, tools ...tool.Tool) *harness {
	t.Helper()
	return startWith(t, s, srv, st, rpc.Options{}, tools...)
}

// startWith is startOn with the server's options (Stderr is the
// harness's).
func startWith(t testing.TB, s *session.Session, srv *llmtest.Server, st *settings.Settings, opts rpc.Options, tools ...tool.Tool) *harness {
	t.Helper()
	dir := t.TempDir()
	writeModels(t, dir, srv)
	h := &harness{t: t, srv: srv, path: s.File(), out: newLines(), diag: &proctest.Buffer{}, done: make(chan error, 1)}
	opts.Stderr = h.diag
	server := rpc.New(h.out, opts)
	cfg := agent.Config{
		Settings: st, AgentDir: dir, Getenv: func(string) string { return "" }, Events: server.Event,
		Model: srv.Model().Provider + "/" + srv.Model().ID, Tools: tools, NoContextFiles: true,
	}
	h.ag = agent.New(s, cfg)
	t.Cleanup(func() { h.ag.Close() })
	if _, err := h.ag.Model(t.Context()); err != nil { // as prime --mode rpc does
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	h.in = pw
	ctx, cancel := context.WithCancel(context.Background())
	h.stop = cancel
	go func() { h.done <- server.Serve(ctx, h.ag, pr) }()
	t.Cleanup(func() {
		cancel()
		pw.Close()
		pr.Close()
		select {
		case <-h.done:
		case <-time.After(lineTimeout):
			t.Error("Serve did not return")
		}
	})
	return h
}

// send writes lines to the server's input, in one write.
func (h *harness) send(lines ...string) {
	h.t.Helper()
	if _, err := io.WriteString(h.in, strings.Join(lines, "\n")+"\n"); err != nil {
		h.t.Fatal(err)
	}
}

// until reads lines until one satisfies match, and returns them all.
func (h *harness) until(match func(m msg) bool) []msg {
	h.t.Helper()
	var got []msg
	for {
		m := h.out.next(h.t)
		got = append(got, m)
		if match(m) {
			return got
		}
	}
}

// response reads lines until the response with id, and returns it.
func (h *harness) response(id string) msg {
	h.t.Helper()
	got := h.until(func(m msg) bool { return m.isResponse(id) })
	return got[len(got)-1]
}

// finish closes the input and returns what Serve returned.
func (h *harness) finish() error {
	h.t.Helper()
	h.in.Close()
	select {
	case err := <-h.done:
		h.done <- err
		return err
	case <-time.After(lineTimeout):
		h.t.Fatal("Serve did not return after the end of input")
		return nil
	}
}

// msg is one output line, decoded.
type msg struct {
	raw string
	m   map[string]any
}

func (m msg) typ() string { s, _ := m.m["type"].(string); return s }

func (m msg) isResponse(id string) bool { return m.typ() == "response" && m.m["id"] == id }

func (m msg) isEvent(typ string) bool { return m.typ() == typ }

func (m msg) success() bool { b, _ := m.m["success"].(bool); return b }

func (m msg) errText() string { s, _ := m.m["error"].(string); return s }

// data returns the response's data as an object.
func (m msg) data() map[string]any { d, _ := m.m["data"].(map[string]any); return d }

// lines collects the server's output: each Write must be whole lines.
type lines struct {
	mu  sync.Mutex
	buf []byte
	ch  chan msg
}

func newLines() *lines { return &lines{ch: make(chan msg, 100000)} }

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		line := string(l.buf[:i])
		l.buf = l.buf[i+1:]
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			m = nil
		}
		l.ch <- msg{raw: line, m: m}
	}
	return len(p), nil
}

// next returns the next line, failing the test on a line that is not a
// JSON object or when none comes.
func (l *lines) next(t testing.TB) msg {
	t.Helper()
	m := l.nextMsg(t)
	if m.m == nil {
		t.Fatalf("an output line is not a JSON object: %.300q", m.raw)
	}
	return m
}

// nextRaw returns the next line as it was written.
func (l *lines) nextRaw(t testing.TB) string {
	t.Helper()
	return l.nextMsg(t).raw
}

func (l *lines) nextMsg(t testing.TB) msg {
	t.Helper()
	select {
	case m := <-l.ch:
		return m
	case <-time.After(lineTimeout):
		t.Fatal("no output line")
		return msg{}
	}
}

// gate is a tool that runs until it is released (or, if it heeds
// cancellation, until its context is cancelled), telling started when it
// begins.
type gate struct {
	started chan struct{}
	release chan struct{}
	// heedCancel makes it return when its context is cancelled; without
	// it, it returns only when released, even after an abort.
	heedCancel bool
}

func newGate(heedCancel bool) *gate {
	return &gate{started: make(chan struct{}, 10), release: make(chan struct{}), heedCancel: heedCancel}
}

func (g *gate) Spec() tool.Spec {
	return tool.Spec{Name: "gate", Description: "waits for the test", Parameters: jsontext.Value(`{"type":"object","properties":{}}`)}
}

func (g *gate) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	g.started <- struct{}{}
	if g.heedCancel {
		select {
		case <-g.release:
		case <-ctx.Done():
			return tool.Result{}, errors.New("stopped: aborted")
		}
	} else {
		<-g.release
	}
	return tool.Result{Content: []llm.Content{llm.Text{Text: "opened"}}}, nil
}

// startGated starts a server whose model calls the gate tool once (and
// then echoes), sends the prompt text, and returns once the tool runs.
func startGated(t testing.TB, srv *llmtest.Server, heedCancel bool, text string) (*harness, *gate) {
	t.Helper()
	return startGatedWith(t, srv, heedCancel, text, rpc.Options{})
}

// startGatedWith is startGated with the server's options.
func startGatedWith(t testing.TB, srv *llmtest.Server, heedCancel bool, text string, opts rpc.Options) (*harness, *gate) {
	t.Helper()
	srv.Reply(llmtest.ToolCall("c1", "gate", `{}`))
	srv.Handle(echo)
	g := newGate(heedCancel)
	s, err := session.Create(filepath.Join(t.TempDir(), "s.jsonl"), session.Options{CWD: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h := startWith(t, s, srv, settingsFor(t), opts, g)
	h.send(fmt.Sprintf(`{"id":"p","type":"prompt","message":%q}`, text))
	g.wait(t)
	return h, g
}

// wait blocks until the tool has started.
func (g *gate) wait(t testing.TB) {
	t.Helper()
	select {
	case <-g.started:
	case <-time.After(lineTimeout):
		t.Fatal("the tool did not start")
	}
}
