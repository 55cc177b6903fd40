//go:build !unix

package tool

import (
	"os"
	"os/exec"
)

// setProcessGroup does nothing on systems without Unix process groups.
func setProcessGroup(cmd *exec.Cmd) {}

// killGroup kills the shell itself: without process groups, what it
// started may live on.
func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// signalOf reports no signal: exit codes say it all here.
func signalOf(ps *os.ProcessState) (int, bool) { return 0, false }
