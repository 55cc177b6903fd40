package tui

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/internal/numfmt"
	"github.com/prime-agent/prime/llm"
)

// slashCommand is one of the commands typed after "/".
type slashCommand struct {
	name, usage, summary string
	args                 bool
}

// slashCommands lists the commands, as completion offers them.
var slashCommands = []slashCommand{
	{name: "compact", usage: "[instructions]", summary: "summarize the conversation to free the context", args: true},
	{name: "uncompact", summary: "undo the latest compaction: the model sees the whole conversation again"},
	{name: "context", summary: "what fills the context, by kind, and what /compact now would cut"},
	{name: "pin", usage: "TEXT", summary: "keep TEXT in front of the model, word for word, through compactions", args: true},
	{name: "pins", summary: "list the pins of this branch, with their ids"},
	{name: "unpin", usage: "ID|TEXT", summary: "remove a pin", args: true},
	{name: "tree", summary: "go to another point of the session tree (shift+p there pins a message)"},
	{name: "model", usage: "[provider/id]", summary: "choose the model", args: true},
	{name: "thinking", usage: "[level]", summary: "choose the thinking level", args: true},
	{name: "settings", summary: "change settings (auto-compaction, thinking display, …)"},
	{name: "permissions", usage: "[mode]", summary: "show the permission mode and rules, or change the mode for this session", args: true},
	{name: "new", summary: "start a new session"},
	{name: "resume", summary: "continue another session"},
	{name: "name", usage: "[name]", summary: "show or set the session's name", args: true},
	{name: "session", summary: "the session's file, messages, tokens and cost"},
	{name: "fork", summary: "start a new session from an earlier message"},
	{name: "clone", summary: "copy this conversation into a new session"},
	{name: "copy", summary: "copy the last reply to the clipboard"},
	{name: "export", usage: "[file.html]", summary: "write the session as HTML (or .jsonl)", args: true},
	{name: "login", usage: "[provider]", summary: "store a provider's API key (auth.json) and use it", args: true},
	{name: "logout", usage: "[provider]", summary: "remove a provider's API key from auth.json", args: true},
	{name: "help", summary: "list the commands and the keys"},
	{name: "hotkeys", summary: "list the keys"},
	{name: "reload", summary: "read skills, templates, MCP, settings, AGENTS.md"},
	{name: "mcp", usage: "[ACTION NAME]", summary: "MCP servers and tools; reconnect, enable or disable", args: true},
	{name: "quit", summary: "exit"},
}

// parseCommand splits "/name args"; ok is false when the text is not one
// of the commands (a path such as /usr/bin is text for the model).
func parseCommand(text string) (name, args string, ok bool) {
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	word, rest, _ := strings.Cut(text[1:], " ")
	if i := strings.IndexAny(word, "\n\t"); i >= 0 {
		word, rest = word[:i], word[i+1:]+" "+rest
	}
	for _, c := range slashCommands {
		if c.name == word {
			return word, strings.TrimSpace(rest), true
		}
	}
	return "", "", false
}

// unknownCommand returns the first word when the text looks like a command
// that does not exist ("/frobnicate"): a slash and letters, no other slash
// (a path such as /usr/bin is a message).
func unknownCommand(text string) string {
	word, _, _ := strings.Cut(strings.Fields(text + " ")[0], "\n")
	if len(word) < 2 || word[0] != '/' {
		return ""
	}
	for _, r := range word[1:] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_' || r >= '0' && r <= '9') {
			return ""
		}
	}
	return word
}

// command runs a slash command.
func (m *Model) command(name, args string) tea.Cmd {
	switch name {
	case "compact":
		return m.compact(args)
	case "uncompact":
		return m.uncompact()
	case "context":
		return m.contextCommand()
	case "pin":
		return m.pinCommand(args)
	case "pins":
		m.pinsCommand()
		return nil
	case "unpin":
		return m.unpinCommand(args)
	case "tree":
		return m.openTree()
	case "model":
		return m.modelCommand(args)
	case "thinking":
		return m.thinkingCommand(args)
	case "settings":
		return m.openSettings()
	case "permissions":
		return m.permissionsCommand(args)
	case "new":
		ag := m.ag
		return m.call(func() resultMsg {
			err := ag.NewSession()
			return report(err, func(m *Model) string { return "✓ New session started" })
		})
	case "resume":
		return m.openResume()
	case "name":
		if args == "" {
			if n := m.ag.State().SessionName; n != "" {
				m.status("Session name: " + n)
			} else {
				m.status("The session has no name; /name NAME sets one")
			}
			return nil
		}
		ag := m.ag
		return m.call(func() resultMsg {
			err := ag.SetSessionName(args)
			return report(err, func(m *Model) string { return "Session name set: " + m.ag.State().SessionName })
		})
	case "session":
		m.add(m.sessionReport())
		return nil
	case "fork":
		return m.openFork()
	case "clone":
		if m.ag.LeafID() == "" {
			m.warn("Nothing to clone yet")
			return nil
		}
		ag := m.ag
		return m.call(func() resultMsg {
			_, err := ag.Clone()
			if errors.Is(err, agent.ErrNotSaved) {
				return func(m *Model) tea.Cmd { m.warn(err.Error()); return nil }
			}
			return report(err, func(*Model) string { return "Cloned to new session" })
		})
	case "copy":
		text, ok := m.ag.LastAssistantText()
		if !ok {
			m.warn("No reply to copy yet")
			return nil
		}
		m.status("Copied the last reply to the clipboard")
		return tea.SetClipboard(text)
	case "export":
		return m.export(args)
	case "login":
		return m.loginCommand(args)
	case "logout":
		return m.logoutCommand(args)
	case "help", "hotkeys":
		m.add(&textItem{text: hotkeysText})
		return nil
	case "reload":
		return m.reload()
	case "mcp":
		return m.mcpCommand(args)
	case "quit":
		return m.exit()
	}
	return nil
}

// report is the outcome of an agent call: the error, or a status line
// (said is called once the call succeeded, to word it from the new state).
func report(err error, said func(m *Model) string) resultMsg {
	return func(m *Model) tea.Cmd {
		if err != nil {
			m.fail(err.Error())
		} else if said != nil {
			m.status(said(m))
		}
		return nil
	}
}

// compact is /compact: a manual compaction with the user's instructions.
// The agent aborts a reply being streamed first; Escape cancels; messages
// typed meanwhile are held and sent after.
func (m *Model) compact(instructions string) tea.Cmd {
	if m.manual || m.compacting != "" {
		m.warn("A compaction is already running")
		return nil
	}
	m.manual = true
	ctx, ag := m.ctx, m.ag
	return async(func() resultMsg {
		_, err := ag.Compact(ctx, agent.CompactRequest{Instructions: instructions})
		return func(m *Model) tea.Cmd {
			m.manual = false
			var nc *agent.NotCompactableError
			if err != nil && !errors.As(err, &nc) && !errors.Is(err, agent.ErrCancelled) && m.compacting == "" {
				// A failure before the compaction began (no model,
				// no key) has no CompactionEnd to report it.
				if !m.reported(err) {
					m.fail(agent.CompactionErrorText(agent.ReasonManual, err))
				}
			}
			return m.releaseHeld()
		}
	})
}

// reported tells whether the last item already shows err's text.
func (m *Model) reported(err error) bool {
	if len(m.items) == 0 {
		return false
	}
	n, ok := m.items[len(m.items)-1].(*noticeItem)
	return ok && strings.Contains(n.text, err.Error())
}

// export is /export: the whole session as an HTML page (the default), or
// the conversation at the leaf as a session file (a name ending in .jsonl).
func (m *Model) export(path string) tea.Cmd {
	if path == "" {
		id := m.ag.State().SessionID
		if len(id) > 8 {
			id = id[:8]
		}
		path = "prime-session-" + id + ".html"
	}
	if !strings.HasSuffix(path, ".jsonl") && !strings.HasSuffix(path, ".html") {
		m.fail("/export writes an HTML page (a name ending in .html) or a JSONL session file (.jsonl)")
		return nil
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(m.opts.CWD, path)
	}
	ag, ctx := m.ag, m.ctx
	if strings.HasSuffix(path, ".html") {
		return m.call(func() resultMsg {
			res, err := ag.ExportHTML(ctx, path, agent.HTMLExportOptions{})
			return report(err, func(m *Model) string {
				return fmt.Sprintf("Exported to %s (%s entries, %s bytes, %s secrets masked)", m.shortPath(path),
					numfmt.Commas(res.Entries), numfmt.Commas(int(res.Bytes)), numfmt.Commas(res.Redacted))
			})
		})
	}
	return m.call(func() resultMsg {
		err := ag.ExportBranch(path)
		return report(err, func(m *Model) string { return "Exported to " + m.shortPath(path) })
	})
}

// sessionReport is /session's block.
func (m *Model) sessionReport() item {
	st, stats := m.ag.State(), m.ag.Stats()
	return &textItem{text: func(v *view) string {
		file := st.SessionFile
		if file == "" {
			file = "(in memory)"
		}
		rows := [][2]string{
			{"File", m.shortPath(file)},
			{"ID", st.SessionID},
		}
		if st.SessionName != "" {
			rows = append(rows, [2]string{"Name", st.SessionName})
		}
		rows = append(rows,
			[2]string{"Messages", fmt.Sprintf("%d (%d from you, %d replies, %d tool calls, %d results)", stats.TotalMessages, stats.UserMessages, stats.AssistantMessages, stats.ToolCalls, stats.ToolResults)},
			[2]string{"Tokens", fmt.Sprintf("%s in, %s out, %s cache read, %s cache write", numfmt.Commas(stats.Tokens.Input), numfmt.Commas(stats.Tokens.Output), numfmt.Commas(stats.Tokens.CacheRead), numfmt.Commas(stats.Tokens.CacheWrite))},
			[2]string{"Cost", fmt.Sprintf("$%.4f", stats.Cost)},
			[2]string{"Context", m.footer.meter()},
		)
		var b strings.Builder
		b.WriteString(v.st.blockTitle.Render("[session]"))
		for _, r := range rows {
			b.WriteString("\n" + columnRow(v, "", r[0], v.st.muted, r[1], 10))
		}
		return b.String()
	}}
}

// keyHelp lists the keys for /hotkeys and the expanded header.
var keyHelp = [][2]string{
	{"enter", "send; while the agent works, steer it (delivered after the current turn)"},
	{"alt+enter", "send as a follow-up (delivered when the agent would stop)"},
	{"shift+enter, ctrl+j", "new line"},
	{"alt+up", "move the queued messages back into the editor"},
	{"escape", "interrupt (queued messages come back to the editor); cancel a compaction"},
	{"escape escape", "on an empty editor: /tree"},
	{"ctrl+c", "clear the editor; twice to exit"},
	{"ctrl+d", "exit (on an empty editor)"},
	{"ctrl+o", "expand or collapse tool output, summaries and this header"},
	{"ctrl+t", "show or fold thinking"},
	{"ctrl+l", "choose the model"},
	{"ctrl+p", "next model (ctrl+shift+p: previous)"},
	{"shift+tab", "next thinking level"},
	{"up, down", "history (at the first or last line)"},
	{"tab", "complete a /command or an @file"},
	{"!cmd, !!cmd", "run a shell command (!! keeps it out of the model's context)"},
}

// hotkeysText renders the key list.
func hotkeysText(v *view) string {
	var b strings.Builder
	row := func(name, text string) { b.WriteString("\n" + columnRow(v, "  ", name, v.st.accent, text, 27)) }
	b.WriteString(v.st.bold.Render("Keys"))
	for _, k := range keyHelp {
		row(k[0], k[1])
	}
	b.WriteString("\n" + v.st.bold.Render("Commands"))
	for _, c := range slashCommands {
		name := "/" + c.name
		if c.usage != "" {
			name += " " + c.usage
		}
		row(name, c.summary)
	}
	return b.String()
}

// runBash runs a shell command the user typed; !! keeps it out of the
// model's context.
func (m *Model) runBash(command string, exclude bool) tea.Cmd {
	if command == "" {
		m.warn("Type a command after !")
		return nil
	}
	if m.bash != nil && !m.bash.done {
		m.warn(agent.ErrBashRunning.Error())
		return nil
	}
	m.bashSeq++
	b := &bashItem{id: fmt.Sprintf("bash-%d", m.bashSeq), command: command, exclude: exclude}
	m.bash = b
	m.add(b)
	ctx, ag := m.ctx, m.ag
	return async(func() resultMsg {
		res, err := ag.RunBash(ctx, b.id, command, exclude)
		return func(m *Model) tea.Cmd {
			b.done = true
			if err != nil {
				b.err = err.Error()
				return nil
			}
			b.output, b.exitCode, b.cancelled, b.truncated, b.fullPath = res.Output, res.ExitCode, res.Cancelled, res.Truncated, res.FullOutputPath
			return nil
		}
	})
}

// cycleModel is Ctrl-P.
func (m *Model) cycleModel(back bool) tea.Cmd {
	ctx, ag := m.ctx, m.ag
	return m.call(func() resultMsg {
		model, ok, err := ag.CycleModel(ctx, back)
		return func(m *Model) tea.Cmd {
			switch {
			case err != nil:
				m.fail(err.Error())
			case !ok:
				m.status("Only one model available")
			default:
				m.status("Switched to " + modelName(model) + m.thinkingSuffix())
			}
			return nil
		}
	})
}

func (m *Model) thinkingSuffix() string {
	st := m.ag.State()
	if st.Model == nil || !st.Model.Reasoning {
		return ""
	}
	return " (thinking " + string(st.ThinkingLevel) + ")"
}

func modelName(md llm.Model) string {
	if md.Name != "" {
		return md.Name
	}
	return md.ID
}

// cycleThinking is Shift-Tab.
func (m *Model) cycleThinking() tea.Cmd {
	ctx, ag := m.ctx, m.ag
	return m.call(func() resultMsg {
		level, ok, err := ag.CycleThinkingLevel(ctx)
		return func(m *Model) tea.Cmd {
			switch {
			case err != nil:
				m.fail(err.Error())
			case !ok:
				m.status("Current model does not support thinking")
			default:
				m.status("Thinking level: " + string(level))
			}
			return nil
		}
	})
}

// modelCommand is /model [ref]: an exact reference switches, anything else
// opens the selector with it typed.
func (m *Model) modelCommand(ref string) tea.Cmd {
	if ref == "" {
		return m.openModelSelector("")
	}
	return m.withModels(func(m *Model, models []agent.ModelEntry) tea.Cmd {
		for _, e := range models {
			if e.Ref() == ref || e.Model.ID == ref {
				return m.setModel(e.Ref())
			}
		}
		return m.openModelSelector(ref)
	})
}

// withModels lists the models the conversation can switch to, then calls
// then with them (a failure to list them is shown instead).
func (m *Model) withModels(then func(m *Model, models []agent.ModelEntry) tea.Cmd) tea.Cmd {
	ag := m.ag
	return async(func() resultMsg {
		models, err := ag.Models()
		return func(m *Model) tea.Cmd {
			if err != nil {
				m.fail(err.Error())
				return nil
			}
			return then(m, models)
		}
	})
}

func (m *Model) setModel(ref string) tea.Cmd {
	ctx, ag := m.ctx, m.ag
	return m.call(func() resultMsg {
		md, err := ag.SetModel(ctx, ref)
		return report(err, func(m *Model) string { return "Model: " + md.ID + m.thinkingSuffix() })
	})
}

// openModelSelector is Ctrl-L: the models with a key, filtered by typing.
func (m *Model) openModelSelector(filter string) tea.Cmd {
	return m.withModels(func(m *Model, models []agent.ModelEntry) tea.Cmd {
		if len(models) == 0 {
			m.warn("No model has a key set; 'prime models' lists them")
			return nil
		}
		cur := ""
		if md := m.ag.State().Model; md != nil {
			cur = md.Provider + "/" + md.ID
		}
		var entries []listEntry
		for _, e := range models {
			note := tokenCount(e.Model.ContextWindow) + " context"
			if e.Ref() == cur {
				note += " (current)"
			}
			entries = append(entries, listEntry{label: e.Ref(), note: note, value: e.Ref()})
		}
		l := newList("Choose a model", entries, func(m *Model, e listEntry) tea.Cmd {
			m.overlay = nil
			return m.setModel(e.value.(string))
		})
		l.filter = filter
		l.typeToFilter = true
		l.selectValue(cur)
		m.overlay = l
		return nil
	})
}

// thinkingCommand is /thinking [level].
func (m *Model) thinkingCommand(level string) tea.Cmd {
	levels := m.ag.AvailableThinkingLevels()
	set := func(l llm.ThinkingLevel) tea.Cmd {
		ctx, ag := m.ctx, m.ag
		return m.call(func() resultMsg {
			got, err := ag.SetThinkingLevel(ctx, l)
			return report(err, func(m *Model) string { return "Thinking level: " + string(got) })
		})
	}
	if level != "" {
		if !slices.Contains(levels, llm.ThinkingLevel(level)) {
			var names []string
			for _, l := range levels {
				names = append(names, string(l))
			}
			m.fail(fmt.Sprintf("unknown thinking level %q: the model accepts %s", level, strings.Join(names, ", ")))
			return nil
		}
		return set(llm.ThinkingLevel(level))
	}
	var entries []listEntry
	cur := m.ag.ThinkingLevel()
	for _, l := range levels {
		note := ""
		if l == cur {
			note = "(current)"
		}
		entries = append(entries, listEntry{label: string(l), note: note, value: l})
	}
	l := newList("Thinking level", entries, func(m *Model, e listEntry) tea.Cmd {
		m.overlay = nil
		return set(e.value.(llm.ThinkingLevel))
	})
	l.selectValue(cur)
	m.overlay = l
	return nil
}

// openSettings is /settings: the switches the UI offers, each written to
// the global settings file.
func (m *Model) openSettings() tea.Cmd {
	st := m.ag.State()
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	entries := []listEntry{
		{label: "auto-compaction", note: onOff(st.AutoCompaction), value: "compaction.enabled"},
	}
	entries = append(entries, m.compactionEntries()...)
	entries = append(entries, []listEntry{
		{label: "hide thinking", note: onOff(!m.showThinking), value: "hideThinkingBlock"},
		{label: "steering mode", note: string(st.SteeringMode), value: "steeringMode"},
		{label: "follow-up mode", note: string(st.FollowUpMode), value: "followUpMode"},
		{label: "double escape", note: m.ag.Preferences().DoubleEscapeAction, value: "doubleEscapeAction"},
	}...)
	l := newList("Settings (enter changes; saved to "+m.shortPath(m.ag.Preferences().GlobalFile)+")", entries, func(m *Model, e listEntry) tea.Cmd {
		m.overlay = nil
		return m.toggleSetting(e.value.(string))
	})
	m.overlay = l
	return nil
}

// toggleSetting moves a setting to its next value, for this session and in
// the global settings file.
func (m *Model) toggleSetting(key string) tea.Cmd {
	if cmd, ok := m.editCompactionSetting(key); ok {
		return cmd
	}
	st := m.ag.State()
	next := func(cur string, values ...string) string {
		i := slices.Index(values, cur)
		return values[(i+1)%len(values)]
	}
	var value string
	switch key {
	case "compaction.enabled":
		on := !st.AutoCompaction
		m.ag.SetAutoCompaction(on)
		value = boolText(on)
		m.status("Auto-compaction " + map[bool]string{true: "on", false: "off"}[on])
	case "hideThinkingBlock":
		m.showThinking = !m.showThinking
		m.repaint = true
		value = boolText(!m.showThinking)
	case "steeringMode":
		value = next(string(st.SteeringMode), string(agent.OneAtATime), string(agent.All))
		m.ag.SetQueueModes(agent.QueueMode(value), "")
		m.status("Steering mode: " + value)
	case "followUpMode":
		value = next(string(st.FollowUpMode), string(agent.OneAtATime), string(agent.All))
		m.ag.SetQueueModes("", agent.QueueMode(value))
		m.status("Follow-up mode: " + value)
	case "doubleEscapeAction":
		value = next(m.ag.Preferences().DoubleEscapeAction, "tree", "fork", "none")
		m.status("Double escape: " + value)
	}
	return m.settingsSet(key, value)
}

// openFork is /fork: choose one of the earlier messages (any user message
// of the file, newest first, as pi 1.6 lists them); the new session holds
// the conversation before it, and its text comes back to the editor.
func (m *Model) openFork() tea.Cmd {
	var entries []listEntry
	for _, p := range m.ag.ForkPoints() {
		entries = append(entries, listEntry{label: cutRunes(oneLine(p.Text), 120), value: p.EntryID})
	}
	if len(entries) == 0 {
		m.warn("No message to fork from yet")
		return nil
	}
	slices.Reverse(entries)
	l := newList("Fork from which message?", entries, func(m *Model, e listEntry) tea.Cmd {
		m.overlay = nil
		ag, id := m.ag, e.value.(string)
		return m.call(func() resultMsg {
			res, err := ag.Fork(id)
			return func(m *Model) tea.Cmd {
				if err != nil {
					m.fail(err.Error())
					return nil
				}
				m.editor.setValue(res.EditorText)
				m.status("Forked to new session")
				return nil
			}
		})
	})
	l.typeToFilter = true
	m.overlay = l
	return nil
}

// suggest refreshes the completion for the word at the cursor: commands
// at once, files with a directory listing in a command.
func (m *Model) suggest() tea.Cmd {
	w, kind := m.editor.completionWord()
	if w == m.editor.sugFor && kind != 0 {
		return nil
	}
	m.editor.sugFor, m.editor.sel = w, 0
	switch kind {
	case '/':
		var out []suggestion
		for _, c := range slashCommands {
			if strings.HasPrefix("/"+c.name, w) {
				out = append(out, suggestion{text: "/" + c.name, note: c.summary, args: c.args})
			}
		}
		m.editor.suggestions = append(out, m.resourceSuggestions(w)...)
		return nil
	case '@':
		cwd := m.opts.CWD
		return async(func() resultMsg {
			out := fileSuggestions(cwd, strings.TrimPrefix(w, "@"))
			return func(m *Model) tea.Cmd {
				if cur, _ := m.editor.completionWord(); cur == w {
					m.editor.suggestions = out
				}
				return nil
			}
		})
	}
	m.editor.suggestions = nil
	return nil
}

// fileSuggestions lists the entries of the directory a partial path names
// whose names start with its last part (hidden ones only when asked for),
// directories with a trailing slash.
func fileSuggestions(cwd, partial string) []suggestion {
	dir, prefix := filepath.Split(partial)
	abs := dir
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(cwd, dir)
	}
	ents, err := os.ReadDir(abs)
	if err != nil {
		return nil
	}
	var out []suggestion
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(strings.ToLower(name), strings.ToLower(prefix)) || strings.HasPrefix(name, ".") && !strings.HasPrefix(prefix, ".") {
			continue
		}
		text := "@" + dir + name
		note := ""
		if e.IsDir() {
			text += "/"
			note = "directory"
		}
		out = append(out, suggestion{text: text, note: note})
		if len(out) == 50 {
			break
		}
	}
	return out
}
