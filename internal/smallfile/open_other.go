//go:build !unix

package smallfile

import "os"

func open(path string) (*os.File, error) { return osOpen(path, os.O_RDONLY) }
