package tool

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupRoot returns the cgroup v2 directory this process is in, or "".
func cgroupRoot() string {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	var own string
	found := false
	for line := range strings.SplitSeq(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			own, found = p, true
		}
	}
	if !found {
		return ""
	}
	mount := cgroup2Mount()
	if mount == "" {
		return ""
	}
	return filepath.Join(mount, own)
}

// cgroup2Mount returns where the cgroup v2 hierarchy is mounted, or "".
func cgroup2Mount() string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source super
		fields := strings.Fields(sc.Text())
		for i, f := range fields {
			if f == "-" && i+1 < len(fields) && fields[i+1] == "cgroup2" && len(fields) > 4 {
				return fields[4]
			}
		}
	}
	return ""
}

// sessionSetup is what a new session finds out about the system: its
// cgroup and the env its supervisor uses.
func sessionSetup(p *Procs) {
	p.cgroup = newCgroup(p.tag)
	p.env = findSupervisorEnv()
}

// newCgroup makes the session's cgroup under this process's own, after
// killing and removing those of sessions whose process is gone; "" when no
// cgroup can be made here.
func newCgroup(name string) string {
	root := cgroupRoot()
	if root == "" {
		return ""
	}
	if entries, err := os.ReadDir(root); err == nil {
		for _, e := range entries {
			if pid, ok := sessionPID(e.Name()); ok && e.IsDir() && pid != os.Getpid() && !processRuns(pid) {
				stale := filepath.Join(root, e.Name())
				killCgroup(stale)
				removeCgroup(stale)
			}
		}
	}
	dir := filepath.Join(root, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return ""
	}
	return dir
}

// callProcs tracks the processes of one command.
type callProcs struct {
	cgroup string // the command's cgroup, "" when there is none
	fd     int    // open on cgroup until the command started
	tag    string // the environment entry that marks them
}

// prepare readies cmd to run tracked: its own process group, a
// parent-death signal, the session's mark in its environment and, where
// there is one, a cgroup of its own under the session's.
func (p *Procs) prepare(cmd *exec.Cmd) *callProcs {
	c := &callProcs{fd: -1}
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.SysProcAttr = attr
	if p == nil {
		return c
	}
	p.ready()
	defer p.supervise(cmd, c)
	n := p.calls.Add(1)
	c.tag = fmt.Sprintf("%s=%s/%d", procsEnv, p.tag, n)
	cmd.Env = append(cmd.Env, c.tag)
	if p.cgroup == "" {
		return c
	}
	dir := filepath.Join(p.cgroup, fmt.Sprintf("call-%d", n))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return c
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return c
	}
	c.cgroup, c.fd = dir, fd
	attr.UseCgroupFD, attr.CgroupFD = true, fd
	return c
}

// supervisor is the script of the process that stands between Prime and a
// command's shell: it runs the shell ($1 -c $2) and waits for it, and when
// Prime dies (its parent-death signal, SIGTERM) kills the command's process
// group and its cgroup ($3, when there is one) before it goes, so that
// kill -9 of Prime leaves nothing of the command running. A parent-death
// signal on the shell alone would leave what the shell started.
//
// The shell runs as an asynchronous command, which sh starts with SIGINT
// and SIGQUIT ignored; env --default-signal ($4) gives them back their
// default action, so the command gets the signals it would get run
// directly. Without such an env there is no supervisor.
const supervisor = `trap 'kill -KILL -- -$$ 2>/dev/null; [ -n "$3" ] && echo 1 >"$3" 2>/dev/null; exit 137' TERM
"$4" --default-signal=INT,QUIT "$1" -c "$2" &
wait $!`

// supervisorShell is the shell the supervisor runs in.
const supervisorShell = "/bin/sh"

// findSupervisorEnv returns an env that takes --default-signal, or "".
func findSupervisorEnv() string {
	if _, err := os.Stat(supervisorShell); err != nil {
		return ""
	}
	env, err := exec.LookPath("env")
	if err != nil || exec.Command(env, "--default-signal=INT,QUIT", "true").Run() != nil {
		return ""
	}
	return env
}

// supervise makes cmd run under the supervisor, when the session has one.
func (p *Procs) supervise(cmd *exec.Cmd, c *callProcs) {
	if p.env == "" || len(cmd.Args) != 3 || cmd.Args[1] != "-c" {
		return
	}
	kill := ""
	if c.cgroup != "" {
		kill = filepath.Join(c.cgroup, "cgroup.kill")
	}
	cmd.Args = []string{"sh", "-c", supervisor, "prime-bash", cmd.Path, cmd.Args[2], kill, p.env}
	cmd.Path = supervisorShell
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
}

// start starts cmd, without the cgroup when the system refuses it.
func (c *callProcs) start(cmd *exec.Cmd) error {
	err := cmd.Start()
	if err != nil && c.cgroup != "" {
		c.release()
		_ = os.Remove(c.cgroup)
		c.cgroup = ""
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = false, 0
		cmd.Process, cmd.ProcessState = nil, nil
		err = cmd.Start()
	}
	c.release()
	return err
}

func (c *callProcs) release() {
	if c.fd >= 0 {
		_ = syscall.Close(c.fd)
		c.fd = -1
	}
}

// kill kills the command's processes: its cgroup, else its process group
// led by pid and those that kept its mark.
func (c *callProcs) kill(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	switch {
	case c.cgroup != "":
		killCgroup(c.cgroup)
	case c.tag != "":
		killTagged(c.tag, false)
	}
}

// done removes the command's cgroup once nothing runs in it; processes it
// left running keep it until the session ends.
func (c *callProcs) done() {
	if c.cgroup != "" {
		_ = os.Remove(c.cgroup)
	}
}

// killCgroup kills every process in the cgroup dir and its children, and
// waits a little for them to be gone.
func killCgroup(dir string) {
	if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		// A kernel before 5.14: kill them one by one.
		_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.Name() == "cgroup.procs" {
				killListed(path)
			}
			return nil
		})
	}
	for range 100 {
		if !populated(dir) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// killListed kills the processes a cgroup.procs file lists.
func killListed(path string) {
	data, _ := os.ReadFile(path)
	for f := range strings.FieldsSeq(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// populated reports whether a process runs in the cgroup or below it.
func populated(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
	if err != nil {
		return false
	}
	return bytes.Contains(data, []byte("populated 1"))
}

// removeCgroup removes the cgroup dir and its children, deepest first.
func removeCgroup(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			removeCgroup(filepath.Join(dir, e.Name()))
		}
	}
	_ = os.Remove(dir)
}

// killTagged kills the processes whose environment holds tag, or with
// prefix an entry that starts with it. One pass over /proc can miss a
// process: a child forked after the directory was read, whose parent the
// pass then killed, or one in the middle of an exec, whose environment
// reads empty for a moment. So passes repeat until one finds nothing to
// kill and nothing it could not tell.
func killTagged(tag string, prefix bool) {
	for range 200 {
		killed, unsure := killTaggedPass([]byte(tag), prefix)
		if killed == 0 && unsure == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// killTaggedPass is one pass of killTagged: it returns how many processes
// it killed and how many it could not tell (an empty environment in a
// process that is neither a zombie nor a kernel thread).
func killTaggedPass(want []byte, prefix bool) (killed, unsure int) {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, 0
	}
	self := os.Getpid()
	for _, e := range procs {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		if len(env) == 0 {
			if live(e.Name()) {
				unsure++
			}
			continue
		}
		for v := range bytes.SplitSeq(env, []byte{0}) {
			if bytes.Equal(v, want) || prefix && bytes.HasPrefix(v, want) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				killed++
				break
			}
		}
	}
	return killed, unsure
}

// live reports whether the process named pid in /proc runs user code: it
// is neither dead (a zombie, or dying) nor a kernel thread.
func live(pid string) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return false
	}
	// The fields after the command name, which may hold anything but ends
	// at the last ')': state, ppid, pgrp, session, tty, tpgid, flags.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 7 || f[0] == "Z" || f[0] == "X" || f[0] == "x" {
		return false
	}
	flags, err := strconv.ParseUint(f[6], 10, 64)
	const kernelThread = 0x00200000 // PF_KTHREAD
	return err == nil && flags&kernelThread == 0
}
