package agent

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/permission"
	"github.com/prime-agent/prime/settings"
	"github.com/prime-agent/prime/tool"
)

// Confinement is what the permission modes confine tools with
// ([Config].Confinement): the sandbox of sandbox mode and read-only mode,
// and where write and edit may change files in sandbox mode.
type Confinement struct {
	// Sandbox confines commands in sandbox mode; nil when this system
	// cannot, and NoSandbox says why (commands then ask).
	Sandbox   *permission.Sandbox
	NoSandbox string
	// ReadOnly confines commands in read-only mode.
	ReadOnly *permission.Sandbox
	// Scope is where write and edit change files in sandbox mode.
	Scope *permission.Scope
	// DenyRead are the paths the read tools do not read unasked, in
	// every mode but full (the sandbox's deny list).
	DenyRead []string
}

// The texts of the results of calls the permissions stop. The model reads
// them.
const (
	textRefused    = "Not run: Prime's permissions refuse this call: %s."
	textDenied     = "Not run: the user denied this call."
	textUserSays   = " The user says: %s"
	textCannotAsk  = "Not run: %s, and no one can approve it here (print and JSON modes cannot ask). The user can run Prime with --yes to approve such calls, or allow them in permissions.allow."
	textCancelled  = "Not run: the approval was given up (the turn was stopped)."
	textRerun      = "The command failed in the sandbox; the user let it run again outside the sandbox:\n\n"
	textNoRerun    = "\n\nThe user chose not to run it again outside the sandbox."
	reasonRerun    = "the command failed, and its output suggests the sandbox stopped it (a path it may not reach, or the network)"
	maxPreviewRune = 4000
)

// gate wraps the tools so that each call goes through the permission
// policy; with no Confinement configured, the tools run as they are.
func (a *Agent) gate(tools []tool.Tool) []tool.Tool {
	if a.cfg.Confinement == nil {
		return tools
	}
	out := make([]tool.Tool, len(tools))
	for i, t := range tools {
		out[i] = &gatedTool{a: a, t: t}
	}
	return out
}

// gatedTool is a tool whose calls the permission policy decides.
type gatedTool struct {
	a *Agent
	t tool.Tool
}

func (g *gatedTool) Spec() tool.Spec { return g.t.Spec() }

func (g *gatedTool) PrepareArgs(args jsontext.Value) jsontext.Value {
	if p, ok := g.t.(tool.ArgPreparer); ok {
		return p.PrepareArgs(args)
	}
	return args
}

func (g *gatedTool) Paths(args jsontext.Value) []string {
	if p, ok := g.t.(tool.PathTool); ok {
		return p.Paths(args)
	}
	return nil
}

// callArgs are the arguments the policy looks at.
type callArgs struct {
	Command string  `json:"command"`
	Path    *string `json:"path"`
	Content string  `json:"content"`
	Edits   []struct {
		OldText string `json:"oldText"`
		NewText string `json:"newText"`
	} `json:"edits"`
}

// readOnlyTool is a tool that can say it changes nothing (an MCP tool
// with the server's readOnlyHint).
type readOnlyTool interface{ ReadsOnly() bool }

func (g *gatedTool) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	a := g.a
	name := g.t.Spec().Name
	var args callArgs
	_ = json.Unmarshal(call.Args, &args)
	c := permission.Call{Tool: name, Command: args.Command}
	if ro, ok := g.t.(readOnlyTool); ok {
		c.ReadOnly = ro.ReadsOnly()
	}
	cwd := a.cwd()
	if name != "bash" && (args.Path != nil || name == "grep" || name == "find" || name == "ls") {
		p := "."
		if args.Path != nil {
			p = *args.Path
		}
		if abs, real, err := tool.ResolvePath(cwd, p); err == nil {
			c.Paths = []string{abs, real}
		}
	}
	pol := a.policy()
	d := pol.Decide(c)
	switch d.Action {
	case permission.Refuse:
		return tool.Result{}, fmt.Errorf(textRefused, d.Reason)
	case permission.Ask:
		req := ApprovalRequest{Tool: name, Command: args.Command, Reason: d.Reason, Always: d.Always}
		switch {
		case args.Path != nil && (name == "write" || name == "edit"):
			req.Path = *args.Path
			req.Preview = preview(name, args)
		case name != "bash":
			// Another tool (MCP): its arguments are what it will do.
			req.Preview = clip(string(call.Args))
		}
		if res, err, stop := a.approve(ctx, req, d, d.Reason); stop {
			return res, err
		}
	}
	res, err := g.t.Run(permission.WithConfinement(ctx, d.Confine), call)
	if !d.RetryUnconfined || err != nil || !res.IsError || a.cfg.Approvals == ApprovalsNone ||
		d.Confine.Sandbox.Explain(llm.TextOf(res.Content)) == "" {
		// (Where no one can answer, the sandbox's note in the result is
		// all there is to say.)
		return res, err
	}
	req := ApprovalRequest{Tool: name, Command: args.Command, Reason: reasonRerun, Rerun: true, Always: d.Always}
	again := d
	again.AlwaysList = settings.RuleAllowUnconfine
	if _, aerr, stop := a.approve(ctx, req, again, "running it again outside the sandbox needs the user's approval"); stop {
		note := "\n\n" + aerr.Error()
		if de, ok := aerr.(*deniedError); ok {
			note = textNoRerun + de.says()
		}
		res.Content = append(res.Content, llm.Text{Text: note})
		return res, nil
	}
	res, err = g.t.Run(permission.WithConfinement(ctx, permission.Confinement{}), call)
	res.Content = append([]llm.Content{llm.Text{Text: textRerun}}, res.Content...)
	return res, err
}

// deniedError is a call the user denied, with their word to the model.
type deniedError struct{ message string }

func (e *deniedError) Error() string { return textDenied + e.says() }

func (e *deniedError) says() string {
	if e.message == "" {
		return ""
	}
	return fmt.Sprintf(textUserSays, e.message)
}

// approve asks req and returns stop set when the call must not run, with
// the error its result carries; "always" answers are recorded.
func (a *Agent) approve(ctx context.Context, req ApprovalRequest, d permission.Decision, why string) (tool.Result, error, bool) {
	ans, err := a.ask(ctx, req)
	switch {
	case err == errCannotAsk:
		return tool.Result{}, fmt.Errorf(textCannotAsk, why), true
	case err != nil:
		return tool.Result{}, fmt.Errorf("%s", textCancelled), true
	case ans.Choice == ChoiceDeny:
		return tool.Result{}, &deniedError{strings.TrimSpace(ans.Message)}, true
	case ans.Choice == ChoiceAlways && d.Always != "":
		a.rememberRule(ctx, d.AlwaysList, d.Always)
	}
	return tool.Result{}, nil, false
}

// rememberRule records an "always" answer: for this session at once, and
// in the settings (the project's when trusted, else the user's for this
// project); a failure to save is a notice.
func (a *Agent) rememberRule(ctx context.Context, list, rule string) {
	st := &a.approvals
	st.mu.Lock()
	if list == settings.RuleAllowUnconfine {
		st.unconfined = append(st.unconfined, rule)
	} else {
		st.allowed = append(st.allowed, rule)
	}
	st.mu.Unlock()
	cur := a.settings()
	ns, scope, err := cur.AddPermissionRule(ctx, list, rule)
	if err != nil {
		a.emit(Notice{Level: NoticeWarning, Text: fmt.Sprintf("%s is allowed for this session, but could not be saved: %v", rule, err)})
		return
	}
	a.useSettings(ns)
	file := ns.GlobalFile()
	if scope == settings.Project {
		file = ns.ProjectFile()
	}
	a.emit(Notice{Level: NoticeInfo, Text: fmt.Sprintf("%s saved in permissions.%s of %s", rule, list, file)})
}

// useSettings makes ns the settings the agent works with, as a reload
// would, without announcing it.
func (a *Agent) useSettings(ns *settings.Settings) {
	a.live.mu.Lock()
	a.live.current, a.live.stamps = ns, stampsOf(ns)
	a.live.mu.Unlock()
}

// policy is the permission policy in force now.
func (a *Agent) policy() *permission.Policy {
	conf := a.confinement()
	st := a.settings()
	rules := st.PermissionRules()
	home, _ := os.UserHomeDir()
	where := permission.Where{Home: home, Project: a.cwd()}
	a.approvals.mu.Lock()
	allow := append(append([]string(nil), rules.Allow...), a.approvals.allowed...)
	unconfined := append(append([]string(nil), rules.AllowUnconfined...), a.approvals.unconfined...)
	mode := a.approvals.mode
	a.approvals.mu.Unlock()
	if mode == "" {
		mode = a.settingsMode()
	}
	p := &permission.Policy{Mode: mode, Rules: permission.Rules{Where: where},
		Sandbox: conf.Sandbox, NoSandbox: conf.NoSandbox, ReadOnly: conf.ReadOnly, Scope: conf.Scope, DenyRead: conf.DenyRead}
	p.Rules.Allow, _ = permission.ParseRules(allow)
	p.Rules.Deny, _ = permission.ParseRules(rules.Deny)
	p.Unconfined, _ = permission.ParseRules(unconfined)
	return p
}

// settingsMode is permissions.mode, full when it is not a mode.
func (a *Agent) settingsMode() permission.Mode {
	m, err := permission.ParseMode(a.settings().Permissions().Mode)
	if err != nil {
		return permission.ModeFull
	}
	return m
}

// confinement is the configured confinement, made once.
func (a *Agent) confinement() Confinement {
	a.approvals.once.Do(func() { a.approvals.conf = a.cfg.Confinement() })
	return a.approvals.conf
}

// preview shows what a write or an edit changes, for the approval dialog.
func preview(name string, args callArgs) string {
	var b strings.Builder
	lines := func(prefix, text string) {
		for l := range strings.SplitSeq(strings.TrimSuffix(text, "\n"), "\n") {
			b.WriteString(prefix + l + "\n")
		}
	}
	switch name {
	case "write":
		lines("+", args.Content)
	case "edit":
		for i, e := range args.Edits {
			if i > 0 {
				b.WriteString("…\n")
			}
			lines("-", e.OldText)
			lines("+", e.NewText)
		}
	}
	return strings.TrimSuffix(clip(b.String()), "\n")
}

// clip shortens a preview to maxPreviewRune characters.
func clip(s string) string {
	if r := []rune(s); len(r) > maxPreviewRune {
		return string(r[:maxPreviewRune]) + "\n…"
	}
	return s
}

// contextDenyList is what no context file may lead to: the credentials the
// sandbox keeps from commands (in every mode: a repository's AGENTS.md
// that links to ~/.ssh/id_ed25519 would send the key to the model and
// write it into the session), with permissions.denyRead's paths.
func (a *Agent) contextDenyList(agentDir string) []string {
	home := a.getenv("HOME")
	return append(permission.DefaultDenyRead(home, agentDir),
		permission.ExpandPaths(a.settings().Permissions().DenyRead, home, a.cwd())...)
}
