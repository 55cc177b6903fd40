package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prime-agent/prime/llm/llmtest"
)

// TestAgentMaxTurns: a model that keeps calling a tool is stopped by
// --max-turns with a message saying so; one that keeps calling a tool that
// does not exist is slowed and stopped after a few turns, not the thousands
// of requests a minute it drove before.
func TestAgentMaxTurns(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(func(*llmtest.Request) llmtest.Reply {
		return llmtest.Stream(llmtest.ToolCall("c", "ls", `{}`))
	})
	e := newAgentEnv(t, srv, 0, "")
	_, errOut, code := e.run(t, "", "-p", "--max-turns", "3", "list files forever")
	if code != 0 || !strings.Contains(errOut, "The run stopped after 3 turns") || len(srv.Requests()) != 3 {
		t.Fatalf("exit %d, %d requests\n%s", code, len(srv.Requests()), errOut)
	}
	if _, errOut, code := e.run(t, "", "-p", "--max-turns", "many", "x"); code != 2 || !strings.Contains(errOut, "--max-turns") {
		t.Errorf("a bad --max-turns: exit %d\n%s", code, errOut)
	}
}

// TestAgentSilentServer: retry.streamIdleTimeoutMs ends a request to a
// server that sends its headers and then nothing; the failure is a broken
// connection, retried as the settings say, and print mode exits 1 saying
// what happened instead of hanging.
func TestAgentSilentServer(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	e := newAgentEnv(t, srv, 0, `{"retry": {"streamIdleTimeoutMs": 300, "maxRetries": 1, "baseDelayMs": 10}}`)
	silent := llmtest.Reply{Parts: []llmtest.Part{llmtest.Text("never"), llmtest.Text(" sent")}, Delay: time.Hour}
	srv.Queue(silent)
	srv.Queue(silent)
	_, errOut, code := e.run(t, "", "-p", "hello")
	if code != 1 || !strings.Contains(errOut, "sent nothing for 300ms") || len(srv.Requests()) != 2 {
		t.Fatalf("exit %d, %d requests\n%s", code, len(srv.Requests()), errOut)
	}
}

// TestAgentKilledMidCommand: kill -9 of prime while a command runs kills
// the command and what it started in the background at once; the next
// session's first command sweeps the dead run's output directory.
func TestAgentKilledMidCommand(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	e := newAgentEnv(t, srv, 0, "")
	tmp := t.TempDir()
	marker := filepath.Join(e.project, "started")
	bg, fg := "sleep 41.25", "sleep 41.5"
	srv.Reply(llmtest.ToolCall("c1", "bash", fmt.Sprintf(`{"command":"setsid %s & touch %s; %s; true"}`, bg, marker, fg)))
	cmd, wait := e.startIn(t, tmp, "-p", "run a long command")
	waitFor(t, "the command to start", func() bool { _, err := os.Stat(marker); return err == nil })
	cmd.Process.Signal(syscall.SIGKILL)
	wait()
	for _, m := range []string{fg, bg} {
		waitFor(t, m+" to end", func() bool {
			out, _ := exec.Command("pgrep", "-f", m).Output()
			return len(out) == 0
		})
	}
	if dirs, _ := filepath.Glob(filepath.Join(tmp, "prime-*")); len(dirs) != 1 {
		t.Fatalf("output directories %v", dirs)
	}
	srv.Reply(llmtest.ToolCall("c2", "bash", `{"command":"true"}`))
	srv.Reply(llmtest.Text("done"))
	if _, errOut, code := e.runIn(t, tmp, "-p", "hello"); code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if dirs, _ := filepath.Glob(filepath.Join(tmp, "prime-*")); len(dirs) != 0 {
		t.Errorf("output directories left: %v", dirs)
	}
}

// startIn and runIn are start and run with TMPDIR set to tmp.
func (e *agentEnv) startIn(t *testing.T, tmp string, args ...string) (*exec.Cmd, func() (int, string)) {
	t.Helper()
	t.Setenv("TMPDIR", tmp)
	return e.start(t, args...)
}

func (e *agentEnv) runIn(t *testing.T, tmp string, args ...string) (string, string, int) {
	t.Helper()
	t.Setenv("TMPDIR", tmp)
	return e.run(t, "", args...)
}
