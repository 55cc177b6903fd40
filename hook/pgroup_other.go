//go:build !unix

package hook

import "os/exec"

// inProcessGroup leaves the default cancellation (killing the command's
// own process) on systems without Unix process groups.
func inProcessGroup(cmd *exec.Cmd) {}

// killProcessGroup kills the command's process.
func killProcessGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
