//go:build linux

package session_test

import (
	"os"
	"syscall"
	"time"
)

// changeTime returns a file's change time (ctime).
func changeTime(fi os.FileInfo) time.Time {
	st := fi.Sys().(*syscall.Stat_t)
	return time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
}
