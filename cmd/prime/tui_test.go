package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prime-agent/prime/session"
)

// tmuxSession drives the real binary in a tmux pane of its own server.
type tmuxSession struct {
	t      *testing.T
	socket string
}

func (s *tmuxSession) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is the pane as the user sees it (capture-pane -p).
func (s *tmuxSession) screen() string { return s.run("capture-pane", "-p", "-t", "prime") }

// keys types into the pane: each argument is a tmux key or a literal text.
func (s *tmuxSession) keys(keys ...string) {
	s.t.Helper()
	s.run(append([]string{"send-keys", "-t", "prime"}, keys...)...)
}

// literal types text as it is.
func (s *tmuxSession) literal(text string) {
	s.t.Helper()
	s.run("send-keys", "-t", "prime", "-l", text)
}

// waitFor waits until the screen shows every text.
func (s *tmuxSession) waitFor(texts ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		scr := s.screen()
		ok := true
		for _, text := range texts {
			if !strings.Contains(scr, text) {
				ok = false
			}
		}
		if ok {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen never showed %q:\n%s", texts, scr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestTUIEndToEnd runs the binary in tmux against "prime dev fake-llm": a
// prompt with a tool call, "/compact focus on X", a move with /tree, and
// Ctrl-C twice to quit; then it checks the screen and the session file.
func TestTUIEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the end-to-end test of the terminal UI drives the binary in tmux (apt-get install -y tmux)")
	}
	bin := buildPrime(t)
	agentDir, project := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(agentDir, "settings.json"), `{"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 10, "reserveTokens": 1000}}`)
	writeFile(t, filepath.Join(project, "AGENTS.md"), "# Rules\nBe brief.\n")
	script := filepath.Join(t.TempDir(), "script.json")
	writeFile(t, script, `{"replies": [
 {"parts": [{"text": "Let me look."}, {"toolCall": {"id": "c1", "name": "bash", "arguments": {"command": "echo one; echo two"}}}, {"usage": {"input": 900, "output": 20}}]},
 {"parts": [{"text": "The command printed **one** and **two**."}, {"usage": {"input": 1000, "output": 30}}]},
 {"parts": [{"text": "Noted: the parser is next."}, {"usage": {"input": 1100, "output": 10}}]},
 {"parts": [{"text": "## Goal\nCheck the output.\n\n## Next Steps\n1. Focus on X."}, {"usage": {"input": 500, "output": 40}}]}
]}`)

	fake := exec.Command(bin, "dev", "fake-llm", "--api", "anthropic", "--script", script, "--models-json", filepath.Join(agentDir, "models.json"))
	stdout, err := fake.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Process.Signal(syscall.SIGINT); fake.Wait() })
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatalf("the fake model did not start: %v", err)
	}

	s := &tmuxSession{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	command := "env " + session.EnvAgentDir + "=" + agentDir + " " + bin + " --model fake/fake-model; echo PRIME-EXITED $?; sleep 600"
	s.run("new-session", "-d", "-s", "prime", "-x", "100", "-y", "40", "-c", project, command)
	t.Cleanup(func() { exec.Command("tmux", "-S", s.socket, "kill-server").Run() })

	s.waitFor("prime dev", "[Context]", "AGENTS.md", "fake-model • medium")
	s.literal("run the echo")
	s.keys("Enter")
	s.waitFor("$ echo one; echo two", "Took", "The command printed one and two.")
	s.literal("now the parser")
	s.keys("Enter")
	s.waitFor("Noted: the parser is next.")
	s.literal("/compact focus on X")
	s.keys("Enter")
	scr := s.waitFor("[compaction]", "Instructions: focus on X", "(ctrl+o to expand)", "?/200k (auto)")

	s.literal("/tree")
	s.keys("Enter")
	s.waitFor("Session Tree", "← you are here")
	for range 20 {
		if strings.Contains(s.screen(), "› • user: run the echo") {
			break
		}
		s.keys("Up")
		time.Sleep(50 * time.Millisecond)
	}
	s.waitFor("› • user: run the echo")
	s.keys("Enter")
	s.waitFor("Summarize branch?", "› No summary")
	s.keys("Enter")
	nav := s.waitFor("Navigated to selected point", "fake-model • medium")
	if !strings.Contains(nav, "\nrun the echo\n") {
		t.Errorf("the message navigated to is not back in the editor:\n%s", nav)
	}
	s.keys("C-c", "C-c")
	end := s.waitFor("PRIME-EXITED 0", "'prime -c' continues it")

	// The session file: both prompts, the tool call's result, and the
	// compaction with the user's instructions.
	files, err := filepath.Glob(filepath.Join(agentDir, "sessions", "*", "*.jsonl"))
	if err != nil || len(files) != 1 {
		t.Fatalf("session files %v (%v), want one", files, err)
	}
	if !strings.Contains(strings.ReplaceAll(end, "\n", ""), filepath.Base(files[0])) {
		t.Errorf("the exit line does not name the session file %s:\n%s", files[0], end)
	}
	sess, err := session.Load(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var users, results, compactions int
	for _, e := range sess.Entries() {
		p, err := e.Payload()
		if err != nil {
			t.Fatal(err)
		}
		switch p := p.(type) {
		case *session.MessageEntry:
			switch p.Message.Role() {
			case "user":
				users++
			case "toolResult":
				results++
			}
		case *session.CompactionEntry:
			compactions++
			if p.CustomInstructions != "focus on X" || !strings.Contains(p.Summary, "Focus on X.") {
				t.Errorf("compaction entry: instructions %q, summary %q", p.CustomInstructions, p.Summary)
			}
		}
	}
	if users != 2 || results != 1 || compactions != 1 {
		t.Errorf("the session holds %d user messages, %d tool results, %d compactions; want 2, 1, 1", users, results, compactions)
	}
	if t.Failed() {
		t.Logf("the screen after the compaction:\n%s", scr)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
