//go:build unix

package tool

import (
	"os"
	"syscall"
)

// signalOf returns the signal that ended a process, if one did.
func signalOf(ps *os.ProcessState) (int, bool) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return int(ws.Signal()), true
	}
	return 0, false
}
