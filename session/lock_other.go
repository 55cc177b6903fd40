//go:build !unix

package session

import "os"

// lockFile does nothing where flock is not available. Appends are still
// single writes to a file opened for appending.
func lockFile(*os.File) error { return nil }

// unlockFile does nothing where flock is not available.
func unlockFile(*os.File) error { return nil }
