package rpc_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/rpc"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
)

// fuzzSeeds are sessions of commands, good and bad.
var fuzzSeeds = []string{
	`{"id":"1","type":"prompt","message":"hello"}` + "\n" + `{"type":"get_state"}`,
	`{"type":"prompt","message":"a"}` + "\n" + `{"type":"prompt","message":"b"}` + "\n" + `{"type":"steer","message":"c"}` + "\n" + `{"type":"abort"}`,
	`{"type":"prompt","message":"a"}` + "\n" + `{"type":"compact","customInstructions":"short"}` + "\n" + `{"type":"get_tree"}`,
	`{"type":"prompt","message":"a"}` + "\n" + `{"type":"get_fork_messages"}` + "\n" + `{"type":"get_entries"}` + "\n" + `{"type":"new_session"}`,
	`{"type":"set_session_name","name":"fuzz"}` + "\r\n" + `{"type":"set_thinking_level","level":"high"}` + "\n" + `{"type":"cycle_thinking_level"}`,
	`{"type":"follow_up","message":"x","images":[{"type":"image","data":"aGk=","mimeType":"image/png"}]}` + "\n" + `{"type":"clear_queue"}`,
	`{"type":"navigate_tree","targetId":"x","summarize":true}` + "\n" + `{"type":"get_session_stats"}` + "\n" + `{"type":"clone"}`,
	"not json\n[]\n{}\n{\"type\":1}\n{\"type\":\"nope\"}\n\"\xff\"\n{\"type\":\"prompt\",\"message\":\"\u2028\"}",
	`{"type":"set_steering_mode","mode":"all"}` + "\n" + `{"type":"set_auto_compaction","enabled":false}` + "\n" + `{"type":"get_messages"}`,
	`{"type":"prompt","message":"a"}` + "\n" + `{"type":"pin","text":"never push"}` + "\n" + `{"type":"get_pins"}` + "\n" + `{"type":"unpin","text":"never push"}` + "\n" + `{"type":"unpin","pinId":"x"}`,
	`{"type":"prompt","message":"a"}` + "\n" + `{"type":"compact"}` + "\n" + `{"type":"get_compaction_receipt"}` + "\n" + `{"type":"uncompact"}` + "\n" + `{"type":"uncompact","compactionId":"x"}`,
	`{"type":"extension_ui_response","id":"approval-1","value":"Allow once"}` + "\n" + `{"type":"extension_ui_response","id":7,"cancelled":true}` + "\n" + `{"type":"extension_ui_response"}`,
	strings.Repeat("[", 20000),
}

// FuzzServe: whatever lines arrive, the server answers each with JSON
// lines, ends when the input does, and leaves every session file it wrote
// valid. It runs in the test process against an agent whose model is a
// loopback fake. Inputs that would run shell commands (bash) or open a
// session file the fuzzer names (switch_session) are skipped.
func FuzzServe(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	srv := llmtest.NewAnthropic(f)
	srv.Handle(echo)
	st := settingsFor(f, "compaction.keepRecentTokens", "1")
	f.Fuzz(func(t *testing.T, input []byte) { serveInput(t, srv, st, input) })
}

// serveInput is one run of FuzzServe: input to a new agent on a new
// session file, twice (all at once, then paced), and the checks.
func serveInput(t *testing.T, srv *llmtest.Server, st *settings.Settings, input []byte) {
	if touchesOutside(input) {
		t.Skip("runs a shell command or opens a file of the fuzzer's choosing")
	}
	if len(input) > 64<<10 || bytes.Count(input, []byte("\n")) > 64 {
		t.Skip("long inputs only take long: each line is a round trip")
	}
	agentDir, work := t.TempDir(), t.TempDir()
	writeModels(t, agentDir, srv)
	path := filepath.Join(agentDir, "sessions", "s.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := session.Create(path, session.Options{CWD: work})
	if err != nil {
		t.Fatal(err)
	}
	// Twice: all lines at once, then each sent once the one before
	// was answered and the agent is idle (so that runs, compactions
	// and navigations write their entries).
	for _, paced := range []bool{false, true} {
		out := &checkedLines{t: t, responses: make(chan struct{}, len(input)+1)}
		server := rpc.New(out, rpc.Options{})
		ag := agent.New(s, agent.Config{
			Settings: st, AgentDir: agentDir, Getenv: func(string) string { return "" }, Events: server.Event,
			Model: srv.Model().Provider + "/" + srv.Model().ID, NoContextFiles: true, CWD: work,
		})
		var in io.Reader = bytes.NewReader(input)
		if paced {
			in = &pacedReader{t: t, lines: serverLines(input), ag: ag, responses: out.responses}
		}
		if err := server.Serve(context.Background(), ag, in); err != nil {
			t.Fatalf("Serve: %v", err)
		}
		if ag.Busy() {
			t.Error("busy after Serve returned")
		}
		ag.Close()
		if s, err = session.Open(path); errors.Is(err, os.ErrNotExist) {
			s, err = session.Create(path, session.Options{CWD: work})
		}
		if err != nil {
			t.Fatalf("the session file: %v", err)
		}
	}
	s.Close()
	filepath.WalkDir(agentDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		loaded, err := session.Load(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			return nil
		}
		if w := loaded.Warnings(); len(w) > 0 || loaded.TornTail() {
			t.Errorf("%s is damaged: %v", p, w)
		}
		return nil
	})
}

// touchesOutside reports whether a line of input is a bash or
// switch_session command, as the server reads lines.
func touchesOutside(input []byte) bool {
	for _, line := range bytes.Split(input, []byte("\n")) {
		var m map[string]any
		if json.Unmarshal(bytes.TrimSuffix(line, []byte("\r")), &m, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)) != nil {
			continue
		}
		if t, _ := m["type"].(string); t == "bash" || t == "switch_session" {
			return true
		}
	}
	return false
}

// serverLines splits input into lines as the server does.
func serverLines(input []byte) [][]byte {
	var out [][]byte
	for _, line := range bytes.Split(input, []byte("\n")) {
		if line = bytes.TrimSuffix(line, []byte("\r")); len(line) > 0 {
			out = append(out, line)
		}
	}
	return out
}

// pacedReader gives the server one line at a time, each once every line
// before it was answered and the agent is idle.
type pacedReader struct {
	t         *testing.T
	lines     [][]byte
	next      int
	buf       []byte
	ag        *agent.Agent
	responses chan struct{}
	answered  int
}

func (r *pacedReader) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		if !r.ready() || r.next == len(r.lines) {
			return 0, io.EOF
		}
		r.buf = append(r.lines[r.next], '\n')
		r.next++
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// ready waits until every line given was answered and the agent is idle.
func (r *pacedReader) ready() bool {
	ctx, cancel := context.WithTimeout(context.Background(), lineTimeout)
	defer cancel()
	for r.answered < r.next {
		select {
		case <-r.responses:
			r.answered++
		case <-ctx.Done():
			r.t.Errorf("line %d was not answered", r.answered+1)
			return false
		}
	}
	if err := r.ag.Wait(ctx); err != nil {
		r.t.Errorf("the agent did not settle after line %d", r.next)
		return false
	}
	return true
}

// checkedLines fails the test on output that is not whole lines of valid
// JSON objects with a string type, and tells responses of each response.
type checkedLines struct {
	t         *testing.T
	responses chan struct{}
}

func (c *checkedLines) Write(p []byte) (int, error) {
	if len(p) == 0 || bytes.IndexByte(p, '\n') != len(p)-1 {
		c.t.Errorf("a write is not one line: %.200q", p)
	}
	var m struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(bytes.TrimSuffix(p, []byte("\n")), &m, jsontext.AllowDuplicateNames(true)); err != nil || m.Type == "" {
		c.t.Errorf("not a JSON object with a type (%v): %.200q", err, p)
	}
	if m.Type == "response" {
		c.responses <- struct{}{}
	}
	return len(p), nil
}
