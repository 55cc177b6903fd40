//go:build unix

package safepath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

func check(path string, uid int) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	paths := []string{abs}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		paths = append(paths, real)
	}
	for _, p := range paths {
		if err := checkChain(p, uid); err != nil {
			return err
		}
	}
	return nil
}

// checkChain checks p and each directory above it, lexically (a symbolic
// link on the way is checked as the link's own directory entry; check
// follows the whole path separately).
func checkChain(p string, uid int) error {
	for {
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return err
		default:
			if err := checkOne(p, fi, uid); err != nil {
				return err
			}
		}
		parent := filepath.Dir(p)
		if parent == p {
			return nil
		}
		p = parent
	}
}

func checkOne(p string, fi fs.FileInfo, uid int) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		// A link's own mode means nothing; who owns the directory it is
		// in is checked next.
		return nil
	}
	owner := int(st.Uid)
	if owner != uid && owner != 0 {
		return &UnsafeError{Path: p, Why: fmt.Sprintf("is owned by %s, not by you", userName(owner))}
	}
	perm := fi.Mode().Perm()
	sticky := fi.IsDir() && fi.Mode()&fs.ModeSticky != 0
	if sticky {
		return nil
	}
	if perm&0o002 != 0 {
		return &UnsafeError{Path: p, Why: fmt.Sprintf("is writable by every user (mode %04o)", perm)}
	}
	if perm&0o020 != 0 && !privateGroup(owner, int(st.Gid)) {
		return &UnsafeError{Path: p, Why: fmt.Sprintf("is writable by the group %s (mode %04o)", groupName(int(st.Gid)), perm)}
	}
	return nil
}

// privateGroup reports whether gid is the user's own group: their primary
// group, named as they are.
func privateGroup(uid, gid int) bool {
	u, err := user.LookupId(strconv.Itoa(uid))
	if err != nil || u.Gid != strconv.Itoa(gid) {
		return false
	}
	g, err := user.LookupGroupId(u.Gid)
	return err == nil && g.Name == u.Username
}

func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return fmt.Sprintf("user %s (%d)", u.Username, uid)
	}
	return fmt.Sprintf("user %d", uid)
}

func groupName(gid int) string {
	if g, err := user.LookupGroupId(strconv.Itoa(gid)); err == nil {
		return fmt.Sprintf("%s (%d)", g.Name, gid)
	}
	return strconv.Itoa(gid)
}
