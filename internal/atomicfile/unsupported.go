package atomicfile

import (
	"errors"
	"syscall"
)

// isUnsupported reports an fsync the file system does not support for
// directories.
func isUnsupported(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, errors.ErrUnsupported)
}
