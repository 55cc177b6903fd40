package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
)

// TestAgentSandboxMode: with --permission-mode sandbox the model's bash
// commands write in the project but not elsewhere, cannot read the agent
// directory's auth file, and each refusal is explained in the result;
// --yolo runs the same commands unconfined.
func TestAgentSandboxMode(t *testing.T) {
	outside := filepath.Join("/etc", "prime-sandbox-test-"+filepath.Base(t.TempDir()))
	t.Cleanup(func() { os.Remove(outside); os.Remove(outside + ".w") })
	script := `echo made > in-project.txt && cat in-project.txt; cat "$PRIME_TEST_AUTH"; echo x > ` + outside
	for _, mode := range []string{"sandbox", "yolo"} {
		t.Run(mode, func(t *testing.T) {
			srv := llmtest.NewAnthropic(t)
			e := newAgentEnv(t, srv, 0, "")
			auth := filepath.Join(e.agentDir, "auth.json")
			if err := os.WriteFile(auth, []byte(`{"secret":"sk-in-auth"}`), 0o600); err != nil {
				t.Fatal(err)
			}
			srv.Reply(llmtest.ToolCall("b1", "bash", fmt.Sprintf(`{"command":%q}`, script)),
				llmtest.ToolCall("w1", "write", fmt.Sprintf(`{"path":%q,"content":"x"}`, outside+".w")))
			srv.Reply(llmtest.Text("done"))
			args := []string{"-p", "go"}
			if mode == "sandbox" {
				args = append(args, "--permission-mode", "sandbox")
			} else {
				args = append(args, "--yolo")
			}
			cmd := e.command(args...)
			cmd.Env = append(cmd.Env, "PRIME_TEST_AUTH="+auth)
			out, err := cmd.CombinedOutput()
			if strings.Contains(string(out), "unconfined") {
				t.Skipf("no sandbox on this kernel: %s", out)
			}
			if err != nil || string(out) != "done\n" {
				t.Fatalf("run: %v\n%s", err, out)
			}
			_, s := kinds(t, e.sessionFile(t))
			r := results(t, s)["b1"]
			if r == nil {
				t.Fatal("no bash result")
			}
			text := llm.TextOf(r.Content)
			if b, _ := os.ReadFile(filepath.Join(e.project, "in-project.txt")); string(b) != "made\n" {
				t.Errorf("in the project: %q", b)
			}
			_, statErr := os.Stat(outside)
			w := results(t, s)["w1"]
			_, wErr := os.Stat(outside + ".w")
			os.Remove(outside + ".w")
			if w == nil || w.IsError != (mode == "sandbox") || (wErr == nil) != (mode == "yolo") ||
				mode == "sandbox" && !strings.Contains(llm.TextOf(w.Content), "outside the project") {
				t.Errorf("write outside: %+v, stat %v", w, wErr)
			}
			if mode == "yolo" {
				if r.IsError || !strings.Contains(text, "sk-in-auth") || statErr != nil {
					t.Errorf("unconfined: error %v, %q, %s: %v", r.IsError, text, outside, statErr)
				}
				return
			}
			if !r.IsError || strings.Contains(text, "sk-in-auth") || !strings.Contains(text, "Permission denied") ||
				!strings.Contains(text, "Prime's sandbox") || statErr == nil {
				t.Errorf("confined: error %v, %q, %s: %v", r.IsError, text, outside, statErr)
			}
		})
	}
}

func TestPermissionModeFlags(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	e := newAgentEnv(t, srv, 0, "")
	for _, args := range [][]string{{"--permission-mode", "careful"}, {"--yolo", "--permission-mode", "sandbox"}} {
		_, errOut, code := e.run(t, "", append([]string{"-p", "hi"}, args...)...)
		if code != 2 || !strings.Contains(errOut, "permission") {
			t.Errorf("%v: exit %d, %s", args, code, errOut)
		}
	}
}

// TestAgentSandboxKilledMidCommand: kill -9 of prime while a confined
// command runs kills the command and what it setsid'd into the background,
// as it does unconfined (the supervisor and the cgroup are outside the
// sandbox, the namespaces inside them).
func TestAgentSandboxKilledMidCommand(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	e := newAgentEnv(t, srv, 0, "")
	marker := filepath.Join(e.project, "started")
	bg, fg := "sleep 43.25", "sleep 43.5"
	srv.Reply(llmtest.ToolCall("c1", "bash", fmt.Sprintf(`{"command":"setsid %s & touch %s; %s; true"}`, bg, marker, fg)))
	cmd, wait := e.start(t, "-p", "run a long command", "--permission-mode", "sandbox")
	waitFor(t, "the command to start", func() bool { _, err := os.Stat(marker); return err == nil })
	cmd.Process.Signal(syscall.SIGKILL)
	_, errOut := wait()
	if strings.Contains(errOut, "unconfined") {
		t.Skipf("no sandbox on this kernel: %s", errOut)
	}
	for _, m := range []string{fg, bg} {
		waitFor(t, m+" to end", func() bool {
			out, _ := exec.Command("pgrep", "-f", m).Output()
			return len(out) == 0
		})
	}
}
