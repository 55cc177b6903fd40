package tool

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prime-agent/prime/internal/proctest"
	"github.com/prime-agent/prime/permission"
)

// TestMain makes the test binary the sandbox's trampoline, as Prime's
// main is.
func TestMain(m *testing.M) {
	permission.Trampoline()
	os.Exit(m.Run())
}

// sandboxedEnv is a tool environment whose bash commands are confined to
// writing in the project (and the session's output directory).
func sandboxedEnv(t *testing.T) (Env, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	procs, err := NewProcs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { procs.Close(false) })
	env := Env{CWD: t.TempDir(), Procs: procs}
	outside := t.TempDir()
	env.Sandbox = &permission.Sandbox{Exe: exe, Write: []string{env.CWD, procs.Dir, "/dev/null"}}
	if err := env.Sandbox.Probe(); err != nil {
		t.Skipf("no sandbox on this kernel, so nothing to test: %v", err)
	}
	return env, outside
}

// TestBashSandboxed: the bash tool's confined commands run, write in the
// project, do not see Prime's keys, and a write outside fails with a
// result that says the sandbox refused it.
func TestBashSandboxed(t *testing.T) {
	t.Setenv("PRIME_TEST_API_KEY", "sk-secret")
	env, outside := sandboxedEnv(t)
	if got := mustCall(t, env, "bash", bashArgsJSON(`echo made > f.txt; cat f.txt; env | grep -c API_KEY || true; seq 1 30000 | tail -1`)); got != "made\n0\n30000\n" {
		t.Errorf("in the project: %q", got)
	}
	res, err := call(t, context.Background(), env, "bash", bashArgsJSON("echo x > "+filepath.Join(outside, "f")))
	text := resultText(res)
	if err != nil || !res.IsError || !strings.Contains(text, "Permission denied") || !strings.Contains(text, "Prime's sandbox") {
		t.Errorf("outside: %v, %q", err, text)
	}
	// Long output goes to the session's output directory, which the
	// supervisor (unconfined) and Prime write.
	res, err = call(t, context.Background(), env, "bash", bashArgsJSON("seq 1 100000"))
	if err != nil || res.IsError || !strings.Contains(resultText(res), "100000") {
		t.Errorf("long output: %v, %q", err, resultText(res)[:min(200, len(resultText(res)))])
	}
}

// TestBashSandboxedDetachedChild: a child that forks and setsid's leaves
// the command's process group but not the sandbox, and the session's end
// still kills it.
func TestBashSandboxedDetachedChild(t *testing.T) {
	env, outside := sandboxedEnv(t)
	target := filepath.Join(outside, "late.txt")
	pidFile := filepath.Join(env.CWD, "pid")
	script := `setsid sh -c 'echo $$ > ` + pidFile + `; sleep 0.3; echo x 2>` + filepath.Join(env.CWD, "err") + ` > ` + target + `; sleep 60' >/dev/null 2>&1 < /dev/null &
sleep 0.1; echo started`
	if got := mustCall(t, env, "bash", bashArgsJSON(script)); got != "started\n" {
		t.Fatalf("output %q", got)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(filepath.Join(env.CWD, "err")); len(b) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if b, _ := os.ReadFile(filepath.Join(env.CWD, "err")); !strings.Contains(string(b), "Permission denied") {
		t.Errorf("the detached child's write: %q", b)
	}
	if _, err := os.Stat(target); err == nil {
		t.Errorf("the detached child wrote %s", target)
	}
	if proctest.Gone(pid) {
		t.Fatalf("the detached child %d is not running", pid)
	}
	if err := env.Procs.Close(false); err != nil {
		t.Fatal(err)
	}
	for time.Now().Before(deadline) && !proctest.Gone(pid) {
		time.Sleep(20 * time.Millisecond)
	}
	if !proctest.Gone(pid) {
		t.Errorf("the detached child %d outlived the session", pid)
	}
}

// BenchmarkBashTrue is what one confined command costs over an unconfined
// one: the trampoline, its Landlock rules (the credentials carved out of
// the home directory) and the namespaces.
func BenchmarkBashTrue(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	for _, confined := range []bool{false, true} {
		name := "unconfined"
		if confined {
			name = "sandboxed"
		}
		b.Run(name, func(b *testing.B) {
			procs, err := NewProcs(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer procs.Close(false)
			env := Env{CWD: b.TempDir(), Procs: procs}
			if confined {
				env.Sandbox = &permission.Sandbox{Exe: exe, Write: append([]string{env.CWD, procs.Dir}, permission.DefaultWrite()...),
					DenyRead: permission.DefaultDenyRead(home, "")}
				if err := env.Sandbox.Probe(); err != nil {
					b.Skipf("no sandbox: %v", err)
				}
			}
			for b.Loop() {
				mustCall(b, env, "bash", bashArgsJSON("true"))
			}
		})
	}
}
