package permission

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSandboxUnixSocket records a known gap: a Unix-domain socket file
// outside the sandbox can still be connected to (Landlock up to version 7
// does not check connect on socket files), so a server listening on one
// (Docker, tmux, an SSH agent) acts for the command with the user's rights.
// The README says so; the test fails if such a kernel closes the gap, so
// that the README is updated.
func TestSandboxUnixSocket(t *testing.T) {
	f := newSandboxFixture(t, false)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	sock := filepath.Join(f.outside, "server.sock")
	serve(t, "unix", sock, "hello over unix\n")
	out, err := f.run(t, `python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.connect('`+sock+`'); print(s.recv(100).decode(), end='')"`)
	t.Logf("connect to %s from the sandbox: %v, %q", sock, err, out)
	if abi, _ := landlockABI(); abi <= 7 && (err != nil || out != "hello over unix\n") {
		t.Errorf("the README says a Unix socket outside is reachable, but: %v, %q", err, out)
	}
}
