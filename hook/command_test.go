package hook

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prime-agent/prime/internal/proctest"
	"github.com/prime-agent/prime/settings"
)

// commandHooks returns a runner for hooks declared in the global settings.
func commandHooks(t *testing.T, opts Options, hooks ...map[string]any) *Runner {
	t.Helper()
	return New(loadSettings(t, map[string]any{"hooks": hooks}, nil), opts)
}

func hookDecl(event, command string, args ...string) map[string]any {
	if args == nil {
		args = []string{}
	}
	return map[string]any{"event": event, "command": command, "args": args}
}

// readPID waits for a script to write its background process's id.
func readPID(t *testing.T, file string) int {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(file)
		if s := strings.TrimSpace(string(b)); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(s)
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	t.Fatalf("no pid in %s", file)
	return 0
}

func TestCommandTimeoutKillsTheProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "grandchild.pid")
	script := writeScript(t, dir, "slow.sh", `#!/bin/sh
echo "thinking hard" >&2
sleep 300 &
echo $! > "$1"
wait
echo '{"cancel": true}'
`)
	r := New(loadSettings(t, map[string]any{"hooks": []map[string]any{
		// Long enough for the shell to reach its second line on a loaded
		// machine; the test then waits for the kill.
		{"event": EventBeforeCompact, "command": script, "args": []string{pidFile}, "timeoutMs": 1500},
	}}, nil), Options{})
	d, err := r.BeforeCompact(context.Background(), beforeCompactEvent(t, testSession(t), 0))
	if err != nil {
		t.Fatal(err)
	}
	if d.Cancelled || len(d.Reports) != 1 {
		t.Fatalf("decision %+v", d)
	}
	rep := d.Reports[0]
	if rep.Kind != TimedOut || !strings.Contains(rep.Detail, "timed out after 1.5s") || !strings.Contains(rep.Detail, "process group") ||
		rep.Output != "thinking hard" || rep.Source.Key != "hooks[0]" {
		t.Errorf("report %#v", rep)
	}
	proctest.WaitGone(t, readPID(t, pidFile))
}

func TestCommandCancelledWithItsContext(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	script := writeScript(t, dir, "slow.sh", "#!/bin/sh\nsleep 300 &\necho $! > \"$1\"\nwait\n")
	r := commandHooks(t, Options{}, hookDecl(EventBeforeCompact, script, pidFile))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var d *CompactDecision
	go func() {
		var err error
		d, err = r.BeforeCompact(ctx, beforeCompactEvent(t, testSession(t), 0))
		done <- err
	}()
	pid := readPID(t, pidFile)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if len(d.Reports) != 0 {
		t.Errorf("the user's cancellation was reported as the hook's failure: %v", d.Reports)
	}
	proctest.WaitGone(t, pid)
}

func TestCommandLeftoversAreKilled(t *testing.T) {
	// The hook answers and exits, but a process it started still holds its
	// stdout: the answer counts, and the leftover is killed.
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "leftover.pid")
	script := writeScript(t, dir, "leaky.sh", "#!/bin/sh\ncat > /dev/null\nsleep 300 &\necho $! > \"$1\"\necho '{\"cancel\": true}'\n")
	r := commandHooks(t, Options{}, hookDecl(EventBeforeCompact, script, pidFile))
	d, err := r.BeforeCompact(context.Background(), beforeCompactEvent(t, testSession(t), 0))
	if err != nil {
		t.Fatal(err)
	}
	if !d.Cancelled || len(d.Reports) != 0 {
		t.Fatalf("decision %+v", d)
	}
	proctest.WaitGone(t, readPID(t, pidFile))
}

func TestCommandFailures(t *testing.T) {
	var manyLines strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&manyLines, "echo 'stderr line %d' >&2\n", i)
	}
	tests := []struct {
		name   string
		script string // the body after #!/bin/sh; "" for no script at all
		kind   Kind
		detail string
		output string
		exit   int
	}{
		{
			name: "crash", script: "cat >/dev/null\necho 'Traceback: KeyError: preparation' >&2\nexit 3\n",
			kind: Failed, detail: "exited with status 3", output: "Traceback: KeyError: preparation", exit: 3,
		},
		{
			name: "crash with long stderr", script: manyLines.String() + "exit 1\n",
			kind: Failed, detail: "exited with status 1", exit: 1,
			output: strings.TrimSuffix(strings.Repeat("x", 0)+linesFrom(11, 30), "\n"),
		},
		{
			name: "killed by a signal", script: "kill -9 $$\n",
			kind: Failed, detail: "was killed: signal: killed",
		},
		{
			name: "not JSON", script: "echo 'hello, I am a hook'\n",
			kind: Invalid, detail: `not a JSON object), so it was ignored; output: "hello, I am a hook"`,
		},
		{
			name: "debug output before the JSON", script: "echo 'reading the event'\necho '{\"cancel\": true}'\n",
			kind: Invalid, detail: "not a JSON object",
		},
		{
			name: "two objects", script: "echo '{}'; echo '{\"cancel\": true}'\n",
			kind: Invalid, detail: "invalid character '{' after top-level value",
		},
		{
			name: "truncated JSON", script: "printf '{\"compaction\": {\"summary\": \"x'\n",
			kind: Invalid, detail: "unexpected EOF",
		},
		{
			name: "cancel of the wrong type", script: "echo '{\"cancel\": \"yes\"}'\n",
			kind: Invalid, detail: "cancel: got a string, want true or false",
		},
		{
			name: "an array", script: "echo '[]'\n",
			kind: Invalid, detail: "not a JSON object",
		},
		{
			name: "endless output", script: "while :; do echo 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'; done\n",
			kind: Failed, detail: "wrote more than 4096 bytes to stdout",
		},
		{
			name: "invalid UTF-8", script: "printf '{\"compaction\": {\"summary\": \"\\377\", \"firstKeptEntryId\": \"u2\", \"tokensBefore\": 1}}'\n",
			kind: Invalid, detail: "invalid UTF-8",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			script := writeScript(t, t.TempDir(), "hook.sh", "#!/bin/sh\n"+tc.script)
			r := commandHooks(t, Options{MaxOutput: 4096}, hookDecl(EventBeforeCompact, script))
			s := testSession(t)
			e, d, err := compactFlow(context.Background(), r, s, compactOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Cancelled || d.Compaction != nil || e == nil {
				t.Fatalf("the failed hook's answer was used: %+v", d)
			}
			if len(d.Reports) != 1 {
				t.Fatalf("reports: %v", d.Reports)
			}
			rep := d.Reports[0]
			if rep.Kind != tc.kind || !strings.Contains(rep.Detail, tc.detail) || rep.ExitCode != tc.exit ||
				(tc.output != "" && rep.Output != tc.output) {
				t.Errorf("report: %v %q exit %d output %q\nwant %v %q exit %d output %q", rep.Kind, rep.Detail, rep.ExitCode, rep.Output, tc.kind, tc.detail, tc.exit, tc.output)
			}
			if msg := rep.Error(); !strings.HasPrefix(msg, `session_before_compact: hook "`+script+`" (global settings hooks[0], `) {
				t.Errorf("report text: %s", msg)
			}
		})
	}
}

func linesFrom(first, last int) string {
	var b strings.Builder
	for i := first; i <= last; i++ {
		fmt.Fprintf(&b, "stderr line %d\n", i)
	}
	return b.String()
}

func TestCommandAnswers(t *testing.T) {
	// What a command may print, and what it means.
	tests := []struct {
		name    string
		out     string
		custom  string // the stored summary, "" for Prime's
		tokens  int
		details string
		invalid string // a report's detail, "" for none
	}{
		{name: "nothing", out: ""},
		{name: "white space", out: "\n  \n"},
		{name: "null", out: "null"},
		{name: "an empty object", out: "{}"},
		{name: "unknown members", out: `{"note": "hi", "compaction": null, "preparation": null, "cancel": false}`},
		{name: "a compaction", out: `{"compaction": {"summary": "mine", "firstKeptEntryId": "u1", "tokensBefore": 0, "extra": 1}}`, custom: "mine", tokens: 0},
		{name: "whole numbers", out: `{"compaction": {"summary": "mine", "firstKeptEntryId": "u2", "tokensBefore": 1e3, "details": null}}`, custom: "mine", tokens: 1000},
		{name: "details of any kind", out: `{"compaction": {"summary": "mine", "firstKeptEntryId": "u2", "tokensBefore": 7, "details": [1, "two", {"3": null}]}}`, custom: "mine", tokens: 7, details: `[1,"two",{"3":null}]`},
		{name: "a fraction", out: `{"compaction": {"summary": "mine", "firstKeptEntryId": "u2", "tokensBefore": 1.5}}`, invalid: "tokensBefore: 1.5 is not a whole number"},
		{name: "a negative count", out: `{"compaction": {"summary": "mine", "firstKeptEntryId": "u2", "tokensBefore": -1}}`, invalid: "tokensBefore: -1 is not a whole number"},
		{name: "a string count", out: `{"compaction": {"summary": "mine", "firstKeptEntryId": "u2", "tokensBefore": "12"}}`, invalid: "tokensBefore: got a string, want a number"},
		{name: "a huge count", out: `{"compaction": {"summary": "mine", "firstKeptEntryId": "u2", "tokensBefore": 1e300}}`, invalid: "1e300 is not a whole number from 0 to 2^53-1"},
		{name: "no count", out: `{"compaction": {"summary": "mine", "firstKeptEntryId": "u2"}}`, invalid: "compaction: missing tokensBefore"},
		{name: "nothing required", out: `{"compaction": {}}`, invalid: "compaction: missing summary, firstKeptEntryId, tokensBefore"},
		{name: "an empty summary", out: `{"compaction": {"summary": "", "firstKeptEntryId": "u2", "tokensBefore": 1}}`, invalid: "the summary is empty"},
		{name: "a summary of the wrong type", out: `{"compaction": {"summary": 5, "firstKeptEntryId": "u2", "tokensBefore": 1}}`, invalid: "summary: got a number, want a string"},
		{name: "an entry on another branch", out: `{"compaction": {"summary": "x", "firstKeptEntryId": "b2", "tokensBefore": 1}}`, invalid: `firstKeptEntryId "b2" is not an entry on the current path`},
		{name: "a compaction that is an array", out: `{"compaction": []}`, invalid: "compaction: got an array, want an object"},
		{name: "cancel with a bad compaction", out: `{"cancel": true, "compaction": {"summary": "x", "firstKeptEntryId": "zz", "tokensBefore": 1}}`, invalid: `"zz" is not an entry`},
		{name: "an unknown role", out: `{"preparation": {"messagesToSummarize": [{"role": "narrator", "content": "hi"}]}}`, invalid: `messagesToSummarize: [0]: role "narrator" is not a message role Prime knows`},
		{name: "messages that are not an array", out: `{"preparation": {"turnPrefixMessages": {"role": "user"}}}`, invalid: "turnPrefixMessages: got an object, want an array of messages"},
		{name: "repeated members", out: `{"cancel": false, "cancel": true}`, invalid: "duplicate object member name"},
	}
	dir := t.TempDir()
	script := writeScript(t, dir, "answer.sh", "#!/bin/sh\ncat > /dev/null\ncat \"$1\"\n")
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			answer := filepath.Join(dir, fmt.Sprintf("answer%d.json", i))
			if err := os.WriteFile(answer, []byte(tc.out), 0o644); err != nil {
				t.Fatal(err)
			}
			r := commandHooks(t, Options{}, hookDecl(EventBeforeCompact, script, answer))
			_, d, err := compactFlow(context.Background(), r, testSession(t), compactOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.invalid != "" {
				if len(d.Reports) != 1 || d.Reports[0].Kind != Invalid || !strings.Contains(d.Reports[0].Detail, tc.invalid) {
					t.Fatalf("reports %v; want an invalid result saying %q", d.Reports, tc.invalid)
				}
				if d.Compaction != nil || d.Cancelled {
					t.Fatalf("an invalid answer was used: %+v", d)
				}
				return
			}
			if len(d.Reports) != 0 {
				t.Fatalf("reports: %v", d.Reports)
			}
			got := ""
			if d.Compaction != nil {
				got = d.Compaction.Summary
				if d.Compaction.TokensBefore != tc.tokens || string(d.Compaction.Details) != tc.details {
					t.Errorf("stored tokensBefore %d details %s; want %d %s", d.Compaction.TokensBefore, d.Compaction.Details, tc.tokens, tc.details)
				}
			}
			if got != tc.custom {
				t.Errorf("stored %q, want %q", got, tc.custom)
			}
		})
	}
}

func TestCommandEnvironment(t *testing.T) {
	// A relative command is found beside the settings file that declares
	// it; it runs in the project directory and learns where it is.
	agentDir, projectDir := t.TempDir(), t.TempDir()
	hooksDir := filepath.Join(projectDir, ".prime", "agent", "hooks")
	if err := os.MkdirAll(hooksDir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "env.txt")
	writeScript(t, hooksDir, "env.sh", `#!/bin/sh
cat > /dev/null
{ pwd; echo "$PRIME_HOOK_EVENT"; echo "$PRIME_HOOK_SETTINGS"; echo "$PRIME_PROJECT_DIR"; echo "$PRIME_SESSION_FILE"; echo "$1"; } > "$OUT"
`)
	writeJSON(t, filepath.Join(projectDir, ".prime", "agent", "settings.json"), map[string]any{
		"hooks": []map[string]any{hookDecl(EventCompact, "hooks/env.sh", "two words")},
	})
	writeJSON(t, filepath.Join(agentDir, "settings.json"), map[string]any{})
	s, err := settings.Load(context.Background(), settings.Options{AgentDir: agentDir, ProjectDir: projectDir})
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.Trust(context.Background(), projectDir); err != nil {
		t.Fatal(err)
	}
	// WithEnv adds to Options.Env and wins over it; the runner it was made
	// from keeps its own environment.
	base := New(s, Options{Env: []string{"PRIME_SESSION_FILE=/tmp/old.jsonl", "OUT=" + out}})
	r := base.WithEnv("PRIME_SESSION_FILE=/tmp/s.jsonl")
	if reps := r.Compact(context.Background(), &CompactEvent{}); len(reps) != 0 {
		t.Fatal(reps)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{s.ProjectDir(), EventCompact, s.ProjectFile(), s.ProjectDir(), "/tmp/s.jsonl", "two words"}, "\n") + "\n"
	if string(got) != want {
		t.Errorf("the hook saw:\n%s\nwant:\n%s", got, want)
	}
	if reps := base.Compact(context.Background(), &CompactEvent{}); len(reps) != 0 {
		t.Fatal(reps)
	}
	if got, _ := os.ReadFile(out); !strings.Contains(string(got), "/tmp/old.jsonl") {
		t.Errorf("WithEnv changed the runner it was made from:\n%s", got)
	}
}

func TestCommandNotRunnable(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "plain.sh")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\necho '{}'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		command string
		detail  string
	}{
		{"./missing.sh", "could not be started: fork/exec "},
		{"./missing.sh", "a relative command is relative to the directory of the settings file that declares it"},
		{"prime-no-such-hook-command", `executable file not found in $PATH`},
		{notExec, "permission denied"},
	}
	for _, tc := range tests {
		r := commandHooks(t, Options{}, hookDecl(EventCompactFailed, tc.command))
		reps := r.CompactFailed(context.Background(), &CompactFailedEvent{Reason: ReasonThreshold})
		if len(reps) != 1 || reps[0].Kind != Failed || !strings.Contains(reps[0].Detail, tc.detail) {
			t.Errorf("%s: reports %v; want one saying %q", tc.command, reps, tc.detail)
		}
	}
}

func TestCommandIgnoringALargeEvent(t *testing.T) {
	// A hook need not read its input: one that answers without reading a
	// multi-megabyte event still works.
	s := testSession(t)
	ev := beforeCompactEvent(t, s, 0)
	ev.Preparation.MessagesToSummarize = append(ev.Preparation.MessagesToSummarize, userMessage(strings.Repeat("big ", 1<<20)))
	script := writeScript(t, t.TempDir(), "quick.sh", "#!/bin/sh\necho '{\"cancel\": true}'\n")
	d, err := commandHooks(t, Options{}, hookDecl(EventBeforeCompact, script)).BeforeCompact(context.Background(), ev)
	if err != nil || !d.Cancelled || len(d.Reports) != 0 {
		t.Fatalf("err %v, decision %+v", err, d)
	}
}

func TestAfterEventFailuresAreReported(t *testing.T) {
	dir := t.TempDir()
	fail := writeScript(t, dir, "fail.sh", "#!/bin/sh\necho 'no network' >&2\nexit 7\n")
	ok := writeScript(t, dir, "ok.sh", "#!/bin/sh\necho 'whatever, ignored'\n")
	r := commandHooks(t, Options{}, hookDecl(EventTree, fail), hookDecl(EventTree, ok))
	reps := r.Tree(context.Background(), &TreeEvent{NewLeafID: "b2", OldLeafID: "a5"})
	if len(reps) != 1 || reps[0].ExitCode != 7 || reps[0].Output != "no network" || reps[0].Event != EventTree {
		t.Fatalf("reports %v", reps)
	}
}

func TestSkippedHooks(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "ran.log")
	script := writeScript(t, dir, "mark.sh", "#!/bin/sh\ncat > /dev/null\necho \"$1\" >> \""+log+"\"\n")
	global := map[string]any{"hooks": []map[string]any{
		hookDecl(EventCompact, script, "global"),
		hookDecl("session_compacted", script, "typo"),
	}}
	project := map[string]any{"hooks": []map[string]any{hookDecl(EventCompact, script, "project")}}
	goHook := &Hooks{Name: "go", Compact: func(context.Context, *CompactEvent) error {
		f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteString("go\n")
		return err
	}}
	ran := func(t *testing.T, r *Runner) string {
		t.Helper()
		_ = os.Remove(log)
		if reps := r.Compact(context.Background(), &CompactEvent{}); len(reps) != 0 {
			t.Fatal(reps)
		}
		b, _ := os.ReadFile(log)
		return strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", " ")
	}

	s := loadSettings(t, global, project)
	r := New(s, Options{Hooks: goHook})
	if got := ran(t, r); got != "go global" {
		t.Errorf("untrusted project: ran %q", got)
	}
	skipped := r.Skipped()
	if len(skipped) != 2 {
		t.Fatalf("skipped: %v", skipped)
	}
	if sk := skipped[0]; sk.Kind != Skipped || sk.Skip != SkipUnknownEvent || sk.Event != "session_compacted" || !strings.Contains(sk.Detail, `Prime emits no event "session_compacted"`) {
		t.Errorf("skipped[0] = %v", sk)
	}
	if sk := skipped[1]; sk.Source.Scope != settings.Project || sk.Skip != SkipUntrusted || sk.Handler != script+" project" ||
		!strings.Contains(sk.Error(), "the project "+s.ProjectDir()+" is not trusted") || !strings.Contains(sk.Detail, `run "prime trust" in it`) {
		t.Errorf("skipped[1] = %v", sk)
	}

	trusted, err := s.Trust(context.Background(), s.ProjectDir())
	if err != nil {
		t.Fatal(err)
	}
	r = New(trusted, Options{Hooks: goHook})
	if got := ran(t, r); got != "go global project" || len(r.Skipped()) != 1 {
		t.Errorf("trusted project: ran %q, skipped %v", got, r.Skipped())
	}

	r = New(trusted, Options{Hooks: goHook, Disabled: true})
	if got := ran(t, r); got != "go" {
		t.Errorf("disabled: ran %q", got)
	}
	if sk := r.Skipped(); len(sk) != 3 || sk[0].Skip != SkipDisabled || !strings.Contains(sk[0].Detail, "hooks are disabled (--no-hooks)") {
		t.Errorf("disabled: skipped %v", sk)
	}
	if r.Handles(EventBeforeCompact) || !r.Handles(EventCompact) {
		t.Error("Handles")
	}
	if got := New(trusted, Options{Hooks: goHook}).Handlers(EventCompact); !slices.Equal(got, []string{"go", script + " global", script + " project"}) {
		t.Errorf("Handlers = %q", got)
	}
}

// A hook's program that another user could change is not run: whoever can
// write it chooses what runs with the user's rights.
func TestHookProgramWritableByOthersIsSkipped(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "ran.log")
	script := writeScript(t, dir, "mark.sh", "#!/bin/sh\ncat > /dev/null\necho ran >> \""+log+"\"\n")
	if err := os.Chmod(script, 0o777); err != nil {
		t.Fatal(err)
	}
	r := commandHooks(t, Options{}, hookDecl(EventCompact, script))
	if reps := r.Compact(context.Background(), &CompactEvent{}); len(reps) != 0 {
		t.Fatal(reps)
	}
	if _, err := os.Stat(log); err == nil {
		t.Error("the world-writable hook ran")
	}
	sk := r.Skipped()
	if len(sk) != 1 || sk[0].Skip != SkipUnsafeFile || !strings.Contains(sk[0].Detail, script+" is writable by every user (mode 0777)") {
		t.Fatalf("skipped = %v", sk)
	}
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	r = commandHooks(t, Options{}, hookDecl(EventCompact, script))
	if reps := r.Compact(context.Background(), &CompactEvent{}); len(reps) != 0 || len(r.Skipped()) != 0 {
		t.Fatal(reps, r.Skipped())
	}
	if _, err := os.Stat(log); err != nil {
		t.Error("the safe hook did not run")
	}
}
