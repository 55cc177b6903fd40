package tool

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// procsEnv of its own for a test: output under t's temp dir, and (with
// cgroup false) no cgroup, to test the fallback.
func testProcs(t *testing.T, cgroup bool) (Env, *Procs) {
	t.Helper()
	p, err := NewProcs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p.ready()
	if !cgroup && p.cgroup != "" {
		removeCgroup(p.cgroup)
		p.cgroup = ""
	}
	t.Cleanup(func() { p.Close(false) })
	return Env{CWD: t.TempDir(), Procs: p}, p
}

// running lists the processes whose command line contains marker.
func running(marker string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}), []byte(marker)) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && bytes.Contains(st, []byte(") Z ")) {
			continue // a zombie: dead, waiting for its parent
		}
		pids = append(pids, pid)
	}
	return pids
}

// gone waits for every process with marker to be gone, for a generous
// while: a loaded machine can take seconds to run the killed processes'
// ends.
func gone(t *testing.T, marker string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if len(running(marker)) == 0 {
			return
		}
	}
	t.Errorf("processes %v (%s) still run", running(marker), marker)
	for _, pid := range running(marker) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// started waits for a process whose command line holds marker: a command
// that starts one in the background may end before the child has exec'd.
func started(t *testing.T, marker string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if len(running(marker)) > 0 {
			return
		}
	}
	t.Fatalf("no process %q started", marker)
}

// sleeper is a sleep command whose command line is unique to the test.
func sleeper(t *testing.T, n int) string {
	return fmt.Sprintf("sleep %d.%d", 1000+os.Getpid()%1000, n)
}

// TestBashAbortKillsEscapedChildren: aborting a command kills what it
// started, including children that left its process group with setsid or
// hid behind nohup, by cgroup where there is one and by environment mark
// where not; leftovers of a command that ended are killed when the session
// closes.
func TestBashAbortKillsEscapedChildren(t *testing.T) {
	for _, cgroup := range []bool{true, false} {
		t.Run(fmt.Sprintf("cgroup=%v", cgroup), func(t *testing.T) {
			env, p := testProcs(t, cgroup)
			if cgroup && p.cgroup == "" {
				t.Skip("no cgroup v2 can be made here")
			}
			a, b, c := sleeper(t, 1), sleeper(t, 2), sleeper(t, 3)
			// Aborted once all three run (before, the kill would be vacuous).
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				for ctx.Err() == nil {
					if len(running(a)) > 0 && len(running(b)) > 0 && len(running(c)) > 0 {
						cancel()
					}
					time.Sleep(10 * time.Millisecond)
				}
			}()
			_, err := call(t, ctx, env, "bash", fmt.Sprintf(`{"command":"setsid %s & nohup %s >/dev/null 2>&1 & %s"}`, a, b, c))
			if err == nil {
				t.Fatal("an aborted command succeeded")
			}
			for _, m := range []string{a, b, c} {
				gone(t, m)
			}

			d := sleeper(t, 4)
			if out := mustCall(t, env, "bash", fmt.Sprintf(`{"command":"setsid %s >/dev/null 2>&1 < /dev/null & echo left"}`, d)); !strings.HasPrefix(out, "left") {
				t.Fatalf("output %q", out)
			}
			started(t, d)
			if err := p.Close(false); err != nil {
				t.Fatal(err)
			}
			gone(t, d)
			if _, err := os.Stat(p.Dir); !os.IsNotExist(err) {
				t.Errorf("the output directory is still there: %v", err)
			}
		})
	}
}

// TestBashOutputFileCapped: a command that writes 100 MB leaves a file of
// its first and last 16 MiB, in the session's own directory, with a line
// saying what was left out; the result says so; the directory goes when
// the session closes unless kept.
func TestBashOutputFileCapped(t *testing.T) {
	env, p := testProcs(t, true)
	res, err := call(t, context.Background(), env, "bash", `{"command":"yes | head -c 100000000"}`)
	if err != nil {
		t.Fatal(err)
	}
	text := resultText(res)
	i := strings.Index(text, p.Dir+string(filepath.Separator))
	if i < 0 || !strings.Contains(text, "Its first 16.0MB and last 16.0MB are in") {
		t.Fatalf("the result does not name a capped file in %s:\n%s", p.Dir, text[max(0, len(text)-300):])
	}
	path := strings.TrimSuffix(text[i:], "]")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	marker := "\n[... " + FormatSize(100000000-FullOutputHead-FullOutputTail) + " of output left out here"
	if len(data) > FullOutputHead+FullOutputTail+200 || !bytes.HasPrefix(data, []byte("y\ny\n")) ||
		!bytes.HasSuffix(data, []byte("y\ny\n")) || !bytes.Contains(data, []byte(marker)) {
		t.Fatalf("file of %d bytes; head %q", len(data), data[:min(len(data), 20)])
	}
	if err := p.Close(true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("a kept file was removed: %v", err)
	}
}

// TestBashDefaultTimeout: a call that names no timeout gets the session's.
func TestBashDefaultTimeout(t *testing.T) {
	env, _ := testProcs(t, true)
	env.Timeout = 300 * time.Millisecond
	res, err := call(t, context.Background(), env, "bash", `{"command":"echo start; sleep 30"}`)
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "timed out after 0.3 seconds") {
		t.Fatalf("%v %q", err, resultText(res))
	}
}

// TestBashParentDeath: kill -9 of the process running a command (Prime)
// kills the command and what it started, at once, by the supervisor's
// parent-death signal.
func TestBashParentDeath(t *testing.T) {
	if os.Getenv("PRIME_TEST_BASH_CHILD") != "" {
		env := Env{CWD: os.TempDir()}
		p, err := NewProcs(os.Getenv("PRIME_TEST_BASH_DIR"))
		if err != nil {
			os.Exit(3)
		}
		env.Procs = p
		call(t, context.Background(), env, "bash", `{"command":"`+os.Getenv("PRIME_TEST_BASH_CHILD")+`"}`)
		os.Exit(0)
	}
	a, b := sleeper(t, 5), sleeper(t, 6)
	cmd := exec.Command(os.Args[0], "-test.run=^TestBashParentDeath$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PRIME_TEST_BASH_CHILD=setsid %s & %s; true", a, b), "PRIME_TEST_BASH_DIR="+t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The child is this test binary run again: seconds to start under load.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if len(running(a)) > 0 && len(running(b)) > 0 {
			break
		}
	}
	if len(running(a)) == 0 || len(running(b)) == 0 {
		cmd.Process.Kill()
		t.Fatal("the command did not start")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	gone(t, b) // in the command's process group
	if cgroupRoot() != "" {
		gone(t, a) // left it with setsid: its cgroup
	} else {
		for _, pid := range running(a) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestBashSignalsAsDirect: under the supervisor a command still gets
// SIGINT and SIGQUIT (sh starts its asynchronous commands with them
// ignored; the supervisor gives them back), and its exit status is its own.
func TestBashSignalsAsDirect(t *testing.T) {
	env, p := testProcs(t, true)
	if p.env == "" {
		t.Skip("no env --default-signal here: no supervisor")
	}
	mask := func(status string) uint64 {
		for line := range strings.SplitSeq(status, "\n") {
			if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
				n, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
				return n
			}
		}
		t.Fatalf("no SigIgn in %q", status)
		return 0
	}
	own, _ := os.ReadFile("/proc/self/status")
	out := mustCall(t, env, "bash", `{"command":"grep SigIgn /proc/self/status"}`)
	const intQuit = 1<<(2-1) | 1<<(3-1)
	if got := mask(out) & intQuit; got != mask(string(own))&intQuit {
		t.Errorf("the command ignores signals %#x; Prime itself %#x", got, mask(string(own))&intQuit)
	}
	res, err := call(t, context.Background(), env, "bash", `{"command":"exit 7"}`)
	if err != nil || !strings.Contains(resultText(res), "exited with code 7") {
		t.Errorf("%v %q", err, resultText(res))
	}
	res, err = call(t, context.Background(), env, "bash", `{"command":"kill -INT $$"}`)
	if err != nil || !strings.Contains(resultText(res), "exited with code 130") {
		t.Errorf("%v %q", err, resultText(res))
	}
}

// BenchmarkNewProcs: what a session's start and end cost for its
// processes, without a command (the output directory only) and with one
// (then also the sweep of stale directories and cgroups, the session's
// cgroup, finding the supervisor's env, and killing what is left).
func BenchmarkNewProcs(b *testing.B) {
	dir := b.TempDir()
	for _, command := range []bool{false, true} {
		b.Run(fmt.Sprintf("command=%v", command), func(b *testing.B) {
			for b.Loop() {
				p, err := NewProcs(dir)
				if err != nil {
					b.Fatal(err)
				}
				if command {
					p.ready()
					p.calls.Add(1)
				}
				p.Close(false)
			}
		})
	}
}
