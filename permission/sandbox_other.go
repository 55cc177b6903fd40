//go:build !linux

package permission

import (
	"errors"
	"os/exec"
	"syscall"
)

var errNoSandbox = errors.New("the sandbox needs Linux (Landlock and namespaces)")

// Wrap fails: there is no sandbox on this system.
func (s *Sandbox) Wrap(*exec.Cmd) error { return errNoSandbox }

// Isolate does nothing on this system.
func (s *Sandbox) Isolate(*syscall.SysProcAttr) {}

// Probe says there is no sandbox on this system.
func (s *Sandbox) Probe() error { return errNoSandbox }

// Trampoline does nothing on this system.
func Trampoline() {}
