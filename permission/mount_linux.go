package permission

import (
	"cmp"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"
)

// protectMounts, in the command's own mount namespace, mounts each of pin
// on itself (a mount point cannot be renamed or removed, so the directory
// stays where Prime and git look for it) and then each of readOnly on
// itself read-only, without set-user-ID programs or devices. It then
// enters the working directory again, so that the command's relative
// paths lead through the new mounts. Nothing propagates to the mounts
// outside: the namespace's mounts are made slaves first.
func protectMounts(pin, readOnly []string) error {
	if len(pin)+len(readOnly) == 0 {
		return nil
	}
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return fmt.Errorf("cannot make the sandbox's mounts its own: %w", err)
	}
	// Outer directories first, so that the mounts inside them land on
	// top.
	pin = slices.SortedFunc(slices.Values(pin), func(a, b string) int { return cmp.Compare(len(a), len(b)) })
	for _, p := range pin {
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("cannot keep %s in place: %w", p, err)
		}
	}
	for _, p := range readOnly {
		if err := bindReadOnly(p); err != nil {
			return fmt.Errorf("cannot make %s read-only: %w", p, err)
		}
	}
	wd, err := unix.Getwd()
	if err != nil {
		return fmt.Errorf("cannot find the working directory: %w", err)
	}
	if err := unix.Chdir(wd); err != nil {
		return fmt.Errorf("cannot enter the working directory again: %w", err)
	}
	return nil
}

// bindReadOnly mounts p on itself read-only. The flags the kernel locks
// on the mount beneath (noexec, and nosuid and nodev already asked for)
// are kept, or it refuses the remount.
func bindReadOnly(p string) error {
	if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV)
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err == nil && st.Flags&unix.ST_NOEXEC != 0 {
		flags |= unix.MS_NOEXEC
	}
	return unix.Mount("none", p, "", flags, "")
}
