package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/agent"
)

// approvalDialog asks the user about the tool calls the permission mode
// stops, one at a time (parallel calls wait in line): y allows once, a
// always, n or Escape denies, m denies with a message to the model; Up,
// Down and Enter pick too. The overlay it covers comes back when the
// line is empty.
type approvalDialog struct {
	queue []agent.ApprovalRequest
	prev  overlay
	sel   int
	// writing: the user types the message of a denial.
	writing bool
	input   textinput.Model
	// typing: the dialog opened while the user was typing in the editor,
	// so the letters that follow are not answers: they are ignored, and
	// the cursor starts on Deny, until an arrow key is pressed.
	typing bool
}

// approvalChoice is one line of the dialog.
type approvalChoice struct {
	key, label string
	answer     agent.Answer
	message    bool // deny with a message: ask for it first
}

func (d *approvalDialog) choices() []approvalChoice {
	r := d.queue[0]
	out := []approvalChoice{{key: "y", label: "Allow once", answer: agent.Answer{Choice: agent.ChoiceOnce}}}
	if r.Rerun {
		out[0].label = "Run it again outside the sandbox, once"
	}
	if r.Always != "" {
		label := "Always allow " + r.Always
		if r.Rerun {
			label = "Always run " + r.Always + " outside the sandbox"
		}
		out = append(out, approvalChoice{key: "a", label: label, answer: agent.Answer{Choice: agent.ChoiceAlways}})
	}
	deny := "Deny"
	if r.Rerun {
		deny = "No, keep the failure"
	}
	return append(out, approvalChoice{key: "n", label: deny}, approvalChoice{key: "m", label: "Deny, with a message to the model", message: true})
}

// onApproval shows a request, or puts it in line behind the one shown.
func (m *Model) onApproval(r agent.ApprovalRequest) {
	if d, ok := m.overlay.(*approvalDialog); ok {
		d.queue = append(d.queue, r)
		return
	}
	d := &approvalDialog{queue: []agent.ApprovalRequest{r}, prev: m.overlay, typing: m.overlay == nil && m.editor.value() != ""}
	if d.typing {
		d.sel = d.denyIndex()
	}
	m.overlay = d
}

// denyIndex is the line of the plain denial.
func (d *approvalDialog) denyIndex() int {
	for i, c := range d.choices() {
		if c.key == "n" {
			return i
		}
	}
	return 0
}

// onApprovalSettled takes a request the agent gave up (an abort) out of
// the dialog.
func (m *Model) onApprovalSettled(e agent.ApprovalSettled) {
	d, ok := m.overlay.(*approvalDialog)
	if !ok {
		return
	}
	for i, r := range d.queue {
		if r.ID == e.ID {
			d.queue = append(d.queue[:i], d.queue[i+1:]...)
			if i == 0 {
				d.sel, d.writing = 0, false
			}
			break
		}
	}
	if len(d.queue) == 0 {
		m.overlay = d.prev
	}
}

// answer answers the request shown and moves to the next.
func (d *approvalDialog) answer(m *Model, ans agent.Answer) tea.Cmd {
	r := d.queue[0]
	d.queue, d.sel, d.writing = d.queue[1:], 0, false
	if len(d.queue) == 0 {
		m.overlay = d.prev
	}
	if err := m.ag.Answer(r.ID, ans); err != nil {
		m.warn(fmt.Sprintf("The approval was not taken: %v", err))
	}
	return nil
}

func (d *approvalDialog) key(m *Model, k tea.KeyPressMsg) tea.Cmd {
	if d.writing {
		switch k.String() {
		case "enter":
			return d.answer(m, agent.Answer{Choice: agent.ChoiceDeny, Message: d.input.Value()})
		case "esc":
			d.writing = false
			return nil
		}
		var cmd tea.Cmd
		d.input, cmd = d.input.Update(k)
		return cmd
	}
	cs := d.choices()
	pick := func(c approvalChoice) tea.Cmd {
		if c.message {
			d.writing = true
			d.input = textinput.New()
			d.input.Prompt = "> "
			d.input.Placeholder = "what to do instead"
			d.input.Focus()
			return nil
		}
		return d.answer(m, c.answer)
	}
	switch s := k.String(); s {
	case "up":
		d.sel, d.typing = (d.sel-1+len(cs))%len(cs), false
	case "down", "tab":
		d.sel, d.typing = (d.sel+1)%len(cs), false
	case "enter":
		return pick(cs[d.sel])
	case "esc", "ctrl+c":
		return d.answer(m, agent.Answer{Choice: agent.ChoiceDeny})
	default:
		if d.typing {
			return nil
		}
		for _, c := range cs {
			if s == c.key {
				return pick(c)
			}
		}
	}
	return nil
}

func (d *approvalDialog) paste(m *Model, s string) tea.Cmd {
	if d.writing {
		d.input.SetValue(d.input.Value() + oneLine(s))
		d.input.CursorEnd()
	}
	return nil
}

// approvalPreviewLines is how much of a diff the dialog shows.
const approvalPreviewLines = 12

func (d *approvalDialog) render(m *Model, v *view) string {
	r := d.queue[0]
	var b strings.Builder
	line := func(s string) { b.WriteString(truncate(s, v.width) + "\n") }
	line(v.st.rule.Render(strings.Repeat("─", v.width)))
	switch {
	case r.Rerun:
		line(v.st.warning.Render("Run this command again outside the sandbox, with your full rights?"))
	case r.Command != "":
		line(v.st.warning.Render("Allow this command?"))
	case r.Path != "":
		line(v.st.warning.Render(fmt.Sprintf("Allow this %s of %s?", r.Tool, r.Path)))
	default:
		line(v.st.warning.Render(fmt.Sprintf("Allow the tool %s?", r.Tool)))
	}
	if r.Command != "" {
		for _, l := range strings.Split(wrap(r.Command, v.width-4), "\n") {
			line("  " + v.st.bold.Render("$ ") + l)
		}
	}
	if r.Preview != "" {
		lines := strings.Split(r.Preview, "\n")
		more := len(lines) - approvalPreviewLines
		if more > 0 {
			lines = lines[:approvalPreviewLines]
		}
		for _, l := range lines {
			switch {
			case strings.HasPrefix(l, "+"):
				line("  " + v.st.diffAdd.Render(l))
			case strings.HasPrefix(l, "-"):
				line("  " + v.st.diffDel.Render(l))
			default:
				line("  " + v.st.diffCtx.Render(l))
			}
		}
		if more > 0 {
			line(v.st.muted.Render(fmt.Sprintf("  … %d more lines", more)))
		}
	}
	for _, l := range strings.Split(wrap("Why: "+r.Reason, v.width-2), "\n") {
		line("  " + v.st.muted.Render(l))
	}
	if d.writing {
		line(v.st.bold.Render("Your message to the model (it reads it in the call's result):"))
		line(d.input.View())
		line(v.st.muted.Render(keysLine(v.width, "enter denies with this message", "escape goes back")))
	} else {
		for i, c := range d.choices() {
			cursor, label := "  ", c.label
			if i == d.sel {
				cursor, label = v.st.accent.Render("› "), v.st.accent.Render(label)
			}
			line(cursor + v.st.bold.Render(c.key) + "  " + label)
		}
		hint := "  y/a/n/m or ↑↓ enter · escape denies"
		if d.typing {
			hint = "  you were typing: press ↑ or ↓ first, then y/a/n/m or enter · escape denies"
		}
		if n := len(d.queue) - 1; n > 0 {
			hint += fmt.Sprintf(" · %d more waiting", n)
		}
		line(v.st.muted.Render(hint))
	}
	b.WriteString(v.st.rule.Render(strings.Repeat("─", v.width)))
	return b.String()
}

// permissionLabel is the footer's word for the permission mode: the mode,
// unless it is full (pi's behaviour, said by nothing); sandbox mode where
// the kernel cannot confine commands says that bash asks.
func permissionLabel(ag *agent.Agent, sandboxed bool) string {
	p := ag.Permissions()
	if !p.Checked {
		if sandboxed {
			return "sandbox"
		}
		return ""
	}
	switch {
	case p.Mode == "full":
		return ""
	case p.Mode == "sandbox" && !p.Sandboxed:
		return "sandbox (bash asks)"
	}
	return p.Mode
}

// permissionsCommand is /permissions: with a mode, change to it for the
// session; without, show the mode and the rules, and offer the modes.
func (m *Model) permissionsCommand(args string) tea.Cmd {
	set := func(mode string) tea.Cmd {
		if err := m.ag.SetPermissionMode(mode); err != nil {
			m.fail(err.Error())
			return nil
		}
		m.refreshFooter()
		m.status("Permission mode: " + mode + " (for this session; permissions.mode in settings keeps it)")
		return nil
	}
	if args != "" {
		return set(args)
	}
	p := m.ag.Permissions()
	var b strings.Builder
	fmt.Fprintf(&b, "Permission mode: %s", p.Mode)
	if p.Checked && !p.Sandboxed && p.NoSandbox != "" {
		fmt.Fprintf(&b, " (no sandbox here: %s)", p.NoSandbox)
	}
	for _, l := range []struct {
		name  string
		rules []string
	}{{"allow", p.Allow}, {"deny", p.Deny}, {"allowUnconfined", p.AllowUnconfined}, {"ignored (project not trusted)", p.IgnoredAllow}} {
		if len(l.rules) > 0 {
			fmt.Fprintf(&b, "\n%s: %s", l.name, strings.Join(l.rules, ", "))
		}
	}
	m.status(b.String())
	notes := map[string]string{
		"full":      "every tool runs with your rights, unasked (pi)",
		"ask":       "every bash, write and edit asks first",
		"sandbox":   "bash confined; writes in the project and temp dirs; beyond asks",
		"read-only": "no changes: no write or edit, bash cannot write",
	}
	var entries []listEntry
	for _, mode := range p.Modes {
		note := notes[mode]
		if mode == p.Mode {
			note += " (current)"
		}
		entries = append(entries, listEntry{label: mode, note: note, value: mode})
	}
	l := newList("Permission mode for this session", entries, func(m *Model, e listEntry) tea.Cmd {
		m.overlay = nil
		return set(e.value.(string))
	})
	l.selectValue(p.Mode)
	m.overlay = l
	return nil
}
