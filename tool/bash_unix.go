//go:build unix

package tool

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup makes the command the leader of a new process group, so
// that killing the group ends everything it started.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the process group led by pid.
func killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}

// signalOf returns the signal that ended a process, if one did.
func signalOf(ps *os.ProcessState) (int, bool) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return int(ws.Signal()), true
	}
	return 0, false
}
