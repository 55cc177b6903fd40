package permission

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"

	"github.com/go-json-experiment/json"
	"golang.org/x/sys/unix"
)

// Wrap makes cmd, a shell's "-c command" not started yet, run confined:
// the trampoline runs in its place and execs the shell once confined. The
// arguments stay as they were, so that whatever wraps the command next
// (the tool's supervisor) sees the same shell -c command. Call [Isolate]
// on cmd.SysProcAttr once it is final.
func (s *Sandbox) Wrap(cmd *exec.Cmd) error {
	if s.Exe == "" {
		return errors.New("the sandbox has no trampoline program")
	}
	b, err := json.Marshal(s.config(cmd.Path))
	if err != nil {
		return fmt.Errorf("cannot describe the sandbox: %w", err)
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, sandboxEnv+"="+string(b))
	cmd.Path = s.Exe
	return nil
}

// config is what the trampoline is told to run shell with.
func (s *Sandbox) config(shell string) sandboxConfig {
	cfg := sandboxConfig{Shell: shell, Write: s.Write, DenyRead: s.DenyRead, Network: s.Network}
	if s.Project != "" {
		p := ProjectProtected(s.Project)
		cfg.ReadOnly, cfg.Pin = p.ReadOnly, p.Pin
	}
	return cfg
}

// Isolate adds to the attributes of the process Prime starts for a
// confined command (the supervisor, or the trampoline itself) a user
// namespace with the network namespace that takes the network away
// (unless Network is set) and the mount namespace in which the protected
// paths are read-only. The command keeps its user and group ids; the
// capabilities to bring the namespace's loopback up and to mount are
// passed to the trampoline only, which drops them before the shell runs.
func (s *Sandbox) Isolate(attr *syscall.SysProcAttr) {
	mounts := s.Project != ""
	if s.Network && !mounts {
		return
	}
	attr.Cloneflags |= syscall.CLONE_NEWUSER
	var caps []uintptr
	if !s.Network {
		attr.Cloneflags |= syscall.CLONE_NEWNET
		caps = append(caps, unix.CAP_NET_ADMIN)
	}
	if mounts {
		attr.Cloneflags |= syscall.CLONE_NEWNS
		caps = append(caps, unix.CAP_SYS_ADMIN)
	}
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	attr.GidMappingsEnableSetgroups = false
	attr.AmbientCaps = caps
}

// Probe checks that this kernel can confine commands as s asks (Landlock,
// user and network namespaces) by running the trampoline once; the error
// says what is missing.
func (s *Sandbox) Probe() error {
	abi, err := landlockABI()
	if err != nil {
		return fmt.Errorf("this kernel offers no Landlock (%w)", err)
	}
	if abi < 1 {
		return errors.New("this kernel offers no Landlock")
	}
	probe := s.config("/bin/true")
	probe.Probe = true
	cfg, _ := json.Marshal(probe)
	cmd := exec.Command(s.Exe)
	cmd.Env = append(os.Environ(), sandboxEnv+"="+string(cfg))
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	s.Isolate(cmd.SysProcAttr)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if len(out) > 0 {
			return fmt.Errorf("%s", trimNL(string(out)))
		}
		if !s.Network || s.Project != "" {
			return fmt.Errorf("cannot make the sandbox's user, network and mount namespaces (%w)", err)
		}
		return fmt.Errorf("the sandbox's trampoline failed (%w)", err)
	}
	return nil
}

func trimNL(s string) string {
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	return s
}

// Trampoline confines this process and execs the shell, when Prime started
// it for a confined command (the variable PRIME_SANDBOX is set); otherwise
// it returns at once. Prime's main calls it before anything else. It does
// not return when it acts: it execs the shell, or exits 126 with a message
// on standard error.
func Trampoline() {
	raw, ok := os.LookupEnv(sandboxEnv)
	if !ok {
		return
	}
	os.Unsetenv(sandboxEnv)
	var cfg sandboxConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		trampolineFail(fmt.Errorf("unreadable configuration: %w", err))
	}
	runtime.LockOSThread() // the confinement is this thread's, and it execs
	if err := confine(cfg); err != nil {
		trampolineFail(err)
	}
	if cfg.Probe {
		os.Exit(0)
	}
	args := slices.Clone(os.Args)
	args[0] = filepath.Base(cfg.Shell)
	if err := syscall.Exec(cfg.Shell, args, os.Environ()); err != nil {
		trampolineFail(fmt.Errorf("cannot run %s: %w", cfg.Shell, err))
	}
}

func trampolineFail(err error) {
	fmt.Fprintf(os.Stderr, "prime sandbox: %v\n", err)
	os.Exit(126)
}

// confine applies the configuration to the calling thread: loopback up in
// the new network namespace, the protected paths mounted read-only, the
// capabilities dropped, no new privileges,
// no core dumps, the Landlock rules.
func confine(cfg sandboxConfig) error {
	if !cfg.Network {
		if err := loopbackUp(); err != nil {
			return fmt.Errorf("cannot bring up the loopback interface: %w", err)
		}
	}
	if err := protectMounts(cfg.Pin, cfg.ReadOnly); err != nil {
		return err
	}
	if err := dropCapabilities(); err != nil {
		return fmt.Errorf("cannot drop capabilities: %w", err)
	}
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("cannot set no_new_privs: %w", err)
	}
	return restrict(cfg.Write, cfg.DenyRead)
}

// Secure bits that keep root from regaining capabilities when it execs.
const (
	secbitNoRoot                  = 1 << 0
	secbitNoRootLocked            = 1 << 1
	secbitNoCapAmbientRaise       = 1 << 6
	secbitNoCapAmbientRaiseLocked = 1 << 7
)

// dropCapabilities leaves the calling thread, and the shell it execs, no
// capabilities: none in effect, permitted, inheritable or ambient, and for
// root (inside the namespace or, with the network allowed, outside) an
// empty bounding set and the secure bits that stop an exec from giving
// them back. Root keeps its uid, which Landlock bounds, but cannot chmod,
// chown or load modules past it.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return err
	}
	if os.Geteuid() == 0 {
		bits := secbitNoRoot | secbitNoRootLocked | secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLocked
		if err := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(bits), 0, 0, 0); err != nil {
			return fmt.Errorf("secure bits: %w", err)
		}
		for c := 0; c <= unix.CAP_LAST_CAP; c++ {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
				return fmt.Errorf("bounding set: %w", err)
			}
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	return unix.Capset(&hdr, &none[0])
}

// loopbackUp brings up lo, which a new network namespace has down.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP | unix.IFF_RUNNING)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}
