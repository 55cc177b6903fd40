package permission

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Mode is how much the tools may do without asking (permissions.mode).
type Mode string

// The modes, from the loosest to the strictest.
const (
	// ModeFull is pi's behaviour: no checks, nothing confined.
	ModeFull Mode = "full"
	// ModeAsk asks before every bash command, write and edit.
	ModeAsk Mode = "ask"
	// ModeSandbox runs bash confined, write and edit only in the project
	// and temp dirs, and asks for anything beyond.
	ModeSandbox Mode = "sandbox"
	// ModeReadOnly changes no file: no write or edit, bash confined with
	// no place to write.
	ModeReadOnly Mode = "read-only"
)

// Modes lists the modes from the loosest to the strictest.
var Modes = []Mode{ModeFull, ModeAsk, ModeSandbox, ModeReadOnly}

// ParseMode reads a mode's name.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	return "", fmt.Errorf("%q is not a permission mode (the modes are %s)", s, strings.Join(names, ", "))
}

// Confinement is how one call runs: the sandbox of a bash command and the
// scope of a write or edit; nil for either runs it with the user's rights.
type Confinement struct {
	Sandbox *Sandbox
	Scope   *Scope
	// DenyRead are the paths (absolute, links resolved) the read tools
	// do not read, and skip when they walk a tree; nil reads anything
	// the user can.
	DenyRead []string
}

type confinementKey struct{}

// WithConfinement returns a context that tells the tools how the call it
// is given to runs, in place of their own defaults.
func WithConfinement(ctx context.Context, c Confinement) context.Context {
	return context.WithValue(ctx, confinementKey{}, c)
}

// ConfinementOf returns the confinement WithConfinement put in ctx.
func ConfinementOf(ctx context.Context) (Confinement, bool) {
	c, ok := ctx.Value(confinementKey{}).(Confinement)
	return c, ok
}

// Action is what to do with a call.
type Action int

// Actions.
const (
	// Run the call, confined as the decision says.
	Run Action = iota
	// Ask the user first.
	Ask
	// Refuse the call.
	Refuse
)

// Decision is the policy's answer for one call.
type Decision struct {
	Action Action
	// Confine is how the call runs (Run), or how it runs once the user
	// approves (Ask).
	Confine Confinement
	// Reason says why the call asks or is refused, for the user and the
	// model.
	Reason string
	// Always is the rule an "always" answer records, "" when there is
	// none to offer; AlwaysList is the list it goes to ("allow", or
	// "allowUnconfined" for a command re-run outside the sandbox).
	Always, AlwaysList string
	// RetryUnconfined: a confined command that fails because of the
	// sandbox may be re-run unconfined, once the user approves; Always
	// is then the rule for that.
	RetryUnconfined bool
}

// Policy decides, for each tool call, whether it runs, asks or is refused,
// and how it is confined.
type Policy struct {
	Mode  Mode
	Rules Rules
	// Unconfined are the rules of permissions.allowUnconfined: commands
	// that run outside the sandbox in sandbox mode without asking.
	Unconfined []Rule
	// Sandbox confines commands in sandbox mode; nil when this system
	// cannot (NoSandbox says why), and commands then ask.
	Sandbox   *Sandbox
	NoSandbox string
	// ReadOnly confines commands in read-only mode: no place to write.
	ReadOnly *Sandbox
	// Scope is where write and edit change files in sandbox mode.
	Scope *Scope
	// DenyRead are the paths the read tools may not read unasked in every
	// mode but full: the sandbox's deny list (credentials), which binds
	// them as it binds commands.
	DenyRead []string
}

// toolKind sorts the tools by what their calls do.
func toolKind(name string) string {
	switch name {
	case "bash":
		return "command"
	case "write", "edit":
		return "change"
	case "read", "grep", "find", "ls":
		return "read"
	}
	return "other"
}

// Decide returns what to do with a call. The deny rules come first, in
// every mode.
func (p *Policy) Decide(c Call) Decision {
	verdict, rule := p.Rules.Decide(c)
	if verdict == Denied {
		return Decision{Action: Refuse, Reason: fmt.Sprintf("the rule %s in permissions.deny refuses it", rule.Text)}
	}
	allowed := verdict == Allowed
	switch toolKind(c.Tool) {
	case "read":
		return p.decideRead(c, allowed)
	case "change":
		return p.decideChange(c, allowed)
	case "command":
		return p.decideCommand(c, allowed)
	}
	if p.Mode == ModeFull || allowed {
		return Decision{Action: Run}
	}
	// A tool that says it changes nothing is a read: sandbox and read-only
	// mode let it run as they do Prime's read tools; ask mode still asks.
	if c.ReadOnly && (p.Mode == ModeSandbox || p.Mode == ModeReadOnly) {
		return Decision{Action: Run}
	}
	return Decision{Action: Ask, Reason: fmt.Sprintf("%s mode asks before a tool that is not one of Prime's own (%s)", p.Mode, c.Tool),
		Always: c.Tool, AlwaysList: "allow"}
}

func (p *Policy) decideChange(c Call, allowed bool) Decision {
	real := ""
	if len(c.Paths) > 0 {
		real = c.Paths[len(c.Paths)-1]
	}
	always := ""
	if real != "" {
		always = EditRule(real)
	}
	switch p.Mode {
	case ModeFull:
		return Decision{Action: Run}
	case ModeReadOnly:
		return Decision{Action: Refuse, Reason: "read-only mode changes no file"}
	case ModeAsk:
		if allowed {
			return Decision{Action: Run}
		}
		return Decision{Action: Ask, Reason: "ask mode asks before every change to a file", Always: always, AlwaysList: "allow"}
	}
	if p.Scope == nil || real == "" {
		return Decision{Action: Run, Confine: Confinement{Scope: p.Scope}}
	}
	err := p.Scope.Check(real, c.Paths[0])
	if err == nil {
		return Decision{Action: Run, Confine: Confinement{Scope: p.Scope}}
	}
	if allowed {
		return Decision{Action: Run}
	}
	reason := fmt.Sprintf("%s is outside the project and the temporary directories", c.Paths[0])
	if oe, ok := err.(*OutsideError); ok && oe.Denied {
		reason = fmt.Sprintf("%s is a protected file (credentials, or the project's .git or .prime)", c.Paths[0])
	}
	if filepath.Clean(c.Paths[0]) != real {
		reason += fmt.Sprintf(" (it leads to %s)", real)
	}
	return Decision{Action: Ask, Reason: reason, Always: always, AlwaysList: "allow"}
}

func (p *Policy) decideCommand(c Call, allowed bool) Decision {
	always := ""
	if prefix := CommandPrefix(c.Command); prefix != "" {
		always = BashRule(prefix)
	}
	switch p.Mode {
	case ModeFull:
		return Decision{Action: Run}
	case ModeReadOnly:
		if p.ReadOnly != nil {
			return Decision{Action: Run, Confine: Confinement{Sandbox: p.ReadOnly}}
		}
		return Decision{Action: Ask, Reason: "read-only mode, and this system cannot confine commands (" + p.NoSandbox + "), so this command could change files"}
	case ModeAsk:
		if allowed {
			return Decision{Action: Run}
		}
		return Decision{Action: Ask, Reason: "ask mode asks before every command", Always: always, AlwaysList: "allow"}
	}
	unconfined := Rules{Allow: p.Unconfined, Where: p.Rules.Where}
	if v, _ := unconfined.Decide(c); v == Allowed {
		return Decision{Action: Run}
	}
	if p.Sandbox == nil {
		if allowed {
			return Decision{Action: Run}
		}
		return Decision{Action: Ask, Reason: "this system cannot confine commands (" + p.NoSandbox + "), so each command asks",
			Always: always, AlwaysList: "allow"}
	}
	return Decision{Action: Run, Confine: Confinement{Sandbox: p.Sandbox}, RetryUnconfined: true, Always: always, AlwaysList: "allowUnconfined"}
}

// decideRead lets the read tools read, except a denied path: reading one
// asks (a Read(...) allow rule opens it), and a tree is walked without
// the denied paths in it.
func (p *Policy) decideRead(c Call, allowed bool) Decision {
	if p.Mode == ModeFull || len(p.DenyRead) == 0 {
		return Decision{Action: Run}
	}
	// Where they lead, and where they are (a file made later, or a
	// path through a link that is not yet there).
	deny := realPaths(p.DenyRead)
	for _, d := range p.DenyRead {
		if d = filepath.Clean(d); filepath.IsAbs(d) && !slices.Contains(deny, d) {
			deny = append(deny, d)
		}
	}
	if allowed {
		return Decision{Action: Run}
	}
	for _, path := range c.Paths {
		if alias := sameAsDenied(filepath.Clean(path), deny); alias != "" && !slices.Contains(c.Paths, alias) {
			path = alias // the same file under another name (case, a hard link)
		}
		for _, d := range deny {
			if within(filepath.Clean(path), d) {
				reason := fmt.Sprintf("%s is on the sandbox's deny list (credentials such as ~/.ssh and ~/.aws, the agent's auth.json, "+
					"permissions.denyRead), which the read tools keep to as commands do", c.Paths[0])
				if filepath.Clean(c.Paths[0]) != filepath.Clean(path) {
					reason += fmt.Sprintf(" (it leads to %s)", path)
				}
				return Decision{Action: Ask, Reason: reason, Always: ReadRule(path), AlwaysList: "allow"}
			}
		}
	}
	return Decision{Action: Run, Confine: Confinement{DenyRead: deny}}
}
