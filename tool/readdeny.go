package tool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ReadDeniedError is a file or directory the read tools may not read: it
// is on the sandbox's deny list (see [Env].DenyRead).
type ReadDeniedError struct {
	// Path is the path as the tool was given it; Real is where it leads.
	Path, Real string
}

func (e *ReadDeniedError) Error() string {
	via := ""
	if filepath.Clean(e.Path) != e.Real {
		via = fmt.Sprintf(" (it leads to %s)", e.Real)
	}
	return fmt.Sprintf("%s is on the sandbox's deny list%s (credentials such as ~/.ssh and ~/.aws, the agent's auth.json, "+
		"permissions.denyRead): Prime's permissions do not let the tools read it. Ask the user, who can allow it with a "+
		"Read(...) rule in permissions.allow", e.Path, via)
}

// hidden reports whether real (absolute, links resolved) is a denied path
// or beneath one.
func (e Env) hidden(real string) bool {
	for _, d := range e.DenyRead {
		if real == d || d == "/" || strings.HasPrefix(real, d+"/") {
			return true
		}
	}
	return false
}

// checkOpened refuses f, opened for shown, when the file it opened is a
// denied one: the check made before the call looked at the path, and a
// link may have been made or changed since.
func (e Env) checkOpened(f *os.File, shown string) error {
	if len(e.DenyRead) == 0 {
		return nil
	}
	if real := openedPath(f); e.hidden(real) {
		return &ReadDeniedError{Path: shown, Real: real}
	}
	return nil
}

// openedPath is where an open file is: what the kernel says (Linux's
// /proc/self/fd), else its name with its links resolved.
func openedPath(f *os.File) string {
	if p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd())); err == nil && filepath.IsAbs(p) {
		return p
	}
	return canonical(f.Name())
}

// skipHidden wraps a walk's visit so that it neither sees nor enters the
// denied paths beneath root; walks do not follow links, so an entry's real
// path is root's joined with the entry's.
func (e Env) skipHidden(root string, visit func(walkEntry) (bool, error)) func(walkEntry) (bool, error) {
	if len(e.DenyRead) == 0 {
		return visit
	}
	real := canonical(root)
	return func(w walkEntry) (bool, error) {
		if e.hidden(filepath.Join(real, filepath.FromSlash(w.rel))) {
			return false, nil
		}
		return visit(w)
	}
}
