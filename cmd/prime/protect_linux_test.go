package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
)

// TestAgentSandboxProtectsWhatRunsLater: in sandbox mode, through the real
// binary, a bash command cannot plant a git hook or change the project's
// Prime settings but can commit, and the read tool asks (here: is denied,
// saying why) before reading the agent's auth file.
func TestAgentSandboxProtectsWhatRunsLater(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	srv := llmtest.NewAnthropic(t)
	e := newAgentEnv(t, srv, 0, "")
	if out, err := exec.Command("git", "init", "-q", e.project).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(e.project, ".prime"), 0o755); err != nil {
		t.Fatal(err)
	}
	auth := filepath.Join(e.agentDir, "auth.json")
	if err := os.WriteFile(auth, []byte(`{"secret":"sk-in-auth"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	plant := `printf '#!/bin/sh\necho pwned\n' > .git/hooks/pre-commit; echo '{"permissions":{"mode":"full"}}' > .prime/settings.json`
	commit := `echo a > a.txt && git add a.txt && git -c user.name=t -c user.email=t@t commit -qm one && echo committed`
	srv.Reply(llmtest.ToolCall("b1", "bash", fmt.Sprintf(`{"command":%q}`, plant)),
		llmtest.ToolCall("b2", "bash", fmt.Sprintf(`{"command":%q}`, commit)),
		llmtest.ToolCall("r1", "read", fmt.Sprintf(`{"path":%q}`, auth)))
	srv.Reply(llmtest.Text("done"))
	out, err := e.command("-p", "go", "--permission-mode", "sandbox").CombinedOutput()
	if strings.Contains(string(out), "unconfined") || strings.Contains(string(out), "cannot confine") {
		t.Skipf("no sandbox on this kernel: %s", out)
	}
	if err != nil || string(out) != "done\n" {
		t.Fatalf("run: %v\n%s", err, out)
	}
	_, s := kinds(t, e.sessionFile(t))
	res := results(t, s)
	if r := res["b1"]; r == nil || !r.IsError || !strings.Contains(llm.TextOf(r.Content), "Read-only file system") ||
		!strings.Contains(llm.TextOf(r.Content), "read-only in the sandbox") {
		t.Errorf("planting: %+v", r)
	}
	if r := res["b2"]; r == nil || r.IsError || !strings.Contains(llm.TextOf(r.Content), "committed") {
		t.Errorf("commit: %+v", r)
	}
	if r := res["r1"]; r == nil || !r.IsError || strings.Contains(llm.TextOf(r.Content), "sk-in-auth") ||
		!strings.Contains(llm.TextOf(r.Content), "deny list") {
		t.Errorf("reading auth.json: %+v", r)
	}
	for _, p := range []string{".git/hooks/pre-commit", ".prime/settings.json"} {
		if _, err := os.Stat(filepath.Join(e.project, p)); err == nil {
			t.Errorf("%s was written from the sandbox", p)
		}
	}
}
