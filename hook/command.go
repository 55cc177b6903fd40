package hook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prime-agent/prime/internal/safepath"
	"github.com/prime-agent/prime/settings"
)

// Defaults for running handlers.
const (
	// DefaultTimeout bounds a handler that does not set its own timeout.
	// It is generous because the typical before-compact hook asks a model
	// for a summary.
	DefaultTimeout = 60 * time.Second
	// DefaultMaxOutput bounds what a command hook may write to stdout:
	// room for a transformed copy of a very large span.
	DefaultMaxOutput = 64 << 20
	// maxStderr is how much of the end of a command's stderr is kept.
	maxStderr = 64 << 10
	// waitDelay is how long a finished command's leftover processes may
	// hold its stdout or stderr open before they are killed.
	waitDelay = time.Second
)

var (
	errTimedOut      = errors.New("timed out")
	errTooMuchOutput = errors.New("too much output")
)

// command is a command hook from settings.
type command struct {
	hook settings.Hook
	// path is the command to execute: absolute, or a bare name looked up
	// in PATH.
	path string
}

// newCommand resolves a hook's command: "~/x" is in the home directory; a
// relative path with a slash ("./x.sh", "hooks/x") is relative to the
// directory of the settings file that declares it; a bare name ("x") is
// looked up in PATH when the hook runs.
func newCommand(h settings.Hook) *command {
	p := h.Command
	switch {
	case strings.HasPrefix(p, "~/"):
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[2:])
		}
	case filepath.IsAbs(p):
	case strings.ContainsRune(p, '/') || strings.ContainsRune(p, filepath.Separator):
		p = filepath.Join(filepath.Dir(h.Source.File), p)
	}
	return &command{hook: h, path: p}
}

// unsafe returns why another user could change the hook's program, or
// nil. A bare command name is found on the user's own PATH and is not
// checked; a path (absolute, ~/, or relative to the settings file) is.
func (c *command) unsafe() error {
	if c.path == c.hook.Command && !strings.ContainsRune(c.path, filepath.Separator) {
		return nil
	}
	var ue *safepath.UnsafeError
	if err := safepath.Check(c.path); errors.As(err, &ue) {
		return ue
	}
	return nil
}

// display is the command line as written in settings, an argument that is
// empty or holds white space or quotes in Go quotes.
func (c *command) display() string {
	words := make([]string, 0, 1+len(c.hook.Args))
	for _, w := range append([]string{c.hook.Command}, c.hook.Args...) {
		if w == "" || strings.ContainsAny(w, " \t\n\"'\\") {
			w = strconv.Quote(w)
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}

// execOptions are the runner's settings for commands.
type execOptions struct {
	dir        string
	env        []string
	maxOutput  int
	projectDir string
}

// run executes the command with in on its stdin and returns its stdout.
// The command runs in its own process group, which is killed as a whole
// when the timeout expires, when it writes more than the allowed output,
// or when ctx is done; processes it leaves behind holding its stdout or
// stderr open are killed when it exits. The report, if any, has no event
// or handler name yet.
func (c *command) run(ctx context.Context, event string, timeout time.Duration, in []byte, o *execOptions) ([]byte, *Report) {
	cctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	tctx, cancel := context.WithTimeoutCause(cctx, timeout, errTimedOut)
	defer cancel()

	cmd := exec.CommandContext(tctx, c.path, c.hook.Args...)
	cmd.Dir = o.dir
	cmd.Env = append(os.Environ(), "PRIME_HOOK_EVENT="+event, "PRIME_HOOK_SETTINGS="+c.hook.Source.File)
	if o.projectDir != "" {
		cmd.Env = append(cmd.Env, "PRIME_PROJECT_DIR="+o.projectDir)
	}
	cmd.Env = append(cmd.Env, o.env...)
	cmd.Stdin = bytes.NewReader(in)
	stdout := &limitWriter{max: o.maxOutput, over: func() { stop(errTooMuchOutput) }}
	stderr := &tailWriter{max: maxStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = waitDelay
	inProcessGroup(cmd)

	if err := cmd.Start(); err != nil {
		return nil, c.startFailure(err)
	}
	err := cmd.Wait()
	if errors.Is(err, exec.ErrWaitDelay) {
		// It exited successfully, but something it started still holds
		// its output: that process belongs to no one now.
		_ = killProcessGroup(cmd)
		err = nil
	}
	switch cause := context.Cause(tctx); {
	case ctx.Err() != nil:
		return nil, &Report{Kind: Failed, Detail: "cancelled: " + ctx.Err().Error()}
	case cause == errTimedOut:
		return nil, &Report{Kind: TimedOut, Output: stderr.lines(),
			Detail: fmt.Sprintf("timed out after %v and was killed with its process group (allow longer with \"timeoutMs\" in its declaration)", timeout)}
	case cause == errTooMuchOutput:
		return nil, &Report{Kind: Failed, Output: stderr.lines(),
			Detail: fmt.Sprintf("wrote more than %d bytes to stdout; it was killed with its process group and its output ignored", o.maxOutput)}
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		if code := exit.ExitCode(); code >= 0 {
			return nil, &Report{Kind: Failed, ExitCode: code, Output: stderr.lines(), Detail: fmt.Sprintf("exited with status %d", code)}
		}
		return nil, &Report{Kind: Failed, Output: stderr.lines(), Detail: "was killed: " + exit.String()}
	case err != nil:
		return nil, &Report{Kind: Failed, Output: stderr.lines(), Detail: err.Error()}
	}
	return stdout.buf.Bytes(), nil
}

// startFailure explains why a command could not be started.
func (c *command) startFailure(err error) *Report {
	detail := "could not be started: " + err.Error()
	if c.path != c.hook.Command {
		detail += fmt.Sprintf(" (%q resolves to %s", c.hook.Command, c.path)
		if !strings.HasPrefix(c.hook.Command, "~/") && !filepath.IsAbs(c.hook.Command) {
			detail += ": a relative command is relative to the directory of the settings file that declares it"
		}
		detail += ")"
	}
	return &Report{Kind: Failed, Detail: detail}
}

// limitWriter keeps up to max bytes; past that it discards everything and
// calls over once.
type limitWriter struct {
	buf  bytes.Buffer
	max  int
	full bool
	over func()
}

func (w *limitWriter) Write(p []byte) (int, error) {
	if w.full {
		return len(p), nil
	}
	if w.buf.Len()+len(p) > w.max {
		w.full = true
		w.buf.Reset()
		w.over()
		return len(p), nil
	}
	return w.buf.Write(p)
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	buf []byte
	max int
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	if len(w.buf) > 2*w.max {
		w.buf = append([]byte(nil), w.buf[len(w.buf)-w.max:]...)
	}
	return len(p), nil
}

// lines returns the last lines kept, for a report.
func (w *tailWriter) lines() string {
	b := w.buf
	if len(b) > w.max {
		b = b[len(b)-w.max:]
	}
	return lastLines(strings.ToValidUTF8(string(b), "�"))
}
