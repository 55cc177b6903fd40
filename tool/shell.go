package tool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/internal/termtext"
)

// ShellResult is what a command the user ran themselves (pi's !cmd, not a
// tool call) produced.
type ShellResult struct {
	// Output is the output as a terminal would show it: escape sequences
	// and control characters removed, carriage returns dropped, and only the
	// tail kept when it is over MaxLines or MaxBytes (Truncated; the whole
	// output is then in FullOutputPath).
	Output         string
	ExitCode       *int
	Cancelled      bool
	Truncated      bool
	FullOutputPath string
}

// RunShell runs a command the user typed, as the bash tool runs the model's
// (env's shell and directory, its own process group, stdout and stderr
// merged), telling onOutput each piece of output, cleaned, as it comes.
// Cancelling ctx kills the command's process group: the result is then
// Cancelled, with no exit code.
func RunShell(ctx context.Context, env Env, command string, onOutput func(string)) (ShellResult, error) {
	if !filepath.IsAbs(env.CWD) {
		return ShellResult{}, fmt.Errorf("the working directory %q is not an absolute path", env.CWD)
	}
	if st, err := os.Stat(env.CWD); err != nil || !st.IsDir() {
		return ShellResult{}, fmt.Errorf("the working directory %s no longer exists", env.CWD)
	}
	vars := env.environ()
	run := &bashRun{out: output{tempDir: env.tempDir()}, procs: env.Procs}
	if onOutput != nil {
		run.chunk = func(b []byte) {
			if s := CleanTerminalText(string(b)); s != "" {
				onOutput(s)
			}
		}
	}
	res, err := run.run(ctx, env.shell(), command, env.CWD, vars, 0, nil)
	text, t := run.out.snapshot()
	out := ShellResult{Output: CleanTerminalText(text), Truncated: t.Truncated}
	if t.Truncated {
		out.FullOutputPath = run.out.path
	}
	switch {
	case errors.Is(err, ErrAborted):
		out.Cancelled = true
		return out, nil
	case err != nil:
		return out, err
	}
	var d struct {
		ExitCode *int `json:"exitCode"`
	}
	if len(res.Details) > 0 {
		if err := json.Unmarshal(res.Details, &d); err != nil {
			return out, err
		}
	}
	out.ExitCode = d.ExitCode
	return out, nil
}

// CleanTerminalText removes what a terminal would interpret rather than
// show: escape sequences, carriage returns and other control characters
// (tabs and newlines stay).
func CleanTerminalText(s string) string { return termtext.Clean(s) }
