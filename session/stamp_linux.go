//go:build linux

package session

import (
	"os"
	"syscall"
)

// stampOf returns what identifies a file's state: its device and inode, and
// its size, modification and change times. ok is false when the system
// does not say.
func stampOf(fi os.FileInfo) (fileStamp, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStamp{}, false
	}
	return fileStamp{
		dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(),
	}, true
}
