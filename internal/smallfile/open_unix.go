//go:build unix

package smallfile

import (
	"os"
	"syscall"
)

// open opens path for reading without waiting for a writer (a FIFO) and
// without making a terminal Prime's controlling one.
func open(path string) (*os.File, error) {
	return osOpen(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY)
}
