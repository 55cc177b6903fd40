// Package safepath tells whether another user of the machine could change
// a file, as git's safe.directory and OpenSSH's StrictModes do: a file that
// decides what Prime runs (settings, hooks) is trusted only when neither it
// nor any directory above it can be written by someone else.
//
// A path is safe when the file and every directory from it up to the root
// are owned by the current user or by root, and none of them can be written
// by other users. A directory with the sticky bit (such as /tmp) may be
// writable by everyone: others cannot rename or delete what they do not
// own there, and what lies below is checked on its own. Group write is
// allowed only for the owner's own private group (a group of the owner's
// name that is their primary group, as Debian's umask 002 makes).
// Symbolic links are followed, and the target's path is checked too.
//
// Where the system has no Unix permissions, every path is safe.
package safepath

import (
	"fmt"
	"os"
)

// UnsafeError says why another user could change a file.
type UnsafeError struct {
	// Path is the file or directory at fault: the file itself or one of
	// the directories above it.
	Path string
	// Why says who could write it: "is writable by every user (mode
	// 0666)", "is owned by user 1001".
	Why string
}

func (e *UnsafeError) Error() string {
	return fmt.Sprintf("%s %s", e.Path, e.Why)
}

// Check reports, as an *UnsafeError, whether another user could change the
// file at path: write it, or replace it through a directory above it. A
// path that does not exist is checked from its nearest existing directory.
// Other errors (a permission denied while looking) are returned as they
// are.
func Check(path string) error {
	return check(path, os.Geteuid())
}
