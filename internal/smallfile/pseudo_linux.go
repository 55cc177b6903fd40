package smallfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// pseudo names the kernel's own file systems, whose "files" are live
// views of processes and devices (a process's environment, its memory),
// "" for a real file system.
func pseudo(f *os.File) string {
	var st unix.Statfs_t
	if unix.Fstatfs(int(f.Fd()), &st) != nil {
		return ""
	}
	switch st.Type {
	case unix.PROC_SUPER_MAGIC:
		return "a file of /proc"
	case unix.SYSFS_MAGIC:
		return "a file of /sys"
	case unix.DEBUGFS_MAGIC, unix.TRACEFS_MAGIC, unix.SECURITYFS_MAGIC, unix.CGROUP_SUPER_MAGIC, unix.CGROUP2_SUPER_MAGIC:
		return "a kernel file"
	}
	return ""
}
