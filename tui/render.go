package tui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/internal/termtext"
)

// flush hands the finished items at the head of the live area to the
// scrollback, in order: one print at a time, the next when the terminal
// has it. A status line stays live while it is the last item, so that the
// next status can replace it.
//
// A print taller than the room above the live area would scroll the live
// area itself into the scrollback (the renderer makes room by scrolling
// the whole screen), so the text goes out in pieces that fit.
func (m *Model) flush() tea.Cmd {
	if m.printing {
		return nil
	}
	if !m.started {
		if m.starting {
			return nil
		}
		return m.startFrame()
	}
	if m.repaint {
		m.pending = nil // all of it is printed again
	}
	if len(m.pending) == 0 {
		m.collect()
	}
	if len(m.pending) == 0 {
		return nil
	}
	piece := m.pending[0]
	m.pending = m.pending[1:]
	if !piece.clear {
		// No taller than the room above the live area as it is on the
		// screen: the rest goes next, once this is printed.
		room := max(m.height-m.liveLines-2, 1)
		if lines := strings.Split(piece.text, "\n"); len(lines) > room {
			rest := printPiece{text: strings.Join(lines[room:], "\n")}
			m.pending = append([]printPiece{rest}, m.pending...)
			piece.text = strings.Join(lines[:room], "\n")
		}
		if piece.text == "" {
			piece.text = " " // the renderer prints nothing for an empty text
		}
	}
	m.printing = true
	rows := strings.Count(piece.text, "\n") + 1
	if piece.clear {
		m.screenRows = 0
	}
	m.screenRows = min(m.screenRows+rows, m.height)
	var cmds []tea.Cmd
	switch {
	case piece.after > 0:
		clock, after := m.drawn, piece.after
		cmds = append(cmds, func() tea.Msg { clock.wait(after, drawBound); return waitedMsg{} })
	case piece.wait:
		cmds = append(cmds, tea.Tick(printWait, func(time.Time) tea.Msg { return waitedMsg{} }))
	}
	cmds = append(cmds, tea.Println(piece.text))
	if piece.clear {
		// The renderer draws the whole frame again after a clear; a
		// print before it has would land against the frame it erased.
		// clearedMsg comes after the clear, and waits for the frame.
		cmds = append(cmds, tea.ClearScreen, func() tea.Msg { return clearedMsg{} })
		return tea.Sequence(cmds...)
	}
	cmds = append(cmds, func() tea.Msg { return printedMsg{} })
	return tea.Sequence(cmds...)
}

// redrawn ends a print that cleared the screen once the frame drawn after
// the clear has been written.
func (m *Model) redrawn() tea.Cmd {
	if m.drawn == nil {
		return tea.Tick(printWait, func(time.Time) tea.Msg { return printedMsg{} })
	}
	clock, after := m.drawn, m.drawn.next()
	return func() tea.Msg { clock.wait(after, drawBound); return printedMsg{} }
}

// printWait is how long a print waits for the renderer to draw the live
// area without what is printed (it draws 60 frames a second) where no
// drawClock tells when it has: text printed above the taller frame still
// on screen would leave, once the frame shrinks, blank rows below the
// footer, or be drawn over.
const printWait = 60 * time.Millisecond

// drawBound is the longest a print waits for a drawClock to see the frame
// written.
const drawBound = time.Second

// printPiece is a part of the transcript on its way to the scrollback;
// clear erases the screen and the scrollback first; wait holds it back
// until the live area has been drawn without it.
type printPiece struct {
	text  string
	clear bool
	wait  bool
	// after, with a drawClock, is the view that must be written first
	// (in place of wait's fixed delay).
	after uint64
}

// settlePad draws the screen again when the live area has shrunk (a
// selector, the completion list or the loader gone) with nothing printed
// coming to take the rows it gives up: kept as blank rows above the editor
// (see floor), they would push the transcript's end out of view. Drawn
// again, the transcript fills the screen down to the editor, as at a fresh
// start. Called after the updates that can shrink the live area, before
// their frame; not while the agent works, whose prints take the rows.
func (m *Model) settlePad() {
	if !m.started || m.busy || m.floor == 0 || m.printing || len(m.pending) > 0 || m.printable(m.printed) > m.printed {
		return
	}
	if m.screenRows+m.floor < m.height {
		return // the screen is not full: the live area may shrink
	}
	items, below := m.content()
	if n := strings.Count(items+below, "\n") + 1; n < m.floor {
		m.repaint = true
	}
}

// printable returns the end of the run of items from start that are ready
// for the scrollback: finished, except a status line that is the last item
// (the next status may replace it).
func (m *Model) printable(start int) int {
	end := start
	for end < len(m.items) && m.items[end].finished() {
		if n, ok := m.items[end].(*noticeItem); ok && n.level == agent.NoticeInfo && end == len(m.items)-1 {
			break
		}
		end++
	}
	return end
}

// renderItem renders an item as the terminal may show it: only the
// colours and emphasis Prime gave it. The text in an item is someone
// else's (a file a command printed, the model's reply, a server's error),
// and an escape sequence in it would set the window title, clear the
// screen or write the clipboard.
func renderItem(it item, v *view) string { return termtext.KeepStyle(it.render(v)) }

// collect renders the items ready for the scrollback into pieces.
func (m *Model) collect() {
	start := m.printed
	if m.repaint {
		start = 0
	}
	end := m.printable(start)
	if end == start && !m.repaint {
		return
	}
	v := m.newView()
	// One column short of the terminal: bubbletea ends each printed line
	// by erasing the rest of it, and a terminal whose cursor waits in the
	// last column after a full line (xterm's pending wrap) erases that
	// column's character with it.
	v.width = max(m.width-1, 10)
	var chunks []string
	for i, it := range m.items[start:end] {
		if s := fitLines(renderItem(it, v), v.width); s != "" {
			if start+i > 0 {
				s = "\n" + s // a blank line between blocks
			}
			chunks = append(chunks, s)
		}
	}
	m.printed = end
	lines := strings.Split(strings.Join(chunks, "\n"), "\n")
	clear := m.repaint
	m.repaint = false
	if len(chunks) == 0 && !clear {
		return
	}
	if clear {
		// Erase the screen and the scrollback, then print everything
		// again from the top, in one piece: the text scrolls as it is
		// written, and the renderer redraws the live area below it.
		m.pending = append(m.pending, printPiece{text: "\x1b[H\x1b[2J\x1b[3J" + strings.Join(lines, "\n"), clear: true})
		m.floor = 0
		return
	}
	// Rows the live area gives up to the print (a finished item leaving
	// it, the padding, or rows it just lost) must be gone from the screen
	// before the print lands: the print waits, and the live area may
	// shrink by what it brings.
	leaves := m.pad > 0 || min(end, m.liveEnd) > max(start, m.liveStart)
	recent := time.Since(m.shrank) < printWait
	if leaves || recent {
		m.floor = max(m.floor-len(lines), 0)
	}
	piece := printPiece{text: strings.Join(lines, "\n")}
	switch {
	case m.drawn != nil && leaves:
		piece.after = m.drawn.next() // the view without them, written
	case m.drawn != nil && recent:
		piece.after = m.shrankView // at once if that frame is written
	default:
		piece.wait = leaves || recent
	}
	m.pending = append(m.pending, piece)
}

// View draws the live area: the items still changing, the queued messages,
// the editor (or the selector open in its place) and the footer.
func (m *Model) View() tea.View {
	var view uint64
	if m.drawn != nil {
		view = m.drawn.viewed()
	}
	if !m.started {
		// Nothing is drawn before the first frame (startFrame) has put
		// the transcript and a copy of this view on the terminal.
		return tea.NewView("")
	}
	items, below := m.content()
	content := items + below
	n := strings.Count(content, "\n") + 1
	m.pad = 0
	if n < m.floor && m.screenRows+m.floor >= m.height {
		// Kept at its height, the editor and the footer stay at the
		// bottom: blank rows above them, which printed text takes.
		m.pad = m.floor - n
		content = items + strings.Repeat("\n", m.pad) + below
		n = m.floor
	}
	if n < m.liveLines {
		m.shrank, m.shrankView = time.Now(), view
	}
	m.liveLines, m.floor = n, n
	if m.quitting {
		// The last frame stays on the terminal whole: bubbletea's shutdown
		// erases from the frame's last row down and leaves the cursor
		// there, so that row is an empty one below the footer.
		content += "\n"
	}
	out := tea.NewView(content)
	out.WindowTitle = "prime"
	return out
}

// content is the live area's text: the items still changing, and below
// them the rest (the editor or overlay and the footer). It notes which
// items it draws.
func (m *Model) content() (items, rest string) {
	v := m.newView()
	var parts []string
	// Items about to be printed are not drawn here too: a frame holding
	// them would be scrolled into the scrollback by their print.
	m.liveStart, m.liveEnd = m.printable(min(m.printed, len(m.items))), len(m.items)
	for _, it := range m.items[m.liveStart:] {
		if s := fitLines(renderItem(it, v), v.width); s != "" {
			parts = append(parts, s)
		}
	}
	var below strings.Builder
	if q := m.queueLines(v); q != "" {
		below.WriteString("\n" + q + "\n")
	}
	below.WriteString("\n")
	if m.overlay != nil {
		below.WriteString(termtext.KeepStyle(m.overlay.render(m, v)) + "\n")
	} else {
		rule := m.st.rule
		if strings.HasPrefix(m.editor.value(), "!") {
			rule = m.st.warning
		}
		below.WriteString(m.editor.render(v, m.indicator(), rule) + "\n")
	}
	below.WriteString(termtext.KeepStyle(m.footer.render(v)))
	rest = fitLines(below.String(), v.width)
	// The live area never grows past the screen: what changes there (a
	// reply being streamed) shows its end, and reaches the scrollback whole
	// once it is finished. A taller frame would push copies of itself into
	// the scrollback.
	live := strings.Join(parts, "\n\n")
	if live != "" {
		room := m.height - strings.Count(rest, "\n") - 2
		lines := strings.Split(live, "\n")
		if len(lines) > room {
			lines = lines[len(lines)-max(room, 0):]
		}
		live = strings.Join(lines, "\n")
	}
	if live != "" {
		if m.printed > 0 {
			live = "\n" + live // the blank line the print will have
		}
		live += "\n"
	}
	return live, rest
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// indicator is the line drawn in the editor's top rule while the agent
// works: the working, retry, compaction or branch-summary loader.
func (m *Model) indicator() string {
	if m.quitting {
		return "" // the last frame stays on the terminal: nothing moving
	}
	if m.exiting {
		return m.st.muted.Render("stopping the agent to exit… (ctrl+c: exit now)")
	}
	if m.exitHint() {
		return m.st.muted.Render("ctrl+c again to exit")
	}
	spin := m.st.accent.Render(spinnerFrames[m.frame%len(spinnerFrames)])
	switch {
	case m.compacting != "" || m.manual:
		return spin + " " + m.compactingLine()
	case m.summarizing || m.navigating:
		return spin + " summarizing branch… (escape to cancel)"
	case m.retry != nil:
		return spin + " " + m.st.warning.Render(m.retryLine())
	case m.bash != nil && !m.bash.done:
		return spin + " running $ " + truncate(oneLine(m.bash.command), 40)
	case m.busy:
		return spin + " working… (escape to interrupt)"
	}
	return ""
}

// exitHint reports whether a second Ctrl-C now exits (the hint shows).
func (m *Model) exitHint() bool {
	return !m.lastCtrlC.IsZero() && m.now.Sub(m.lastCtrlC) < exitPress
}

// queueLines lists the messages waiting: the agent's steering and
// follow-up queues, and those held back during a compaction.
func (m *Model) queueLines(v *view) string {
	var lines []string
	for _, s := range m.steering {
		lines = append(lines, v.st.muted.Render(truncate("Steering: "+oneLine(s), v.width)))
	}
	for _, s := range m.followUp {
		lines = append(lines, v.st.muted.Render(truncate("Follow-up: "+oneLine(s), v.width)))
	}
	for _, h := range m.held {
		lines = append(lines, v.st.muted.Render(truncate("After compaction: "+oneLine(h.text), v.width)))
	}
	if len(m.steering)+len(m.followUp) > 0 {
		lines = append(lines, v.st.dim.Render("↳ alt+up to edit all queued messages"))
	}
	return strings.Join(lines, "\n")
}
