package tool

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/permission"
)

type bashTool struct{ env Env }

const bashSchema = `{"type":"object","required":["command"],"properties":{` +
	`"command":{"type":"string","description":"The command line to run"},` +
	`"timeout":{"type":"number","description":"Seconds after which the command is killed (optional; by default it may run as long as it needs)"}}}`

func (t *bashTool) Spec() Spec {
	return Spec{
		Name: "bash",
		Description: fmt.Sprintf("Run a command with bash in the working directory. Returns what it writes to stdout "+
			"and stderr, interleaved. Only the last %d lines or %s of the output are returned; when more was "+
			"written, the whole output is saved to a file whose name is given. A timeout in seconds can be set.",
			MaxLines, FormatSize(MaxBytes)),
		Parameters: jsontext.Value(bashSchema),
		Snippet:    "Run shell commands: builds, tests, git, and whatever else the shell can do",
	}
}

type bashArgs struct {
	Command string   `json:"command"`
	Timeout *float64 `json:"timeout"`
}

// maxTimeout is the longest timeout accepted, in seconds (about 24 days).
const maxTimeout = 2147483.647

// bashUpdateEvery is the least time between two partial results.
const bashUpdateEvery = 100 * time.Millisecond

// lingerIdle and lingerMax bound how long output is still read after the
// shell has exited, while processes it left in the background keep the
// output open: until it has been quiet for lingerIdle, at most lingerMax.
const (
	lingerIdle = 100 * time.Millisecond
	lingerMax  = 2 * time.Second
)

// bashDetails are the details of a bash result.
type bashDetails struct {
	Truncation     *Truncation `json:"truncation,omitzero"`
	FullOutputPath string      `json:"fullOutputPath,omitzero"`
	ExitCode       *int        `json:"exitCode,omitzero"`
}

func (t *bashTool) Run(ctx context.Context, call Call) (Result, error) {
	var a bashArgs
	if err := decodeArgs("bash", call.Args, &a); err != nil {
		return Result{}, err
	}
	var timeout time.Duration
	if a.Timeout != nil {
		s := *a.Timeout
		switch {
		case math.IsNaN(s) || s <= 0:
			return Result{}, fmt.Errorf("timeout must be a positive number of seconds, not %s", formatSeconds(s))
		case s > maxTimeout:
			return Result{}, fmt.Errorf("timeout must be at most %s seconds, not %s", formatSeconds(maxTimeout), formatSeconds(s))
		}
		timeout = time.Duration(s * float64(time.Second))
	} else if t.env.Timeout > 0 {
		timeout = t.env.Timeout
		s := t.env.Timeout.Seconds()
		a.Timeout = &s
	}
	if err := aborted(ctx); err != nil {
		return Result{}, err
	}
	if !filepath.IsAbs(t.env.CWD) {
		return Result{}, fmt.Errorf("the tools' working directory %q is not an absolute path", t.env.CWD)
	}
	if st, err := os.Stat(t.env.CWD); err != nil || !st.IsDir() {
		return Result{}, fmt.Errorf("the working directory %s no longer exists, so no command can run in it", t.env.CWD)
	}
	env := t.env.environ()
	sandbox := t.env.confined(ctx).Sandbox
	run := &bashRun{out: output{tempDir: t.env.tempDir()}, update: call.Update, procs: t.env.Procs, sandbox: sandbox}
	var before permission.Protected
	if sandbox != nil && sandbox.Project != "" {
		before = permission.ProjectProtected(sandbox.Project)
	}
	res, err := run.run(ctx, t.env.shell(), a.Command, t.env.CWD, env, timeout, a.Timeout)
	if err == nil && res.IsError && sandbox != nil {
		// Tell the model when the sandbox, not the command, is why it failed.
		if note := sandbox.Explain(llm.TextOf(res.Content)); note != "" {
			res.Content = []llm.Content{llm.Text{Text: joinBlock(llm.TextOf(res.Content), note)}}
		}
	}
	if err == nil && sandbox != nil && sandbox.Project != "" {
		if planted := permission.Planted(before, permission.ProjectProtected(sandbox.Project)); len(planted) > 0 {
			res.Content = []llm.Content{llm.Text{Text: joinBlock(llm.TextOf(res.Content), fmt.Sprintf(textPlanted, strings.Join(planted, ", ")))}}
		}
	}
	return res, err
}

// textPlanted warns of what a confined command made that runs later
// outside the sandbox and that the sandbox could not protect, not being
// there when the command started.
const textPlanted = "Warning: this command made %s, which git or Prime use outside the sandbox (git follows a commondir or " +
	"config.worktree to other configuration and hooks, runs hooks with the user's rights, and runs git with a submodule's own " +
	"configuration, which its .git file names, at every git status; Prime reads .prime at the next prompt). " +
	"The sandbox makes these read-only only once they exist. The user should check them."

// shell returns the shell to run commands with.
func (e Env) shell() string {
	if e.Shell != "" {
		return e.Shell
	}
	if st, err := os.Stat("/bin/bash"); err == nil && !st.IsDir() {
		return "/bin/bash"
	}
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "sh"
}

// bashRun is one command's run: its output and its partial results.
type bashRun struct {
	out   output
	procs *Procs // nil: the command's process group only
	// sandbox, when set, confines the command (see [Env].Sandbox).
	sandbox *permission.Sandbox
	update  func(Result)
	// chunk, when set, is told each piece of output as it is read.
	chunk      func([]byte)
	lastUpdate time.Time
	dirty      bool
	// lingerIdle and lingerMax, when set, replace the package's bounds on
	// reading after the shell exits (tests use long ones, so that what
	// they check does not depend on how fast a loaded machine runs).
	lingerIdle, lingerMax time.Duration
}

// lingers returns the bounds on reading after the shell has exited.
func (r *bashRun) lingers() (idle, most time.Duration) {
	idle, most = lingerIdle, lingerMax
	if r.lingerIdle > 0 {
		idle = r.lingerIdle
	}
	if r.lingerMax > 0 {
		most = r.lingerMax
	}
	return idle, most
}

// start starts the command with its output on the pipe it returns, its
// processes tracked by what start returns too.
func (r *bashRun) start(shell, command, dir string, env []string) (*exec.Cmd, *os.File, *callProcs, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("cannot make a pipe for the command's output: %w", err)
	}
	defer pw.Close()
	cmd := exec.Command(shell, "-c", command)
	cmd.Dir, cmd.Env = dir, env
	// One pipe for both, so the output keeps the order it was written in.
	cmd.Stdout, cmd.Stderr = pw, pw
	if r.sandbox != nil {
		if err := r.sandbox.Wrap(cmd); err != nil {
			pr.Close()
			return nil, nil, nil, fmt.Errorf("cannot confine the command: %w", err)
		}
	}
	calls := r.procs.prepare(cmd)
	if r.sandbox != nil {
		r.sandbox.Isolate(cmd.SysProcAttr)
	}
	if err := calls.start(cmd); err != nil {
		pr.Close()
		calls.done()
		return nil, nil, nil, fmt.Errorf("cannot start %s: %w", shell, err)
	}
	return cmd, pr, calls, nil
}

func (r *bashRun) run(ctx context.Context, shell, command, dir string, env []string, timeout time.Duration, timeoutArg *float64) (Result, error) {
	cmd, pr, calls, err := r.start(shell, command, dir, env)
	if err != nil {
		return Result{}, err
	}
	defer calls.done()
	started := time.Now()
	if r.update != nil {
		r.update(Result{Content: []llm.Content{}})
	}

	chunks := make(chan []byte, 8)
	var lingering, stop atomic.Bool
	idle, most := r.lingers()
	go readOutput(pr, chunks, idle, &lingering, &stop)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	var (
		timeoutC, lingerC, updateC <-chan time.Time
		done                       = ctx.Done()
		exited, timedOut, stopped  bool
		cancelled                  bool
		waitErr                    error
		exitedAfter                time.Duration
		updateTimer                *time.Timer
	)
	if timeout > 0 {
		tm := time.NewTimer(timeout)
		defer tm.Stop()
		timeoutC = tm.C
	}
	kill := func() { calls.kill(cmd.Process.Pid) }
	for chunks != nil || !exited {
		select {
		case c, ok := <-chunks:
			if !ok {
				chunks = nil
				continue
			}
			r.out.write(c)
			if r.chunk != nil {
				r.chunk(c)
			}
			r.dirty = true
			if r.update != nil && updateTimer == nil {
				if wait := bashUpdateEvery - time.Since(r.lastUpdate); wait > 0 {
					updateTimer = time.NewTimer(wait)
					updateC = updateTimer.C
				} else {
					r.emit()
				}
			}
		case <-updateC:
			updateTimer, updateC = nil, nil
			r.emit()
		case waitErr = <-waited:
			exited = true
			exitedAfter = time.Since(started)
			// What is still to read was written before the exit, or by
			// processes left in the background: read until it is quiet.
			lingering.Store(true)
			_ = pr.SetReadDeadline(time.Now().Add(idle))
			lt := time.NewTimer(most)
			defer lt.Stop()
			lingerC = lt.C
		case <-lingerC:
			lingerC = nil
			stop.Store(true)
			_ = pr.SetReadDeadline(time.Now())
		case <-timeoutC:
			timeoutC = nil
			if !stopped {
				timedOut, stopped = true, true
				kill()
			}
		case <-done:
			done = nil
			switch {
			case exited:
				// The shell had finished: its output is complete, and
				// only what it left in the background is stopped.
				stop.Store(true)
				_ = pr.SetReadDeadline(time.Now())
				kill()
			case !stopped:
				stopped, cancelled = true, true
				kill()
			}
		}
	}
	if updateTimer != nil {
		updateTimer.Stop()
	}
	pr.Close()
	r.out.close()
	if r.dirty && r.update != nil {
		r.emit()
	}
	return r.result(ctx, waitErr, cancelled, timedOut, timeoutArg, exitedAfter, timeout)
}

// readOutput sends what the command writes until the pipe is closed, or,
// once the shell has exited (lingering), until nothing came for
// idle or stop is set.
func readOutput(pr *os.File, chunks chan<- []byte, idle time.Duration, lingering, stop *atomic.Bool) {
	defer close(chunks)
	buf := make([]byte, 64*1024)
	quiet := 0
	for {
		n, err := pr.Read(buf)
		if n > 0 {
			quiet = 0
			chunks <- append([]byte(nil), buf[:n]...)
			if lingering.Load() {
				_ = pr.SetReadDeadline(time.Now().Add(idle))
			}
		}
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded) && !stop.Load():
			// A first timeout may come from this goroutine running late
			// with data waiting; only a second one in a row, after an
			// immediate read found nothing, means the output is quiet.
			if quiet++; quiet >= 2 {
				return
			}
			_ = pr.SetReadDeadline(time.Now().Add(idle))
		default:
			return // end of output, or told to stop
		}
	}
}

func (r *bashRun) emit() {
	r.dirty = false
	r.lastUpdate = time.Now()
	text, t := r.out.snapshot()
	r.update(Result{Content: []llm.Content{llm.Text{Text: text}}, Details: r.details(t, nil)})
}

func (r *bashRun) details(t Truncation, exitCode *int) jsontext.Value {
	d := bashDetails{ExitCode: exitCode}
	if t.Truncated {
		d.Truncation = &t
		d.FullOutputPath = r.out.path
	}
	if d.Truncation == nil && exitCode == nil {
		return nil
	}
	return detailsOf(d)
}

func (r *bashRun) result(ctx context.Context, waitErr error, cancelled, timedOut bool, timeoutArg *float64, exitedAfter, timeout time.Duration) (Result, error) {
	text, t := r.out.snapshot()
	if notice := r.out.notice(t); notice != "" {
		text = joinBlock(text, notice)
	}
	if cancelled {
		return Result{}, &abortedError{joinBlock(text, "The command was aborted."), ctx.Err()}
	}
	if timedOut {
		status := fmt.Sprintf("The command timed out after %s seconds and was killed.", formatSeconds(*timeoutArg))
		if exitedAfter > 0 && exitedAfter < timeout {
			if code, ok := exitCode(waitErr); ok {
				status += fmt.Sprintf(" The shell itself had exited with code %d after %.1f seconds, but processes it "+
					"started in the background kept writing to the output until then.", code, exitedAfter.Seconds())
			}
		}
		return Result{Content: []llm.Content{llm.Text{Text: joinBlock(text, status)}}, Details: r.details(t, nil), IsError: true}, nil
	}
	code, ok := exitCode(waitErr)
	if !ok {
		return Result{}, fmt.Errorf("%s: %w", joinBlock(text, "The command could not be waited for"), waitErr)
	}
	if code != 0 {
		text = joinBlock(text, fmt.Sprintf("The command exited with code %d.", code))
		return Result{Content: []llm.Content{llm.Text{Text: text}}, Details: r.details(t, &code), IsError: true}, nil
	}
	if text == "" {
		text = "(no output)"
	}
	return Result{Content: []llm.Content{llm.Text{Text: text}}, Details: r.details(t, &code)}, nil
}

func formatSeconds(s float64) string { return strconv.FormatFloat(s, 'f', -1, 64) }

// joinBlock appends a status block after a blank line (none when text is
// empty); the text's own final newline does not add another.
func joinBlock(text, block string) string {
	if text = strings.TrimSuffix(text, "\n"); text == "" {
		return block
	}
	return text + "\n\n" + block
}

// exitCode returns the command's exit status from cmd.Wait's error: its
// code, or 128+n when the shell was killed by signal n.
func exitCode(waitErr error) (int, bool) {
	if waitErr == nil {
		return 0, true
	}
	var ee *exec.ExitError
	if !errors.As(waitErr, &ee) {
		return 0, false
	}
	if sig, ok := signalOf(ee.ProcessState); ok {
		return 128 + sig, true
	}
	return ee.ExitCode(), true
}
