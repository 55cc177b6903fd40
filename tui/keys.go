package tui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/agent"
)

// doublePress is how close two presses of Ctrl-C or Escape must be to count
// as one double press.
const doublePress = 500 * time.Millisecond

// exitPress is how long the hint after a first Ctrl-C lasts, and the second
// press exits: long enough to read (pi's is about a second).
const exitPress = time.Second

// onKey handles a key press: the open selector's first, else the main keys,
// else the editor's.
func (m *Model) onKey(k tea.KeyPressMsg) tea.Cmd {
	m.now = m.clock()
	if m.overlay != nil {
		return m.overlay.key(m, k)
	}
	switch k.String() {
	case "ctrl+c":
		if m.exitHint() {
			return m.exit()
		}
		m.lastCtrlC = m.now
		m.editor.reset()
		return nil
	case "ctrl+d":
		if m.editor.value() == "" {
			return m.exit()
		}
		return nil
	case "esc":
		return m.escape()
	case "enter":
		// With suggestions open, Enter completes the word; a command
		// typed in full (or one without arguments) is sent at once.
		if n := len(m.editor.suggestions); n > 0 {
			w, _ := m.editor.completionWord()
			typed := m.editor.suggestions[m.editor.sel].text == w
			s, _ := m.editor.accept()
			if s.args && !typed {
				return nil
			}
		}
		return m.send(agent.Steer)
	case "alt+enter":
		return m.send(agent.FollowUp)
	case "alt+up":
		return m.restoreQueue()
	case "ctrl+o":
		m.expanded = !m.expanded
		m.repaint = true
		return nil
	case "ctrl+t":
		m.showThinking = !m.showThinking
		m.repaint = true
		return m.settingsSet("hideThinkingBlock", boolText(!m.showThinking))
	case "ctrl+l":
		return m.openModelSelector("")
	case "ctrl+p":
		return m.cycleModel(false)
	case "ctrl+shift+p":
		return m.cycleModel(true)
	case "shift+tab":
		return m.cycleThinking()
	case "tab":
		if len(m.editor.suggestions) > 0 {
			m.editor.accept()
			return m.suggest()
		}
		return m.suggest()
	case "up", "down":
		dir := 1
		if k.String() == "up" {
			dir = -1
		}
		if n := len(m.editor.suggestions); n > 0 {
			m.editor.sel = (m.editor.sel + dir + n) % n
			return nil
		}
		if m.editor.browse(dir) {
			return nil
		}
	case "backspace":
		if m.editor.deleteMarker() {
			return m.suggest()
		}
	}
	cmd := m.editor.update(k)
	return tea.Batch(cmd, m.suggest())
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// send submits the editor's text.
func (m *Model) send(behavior agent.Behavior) tea.Cmd {
	text := m.editor.text()
	if strings.TrimSpace(text) == "" {
		return nil
	}
	m.editor.remember(text)
	m.editor.reset()
	return m.submit(text, behavior)
}

// escape is Escape: it cancels what runs (a compaction, a branch summary,
// a retry's wait, a shell command, the reply — putting the queued messages
// back in the editor first), closes the suggestions, clears a shell
// command being typed, and, pressed twice on an empty editor, opens /tree.
func (m *Model) escape() tea.Cmd {
	ag := m.ag
	abort := async(func() resultMsg { ag.Abort(); return nil })
	switch {
	case len(m.editor.suggestions) > 0:
		m.editor.suggestions, m.editor.sugFor = nil, ""
		return nil
	case m.compacting != "" || m.manual || m.summarizing || m.navigating:
		return abort
	case m.retry != nil:
		return async(func() resultMsg { ag.AbortRetry(); return nil })
	case m.bash != nil && !m.bash.done:
		return async(func() resultMsg { ag.AbortBash(); return nil })
	case m.busy:
		m.takeQueue()
		return abort
	case strings.HasPrefix(m.editor.value(), "!"):
		m.editor.reset()
		return nil
	case m.editor.value() == "":
		if !m.lastEsc.IsZero() && m.now.Sub(m.lastEsc) < doublePress {
			m.lastEsc = time.Time{}
			switch m.ag.Preferences().DoubleEscapeAction {
			case "fork":
				return m.openFork()
			case "none":
				return nil
			}
			return m.openTree()
		}
		m.lastEsc = m.now
	}
	return nil
}

// takeQueue moves the queued messages into the editor: theirs first, then
// what was being typed, with blank lines between.
func (m *Model) takeQueue() bool {
	steering, followUp := m.ag.ClearQueue()
	texts := append(append([]string(nil), steering...), followUp...)
	for _, h := range m.held {
		texts = append(texts, h.text)
	}
	m.held = nil
	if len(texts) == 0 {
		return false
	}
	if cur := m.editor.value(); strings.TrimSpace(cur) != "" {
		texts = append(texts, cur)
	}
	m.editor.setValue(strings.Join(texts, "\n\n"))
	return true
}

// restoreQueue is Alt-Up.
func (m *Model) restoreQueue() tea.Cmd {
	if !m.takeQueue() {
		m.status("No queued messages to restore")
	}
	return nil
}

// exit quits. While the agent works (a run, a compaction, a shell command)
// it stops it first and quits once it has stopped and what it left is
// printed, so that the last frame shows the stop (the command's "aborted"
// result, "Operation aborted"), not a tool frozen as running. exitWait
// bounds the wait; pressed again meanwhile, it quits at once.
func (m *Model) exit() tea.Cmd {
	if m.exiting || m.stopped() {
		m.quitting = true
		return nil
	}
	m.exiting = true
	ag := m.ag
	return tea.Batch(async(func() resultMsg { ag.Abort(); ag.AbortBash(); return nil }),
		tea.Tick(exitWait, func(time.Time) tea.Msg { return exitNowMsg{} }))
}

// exitWait is how long an exit waits for the agent to stop.
const exitWait = 3 * time.Second

// stopped reports whether nothing runs and everything finished is printed.
func (m *Model) stopped() bool {
	working := m.busy || m.compacting != "" || m.manual || m.summarizing || m.navigating || (m.bash != nil && !m.bash.done)
	return !working && !m.printing && len(m.pending) == 0 && m.printable(m.printed) == m.printed
}
