package rpc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/rpc"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiontest"
)

// names lists the types of the lines (a response as "response:ID").
func names(ms []msg) string {
	var out []string
	for _, m := range ms {
		n := m.typ()
		if n == "response" {
			id, _ := m.m["id"].(string)
			n += ":" + id
		}
		if len(out) > 0 && n == "message_update" && out[len(out)-1] == n {
			continue
		}
		out = append(out, n)
	}
	return strings.Join(out, " ")
}

func TestPromptRunsToTheEnd(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	h := start(t, srv, settingsFor(t))
	h.send(`{"id":"p1","type":"prompt","message":"hello"}`)
	got := h.until(func(m msg) bool { return m.isEvent("agent_settled") })
	want := "response:p1 agent_start turn_start message_start message_end message_start message_end message_start message_update message_end turn_end agent_end agent_settled"
	if n := names(got); n != want {
		t.Errorf("lines:\n%s\nwant\n%s", n, want)
	}
	if d := got[0].data(); d["disposition"] != "started" {
		t.Errorf("response %s", got[0].raw)
	}
	h.send(`{"id":"t","type":"get_last_assistant_text"}`)
	if r := h.response("t"); r.data()["text"] != "reply to: hello" {
		t.Errorf("last text %s", r.raw)
	}
	if err := h.finish(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if k := strings.Join(sessiontest.Kinds(t, h.path), " "); k != "model_change thinking_level_change system user assistant" {
		t.Errorf("entries %s", k)
	}
}

// TestFraming: CRLF, a line far longer than a scanner's buffer, U+2028
// inside a string, invalid UTF-8, empty lines, and a last line without a
// newline.
func TestFraming(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.Handle(echo)
	h := start(t, srv, settingsFor(t))
	long := strings.Repeat("long words ", 200000) // 2.2 MB
	h.send(`{"id":"a","type":"get_state"}` + "\r")
	if r := h.response("a"); !r.success() {
		t.Fatalf("CRLF line: %s", r.raw)
	}
	h.send(``, `{"id":"b","type":"prompt","message":"`+long+"\u2028end\xff"+`"}`)
	h.until(func(m msg) bool { return m.isEvent("agent_settled") })
	texts := sessiontest.UserTexts(t, h.path)
	if len(texts) != 1 || texts[0] != long+"\u2028end\uFFFD" {
		t.Errorf("the user message is not the line's text (%d messages)", len(texts))
	}
	// The last line has no newline: it still counts.
	if _, err := h.in.Write([]byte(`{"id":"c","type":"get_commands"}`)); err != nil {
		t.Fatal(err)
	}
	h.in.Close()
	if r := h.response("c"); r.raw != `{"id":"c","type":"response","command":"get_commands","success":true,"data":{"commands":[]}}` {
		t.Errorf("last line: %s", r.raw)
	}
	if err := h.finish(); err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// TestBadInput: every kind of bad line gets a failure response, the server
// goes on, and the session file is not touched.
func TestBadInput(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	h := start(t, srv, settingsFor(t))
	cases := []struct {
		line, command, err string
	}{
		{`not json`, "parse", "Failed to parse command: "},
		{`{"type":"prompt"`, "parse", "Failed to parse command: "},
		{`[{"type":"get_state"}]`, "parse", "Failed to parse command: a command is a JSON object, not an array"},
		{`"get_state"`, "parse", "not a string"},
		{`{"id":"x1"}`, "parse", `Failed to parse command: no "type" member`},
		{`{"id":"x2","type":7}`, "parse", `"type" must be a string naming the command, not a number`},
		{`{"id":"x3","type":"launch"}`, "launch", "Unknown command: launch"},
		{`{"id":"x4","type":"prompt"}`, "prompt", `missing "message" (a string)`},
		{`{"id":"x5","type":"prompt","message":42}`, "prompt", `"message" must be a string, not a number`},
		{`{"id":"x6","type":"prompt","message":"hi","streamingBehavior":"later"}`, "prompt", `"streamingBehavior" must be "steer" or "followUp", not "later"`},
		{`{"id":"x7","type":"prompt","message":"hi","images":[{"type":"image","data":"%%%","mimeType":"image/png"}]}`, "prompt", "image 1: data is not base64"},
		{`{"id":"x8","type":"prompt","message":"hi","images":"cat.png"}`, "prompt", `"images" must be a list of images`},
		{`{"id":"x9","type":"steer","message":["a"]}`, "steer", `"message" must be a string, not an array`},
		{`{"id":"x10","type":"set_steering_mode","mode":"some"}`, "set_steering_mode", `"mode" must be "all" or "one-at-a-time", not "some"`},
		{`{"id":"x11","type":"set_auto_compaction"}`, "set_auto_compaction", `missing "enabled" (true or false)`},
		{`{"id":"x12","type":"set_auto_retry","enabled":"yes"}`, "set_auto_retry", `"enabled" must be true or false, not a string`},
		{`{"id":"x13","type":"set_thinking_level","level":"max"}`, "set_thinking_level", `"level" must be "off", "minimal", "low", "medium", "high" or "xhigh", not "max"`},
		{`{"id":"x14","type":"get_entries","since":"deadbeef"}`, "get_entries", "Entry not found: deadbeef"},
		{`{"id":"x15","type":"fork","entryId":"deadbeef"}`, "fork", "cannot fork: "},
		{`{"id":"x16","type":"navigate_tree","targetId":"deadbeef"}`, "navigate_tree", "Entry not found: deadbeef"},
		{`{"id":"x17","type":"switch_session","sessionPath":"/nonexistent/s.jsonl"}`, "switch_session", "no such file"},
		{`{"id":"x18","type":"export_html"}`, "export_html", "not supported"},
		{`{"id":"x19","type":"set_session_name","name":"  "}`, "set_session_name", "empty"},
		{`{"id":"x20","type":"set_model","provider":"nope","modelId":"none"}`, "set_model", "Model not found: nope/none"},
		{`{"id":"x21","type":"compact"}`, "compact", "nothing to compact"},
		{`{"id":"x22","type":"clone"}`, "clone", "cannot clone: "},
		{`{"id":"x23","type":"bash"}`, "bash", `missing "command" (a string)`},
		{`{"id":"x24","type":"prompt","message":"   "}`, "prompt", "empty"},
	}
	for _, c := range cases {
		h.send(c.line)
		got := h.until(func(m msg) bool { return m.typ() == "response" })
		if m := got[len(got)-1]; m.success() || m.m["command"] != c.command || !strings.Contains(m.errText(), c.err) {
			t.Errorf("%s:\n got %s\nwant a failure of %q saying %q", c.line, m.raw, c.command, c.err)
		}
	}
	// ids of any kind are echoed; the server still answers.
	h.send(`{"id":12,"type":"get_commands"}`, `{"id":{"n":1},"type":"nope"}`, `{"type":"get_commands"}`)
	for _, want := range []string{
		`{"id":12,"type":"response","command":"get_commands","success":true,"data":{"commands":[]}}`,
		`{"id":{"n":1},"type":"response","command":"nope","success":false,"error":"Unknown command: nope"}`,
		`{"type":"response","command":"get_commands","success":true,"data":{"commands":[]}}`,
	} {
		if m := h.out.next(t); m.raw != want {
			t.Errorf("got  %s\nwant %s", m.raw, want)
		}
	}
	if err := h.finish(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if _, err := os.Stat(h.path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("bad input wrote the session file (%v)", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model requests", n)
	}
}

// TestTwoPromptsTogether: the second of two prompts sent in one write is
// queued, not lost, and each response precedes what it caused.
func TestTwoPromptsTogether(t *testing.T) {
	// The first reply is held until the second prompt has been answered,
	// so that the first run is still going when the second arrives
	// however busy the machine (a fast reply could otherwise end the run
	// before the server reads the second line, which then starts a run of
	// its own, as it should).
	srv := llmtest.NewAnthropic(t)
	release := make(chan struct{})
	srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		if r.LastUserText() == "first" {
			<-release
		}
		return echo(r)
	})
	h := start(t, srv, settingsFor(t))
	h.send(`{"id":"1","type":"prompt","message":"first"}`, `{"id":"2","type":"prompt","message":"second"}`)
	got := h.until(func(m msg) bool { return m.isResponse("2") })
	close(release)
	got = append(got, h.until(func(m msg) bool { return m.isEvent("agent_settled") })...)
	n := names(got)
	if !strings.HasPrefix(n, "response:1 ") {
		t.Errorf("the first response does not come first: %s", n)
	}
	if i, j := strings.Index(n, "response:2"), strings.Index(n, "queue_update"); i < 0 || j < i {
		t.Errorf("the second response does not precede its queue_update: %s", n)
	}
	for _, m := range got {
		if m.isResponse("2") && m.data()["disposition"] != "queued" {
			t.Errorf("second prompt: %s", m.raw)
		}
	}
	if got := sessiontest.UserTexts(t, h.path); !slices.Equal(got, []string{"first", "second"}) {
		t.Errorf("user messages %q", got)
	}
	if strings.Count(n, "agent_settled") != 1 {
		t.Errorf("settled more than once: %s", n)
	}
}

// TestWhileBusy: while a tool runs, a prompt without streamingBehavior is
// refused, steer and follow_up are queued and delivered in pi's order.
func TestWhileBusy(t *testing.T) {
	h, g := startGated(t, llmtest.NewAnthropic(t), false, "open the gate")
	h.send(`{"id":"busy","type":"prompt","message":"are you there?"}`)
	if r := h.response("busy"); r.success() || !strings.Contains(r.errText(), "streamingBehavior") {
		t.Errorf("prompt while busy: %s", r.raw)
	}
	h.send(`{"id":"s","type":"steer","message":"steering"}`,
		`{"id":"f","type":"follow_up","message":"following up"}`,
		`{"id":"q","type":"prompt","message":"queued by behavior","streamingBehavior":"followUp"}`,
		`{"id":"st","type":"get_state"}`)
	for _, id := range []string{"s", "f", "q"} {
		if r := h.response(id); r.data()["disposition"] != "queued" {
			t.Errorf("%s: %s", id, r.raw)
		}
	}
	st := h.response("st").data()
	if st["isStreaming"] != true || st["pendingMessageCount"] != 3.0 {
		t.Errorf("state while busy: %v", st)
	}
	close(g.release)
	h.until(func(m msg) bool { return m.isEvent("agent_settled") })
	want := []string{"open the gate", "steering", "following up", "queued by behavior"}
	if got := sessiontest.UserTexts(t, h.path); !slices.Equal(got, want) {
		t.Errorf("user messages %q, want %q", got, want)
	}
	// While idle, steer and follow_up start a run.
	h.send(`{"id":"s2","type":"steer","message":"idle steer"}`)
	got := h.until(func(m msg) bool { return m.isEvent("agent_settled") })
	if got[0].raw != `{"id":"s2","type":"response","command":"steer","success":true,"data":{"disposition":"started"}}` {
		t.Errorf("steer while idle: %s", got[0].raw)
	}
}

// TestAbort: abort mid-tool answers after the run settled aborted, every
// call has its result, and the session goes on.
func TestAbort(t *testing.T) {
	h, _ := startGated(t, llmtest.NewOpenAI(t), true, "wait")
	h.send(`{"id":"a","type":"abort"}`)
	got := h.until(func(m msg) bool { return m.isResponse("a") })
	n := names(got)
	if !strings.HasSuffix(n, "tool_execution_end message_start message_end turn_end agent_end agent_settled response:a") {
		t.Errorf("abort mid-tool:\n%s", n)
	}
	for _, m := range got {
		if m.isEvent("agent_settled") && m.m["aborted"] != true {
			t.Errorf("settled %s", m.raw)
		}
	}
	if k := sessiontest.Kinds(t, h.path); k[len(k)-1] != "toolResult" {
		t.Errorf("entries %v", k)
	}
	h.send(`{"id":"p2","type":"prompt","message":"again"}`)
	h.until(func(m msg) bool { return m.isEvent("agent_settled") })
	if got := sessiontest.UserTexts(t, h.path); !slices.Equal(got, []string{"wait", "again"}) {
		t.Errorf("user messages %q", got)
	}
}

// TestCompactOrder: a prompt sent right after compact finds the compaction
// under way and is refused; compact answers after compaction_end; abort
// answers after the compaction it stopped.
func TestCompactOrder(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	release := make(chan struct{})
	summaries := make(chan struct{}, 10)
	srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		if strings.Contains(r.LastUserText(), "<conversation>") {
			summaries <- struct{}{}
			<-release
		}
		return echo(r)
	})
	h := start(t, srv, settingsFor(t, "compaction.keepRecentTokens", "1"))
	for _, p := range []string{"one", "two"} {
		h.send(fmt.Sprintf(`{"id":%q,"type":"prompt","message":%q}`, p, p))
		h.until(func(m msg) bool { return m.isEvent("agent_settled") })
	}
	h.send(`{"id":"c","type":"compact","customInstructions":"keep the numbers"}`, `{"id":"p","type":"prompt","message":"three"}`)
	if r := h.response("p"); r.success() || !strings.Contains(r.errText(), "compaction") {
		t.Errorf("prompt during the compaction: %s", r.raw)
	}
	h.send(`{"id":"st","type":"get_state"}`)
	if st := h.response("st").data(); st["isCompacting"] != true || st["isStreaming"] != false {
		t.Errorf("state during a manual compaction: %v", st)
	}
	<-summaries
	close(release)
	got := h.until(func(m msg) bool { return m.isResponse("c") })
	if n := names(got); !strings.HasSuffix(n, "compaction_end response:c") {
		t.Errorf("compact: %s", n)
	}
	if d := got[len(got)-1].data(); d["summary"] == "" || d["firstKeptEntryId"] == "" {
		t.Errorf("compact data %v", d)
	}

	// Abort during a compaction: compaction_end aborted, compact's failure,
	// then abort's answer.
	h.send(`{"id":"p4","type":"prompt","message":"four"}`)
	h.until(func(m msg) bool { return m.isEvent("agent_settled") })
	blocked, held := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(held) }) // before the server closes
	srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		if strings.Contains(r.LastUserText(), "<conversation>") {
			close(blocked)
			<-held
		}
		return echo(r)
	})
	h.send(`{"id":"c2","type":"compact"}`)
	<-blocked
	h.send(`{"id":"a","type":"abort"}`)
	got = h.until(func(m msg) bool { return m.isResponse("a") })
	n := names(got)
	if !strings.HasSuffix(n, "compaction_end response:c2 response:a") {
		t.Errorf("abort during a compaction: %s", n)
	}
	for _, m := range got {
		if m.isEvent("compaction_end") && m.m["aborted"] != true {
			t.Errorf("%s", m.raw)
		}
	}
}

// TestShutdownOnSignal: a cancelled context aborts the agent; commands that
// arrive while it stops are answered with a failure; Serve returns the
// context's error.
func TestShutdownOnSignal(t *testing.T) {
	h, g := startGated(t, llmtest.NewAnthropic(t), false, "wait")
	h.stop()
	h.send(`{"id":"late","type":"get_state"}`, `not json`)
	if r := h.response("late"); r.success() || !strings.Contains(r.errText(), "shutting down") {
		t.Errorf("a command during the shutdown: %s", r.raw)
	}
	if r := h.out.next(t); r.m["command"] != "parse" {
		t.Errorf("bad line during the shutdown: %s", r.raw)
	}
	close(g.release)
	got := h.until(func(m msg) bool { return m.isEvent("agent_settled") })
	if last := got[len(got)-1]; last.m["aborted"] != true {
		t.Errorf("settled %s", last.raw)
	}
	if err := <-h.done; !errors.Is(err, context.Canceled) {
		t.Errorf("Serve returned %v, want the context's error", err)
	}
	h.done <- nil
}

// TestEndOfInput: with AbortAtEOF, closing the input aborts what runs and
// Serve returns nil once it settled.
func TestEndOfInput(t *testing.T) {
	h, _ := startGatedWith(t, llmtest.NewAnthropic(t), true, "wait", rpc.Options{AbortAtEOF: true})
	if err := h.finish(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	got := h.until(func(m msg) bool { return m.isEvent("agent_settled") })
	if last := got[len(got)-1]; last.m["aborted"] != true {
		t.Errorf("settled %s", last.raw)
	}
	if k := sessiontest.Kinds(t, h.path); k[len(k)-1] != "toolResult" {
		t.Errorf("entries %v", k)
	}
}

// TestSettingsSaved: the switches and modes a client sets are saved as pi
// saves them, in the global settings file; a failure to save is a
// diagnostic, the change holds.
func TestSettingsSaved(t *testing.T) {
	set := []string{`{"id":"1","type":"set_steering_mode","mode":"all"}`,
		`{"id":"2","type":"set_follow_up_mode","mode":"all"}`,
		`{"id":"3","type":"set_auto_compaction","enabled":false}`,
		`{"id":"4","type":"set_auto_retry","enabled":true}`,
		`{"id":"5","type":"get_state"}`}
	check := func(h *harness) {
		t.Helper()
		for _, id := range []string{"1", "2", "3", "4"} {
			if r := h.response(id); !r.success() || r.m["data"] != nil {
				t.Errorf("%s", r.raw)
			}
		}
		st := h.response("5").data()
		if st["steeringMode"] != "all" || st["followUpMode"] != "all" || st["autoCompactionEnabled"] != false {
			t.Errorf("state %v", st)
		}
	}

	dir := t.TempDir()
	h := start(t, llmtest.NewAnthropic(t), settingsIn(t, dir))
	h.send(set...)
	check(h)
	data, err := os.ReadFile(filepath.Join(dir, "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"steeringMode": "all"`, `"followUpMode": "all"`, `"enabled": false`, `"enabled": true`} {
		if !strings.Contains(string(data), w) {
			t.Errorf("settings.json lacks %s:\n%s", w, data)
		}
	}
	if d := h.diag.String(); strings.Contains(d, "could not be saved") {
		t.Errorf("diagnostics %q", d)
	}

	// The agent directory replaced by a file: nothing can be written.
	dir = t.TempDir()
	h = start(t, llmtest.NewAnthropic(t), settingsIn(t, dir))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.send(set...)
	check(h)
	if d := h.diag.String(); strings.Count(d, "could not be saved in the settings") != 4 {
		t.Errorf("diagnostics %q", d)
	}
}

// TestPromptWithImage: pi's image blocks go to the model with the text.
func TestPromptWithImage(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	h := start(t, srv, settingsFor(t))
	h.send(`{"id":"p","type":"prompt","message":"what is this?","images":[{"type":"image","data":"aGVsbG8=","mimeType":"image/png"}]}`)
	h.until(func(m msg) bool { return m.isEvent("agent_settled") })
	if body := string(srv.LastRequest().Body); !strings.Contains(body, `"data":"aGVsbG8="`) || !strings.Contains(body, "image/png") {
		t.Errorf("the request lacks the image: %.500s", body)
	}
}

// TestBashStoppedByTheEnd: with AbortAtEOF, a user command that starts as
// the input ends is stopped with the rest, and answered.
func TestBashStoppedByTheEnd(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	s, err := session.Create(filepath.Join(t.TempDir(), "s.jsonl"), session.Options{CWD: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h := startWith(t, s, srv, settingsFor(t), rpc.Options{AbortAtEOF: true})
	h.send(`{"id":"b","type":"bash","command":"sleep 600"}`)
	if err := h.finish(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	r := h.response("b")
	if r.success() && r.data()["cancelled"] != true {
		t.Errorf("bash: %s", r.raw)
	}
}

// failingWriter fails every write after the first n.
type failingWriter struct {
	mu sync.Mutex
	n  int
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == 0 {
		return 0, errors.New("the client went away")
	}
	w.n--
	return len(p), nil
}

// TestWriteFailure: when the output fails, Serve stops the agent and
// returns the error, though the input stays open.
func TestWriteFailure(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	dir := t.TempDir()
	writeModels(t, dir, srv)
	s, err := session.Create(filepath.Join(t.TempDir(), "s.jsonl"), session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	server := rpc.New(&failingWriter{n: 2}, rpc.Options{})
	ag := agent.New(s, agent.Config{Settings: settingsFor(t), AgentDir: dir, Getenv: func(string) string { return "" },
		Events: server.Event, Model: srv.Model().Provider + "/" + srv.Model().ID, NoContextFiles: true})
	defer ag.Close()
	pr, pw := io.Pipe()
	defer pw.Close()
	done := make(chan error, 1)
	go func() { done <- server.Serve(context.Background(), ag, pr) }()
	if _, err := io.WriteString(pw, `{"type":"prompt","message":"hi"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "the client went away") {
			t.Errorf("Serve returned %v", err)
		}
	case <-time.After(lineTimeout):
		t.Fatal("Serve did not return after its output failed")
	}
	if ag.Busy() {
		t.Error("the agent still works")
	}
}
