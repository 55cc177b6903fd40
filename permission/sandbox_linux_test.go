package permission

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestMain makes the test binary the trampoline, as Prime's main is.
func TestMain(m *testing.M) {
	Trampoline()
	os.Exit(m.Run())
}

// sandboxFixture is a project, a home with credentials, and a directory
// outside both.
type sandboxFixture struct {
	project, home, outside, key string
	sb                          *Sandbox
}

func newSandboxFixture(t *testing.T, network bool) *sandboxFixture {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	f := &sandboxFixture{project: filepath.Join(root, "project"), home: filepath.Join(root, "home"), outside: filepath.Join(root, "outside")}
	f.key = filepath.Join(f.home, ".ssh", "id_ed25519")
	for _, d := range []string{f.project, filepath.Join(f.home, ".ssh"), f.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, text := range map[string]string{f.key: "PRIVATE KEY\n", filepath.Join(f.home, "notes.txt"): "notes\n",
		filepath.Join(f.outside, "data.txt"): "outside\n"} {
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The test's temporary directories are under /tmp, so the sandbox is
	// given only the project and the devices to write in.
	f.sb = &Sandbox{Exe: exe, Write: []string{f.project, "/dev/null"}, DenyRead: DefaultDenyRead(f.home, ""), Network: network}
	if err := f.sb.Probe(); err != nil {
		t.Skipf("no sandbox on this kernel, so nothing to test: %v", err)
	}
	return f
}

// run runs a script with sh, confined, in the project.
func (f *sandboxFixture) run(t *testing.T, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = f.project
	if err := f.sb.Wrap(cmd); err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	f.sb.Isolate(cmd.SysProcAttr)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// capsHeld counts the capability sets of the shell that are not empty:
// those it holds, and for root also the bounding set (an ordinary user
// keeps it full, which grants nothing without setuid programs, and
// no_new_privs stops those).
func capsHeld() string {
	sets := "Inh|Prm|Eff|Amb"
	if os.Geteuid() == 0 {
		sets += "|Bnd"
	}
	return "grep -E '^Cap(" + sets + ")' /proc/self/status | grep -vc '0000000000000000$'"
}

// serve listens on address outside the sandbox until the test ends,
// writing text to each connection, and returns where it listens.
func serve(t *testing.T, network, address, text string) net.Addr {
	t.Helper()
	ln, err := net.Listen(network, address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(text))
			c.Close()
		}
	}()
	return ln.Addr()
}

// reenter is a script that runs the trampoline (this test binary) again
// from inside the sandbox, with a configuration of its choosing, to write
// file: Landlock rules only add up and the namespace stays, so it fails
// (the trampoline refuses, or the write is denied); the script succeeds
// when the file was not written.
func reenter(config, file string) string {
	exe, _ := os.Executable()
	return fmt.Sprintf("PRIME_SANDBOX='%s' %s -c 'echo x > %s' 2>&1; test ! -e %s", config, exe, file, file)
}

func TestSandboxConfines(t *testing.T) {
	f := newSandboxFixture(t, false)
	port := serve(t, "tcp", "127.0.0.1:0", "hello from outside\n").(*net.TCPAddr).Port
	outsideFile := filepath.Join(f.outside, "new.txt")
	tests := []struct {
		name, script string
		ok           bool
		want         string // in the output
	}{
		{"write in the project", "echo hi > made.txt && mkdir -p sub/dir && mv made.txt sub/dir/ && cat sub/dir/made.txt", true, "hi"},
		{"run a program, a pipeline", "ls / | grep -c . >/dev/null && uname -s", true, "Linux"},
		{"the project's tests", "printf 'import unittest\\nclass T(unittest.TestCase):\\n    def test_ok(self): self.assertEqual(1 + 1, 2)\\n' > test_x.py && python3 -m unittest -q test_x 2>&1", true, "OK"},
		{"git in the project", "git init -q . && echo a > a && git add a && git -c user.name=t -c user.email=t@t commit -qm one && git log --oneline | wc -l", true, "1"},
		{"read elsewhere", "cat " + filepath.Join(f.outside, "data.txt") + " " + filepath.Join(f.home, "notes.txt"), true, "outside\nnotes"},
		{"write outside the project", "echo x > " + outsideFile, false, "Permission denied"},
		{"write in home", "echo x >> " + filepath.Join(f.home, "notes.txt"), false, "Permission denied"},
		{"remove outside", "rm " + filepath.Join(f.outside, "data.txt"), false, "Permission denied"},
		{"read a denied key", "cat " + f.key, false, "Permission denied"},
		{"list is allowed, content is not", "ls " + filepath.Dir(f.key) + " && cat " + filepath.Dir(f.key) + "/*", false, "Permission denied"},
		{"through a symlink in the project", "ln -s " + f.outside + " out && echo x > out/via-link.txt", false, "Permission denied"},
		{"through a symlink to the key", "ln -s " + f.key + " k && cat k", false, "Permission denied"},
		{"a hard link of an outside file", "ln " + filepath.Join(f.outside, "data.txt") + " hard", false, "ln:"},
		{"connect to a loopback server outside", fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && cat <&3", port), false, "Connection refused"},
		{"loopback inside works", "python3 -c \"import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); socket.create_connection(s.getsockname()); print('loopback ok')\"", true, "loopback ok"},
		{"Prime's environment through /proc", fmt.Sprintf("cat /proc/%d/environ", os.Getpid()), false, "Permission denied"},
		{"a forked, setsid child", "setsid sh -c 'echo x > " + outsideFile + "' ; sleep 0.1; test ! -e " + outsideFile, true, "Permission denied"},
		{"a new user and mount namespace", "unshare -rm sh -c 'mount -t tmpfs none " + f.outside + " && echo mounted'", false, ""},
		{"write through /proc/self/root", "echo x > /proc/self/root" + outsideFile, false, "Permission denied"},
		{"write through Prime's /proc/PID/cwd", fmt.Sprintf("echo x > /proc/%d/cwd/escaped.txt", os.Getpid()), false, "Permission denied"},
		{"move the project away", "cd .. && mv project moved", false, "Permission denied"},
		{"chmod outside (not a Landlock right)", "chmod 0604 " + filepath.Join(f.outside, "data.txt") + " && stat -c %a " + filepath.Join(f.outside, "data.txt"), true, "604"},
		{"signal Prime", fmt.Sprintf("kill -0 %d", os.Getpid()), false, ""},
		{"the trampoline again, with a config that allows all", reenter(`{"shell":"/bin/sh","write":["/"],"network":true}`, outsideFile), true, ""},
		{"the trampoline again, with the network", reenter(`{"shell":"/bin/sh","write":["/"]}`, outsideFile), true, ""},
		{"no capabilities", capsHeld(), false, "0"},
		{"no new privileges", "grep NoNewPrivs /proc/self/status", true, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := tt.script
			if strings.Contains(script, "/dev/tcp") {
				script = "exec bash -c '" + strings.ReplaceAll(script, "'", `'\''`) + "'"
			}
			if abi, _ := landlockABI(); strings.HasPrefix(script, "kill") && abi < 6 {
				t.Skipf("Landlock %d does not scope signals (6 does)", abi)
			}
			for _, bin := range []string{"python3", "git"} {
				if strings.Contains(script, bin+" ") {
					if _, err := exec.LookPath(bin); err != nil {
						t.Skip(bin + " is not installed")
					}
				}
			}
			out, err := f.run(t, script)
			t.Logf("%s: %v\n%s", tt.script, err, out) // the escape attempts, for the record
			if (err == nil) != tt.ok || !strings.Contains(out, tt.want) {
				t.Errorf("%s: err %v, output:\n%s\nwant ok=%v and %q", tt.script, err, out, tt.ok, tt.want)
			}
		})
	}
	if _, err := os.Stat(outsideFile); err == nil {
		t.Errorf("%s was written from the sandbox", outsideFile)
	}
	if b, _ := os.ReadFile(filepath.Join(f.outside, "data.txt")); string(b) != "outside\n" {
		t.Errorf("data.txt outside: %q", b)
	}
}

// TestSandboxNetworkAllowed: with the network allowed, the loopback server
// outside answers, and the file rules still hold.
func TestSandboxNetworkAllowed(t *testing.T) {
	f := newSandboxFixture(t, true)
	addr := serve(t, "tcp", "127.0.0.1:0", "hello from outside\n")
	out, err := f.run(t, fmt.Sprintf("exec bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d && cat <&3'", addr.(*net.TCPAddr).Port))
	if err != nil || out != "hello from outside\n" {
		t.Errorf("connect: %v, %q", err, out)
	}
	if out, err := f.run(t, "cat "+f.key); err == nil {
		t.Errorf("read the key with the network allowed: %q", out)
	}
	// Without a user namespace root would keep its real capabilities.
	if out, _ := f.run(t, capsHeld()); out != "0\n" {
		t.Errorf("capabilities with the network allowed: %q lines not empty", out)
	}
}

func TestSandboxExplain(t *testing.T) {
	sb := &Sandbox{}
	if n := sb.Explain("sh: 1: cannot create /etc/x: Permission denied\n"); !strings.Contains(n, "sandbox") {
		t.Errorf("no note for a denied path: %q", n)
	}
	if n := sb.Explain("curl: (6) Could not resolve host: example.com"); !strings.Contains(n, "network") {
		t.Errorf("no note for no network: %q", n)
	}
	if n := sb.Explain("FAIL: expected 3, got 4"); n != "" {
		t.Errorf("a note for an ordinary failure: %q", n)
	}
	if n := (&Sandbox{Network: true}).Explain("Connection refused"); n != "" {
		t.Errorf("a network note with the network allowed: %q", n)
	}
}
