package agent

import (
	"github.com/prime-agent/prime/permission"
)

// PermissionsView is what the permissions are now, for /permissions.
type PermissionsView struct {
	// Mode is the mode in force; Modes all of them, loosest first.
	Mode  string
	Modes []string
	// Checked: the tools' calls go through the mode (false when the
	// front end runs them unchecked, as tests do).
	Checked bool
	// Sandboxed: this system confines commands; NoSandbox says why not
	// (both unset in full mode).
	Sandboxed bool
	NoSandbox string
	// Allow, Deny and AllowUnconfined are the rules in force, with the
	// ones "always" answers added in this session.
	Allow, Deny, AllowUnconfined []string
	// IgnoredAllow are the project's allow rules that do not apply
	// because the project is not trusted.
	IgnoredAllow []string
}

// Permissions returns the permission mode and rules in force.
func (a *Agent) Permissions() PermissionsView {
	v := PermissionsView{Checked: a.cfg.Confinement != nil}
	for _, m := range permission.Modes {
		v.Modes = append(v.Modes, string(m))
	}
	r := a.settings().PermissionRules()
	v.Deny, v.IgnoredAllow = r.Deny, r.IgnoredAllow
	a.approvals.mu.Lock()
	v.Allow = append(append([]string(nil), r.Allow...), a.approvals.allowed...)
	v.AllowUnconfined = append(append([]string(nil), r.AllowUnconfined...), a.approvals.unconfined...)
	mode := a.approvals.mode
	a.approvals.mu.Unlock()
	if mode == "" {
		mode = a.settingsMode()
	}
	v.Mode = string(mode)
	if v.Checked && mode != permission.ModeFull {
		// (In full mode the sandbox is not looked for until it is used.)
		c := a.confinement()
		v.Sandboxed, v.NoSandbox = c.Sandbox != nil, c.NoSandbox
	}
	return v
}

// SetPermissionMode changes the permission mode for the rest of the
// session (the settings files are not changed); the next tool call uses
// it.
func (a *Agent) SetPermissionMode(mode string) error {
	m, err := permission.ParseMode(mode)
	if err != nil {
		return err
	}
	a.approvals.mu.Lock()
	a.approvals.mode = m
	a.approvals.mu.Unlock()
	return nil
}
