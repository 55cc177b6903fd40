//go:build unix

package tool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/internal/proctest"
	"github.com/prime-agent/prime/llm"
)

// runBash runs a command, failing the test instead of hanging if Run does
// not return within a minute.
func runBash(t *testing.T, ctx context.Context, env Env, args string, update func(Result)) (Result, error) {
	t.Helper()
	tl := toolNamed(t, env, "bash")
	v, err := Validate(tl.Spec(), []byte(args))
	if err != nil {
		return Result{}, err
	}
	type out struct {
		res Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := tl.Run(ctx, Call{Args: v, Update: update})
		done <- out{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(time.Minute):
		t.Fatalf("bash %s did not return", args)
		return Result{}, nil
	}
}

func bashArgsJSON(command string, timeout ...float64) string {
	if len(timeout) > 0 {
		return fmt.Sprintf(`{"command":%q,"timeout":%v}`, command, timeout[0])
	}
	return fmt.Sprintf(`{"command":%q}`, command)
}

var logName = regexp.MustCompile(`prime-bash-[0-9]+\.log`)

func TestBashTexts(t *testing.T) {
	env := testEnv(t)
	tr := newTranscript(env)
	tests := []struct{ label, command string }{
		{"output", "echo hello"},
		{"stdout and stderr in order", "echo one; echo two >&2; echo three"},
		{"no output", "true"},
		{"exit code", "echo failing; exit 3"},
		{"exit code without output", "exit 1"},
		{"killed by a signal", "kill -TERM $$"},
		{"lines cut", "seq 1 3000"},
		{"bytes cut", "for i in $(seq 1 1000); do printf '%099d\\n' $i; done"},
		{"one long last line", "printf 'start\\n'; head -c 60000 /dev/zero | tr '\\0' x"},
		{"invalid UTF-8", "printf 'caf\\351\\n'"},
		{"working directory", "pwd"},
	}
	for _, tt := range tests {
		res, err := runBash(t, context.Background(), env, bashArgsJSON(tt.command), nil)
		if tt.label == "lines cut" || tt.label == "bytes cut" {
			// Keep the golden file short: the notice and the last lines.
			text := resultText(res)
			res.Content = []llm.Content{llm.Text{Text: "…\n" + text[strings.LastIndex(text[:len(text)-300], "\n")+1:]}}
		}
		if tt.label == "one long last line" {
			text := resultText(res)
			i := strings.Index(text, "\n\n[")
			res.Content = []llm.Content{llm.Text{Text: "xxx…" + text[i-40:]}}
		}
		tr.add(tt.label+": "+tt.command, res, err)
	}
	res, err := runBash(t, context.Background(), env, bashArgsJSON("echo before; sleep 30", 0.5), nil)
	tr.add("timeout", res, err)
	for _, timeout := range []string{"0", "-1", "1e10"} {
		res, err := runBash(t, context.Background(), env, `{"command":"touch ran","timeout":`+timeout+`}`, nil)
		tr.add("timeout "+timeout, res, err)
	}
	if _, err := os.Stat(filepath.Join(env.CWD, "ran")); err == nil {
		t.Error("a command with an invalid timeout ran")
	}
	golden.Check(t, "bash.golden", logName.ReplaceAllString(tr.String(), "prime-bash-N.log"))
}

func TestBashExitCodes(t *testing.T) {
	env := testEnv(t)
	for _, tt := range []struct {
		command string
		code    int
	}{
		{"exit 0", 0}, {"exit 7", 7}, {"exit 255", 255}, {"kill -KILL $$", 128 + 9}, {"kill -INT $$", 128 + 2},
		{"false", 1}, {"nonexistent-command-xyz", 127},
	} {
		res, err := runBash(t, context.Background(), env, bashArgsJSON(tt.command), nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.command, err)
		}
		var d bashDetails
		if err := json.Unmarshal(res.Details, &d); err != nil || d.ExitCode == nil || *d.ExitCode != tt.code {
			t.Errorf("%s: details %s, want exit code %d", tt.command, res.Details, tt.code)
		}
		if res.IsError != (tt.code != 0) {
			t.Errorf("%s: IsError = %v", tt.command, res.IsError)
		}
	}
}

// TestBashLargeOutput checks the tail, the notice and the full output file
// for a command writing 100,000 lines.
func TestBashLargeOutput(t *testing.T) {
	env := testEnv(t)
	res, err := runBash(t, context.Background(), env, bashArgsJSON("seq 1 100000"), nil)
	if err != nil || res.IsError {
		t.Fatalf("%v %q", err, resultText(res))
	}
	var d bashDetails
	if err := json.Unmarshal(res.Details, &d); err != nil {
		t.Fatal(err)
	}
	if d.Truncation == nil || d.Truncation.TotalLines != 100000 || d.Truncation.OutputLines != 2000 || d.Truncation.TruncatedBy != "lines" {
		t.Fatalf("truncation %+v", d.Truncation)
	}
	text := resultText(res)
	body, notice, _ := strings.Cut(text, "\n\n")
	if !strings.HasPrefix(body, "98001\n") || !strings.HasSuffix(body, "\n100000") {
		t.Errorf("tail is not lines 98001-100000: %q...%q", body[:20], body[len(body)-20:])
	}
	if want := "[Output cut: showing lines 98001-100000 of 100000. The full output is in " + d.FullOutputPath + "]"; notice != want {
		t.Errorf("notice %q\nwant %q", notice, want)
	}
	if filepath.Dir(d.FullOutputPath) != env.TempDir {
		t.Errorf("full output in %s, want in %s", d.FullOutputPath, env.TempDir)
	}
	st, err := os.Stat(d.FullOutputPath)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("full output file: %v %v", err, st)
	}
	var want strings.Builder
	for i := 1; i <= 100000; i++ {
		want.WriteString(strconv.Itoa(i) + "\n")
	}
	if readFile(t, d.FullOutputPath) != want.String() {
		t.Error("the full output file is not the whole output")
	}
}

func TestBashUpdates(t *testing.T) {
	env := testEnv(t)
	var mu sync.Mutex
	var updates []Result
	res, err := runBash(t, context.Background(), env, bashArgsJSON("for i in 1 2 3; do echo $i; sleep 0.2; done"), func(r Result) {
		mu.Lock()
		updates = append(updates, r)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(updates) < 2 {
		t.Fatalf("%d updates", len(updates))
	}
	if len(updates[0].Content) != 0 || updates[0].Content == nil {
		t.Errorf("first update %+v, want empty content", updates[0])
	}
	last := resultText(updates[len(updates)-1])
	if last != "1\n2\n3\n" || resultText(res) != last {
		t.Errorf("last update %q, result %q", last, resultText(res))
	}
	for i := 2; i < len(updates); i++ {
		if !strings.HasPrefix(resultText(updates[i]), resultText(updates[i-1])) {
			t.Errorf("update %d %q does not extend %q", i, resultText(updates[i]), resultText(updates[i-1]))
		}
	}
}

func TestBashEnvironment(t *testing.T) {
	env := testEnv(t)
	calls := 0
	env.Environ = func() []string { calls++; return []string{"PRIME_TEST_VAR=from-env", "HOME=/elsewhere"} }
	got := mustCall(t, env, "bash", bashArgsJSON(`echo "$PRIME_TEST_VAR $HOME"; test -t 0 || read x </dev/stdin; echo "stdin:$x"`))
	if got != "from-env /elsewhere\nstdin:\n" || calls != 1 {
		t.Errorf("output %q after %d Environ calls", got, calls)
	}
	env.Shell = "/bin/sh"
	if got := mustCall(t, env, "bash", bashArgsJSON(`echo $0`)); got != "/bin/sh\n" {
		t.Errorf("shell %q", got)
	}
}

func TestBashWorkingDirectoryGone(t *testing.T) {
	env := testEnv(t)
	env.CWD = filepath.Join(env.CWD, "gone")
	if got := mustFail(t, env, "bash", bashArgsJSON("true")); !strings.Contains(got, "no longer exists") {
		t.Errorf("error %q", got)
	}
	if got := mustFail(t, Env{CWD: "relative"}, "bash", bashArgsJSON("true")); !strings.Contains(got, "not an absolute path") {
		t.Errorf("error %q", got)
	}
}

// pidLines reads the process ids a command printed, one a line.
func pidLines(t *testing.T, text string) []int {
	t.Helper()
	var pids []int
	for _, l := range strings.Split(text, "\n") {
		if n, err := strconv.Atoi(strings.TrimSpace(l)); err == nil && n > 1 {
			pids = append(pids, n)
		}
	}
	return pids
}

func TestBashTimeoutKillsGroup(t *testing.T) {
	env := testEnv(t)
	// The timeout is long against the two echoes before it, which must be in
	// the output however slowly a loaded machine starts the shell.
	res, err := runBash(t, context.Background(), env, bashArgsJSON("echo $$; sleep 60 & echo $!; wait", 3), nil)
	if err != nil || !res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	pids := pidLines(t, resultText(res))
	if len(pids) != 2 || !strings.HasSuffix(resultText(res), "The command timed out after 3 seconds and was killed.") {
		t.Fatalf("text %q", resultText(res))
	}
	for _, pid := range pids {
		proctest.WaitGone(t, pid)
	}
}

func TestBashAbortKillsGroup(t *testing.T) {
	env := testEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	res, err := runBash(t, ctx, env, bashArgsJSON("echo $$; sleep 60 & echo $!; wait"), func(r Result) {
		if len(pidLines(t, resultText(r))) == 2 {
			once.Do(cancel)
		}
	})
	if !errors.Is(err, ErrAborted) {
		t.Fatalf("error %v, result %+v", err, res)
	}
	text := err.Error()
	if !strings.HasSuffix(text, "\n\nThe command was aborted.") {
		t.Errorf("text %q", text)
	}
	pids := pidLines(t, text)
	if len(pids) != 2 {
		t.Fatalf("pids in %q", text)
	}
	for _, pid := range pids {
		proctest.WaitGone(t, pid)
	}
	// Already cancelled: nothing runs.
	_, err = runBash(t, ctx, env, bashArgsJSON("touch ran"), nil)
	if !errors.Is(err, ErrAborted) {
		t.Errorf("error %v", err)
	}
	if _, err := os.Stat(filepath.Join(env.CWD, "ran")); err == nil {
		t.Error("a command ran after the abort")
	}
}

// TestBashBackgroundChild: a process left in the background with the
// output open does not keep Run from returning.
func TestBashBackgroundChild(t *testing.T) {
	env := testEnv(t)
	res, err := runBash(t, context.Background(), env, bashArgsJSON("sleep 100 & echo $!; echo started"), nil)
	if err != nil || res.IsError {
		t.Fatalf("%v %q", err, resultText(res))
	}
	pids := pidLines(t, resultText(res))
	if len(pids) != 1 || !strings.HasSuffix(resultText(res), "started\n") {
		t.Fatalf("text %q", resultText(res))
	}
	// The background process lives on, as a shell's would; end it here.
	_ = syscall.Kill(pids[0], syscall.SIGKILL)
	proctest.WaitGone(t, pids[0])
}

// TestBashBackgroundWriter: a background process that keeps writing is
// read for a while after the shell exits, then left. The shell waits (on a
// fifo) until the writer's first line is written, so that line is in the
// output however slowly the writer starts.
func TestBashBackgroundWriter(t *testing.T) {
	env := testEnv(t)
	res, err := runBash(t, context.Background(), env, bashArgsJSON(
		"mkfifo started; (echo tick; echo >started; while :; do echo tick; sleep 0.02; done) & echo $!; read <started"), nil)
	if err != nil || res.IsError {
		t.Fatalf("%v %q", err, resultText(res))
	}
	pids := pidLines(t, resultText(res))
	if len(pids) != 1 || !strings.Contains(resultText(res), "tick") {
		t.Fatalf("text %q", resultText(res))
	}
	_ = syscall.Kill(pids[0], syscall.SIGKILL)
	proctest.WaitGone(t, pids[0])
}

// TestBashTimeoutAfterExit: with a timeout, when the shell had exited and
// only what it left in the background was still writing, the text says
// so. Reading lingers here as long as needed (a minute), so the timeout
// always falls while the writer is still being read, however long the
// writer's pauses are on a loaded machine.
func TestBashTimeoutAfterExit(t *testing.T) {
	env := testEnv(t)
	run := &bashRun{out: output{tempDir: env.tempDir()}, lingerIdle: time.Minute, lingerMax: time.Minute}
	timeout := 2.0
	res, err := run.run(context.Background(), env.shell(), "(while :; do echo tick; sleep 0.02; done) & echo $!; exit 4",
		env.CWD, env.environ(), time.Duration(timeout*float64(time.Second)), &timeout)
	if err != nil || !res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	if text := resultText(res); !strings.Contains(text, "The shell itself had exited with code 4 after") {
		t.Errorf("text %q", text[max(0, len(text)-400):])
	}
	for _, pid := range pidLines(t, resultText(res)) {
		proctest.WaitGone(t, pid) // the timeout killed the group
	}
}

// TestBashNoGoroutineLeft runs commands of every ending and checks that no
// goroutine outlives them.
func TestBashNoGoroutineLeft(t *testing.T) {
	env := testEnv(t)
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(300 * time.Millisecond); cancel() }()
	for _, args := range []string{bashArgsJSON("echo hi"), bashArgsJSON("exit 2"), bashArgsJSON("sleep 30", 0.2),
		bashArgsJSON("seq 1 50000"), bashArgsJSON("sleep 30 & echo $! >pid")} {
		if _, err := runBash(t, context.Background(), env, args, func(Result) {}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := runBash(t, ctx, env, bashArgsJSON("sleep 30"), nil); !errors.Is(err, ErrAborted) {
		t.Fatalf("error %v", err)
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(env.CWD, "pid")))); err == nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(20 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

// TestBashSecretsRemoved: a key in Prime's environment is not in the
// command's, for the model's commands and the user's own (!cmd) alike,
// unless the policy keeps it.
func TestBashSecretsRemoved(t *testing.T) {
	t.Setenv("PRIME_TEST_API_KEY", "sk-secret")
	t.Setenv("PRIME_TEST_PLAIN", "plain")
	env := testEnv(t)
	const cmd = `env | grep -E '^PRIME_TEST_' | sort`
	if got := mustCall(t, env, "bash", bashArgsJSON(cmd)); got != "PRIME_TEST_PLAIN=plain\n" {
		t.Errorf("bash tool's environment: %q", got)
	}
	res, err := RunShell(context.Background(), env, cmd, nil)
	if err != nil || res.Output != "PRIME_TEST_PLAIN=plain\n" {
		t.Errorf("!cmd's environment: %q, %v", res.Output, err)
	}
	env.Secrets.Include = []string{"PRIME_TEST_API_KEY"}
	if got := mustCall(t, env, "bash", bashArgsJSON(cmd)); got != "PRIME_TEST_API_KEY=sk-secret\nPRIME_TEST_PLAIN=plain\n" {
		t.Errorf("with the key included: %q", got)
	}
}
