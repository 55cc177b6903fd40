//go:build unix

package proctest

import (
	"os"
	"os/exec"
	"testing"
)

func TestGone(t *testing.T) {
	if Gone(os.Getpid()) {
		t.Error("this process is gone")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	pid := cmd.Process.Pid
	if Gone(pid) {
		t.Fatal("a running child is gone")
	}
	cmd.Process.Kill()
	// Not reaped yet: a zombie, which has exited.
	WaitGone(t, pid)
	cmd.Wait()
	if !Gone(pid) {
		t.Error("a reaped child is not gone")
	}
}
