package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/internal/proctest"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
)

// agentEnv is a project directory and an agent directory whose models.json
// serves "fake/fake-model" from a fake server, for running the binary.
type agentEnv struct {
	bin      string
	agentDir string
	project  string
	srv      *llmtest.Server
}

func newAgentEnv(t *testing.T, srv *llmtest.Server, window int, settingsJSON string) *agentEnv {
	t.Helper()
	e := &agentEnv{bin: buildPrime(t), agentDir: t.TempDir(), project: t.TempDir(), srv: srv}
	if err := writeFakeModels(filepath.Join(e.agentDir, "models.json"), srv.API(), srv.Model().BaseURL, window); err != nil {
		t.Fatal(err)
	}
	if settingsJSON != "" {
		if err := os.WriteFile(filepath.Join(e.agentDir, "settings.json"), []byte(settingsJSON), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// command makes the binary's command in the project directory.
func (e *agentEnv) command(args ...string) *exec.Cmd {
	cmd := exec.Command(e.bin, append([]string{"--model", "fake/fake-model"}, args...)...)
	cmd.Dir = e.project
	cmd.Env = append(os.Environ(), settings.AgentDirEnv+"="+e.agentDir, "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=")
	return cmd
}

// run runs the binary to the end and returns its output and exit status.
func (e *agentEnv) run(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := e.command(args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// sessionFile returns the one session file the agent wrote.
func (e *agentEnv) sessionFile(t *testing.T) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(e.agentDir, "sessions", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("%d session files: %v", len(files), files)
	}
	return files[0]
}

// kinds lists a session file's entries: the type, or a message's role.
func kinds(t *testing.T, path string) (string, *session.Session) {
	t.Helper()
	s, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range s.Entries() {
		k := e.Type
		if e.Type == session.TypeMessage {
			k, _ = e.MessageRole()
		}
		out = append(out, k)
	}
	return strings.Join(out, " "), s
}

// results returns the tool results on the session's path, by call id.
func results(t *testing.T, s *session.Session) map[string]*llm.ToolResultMessage {
	t.Helper()
	out := map[string]*llm.ToolResultMessage{}
	for _, e := range s.LeafPath() {
		if e.Type != session.TypeMessage {
			continue
		}
		m, err := e.Message()
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := m.(*llm.ToolResultMessage); ok {
			out[r.ToolCallID] = r
		}
	}
	return out
}

// TestAgentFixesAFailingTest: a multi-turn task in a real project through
// the binary, against both wire formats: the model reads a file, edits it,
// runs the test, and answers.
func TestAgentFixesAFailingTest(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed; the project under test is a Python one")
	}
	for _, srv := range []*llmtest.Server{llmtest.NewAnthropic(t), llmtest.NewOpenAI(t, llmtest.FlavorOllama)} {
		t.Run(srv.API(), func(t *testing.T) {
			e := newAgentEnv(t, srv, 0, "")
			os.WriteFile(filepath.Join(e.project, "add.py"), []byte("def add(a, b):\n    return a - b\n"), 0o644)
			os.WriteFile(filepath.Join(e.project, "test_add.py"), []byte("from add import add\nassert add(2, 3) == 5, add(2, 3)\nprint('ok')\n"), 0o644)
			srv.Reply(llmtest.Text("Let me look at the code."), llmtest.ToolCall("r1", "read", `{"path":"add.py"}`), llmtest.Usage(900, 20))
			srv.Reply(llmtest.ToolCall("e1", "edit", `{"path":"add.py","edits":[{"oldText":"return a - b","newText":"return a + b"}]}`), llmtest.Usage(950, 30))
			srv.Reply(llmtest.ToolCall("b1", "bash", `{"command":"python3 test_add.py"}`), llmtest.Usage(1000, 10))
			srv.Reply(llmtest.Text("Fixed: add subtracted instead of adding. The test passes."), llmtest.Usage(1050, 15))

			out, errOut, code := e.run(t, "", "-p", "the test fails, fix it")
			if code != 0 || out != "Fixed: add subtracted instead of adding. The test passes.\n" {
				t.Fatalf("exit %d\nstdout %q\nstderr %s", code, out, errOut)
			}
			if b, _ := os.ReadFile(filepath.Join(e.project, "add.py")); string(b) != "def add(a, b):\n    return a + b\n" {
				t.Errorf("add.py after the run:\n%s", b)
			}
			got, s := kinds(t, e.sessionFile(t))
			want := "model_change thinking_level_change system user assistant toolResult assistant toolResult assistant toolResult assistant"
			if got != want {
				t.Errorf("entries\n got %s\nwant %s", got, want)
			}
			rs := results(t, s)
			if r := rs["r1"]; r == nil || r.IsError || !strings.Contains(llm.TextOf(r.Content), "return a - b") {
				t.Errorf("read result %+v", r)
			}
			if r := rs["e1"]; r == nil || r.IsError || !strings.Contains(string(r.Details), "a + b") {
				t.Errorf("edit result %+v", r)
			}
			if r := rs["b1"]; r == nil || r.IsError || !strings.Contains(llm.TextOf(r.Content), "ok") {
				t.Errorf("bash result %+v", r)
			}
			reqs := srv.Requests()
			if len(reqs) != 4 {
				t.Fatalf("%d requests", len(reqs))
			}
			if !strings.Contains(reqs[0].System(), "You are Prime") || !strings.Contains(reqs[0].System(), e.project) {
				t.Errorf("system prompt %q", reqs[0].System())
			}
			if names := reqs[0].ToolNames(); strings.Join(names, ",") != "read,bash,edit,write" {
				t.Errorf("tools %v", names)
			}
			if !strings.Contains(reqs[3].Text(), "ok") {
				t.Error("the last request lacks the test's output")
			}
		})
	}
}

// TestAgentToolFailures: parallel calls that fail in every way a call can,
// each with a result the model can act on, and the run goes on.
func TestAgentToolFailures(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	e := newAgentEnv(t, srv, 0, "")
	srv.Reply(
		llmtest.ToolCall("c1", "read", `{"path":"missing.txt"}`),
		llmtest.ToolCall("c2", "frobnicate", `{}`),
		llmtest.ToolCall("c3", "edit", `{"path":"x.txt"}`),
		llmtest.ToolCall("c4", "bash", `{"command":"echo partial; exit 3"}`),
		llmtest.ToolCall("c5", "bash", `{"command":"echo before; sleep 600.125","timeout":1}`),
		llmtest.ToolCall("c6", "bash", `{"command":"seq 1 100000"}`),
		llmtest.ToolCall("c7", "write", `{"path":"deep/dir/new.txt","content":"hello"}`),
	)
	srv.Reply(llmtest.Text("I see what went wrong."))
	out, errOut, code := e.run(t, "", "-p", "try things")
	if code != 0 || out != "I see what went wrong.\n" {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	// The run ended long before the sleep would have: the timeout stopped it.
	waitFor(t, "the timed-out command to end", func() bool {
		out, _ := exec.Command("pgrep", "-f", "sleep 600.125").Output()
		return len(out) == 0
	})
	_, s := kinds(t, e.sessionFile(t))
	rs := results(t, s)
	check := func(id string, isError bool, contains ...string) {
		t.Helper()
		r := rs[id]
		if r == nil {
			t.Errorf("%s: no result", id)
			return
		}
		text := llm.TextOf(r.Content)
		if r.IsError != isError {
			t.Errorf("%s: isError %v: %s", id, r.IsError, text)
		}
		for _, c := range contains {
			if !strings.Contains(text, c) {
				t.Errorf("%s: %q lacks %q", id, text, c)
			}
		}
	}
	check("c1", true, "missing.txt")
	check("c2", true, "frobnicate", "read, bash, edit, write")
	check("c3", true, "edits")
	check("c4", true, "partial", "3")
	check("c5", true, "before", "timed out")
	check("c6", false, "100000")
	check("c7", false)
	if b, err := os.ReadFile(filepath.Join(e.project, "deep", "dir", "new.txt")); err != nil || string(b) != "hello" {
		t.Errorf("written file: %q %v", b, err)
	}
	if r := rs["c6"]; r != nil {
		if !strings.Contains(string(r.Details), "fullOutputPath") {
			t.Errorf("big output without its full-output file: %s", r.Details)
		}
		if len(llm.TextOf(r.Content)) > 60*1024 {
			t.Errorf("big output not bounded: %d bytes", len(llm.TextOf(r.Content)))
		}
	}
}

// waitFor polls until cond holds, or fails the test after a generous time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// start starts the binary, returning a wait function for its exit status.
func (e *agentEnv) start(t *testing.T, args ...string) (*exec.Cmd, func() (int, string)) {
	t.Helper()
	cmd := e.command(args...)
	var errOut proctest.Buffer
	cmd.Stderr = &errOut
	cmd.Stdout = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			done <- ee.ExitCode()
			return
		}
		done <- 0
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, func() (int, string) {
		select {
		case code := <-done:
			return code, errOut.String()
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("the binary did not exit; output:\n%s", errOut.String())
			return 0, ""
		}
	}
}

func TestAgentInterrupted(t *testing.T) {
	t.Run("mid-stream", func(t *testing.T) {
		srv := llmtest.NewAnthropic(t)
		e := newAgentEnv(t, srv, 0, "")
		srv.Queue(llmtest.Reply{Parts: []llmtest.Part{llmtest.Text("this will"), llmtest.Text(" take"), llmtest.Text(" a while")}, Delay: 500 * time.Millisecond})
		cmd, wait := e.start(t, "-p", "talk slowly")
		waitFor(t, "the request", func() bool { return len(srv.Requests()) == 1 })
		time.Sleep(200 * time.Millisecond)
		cmd.Process.Signal(syscall.SIGINT)
		if code, out := wait(); code != exitInterrupted {
			t.Errorf("exit %d, want 130:\n%s", code, out)
		}
		got, s := kinds(t, e.sessionFile(t))
		if !strings.HasSuffix(got, "user assistant") {
			t.Fatalf("entries %s", got)
		}
		if m, _ := s.Leaf().Message(); m.(*llm.AssistantMessage).StopReason != llm.StopReasonAborted {
			t.Errorf("last reply %+v", m)
		}
	})
	t.Run("mid-tool", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t)
		e := newAgentEnv(t, srv, 0, "")
		marker := filepath.Join(e.project, "started")
		srv.Reply(llmtest.ToolCall("c1", "bash", fmt.Sprintf(`{"command":"touch %s; sleep 31.25"}`, marker)), llmtest.ToolCall("c2", "read", `{"path":"nothing.txt"}`))
		srv.Reply(llmtest.Text("must not be asked"))
		cmd, wait := e.start(t, "-p", "run a long command")
		waitFor(t, "the command to start", func() bool { _, err := os.Stat(marker); return err == nil })
		cmd.Process.Signal(syscall.SIGTERM)
		if code, out := wait(); code != exitTerminated {
			t.Errorf("exit %d, want 143:\n%s", code, out)
		}
		got, s := kinds(t, e.sessionFile(t))
		if !strings.HasSuffix(got, "user assistant toolResult toolResult") {
			t.Fatalf("entries %s: every call needs a result and no extra reply", got)
		}
		if r := results(t, s)["c1"]; r == nil || !r.IsError || !strings.Contains(llm.TextOf(r.Content), "aborted") {
			t.Errorf("the interrupted command's result %+v", r)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d requests after the interrupt", n)
		}
		if out, _ := exec.Command("pgrep", "-f", "sleep 31.25").Output(); len(out) > 0 {
			t.Errorf("the command's process is still running: %s", out)
		}
	})
}

func TestAgentRetriesARateLimit(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	e := newAgentEnv(t, srv, 0, `{"retry": {"baseDelayMs": 10}}`)
	srv.Queue(llmtest.HTTPError(429, "rate_limit_error", "Number of requests has exceeded your rate limit"))
	srv.Reply(llmtest.Text("second time lucky"))
	out, errOut, code := e.run(t, "", "-p", "hello")
	if code != 0 || out != "second time lucky\n" || !strings.Contains(errOut, "retrying") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if got, _ := kinds(t, e.sessionFile(t)); !strings.HasSuffix(got, "user assistant context_edit assistant") {
		t.Errorf("entries %s", got)
	}
}

// conversationHandler answers summary requests with a summary and the
// conversation's requests with replies, in order; when they run out, with
// "done".
func conversationHandler(srv *llmtest.Server, replies ...llmtest.Reply) {
	srv.Handle(llmtest.Scripted(summaryReply, func(r *llmtest.Request) llmtest.Reply {
		return llmtest.Stream(llmtest.Text("done"), llmtest.Usage(llm.UTF16Len(r.Text())/4, 5))
	}, replies...))
}

// genSession writes a generated session in the project for --session.
func (e *agentEnv) genSession(t *testing.T, entries int) string {
	t.Helper()
	path := filepath.Join(e.project, "long.jsonl")
	cmd := exec.Command(e.bin, "dev", "gen-session", "--entries", fmt.Sprint(entries), "--seed", "3", "--no-compactions", "--branch-rate", "-1", "--out", path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return path
}

func TestAgentOverflowRecovery(t *testing.T) {
	t.Run("compact and retry", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t)
		e := newAgentEnv(t, srv, 0, "")
		conversationHandler(srv, llmtest.Overflow(), llmtest.Stream(llmtest.Text("fits now"), llmtest.Usage(3000, 5)))
		path := e.genSession(t, 300)
		out, errOut, code := e.run(t, "", "-p", "--session", path, "go on")
		if code != 0 || out != "fits now\n" || !strings.Contains(errOut, "compacting the context (overflow)") {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		if got, _ := kinds(t, path); !strings.HasSuffix(got, "user assistant context_edit compaction assistant") {
			t.Errorf("entries end %s", got[max(0, len(got)-120):])
		}
	})
	t.Run("a second overflow is an error, not a loop", func(t *testing.T) {
		srv := llmtest.NewAnthropic(t)
		e := newAgentEnv(t, srv, 0, "")
		conversationHandler(srv, llmtest.Overflow(), llmtest.Overflow(), llmtest.Stream(llmtest.Text("never")))
		path := e.genSession(t, 300)
		out, errOut, code := e.run(t, "", "-p", "--session", path, "go on")
		if code != 1 || out != "" || !strings.Contains(errOut, "after one compaction and retry") {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		n := 0
		for _, r := range srv.Requests() {
			if !strings.Contains(r.LastUserText(), "<conversation>") {
				n++
			}
		}
		if n != 2 {
			t.Errorf("%d conversation requests, want 2", n)
		}
	})
}

// TestAgentCompactsMidRun: a tool loop whose results fill the context
// compacts between two of its turns and finishes.
func TestAgentCompactsMidRun(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	// A 12,000-token window with 2,000 reserved: compaction above 10,000.
	e := newAgentEnv(t, srv, 12000, `{"compaction": {"reserveTokens": 2000, "keepRecentTokens": 3000}}`)
	var replies []llmtest.Reply
	for i := range 6 {
		replies = append(replies, llmtest.Stream(llmtest.ToolCall(fmt.Sprintf("c%d", i), "bash", `{"command":"seq 1 2500"}`)))
	}
	var mu sync.Mutex
	srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		if strings.Contains(r.LastUserText(), "<conversation>") {
			return summaryReply(r)
		}
		mu.Lock()
		defer mu.Unlock()
		used := llm.UTF16Len(r.Text()) / 4
		if len(replies) == 0 {
			return llmtest.Stream(llmtest.Text("all steps done"), llmtest.Usage(used, 5))
		}
		next := replies[0]
		replies = replies[1:]
		next.Parts = append(next.Parts, llmtest.Usage(used, 20))
		return next
	})
	out, errOut, code := e.run(t, "", "-p", "count a lot")
	if code != 0 || out != "all steps done\n" {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	got, _ := kinds(t, e.sessionFile(t))
	if !strings.Contains(got, "toolResult compaction assistant") {
		t.Errorf("no compaction between turns: %s", got)
	}
	if !strings.Contains(errOut, "compacting the context (threshold)") {
		t.Errorf("stderr %s", errOut)
	}
}

// TestAgentJSONMode: every event as a JSON line with pi's names, the session
// header first.
func TestAgentJSONMode(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	e := newAgentEnv(t, srv, 0, "")
	srv.Reply(llmtest.ToolCall("c1", "bash", `{"command":"echo hi"}`))
	srv.Reply(llmtest.Text("it said hi"))
	out, errOut, code := e.run(t, "", "--mode", "json", "-p", "say hi")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var types []string
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var v struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("line %d is not JSON: %s", i+1, line)
		}
		if v.Type != "message_update" && (v.Type != "tool_execution_update" || types[len(types)-1] != v.Type) {
			types = append(types, v.Type)
		}
	}
	got := strings.Join(types, " ")
	want := "session agent_start turn_start message_start message_end message_start message_end message_start message_end " +
		"tool_execution_start tool_execution_update tool_execution_end message_start message_end turn_end " +
		"turn_start message_start message_end turn_end agent_end agent_settled"
	if got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
}

// TestAgentCrashes kills the binary with SIGKILL at many points of a run:
// every file loads, and continuing it sends the model a well-formed
// conversation.
func TestAgentCrashes(t *testing.T) {
	for i, delay := range []time.Duration{30, 120, 250, 400, 600, 800, 1000, 1300} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			srv := llmtest.NewAnthropic(t)
			e := newAgentEnv(t, srv, 0, "")
			var mu sync.Mutex
			turn := 0
			srv.Handle(func(r *llmtest.Request) llmtest.Reply {
				mu.Lock()
				turn++
				n := turn
				mu.Unlock()
				if strings.Contains(r.LastUserText(), "continue") {
					return llmtest.Stream(llmtest.Text("resumed"))
				}
				return llmtest.Reply{Delay: 60 * time.Millisecond, Parts: []llmtest.Part{
					llmtest.Text(fmt.Sprintf("step %d", n)),
					llmtest.ToolCall(fmt.Sprintf("a%d", n), "bash", `{"command":"sleep 0.1; echo a"}`),
					llmtest.ToolCall(fmt.Sprintf("b%d", n), "bash", `{"command":"echo b"}`),
				}}
			})
			cmd, wait := e.start(t, "-p", "loop forever")
			time.Sleep(delay * time.Millisecond)
			cmd.Process.Kill()
			wait()
			files, _ := filepath.Glob(filepath.Join(e.agentDir, "sessions", "*", "*.jsonl"))
			if len(files) == 0 {
				return // killed before the first message was written
			}
			if _, err := session.Load(files[0]); err != nil {
				t.Fatalf("the file does not load after kill -9: %v", err)
			}
			out, errOut, code := e.run(t, "", "-p", "-c", "continue")
			if code != 0 || out != "resumed\n" {
				t.Fatalf("continue: exit %d\n%s\n%s", code, out, errOut)
			}
			last := srv.Requests()[len(srv.Requests())-1]
			checkCallsAnswered(t, last)
		})
	}
}

// checkCallsAnswered fails unless every tool call in the request's
// conversation is followed by its result (Anthropic's format).
func checkCallsAnswered(t *testing.T, r *llmtest.Request) {
	t.Helper()
	open := map[string]bool{}
	for _, m := range r.Messages() {
		content, _ := m["content"].([]any)
		for _, c := range content {
			b, _ := c.(map[string]any)
			switch b["type"] {
			case "tool_use":
				open[fmt.Sprint(b["id"])] = true
			case "tool_result":
				delete(open, fmt.Sprint(b["tool_use_id"]))
			}
		}
	}
	if len(open) > 0 {
		t.Errorf("tool calls without a result reached the model: %v", open)
	}
}

// TestAgentInputs: standard input, @files (text and an image) and the
// message make one prompt, joined with blank lines; a missing @file is an
// error before anything is sent.
func TestAgentInputs(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	e := newAgentEnv(t, srv, 0, "")
	os.WriteFile(filepath.Join(e.project, "notes.txt"), []byte("the notes\n"), 0o644)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	os.WriteFile(filepath.Join(e.project, "shot.png"), png, 0o644)
	srv.Reply(llmtest.Text("read them"))
	out, errOut, code := e.run(t, "from stdin\n", "-p", "@notes.txt", "@shot.png", "the question")
	if code != 0 || out != "read them\n" {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	r := srv.Requests()[0]
	text := r.LastUserText()
	want := "from stdin\n\n<file name=\"" + filepath.Join(e.project, "notes.txt") + "\">\nthe notes\n</file>\n\n<file name=\"" +
		filepath.Join(e.project, "shot.png") + "\"></file>\n\nthe question"
	if text != want {
		t.Errorf("prompt\n got %q\nwant %q", text, want)
	}
	if !strings.Contains(string(r.Body), `"media_type":"image/png"`) {
		t.Error("the image was not sent")
	}
	_, errOut, code = e.run(t, "", "-p", "@missing.txt", "hi")
	if code != 1 || !strings.Contains(errOut, "missing.txt") || len(srv.Requests()) != 1 {
		t.Errorf("missing file: exit %d, %s", code, errOut)
	}
}

// TestAgentNoModel: no model anywhere is an error that says what to set.
func TestAgentNoModel(t *testing.T) {
	bin := buildPrime(t)
	cmd := exec.Command(bin, "-p", "hello")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), settings.AgentDirEnv+"="+t.TempDir(), "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "ANTHROPIC_API_KEY") {
		t.Errorf("%v\n%s", err, out)
	}
}

// TestAgentSessionChoice: --no-session writes nothing; --session FILE writes
// there; -p with nothing to send prints the last answer of the session.
func TestAgentSessionChoice(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	e := newAgentEnv(t, srv, 0, "")
	srv.Reply(llmtest.Text("in memory"))
	if out, errOut, code := e.run(t, "", "-p", "--no-session", "hi"); code != 0 || out != "in memory\n" {
		t.Fatalf("exit %d %s %s", code, out, errOut)
	}
	if files, _ := filepath.Glob(filepath.Join(e.agentDir, "sessions", "*", "*")); len(files) != 0 {
		t.Errorf("--no-session wrote %v", files)
	}
	path := filepath.Join(e.project, "mine.jsonl")
	srv.Reply(llmtest.Text("to my file"))
	if out, _, code := e.run(t, "", "-p", "--session", path, "hi"); code != 0 || out != "to my file\n" {
		t.Fatalf("--session: exit %d %q", code, out)
	}
	if out, _, code := e.run(t, "", "-p", "--session", path); code != 0 || out != "to my file\n" {
		t.Errorf("nothing to send: exit %d %q, want the last answer", code, out)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests", n)
	}
}
