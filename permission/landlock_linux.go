package permission

import (
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The Landlock rights the sandbox uses.
const (
	llRead = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	// llFile are the rights that apply to a file (not a directory).
	llFile = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	// llABI1 are the rights of Landlock's first version; later versions
	// add REFER (2), TRUNCATE (3) and IOCTL_DEV (5).
	llABI1 = 1<<13 - 1
)

// landlockABI returns the kernel's Landlock version.
func landlockABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0, errno
	}
	return int(v), nil
}

// handled returns the file-system rights a kernel of Landlock version abi
// can restrict: all of them are, so what no rule grants is denied.
func handled(abi int) uint64 {
	h := uint64(llABI1)
	if abi >= 2 {
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		h |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return h
}

// rule is one Landlock rule: a path and what it grants beneath.
type rule struct {
	path   string
	access uint64
}

// rules are the sandbox's rules: read (and execute) everywhere but the
// denied paths, write in the writable directories but the denied paths.
// Landlock only grants, so a denied path is carved out by granting its
// parent's other entries one by one (the parent itself only its listing).
func rules(write, deny []string, h uint64) []rule {
	deny = realPaths(deny)
	var out []rule
	out = carve(out, "/", llRead, deny)
	for _, w := range realPaths(write) {
		out = carve(out, w, h, deny)
	}
	return out
}

// carve grants access beneath dir except beneath the denied paths.
func carve(out []rule, dir string, access uint64, deny []string) []rule {
	inside := false
	for _, d := range deny {
		if d == dir || within(dir, d) {
			return out // dir itself is denied
		}
		if within(d, dir) {
			inside = true
		}
	}
	if !inside {
		return append(out, rule{dir, access})
	}
	out = append(out, rule{dir, unix.LANDLOCK_ACCESS_FS_READ_DIR & access})
	entries, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, e := range entries {
		if e.Type()&os.ModeSymlink != 0 {
			continue // its target is granted, or not, where it is
		}
		out = carve(out, filepath.Join(dir, e.Name()), access, deny)
	}
	return out
}

// restrict confines the calling thread to the rules.
func restrict(write, deny []string) error {
	abi, err := landlockABI()
	if err != nil {
		return fmt.Errorf("no Landlock in this kernel: %w", err)
	}
	h := handled(abi)
	attr := unix.LandlockRulesetAttr{Access_fs: h}
	size := unsafe.Offsetof(attr.Access_net)
	if abi >= 6 {
		// Nor may commands signal processes outside the sandbox (Prime,
		// the user's other programs) or reach their abstract sockets.
		attr.Scoped = unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
		size = unsafe.Sizeof(attr)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return fmt.Errorf("cannot make a Landlock ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	for _, r := range rules(write, deny, h) {
		if err := addRule(int(fd), r, h); err != nil {
			return err
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("cannot apply the Landlock rules: %w", errno)
	}
	return nil
}

// addRule adds one rule; a path that went away is skipped.
func addRule(ruleset int, r rule, h uint64) error {
	pfd, err := unix.Open(r.path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(pfd)
	access := r.access & h
	var st unix.Stat_t
	if unix.Fstat(pfd, &st) == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= llFile
	}
	if access == 0 {
		return nil
	}
	pb := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(pfd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&pb)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("cannot add the Landlock rule for %s: %w", r.path, errno)
	}
	return nil
}
