//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// ownGroup puts a stdio server in a process group of its own, so that
// closing it reaches the processes a wrapper (npx, uvx) started, and so
// that the terminal's Ctrl-C goes to Prime rather than to the server.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills what is left of a stdio server's process group.
func (c *connection) killGroup() {
	if c.cmd == nil || c.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
}
