package permission

import (
	"fmt"
	"os"
	"path/filepath"
)

// Scope is where the write and edit tools may change files in sandbox
// mode: beneath one of Write, not beneath one of Deny. Paths are checked
// after their symbolic links are resolved, so a link in the project does
// not lead out of it.
type Scope struct {
	Write, Deny []string
}

// OutsideError is a write the scope refuses.
type OutsideError struct {
	// Path is the path as the tool was given it; Real is where it leads.
	Path, Real string
	// Denied: Real is beneath one of the scope's denied paths.
	Denied bool
}

func (e *OutsideError) Error() string {
	via := ""
	if filepath.Clean(e.Path) != e.Real {
		via = fmt.Sprintf(" (it leads to %s)", e.Real)
	}
	if e.Denied {
		return fmt.Sprintf("%s is a protected file%s: in sandbox mode it may not be changed", e.Path, via)
	}
	return fmt.Sprintf("%s is outside the project%s: in sandbox mode write and edit change only files in the project "+
		"and the temporary directories; ask the user, who can allow more with permissions.allowWrite or run Prime with --permission-mode full", e.Path, via)
}

// Check returns an [*OutsideError] unless real, an absolute path with its
// symbolic links resolved, is inside the scope; shown is the path as the
// caller was given it.
func (s *Scope) Check(real, shown string) error {
	real = filepath.Clean(real)
	deny := realPaths(s.Deny)
	for _, d := range deny {
		if within(real, d) {
			return &OutsideError{Path: shown, Real: real, Denied: true}
		}
	}
	if d := sameAsDenied(real, deny); d != "" {
		return &OutsideError{Path: shown, Real: d, Denied: true}
	}
	for _, w := range realPaths(s.Write) {
		if within(real, w) {
			return nil
		}
	}
	return &OutsideError{Path: shown, Real: real}
}

// sameAsDenied returns the denied directory that real is beneath under
// another name, "" for none: on a file system that ignores case (macOS,
// Windows) ".GIT/hooks" is .git/hooks although the names differ, and a
// bind mount shows one directory at two paths. Each existing directory on
// the way to real is compared, as a file, with each denied one.
func sameAsDenied(real string, deny []string) string {
	var denied []os.FileInfo
	var names []string
	for _, d := range deny {
		if fi, err := os.Stat(d); err == nil {
			denied, names = append(denied, fi), append(names, d)
		}
	}
	if len(denied) == 0 {
		return ""
	}
	for p := real; ; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil {
			for i, d := range denied {
				if os.SameFile(fi, d) {
					rel, _ := filepath.Rel(p, real)
					return filepath.Join(names[i], rel)
				}
			}
		}
		if filepath.Dir(p) == p {
			return ""
		}
	}
}
