// Package smallfile reads a file that a stranger may have put in Prime's
// way — a cloned repository's settings, its AGENTS.md, its .git/HEAD — with
// bounds: the file must be a regular file on a real file system, and no
// larger than the caller's limit. A FIFO, a device (/dev/zero), a terminal
// or a file of /proc or /sys is refused without blocking and without
// reading, so a hostile project can neither hang Prime nor fill its
// memory, nor make it read its own environment (/proc/self/environ).
package smallfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// NotRegularError is a path that leads to something other than a regular
// file on a real file system.
type NotRegularError struct {
	Path string
	// Kind names what it is: "a named pipe (FIFO)", "a device", "a file
	// of /proc".
	Kind string
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, e.Kind)
}

// TooLargeError is a file larger than the caller's limit.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %d bytes", e.Path, e.Limit)
}

// Read returns the contents of the file at path, following symbolic links,
// when it is a regular file of at most limit bytes on a real file system;
// otherwise a *NotRegularError or a *TooLargeError. A missing file is an
// error satisfying errors.Is(err, fs.ErrNotExist), as os.ReadFile's.
func Read(path string, limit int64) ([]byte, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if kind := notRegular(fi.Mode()); kind != "" {
		return nil, &NotRegularError{Path: path, Kind: kind}
	}
	if kind := pseudo(f); kind != "" {
		return nil, &NotRegularError{Path: path, Kind: kind}
	}
	if fi.Size() > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return data, nil
}

func notRegular(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		return "a device"
	}
	return "not a plain file"
}

// Refused reports whether err is one of the refusals of [Read] (not a
// regular file, too large), as opposed to a file that is missing or cannot
// be read.
func Refused(err error) bool {
	var nr *NotRegularError
	var tl *TooLargeError
	return errors.As(err, &nr) || errors.As(err, &tl)
}

// osOpen is os.OpenFile with the flags open adds.
func osOpen(path string, flag int) (*os.File, error) { return os.OpenFile(path, flag, 0) }

// Why says, without the path, why [Read] refused a file ("it is a named
// pipe (FIFO), not a regular file"), for a message that names the file
// already; "" when err is not a refusal.
func Why(err error) string {
	var nr *NotRegularError
	var tl *TooLargeError
	switch {
	case errors.As(err, &nr):
		return "it is " + nr.Kind + ", not a regular file"
	case errors.As(err, &tl):
		return fmt.Sprintf("it is larger than %d bytes", tl.Limit)
	}
	return ""
}
