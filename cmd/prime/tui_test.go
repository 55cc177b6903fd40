package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
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
// prompt with a tool call, "/compact focus on X", its receipt, /context,
// /uncompact, /pin and /pins, a move with /tree, and Ctrl-C twice to quit;
// then it checks the screen and the session file.
func TestTUIEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the end-to-end test of the terminal UI drives the binary in tmux (apt-get install -y tmux)")
	}
	bin := buildPrime(t)
	agentDir, project := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(agentDir, "settings.json"), `{"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 10, "reserveTokens": 1000}}`)
	writeFile(t, filepath.Join(project, "AGENTS.md"), "# Rules\nBe brief.\n")
	runFakeModel(t, bin, agentDir, `{"replies": [
 {"parts": [{"text": "Let me look."}, {"toolCall": {"id": "c1", "name": "bash", "arguments": {"command": "echo one; echo two"}}}, {"usage": {"input": 900, "output": 20}}]},
 {"parts": [{"text": "The command printed **one** and **two**."}, {"usage": {"input": 1000, "output": 30}}]},
 {"parts": [{"text": "Noted: the parser is next."}, {"usage": {"input": 1100, "output": 10}}]},
 {"parts": [{"text": "## Goal\nCheck the output.\n\n## Next Steps\n1. Focus on X."}, {"usage": {"input": 500, "output": 40}}]}
]}`)

	s := &tmuxSession{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	command := "env " + settings.AgentDirEnv + "=" + agentDir + " " + bin + " --model fake/fake-model; echo PRIME-EXITED $?; sleep 600"
	s.run("new-session", "-d", "-s", "prime", "-x", "100", "-y", "40", "-c", project, command)
	t.Cleanup(func() { exec.Command("tmux", "-S", s.socket, "kill-server").Run() })

	// The banner names the version the binary was built as, which depends on
	// how it was built (a git checkout stamps one; -buildvcs=false does not).
	s.waitFor(bannerVersion(t, bin), "[Context]", "AGENTS.md", "fake-model • medium")
	s.literal("run the echo")
	s.keys("Enter")
	s.waitFor("$ echo one; echo two", "Took", "The command printed one and two.")
	s.literal("now the parser")
	s.keys("Enter")
	s.waitFor("Noted: the parser is next.")
	s.literal("/compact focus on X")
	s.keys("Enter")
	scr := s.waitFor("[compaction]", "Instructions: focus on X", "(ctrl+o to expand)", "?/200k (auto)")

	// Expanded, the block is the compaction's receipt.
	s.keys("C-o")
	s.waitFor("Reason        asked for (/compact)", "Summary       by fake/fake-model")
	s.keys("C-o")
	s.waitFor("(ctrl+o to expand)")
	s.literal("/context")
	s.keys("Enter")
	s.waitFor("[context]", "S summaries", "Nothing to compact now")
	s.literal("/uncompact")
	s.keys("Enter")
	s.waitFor("Compaction undone: the model sees the whole conversation again")
	s.literal("/pin never push to main")
	s.keys("Enter")
	s.waitFor("Pinned ", ": never push to main")
	s.literal("/pins")
	s.keys("Enter")
	s.waitFor("[pins]", "  never push to main")

	s.literal("/tree")
	s.keys("Enter")
	s.waitFor("Session Tree", "← you are here")
	s.treeMoveTo("Up", "user: run the echo")
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
	custom := map[string]int{}
	for _, e := range sess.Entries() {
		p, err := e.Payload()
		if err != nil {
			t.Fatal(err)
		}
		switch p := p.(type) {
		case *session.CustomEntry:
			custom[p.CustomType]++
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
	if custom["prime.uncompact"] != 1 || custom["prime.pin"] != 1 {
		t.Errorf("the session holds custom entries %v; want one undone compaction and one pin", custom)
	}
	if t.Failed() {
		t.Logf("the screen after the compaction:\n%s", scr)
	}
}

// runFakeModel runs "prime dev fake-llm" (Anthropic's format) playing
// script, a script's text, until the test ends, with its models.json in
// agentDir.
func runFakeModel(t *testing.T, bin, agentDir, script string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.json")
	writeFile(t, path, script)
	serveFakeLLM(t, bin, path, filepath.Join(agentDir, "models.json"))
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// bannerVersion is the "prime VERSION" the TUI's banner shows for bin, read
// from bin --version.
func bannerVersion(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("prime --version: %v", err)
	}
	fields := strings.Fields(string(out))
	if len(fields) < 2 || fields[0] != "prime" {
		t.Fatalf("prime --version printed %q, want \"prime VERSION …\"", out)
	}
	return "prime " + fields[1]
}
