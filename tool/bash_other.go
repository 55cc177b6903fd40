//go:build !unix

package tool

import (
	"os"
)

// signalOf reports no signal: exit codes say it all here.
func signalOf(ps *os.ProcessState) (int, bool) { return 0, false }
