package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/permission"
	"github.com/prime-agent/prime/settings"
	"github.com/prime-agent/prime/tool"
)

// permissionOverride applies --permission-mode and --yolo to the
// settings (permissions.mode).
func permissionOverride(st *settings.Settings, f *chatFlags) (*settings.Settings, error) {
	mode := f.permissionMode
	if f.yolo {
		if mode != "" && mode != "full" {
			return nil, usageErrorf("--yolo is --permission-mode full; it cannot go with --permission-mode %s", mode)
		}
		mode = "full"
	}
	if mode == "" {
		return st, nil
	}
	st, err := st.WithOverride("permissions.mode", mode)
	if err != nil {
		return nil, usageErrorf("--permission-mode: %v", err)
	}
	return st, nil
}

// approvalsFor says who answers what the permission mode asks: --yes
// approves; the terminal UI's dialog and the RPC client (pi's extension UI
// select) ask the user; print and JSON modes cannot ask, so what would ask
// is denied with a result that says why.
func approvalsFor(f *chatFlags) agent.Approvals {
	switch {
	case f.yes:
		return agent.ApprovalsApprove
	case f.mode == "rpc" || f.interactive:
		return agent.ApprovalsAsk
	}
	return agent.ApprovalsNone
}

// toolConfinement returns what the permission modes confine tools with,
// made on first need (at once unless the mode is full): the sandbox of
// sandbox mode (Landlock, namespaces), the read-only sandbox, and where
// write and edit may change files. Where the kernel cannot confine
// commands, it says so once; sandbox mode then asks before each command.
func (a *app) toolConfinement(st *settings.Settings, cwd string, procs *tool.Procs) func() agent.Confinement {
	build := sync.OnceValue(func() agent.Confinement {
		p := st.Permissions()
		home, _ := os.UserHomeDir()
		write := append(append([]string{cwd, procs.Dir}, permission.DefaultWrite()...), permission.ExpandPaths(p.AllowWrite, home, cwd)...)
		deny := append(permission.DefaultDenyRead(home, st.AgentDir()), permission.ExpandPaths(p.DenyRead, home, cwd)...)
		// What runs later outside the sandbox (git's hooks and config, the
		// project's Prime settings and hooks) is not for write and edit to
		// change unasked; commands see it read-only (a mount namespace:
		// Landlock cannot take a directory out of a writable one).
		c := agent.Confinement{Scope: &permission.Scope{Write: write, Deny: append(slices.Clone(deny), filepath.Join(cwd, ".git"), filepath.Join(cwd, ".prime"))},
			DenyRead: deny}
		exe, err := os.Executable()
		if err != nil {
			c.NoSandbox = fmt.Sprintf("the sandbox cannot start: %v", err)
		} else {
			sb := &permission.Sandbox{Exe: exe, Write: write, DenyRead: deny, Network: p.Network, Project: cwd}
			if err := sb.Probe(); err != nil {
				c.NoSandbox = err.Error()
			} else {
				c.Sandbox = sb
				c.ReadOnly = &permission.Sandbox{Exe: exe, Write: []string{procs.Dir, "/dev/null", "/dev/zero", "/dev/full"}, DenyRead: deny, ReadOnly: true}
			}
		}
		if c.NoSandbox != "" && p.Mode != "full" {
			fmt.Fprintf(a.stderr, "prime: warning: this system cannot confine commands (%s); in %s mode each bash command asks first "+
				"(where no one can answer, as in print mode, it is denied: --yes approves, --permission-mode full runs unasked)\n", c.NoSandbox, p.Mode)
		}
		return c
	})
	if st.Permissions().Mode != "full" {
		build()
	}
	return build
}
