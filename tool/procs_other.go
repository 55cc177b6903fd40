//go:build !unix

package tool

import (
	"fmt"
	"os"
	"os/exec"
)

// Procs owns the directory for the full output of one session's commands
// (see the Unix version, which also tracks their processes).
type Procs struct {
	// Dir is the directory for the full output of commands.
	Dir string
}

// NewProcs makes the output directory of a new session under tempDir.
func NewProcs(tempDir string) (*Procs, error) {
	dir, err := os.MkdirTemp(tempDir, fmt.Sprintf("prime-%d-", os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("cannot make a directory for the commands' output: %w", err)
	}
	return &Procs{Dir: dir}, nil
}

// Close removes the output directory unless keep is set.
func (p *Procs) Close(keep bool) error {
	if keep {
		return nil
	}
	return os.RemoveAll(p.Dir)
}

// callProcs tracks the processes of one command: only its shell here.
type callProcs struct{ cmd *exec.Cmd }

func (p *Procs) prepare(cmd *exec.Cmd) *callProcs { return &callProcs{cmd} }
func (c *callProcs) start(cmd *exec.Cmd) error    { return cmd.Start() }
func (c *callProcs) done()                        {}
func (c *callProcs) kill(int) {
	if c.cmd.Process != nil {
		_ = c.cmd.Process.Kill()
	}
}
