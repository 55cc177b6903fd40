//go:build unix && !linux

package tool

import (
	"os/exec"
	"syscall"
)

// Without cgroups and /proc environments, a command's processes are its
// process group.

func sessionSetup(*Procs)     {}
func killCgroup(string)       {}
func removeCgroup(string)     {}
func killTagged(string, bool) {}

// callProcs tracks the processes of one command: its process group.
type callProcs struct{}

func (p *Procs) prepare(cmd *exec.Cmd) *callProcs {
	if p != nil {
		p.ready()
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return &callProcs{}
}

func (c *callProcs) start(cmd *exec.Cmd) error { return cmd.Start() }
func (c *callProcs) kill(pid int)              { _ = syscall.Kill(-pid, syscall.SIGKILL) }
func (c *callProcs) done()                     {}
