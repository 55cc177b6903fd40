//go:build unix

package tool

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// Procs owns what the commands of one session leave on the machine: the
// processes they start, including those that leave the command's process
// group (setsid, nohup, a daemon's double fork), and the directory their
// full output is written to. Close kills every process still running and
// removes the directory.
//
// Processes are tracked by a cgroup of the session's (cgroup v2, a child
// of Prime's own cgroup, one more per command) where the system lets Prime
// make one; elsewhere by a variable in every command's environment
// (PRIME_TOOL_PROCS), which /proc shows for each process that kept it.
// On Linux every command runs under a small supervisor (a /bin/sh script)
// with a parent-death signal, which kills the command's process group and
// cgroup when Prime dies, kill -9 included. As a backstop, a session's
// first command sweeps the output directories and cgroups of sessions
// whose Prime is gone.
type Procs struct {
	// Dir is the directory for the full output of commands (mode 0700).
	Dir string
	// cgroup is the session's cgroup directory, "" when there is none.
	cgroup string
	// env is the env program the supervisor runs commands with, "" when
	// there is no supervisor (see procs_linux.go).
	env    string
	tag    string
	parent string // the directory Dir is in
	once   sync.Once
	calls  atomic.Int64
	mu     sync.Mutex
	closed bool
}

// procsEnv names the environment variable that marks a session's processes.
const procsEnv = "PRIME_TOOL_PROCS"

// NewProcs makes the resources of a new session under tempDir (empty:
// os.TempDir()). Before its first command runs, the output directories
// and cgroups of sessions whose process no longer runs are removed.
func NewProcs(tempDir string) (*Procs, error) {
	if tempDir == "" {
		tempDir = os.TempDir()
	}
	prefix := fmt.Sprintf("prime-%d-", os.Getpid())
	dir, err := os.MkdirTemp(tempDir, prefix)
	if err != nil {
		return nil, fmt.Errorf("cannot make a directory for the commands' output: %w", err)
	}
	return &Procs{Dir: dir, parent: tempDir, tag: filepath.Base(dir)}, nil
}

// ready sets the session up for its first command (a session that runs
// none pays nothing): the sweep of what dead sessions left, the session's
// cgroup, the supervisor.
func (p *Procs) ready() {
	p.once.Do(func() {
		sweepOutputDirs(p.parent)
		sessionSetup(p)
	})
}

// Close kills the processes the session's commands left running and
// removes the output directory, unless keep is set (the user keeps the
// files the results name). It may be called more than once.
func (p *Procs) Close(keep bool) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	p.once.Do(func() {}) // no setup from now on
	switch {
	case p.calls.Load() == 0:
	case p.cgroup != "":
		killCgroup(p.cgroup)
		removeCgroup(p.cgroup)
	default:
		killTagged(procsEnv+"="+p.tag+"/", true)
	}
	if keep {
		return nil
	}
	return os.RemoveAll(p.Dir)
}

// sweepOutputDirs removes the directories prime-PID-* in dir that belong
// to this user and whose process no longer runs.
func sweepOutputDirs(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, ok := sessionPID(e.Name())
		if !ok || !e.IsDir() || pid == os.Getpid() || processRuns(pid) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if fi, err := os.Lstat(path); err != nil || !ownedByMe(fi) {
			continue
		}
		_ = os.RemoveAll(path)
	}
}

// sessionPID reads the process id out of a name prime-PID-RANDOM.
func sessionPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "prime-")
	if !ok {
		return 0, false
	}
	num, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(num)
	return pid, err == nil && pid > 0
}

// processRuns reports whether process pid exists.
func processRuns(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

// ownedByMe reports whether the file belongs to this process's user.
func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
