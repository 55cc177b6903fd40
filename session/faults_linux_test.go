//go:build linux

package session_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/prime-agent/prime/session"
)

// smallTmpfs mounts a tmpfs of size bytes on a fresh directory, or skips
// the test when it cannot (not root, no mount namespace).
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): the full-disk test needs root", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// TestFullDisk appends to a session on a real, small tmpfs until the
// kernel says ENOSPC: the failed append leaves no torn line, everything
// acknowledged is in the file, and once there is room again the session
// appends on.
func TestFullDisk(t *testing.T) {
	dir := smallTmpfs(t, "64k")
	path := filepath.Join(dir, "s.jsonl")
	s, err := session.Create(path, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ballast := filepath.Join(dir, "ballast")
	if err := os.WriteFile(ballast, make([]byte, 16<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	var acked []string
	out := strings.Repeat("a line of tool output\n", 300) // ~6.6 KB a result
	for i := 0; ; i++ {
		var m = faultResult("c", out)
		if i == 0 {
			m = faultUser("fill the disk")
		}
		e, err := s.Append(&session.MessageEntry{Message: m})
		if err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("append %d: %v, want ENOSPC", i, err)
			}
			break
		}
		acked = append(acked, e.ID)
		if i > 100 {
			t.Fatal("the 64 KB tmpfs never filled up")
		}
	}
	checkFile(t, path, acked, "after ENOSPC")
	os.Remove(ballast)
	e, err := s.Append(&session.MessageEntry{Message: faultReply("room again")})
	if err != nil {
		t.Fatalf("append after freeing space: %v", err)
	}
	checkFile(t, path, append(acked, e.ID), "after freeing space")
}

// TestReadOnlyFilesystem: a new session on a read-only bind mount cannot
// be created; the append says so and leaves nothing behind.
func TestReadOnlyFilesystem(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind-mount (%v): the read-only test needs root", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	if err := syscall.Mount("", dir, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount read-only: %v", err)
	}
	path := filepath.Join(dir, "s.jsonl")
	s, err := session.Create(path, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(&session.MessageEntry{Message: faultUser("hi")}); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("append on a read-only filesystem: %v, want EROFS", err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was left behind: %v", err)
	}
}
