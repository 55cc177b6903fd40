//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/prime-agent/prime/session"
)

// TestPrintModeDiskFull: the session directory is a small tmpfs that a
// tool's output fills. Print mode exits 1, says which tool call ran without
// its result being kept, prints no answer; JSON mode's last line says why;
// the file is whole.
func TestPrintModeDiskFull(t *testing.T) {
	for _, mode := range []string{"text", "json"} {
		t.Run(mode, func(t *testing.T) {
			s := newRPCSetup(t, nil)
			sessions := filepath.Join(s.agentDir, "sessions")
			if err := os.MkdirAll(sessions, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mount("tmpfs", sessions, "tmpfs", 0, "size=24k,mode=0700"); err != nil {
				t.Skipf("cannot mount a tmpfs (%v): needs root", err)
			}
			t.Cleanup(func() { syscall.Unmount(sessions, syscall.MNT_DETACH) })
			s.script(bashCall("c1", "head -c 40000 /dev/zero | tr '\\0' x"), textReply("The answer nobody keeps."))
			out, errOut, code := s.run(t, "", "--no-context-files", "--mode", mode, "-p", "fill it")
			if code != exitFailed {
				t.Fatalf("exit %d, want %d\nstdout %q\nstderr %s", code, exitFailed, out, errOut)
			}
			if !strings.Contains(errOut, "the tool call bash (c1) ran, but its result could not be written to the session file") ||
				!strings.Contains(errOut, "no space left on device") {
				t.Errorf("stderr does not say which tool call lost its result:\n%s", errOut)
			}
			if strings.Contains(out, "The answer nobody keeps.") {
				t.Errorf("an answer not in the session was printed: %q", out)
			}
			if mode == "json" {
				last := lastJSONLine(t, out)
				lost, _ := last["lostToolResults"].([]any)
				if last["type"] != "session_write_failed" || !strings.Contains(last["error"].(string), "no space left on device") || len(lost) != 1 {
					t.Errorf("last line %v", last)
				}
			}
			f, err := session.Load(s.sessionFile(t))
			if err != nil || len(f.Warnings()) > 0 {
				t.Fatalf("the session file after ENOSPC: %v %v", err, f.Warnings())
			}
		})
	}
}

// TestPrintModeReadOnlySessions: a new session on a read-only filesystem
// cannot be created; print mode exits 1 and says why.
func TestPrintModeReadOnlySessions(t *testing.T) {
	s := newRPCSetup(t, nil)
	sessions := filepath.Join(s.agentDir, "sessions")
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount(sessions, sessions, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind-mount (%v): needs root", err)
	}
	t.Cleanup(func() { syscall.Unmount(sessions, syscall.MNT_DETACH) })
	if err := syscall.Mount("", sessions, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount read-only: %v", err)
	}
	s.script(textReply("hello"))
	out, errOut, code := s.run(t, "", "--no-context-files", "--mode", "json", "-p", "hi")
	if code != exitFailed || !strings.Contains(errOut, "read-only file system") {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	if last := lastJSONLine(t, out); last["type"] != "session_write_failed" || !strings.Contains(last["error"].(string), "read-only file system") {
		t.Errorf("last line %v", last)
	}
}
