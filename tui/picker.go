package tui

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/prime-agent/prime/agent"
)

// picker chooses a session: those of the current folder, or of every
// folder (Tab), newest first, filtered by typing. It is the startup picker
// of "prime -r" (PickSession) and /resume's selector.
type picker struct {
	dir, root   string // this folder's sessions directory, and all folders'
	currentFile string
	all         bool
	lists       [2][]agent.SessionInfo // this folder's, every folder's
	loaded      [2]bool
	err         error
	filter      string
	sel         int
	now         time.Time
}

// pickerLoaded delivers a listing.
type pickerLoaded struct {
	all   bool
	infos []agent.SessionInfo
	err   error
}

// load lists the sessions of the scope shown, once.
func (p *picker) load() tea.Cmd {
	all := p.all
	if p.loaded[index(all)] {
		return nil
	}
	dir, root := p.dir, p.root
	return func() tea.Msg {
		infos, err := listSessions(dir, root, all)
		return pickerLoaded{all: all, infos: infos, err: err}
	}
}

func index(all bool) int {
	if all {
		return 1
	}
	return 0
}

// listSessions lists one folder's sessions, or every folder's under root,
// newest first.
func listSessions(dir, root string, all bool) ([]agent.SessionInfo, error) {
	if !all {
		return agent.ListSessions(dir)
	}
	return agent.ListAllSessions(root)
}

func (p *picker) loadedMsg(msg pickerLoaded) {
	p.lists[index(msg.all)], p.loaded[index(msg.all)] = msg.infos, true
	if msg.err != nil {
		p.err = msg.err
	}
}

// visible is the sessions of the scope shown that match every word typed
// (in the title, the folder or the file name).
func (p *picker) visible() []agent.SessionInfo {
	list := p.lists[index(p.all)]
	var out []agent.SessionInfo
	for _, in := range list {
		if matchesWords(in.Title()+" "+in.CWD+" "+filepath.Base(in.Path), p.filter) {
			out = append(out, in)
		}
	}
	return out
}

// pickerAction is what a key did.
type pickerAction int

const (
	pickerNone pickerAction = iota
	pickerChosen
	pickerCancelled
)

// key handles a key; chosen is the session picked with pickerChosen.
func (p *picker) key(k tea.KeyPressMsg) (pickerAction, *agent.SessionInfo, tea.Cmd) {
	vis := p.visible()
	switch k.String() {
	case "up":
		if len(vis) > 0 {
			p.sel = (p.sel - 1 + len(vis)) % len(vis)
		}
	case "down":
		if len(vis) > 0 {
			p.sel = (p.sel + 1) % len(vis)
		}
	case "tab":
		p.all, p.sel = !p.all, 0
		return pickerNone, nil, p.load()
	case "enter":
		if p.sel < len(vis) {
			in := vis[p.sel]
			return pickerChosen, &in, nil
		}
	case "esc":
		if p.filter != "" {
			p.filter, p.sel = "", 0
			return pickerNone, nil, nil
		}
		return pickerCancelled, nil, nil
	case "ctrl+c":
		return pickerCancelled, nil, nil
	case "backspace":
		if r := []rune(p.filter); len(r) > 0 {
			p.filter, p.sel = string(r[:len(r)-1]), 0
		}
	default:
		if k.Text != "" {
			p.filter += k.Text
			p.sel = 0
		}
	}
	return pickerNone, nil, nil
}

// age writes how long ago t was: now, 5m, 3h, 2d, then the date.
func age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	case d < 30*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	}
	return t.Format("2006-01-02")
}

func (p *picker) render(v *view, height int) string {
	var b strings.Builder
	scope := "Current Folder"
	if p.all {
		scope = "All"
	}
	b.WriteString(v.st.rule.Render(strings.Repeat("─", v.width)) + "\n")
	b.WriteString(v.st.bold.Render("Resume Session ("+scope+")") + v.st.muted.Render("  tab: current folder / all") + "\n")
	b.WriteString(v.st.muted.Render("  Type to search: ") + v.st.accent.Render(p.filter) + "\n")
	vis := p.visible()
	switch {
	case p.err != nil:
		b.WriteString(v.st.errorText.Render(truncate("  "+p.err.Error(), v.width)) + "\n")
	case !p.loaded[index(p.all)]:
		b.WriteString(v.st.muted.Render("  Loading…") + "\n")
	case len(vis) == 0:
		b.WriteString(v.st.muted.Render("  No sessions found") + "\n")
	}
	shown := max(height-7, 3)
	start := 0
	if p.sel >= shown {
		start = p.sel - shown + 1
	}
	for i := start; i < len(vis) && i < start+shown; i++ {
		in := vis[i]
		right := fmt.Sprintf("%d msgs · %s", in.MessageCount, age(p.now, in.Modified))
		if p.all {
			right = shortDir(in.CWD) + " · " + right
		}
		title := oneLine(in.Title())
		style := lipgloss.NewStyle()
		if in.Name != "" {
			style = v.st.warning
		}
		cursor := "  "
		if i == p.sel {
			cursor = v.st.accent.Render("› ")
		}
		if in.Path == p.currentFile {
			title += " (current)"
		}
		room := max(v.width-4-len([]rune(right)), 8)
		line := cursor + style.Render(padRight(truncate(title, room), room)) + "  " + v.st.muted.Render(right)
		b.WriteString(truncate(line, v.width) + "\n")
	}
	if n := len(vis); n > 0 {
		b.WriteString(v.st.muted.Render(fmt.Sprintf("  (%d/%d)", p.sel+1, n)) + "\n")
	}
	b.WriteString(v.st.muted.Render(keysLine(v.width, "↑↓ move", "enter open", "escape cancel")) + "\n")
	b.WriteString(v.st.rule.Render(strings.Repeat("─", v.width)))
	return b.String()
}

// shortDir is a folder's last two names.
func shortDir(dir string) string {
	parent := filepath.Base(filepath.Dir(dir))
	if parent == "/" || parent == "." {
		return filepath.Base(dir)
	}
	return parent + "/" + filepath.Base(dir)
}

// PickerOptions say where PickSession looks.
type PickerOptions struct {
	// Dir is the current folder's sessions directory; Root holds every
	// folder's (the agent directory's sessions).
	Dir, Root string
	// Input and Output are the terminal; nil means standard input and
	// output.
	Input  io.Reader
	Output io.Writer
	// Now is the clock for the ages shown; nil means time.Now.
	Now func() time.Time
}

// PickSession shows the session picker ("prime -r") until the user
// chooses one, whose summary it returns, or cancels (nil, nil).
func PickSession(ctx context.Context, opts PickerOptions) (*agent.SessionInfo, error) {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	pm := &pickerModel{p: &picker{dir: opts.Dir, root: opts.Root, now: now()}, st: newStyles(), width: 80, height: 24}
	popts := []tea.ProgramOption{tea.WithContext(ctx)}
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	if opts.Output != nil {
		popts = append(popts, tea.WithOutput(opts.Output))
	}
	final, err := tea.NewProgram(pm, popts...).Run()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("session picker: %w", err)
	}
	return final.(*pickerModel).chosen, nil
}

// pickerModel runs the picker as a program of its own.
type pickerModel struct {
	p             *picker
	st            styles
	width, height int
	chosen        *agent.SessionInfo
	done          bool
}

func (pm *pickerModel) Init() tea.Cmd { return pm.p.load() }

func (pm *pickerModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		pm.width, pm.height = msg.Width, msg.Height
	case pickerLoaded:
		pm.p.loadedMsg(msg)
	case tea.KeyPressMsg:
		act, in, cmd := pm.p.key(msg)
		switch act {
		case pickerChosen:
			pm.chosen, pm.done = in, true
			return pm, tea.Quit
		case pickerCancelled:
			pm.done = true
			return pm, tea.Quit
		}
		return pm, cmd
	}
	return pm, nil
}

func (pm *pickerModel) View() tea.View {
	if pm.done {
		return tea.NewView("")
	}
	v := &view{width: max(pm.width, 20), st: &pm.st}
	return tea.NewView(pm.p.render(v, pm.height))
}

// resumeOverlay is /resume: the picker in the editor's place; the session
// chosen becomes the agent's.
type resumeOverlay struct{ p *picker }

// openResume is /resume.
func (m *Model) openResume() tea.Cmd {
	dir := m.ag.SessionsDir()
	p := &picker{dir: dir, root: filepath.Dir(dir), currentFile: m.ag.State().SessionFile, now: m.clock()}
	m.overlay = &resumeOverlay{p: p}
	return func() tea.Msg {
		msg := p.load()()
		return resultMsg(func(m *Model) tea.Cmd {
			p.loadedMsg(msg.(pickerLoaded))
			return nil
		})
	}
}

func (r *resumeOverlay) key(m *Model, k tea.KeyPressMsg) tea.Cmd {
	act, in, cmd := r.p.key(k)
	if cmd != nil {
		load := cmd
		cmd = func() tea.Msg {
			msg := load()
			return resultMsg(func(m *Model) tea.Cmd {
				r.p.loadedMsg(msg.(pickerLoaded))
				return nil
			})
		}
	}
	switch act {
	case pickerCancelled:
		m.overlay = nil
	case pickerChosen:
		m.overlay = nil
		if in.Path == m.ag.State().SessionFile {
			m.status("Already in this session")
			return nil
		}
		ag, path := m.ag, in.Path
		return m.call(func() resultMsg {
			err := ag.SwitchSession(path)
			return func(m *Model) tea.Cmd {
				if err != nil {
					m.fail(err.Error())
				} else {
					m.status("Resumed " + m.shortPath(path))
				}
				return nil
			}
		})
	}
	return cmd
}

func (r *resumeOverlay) paste(m *Model, s string) tea.Cmd {
	r.p.filter += oneLine(s)
	return nil
}

func (r *resumeOverlay) render(m *Model, v *view) string { return r.p.render(v, m.height) }
