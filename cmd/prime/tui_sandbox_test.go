package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/prime-agent/prime/settings"
)

// TestTUISandbox runs the binary in tmux with --permission-mode sandbox:
// the footer says so, and a command that writes outside the project fails
// with a result that names the sandbox, after the dialog that offers to
// run it again outside the sandbox is answered no.
func TestTUISandbox(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the end-to-end test of the terminal UI drives the binary in tmux (apt-get install -y tmux)")
	}
	bin := buildPrime(t)
	agentDir, project := t.TempDir(), t.TempDir()
	outside := filepath.Join("/etc", "prime-tui-sandbox-"+filepath.Base(project))
	t.Cleanup(func() { os.Remove(outside) })
	script := filepath.Join(t.TempDir(), "script.json")
	writeFile(t, script, `{"replies": [
 {"parts": [{"toolCall": {"id": "c1", "name": "bash", "arguments": {"command": "head -c1 /dev/tty; echo x > `+outside+`"}}}, {"usage": {"input": 900, "output": 20}}]},
 {"parts": [{"text": "The sandbox refused it."}, {"usage": {"input": 1000, "output": 30}}]}
]}`)
	serveFakeLLM(t, bin, script, filepath.Join(agentDir, "models.json"))
	s := &tmuxSession{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	command := "env " + settings.AgentDirEnv + "=" + agentDir + " " + bin + " --model fake/fake-model --permission-mode sandbox 2>" +
		filepath.Join(agentDir, "stderr") + "; sleep 600"
	s.run("new-session", "-d", "-s", "prime", "-x", "120", "-y", "40", "-c", project, command)
	t.Cleanup(func() { exec.Command("tmux", "-S", s.socket, "kill-server").Run() })
	s.waitFor("fake-model • medium")
	if b, _ := os.ReadFile(filepath.Join(agentDir, "stderr")); len(b) > 0 {
		t.Skipf("no sandbox here: %s", b)
	}
	s.waitFor("• sandbox")
	s.literal("write outside")
	s.keys("Enter")
	// The command failed in the sandbox: Prime asks whether to run it
	// again outside; n keeps the failure.
	s.waitFor("Run this command again outside the sandbox, with your full rights?", "No, keep the failure")
	s.literal("n")
	s.waitFor("The user chose not to run it again outside the sandbox.")
	s.keys("C-o")
	// Nor can it read what the user types (or type into Prime) through
	// the terminal Prime runs in.
	s.waitFor("'/dev/tty' for reading: Permission denied", "Prime's sandbox", "The sandbox refused it.")
	if _, err := os.Stat(outside); err == nil {
		t.Errorf("%s was written", outside)
	}
}
