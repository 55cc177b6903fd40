package tui

import (
	"os"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// startFrame puts the first frame on the terminal in one write, once the
// size is known and the header is ready (the agent has chosen its model):
// the transcript so far, whose top scrolls into the scrollback as it is
// written, and below it a copy of the live area, the cursor left at the
// live area's top. The renderer, which has drawn nothing until then, draws
// the same live area there next, once the program has written it. Printed in pieces above a live area
// already drawn, a resumed transcript would show its layout changing from
// frame to frame (the live area alone, then part of the conversation, then
// all of it).
func (m *Model) startFrame() tea.Cmd {
	if !m.sized || !m.items[0].finished() {
		return nil
	}
	end := m.printable(0)
	v := m.newView()
	v.width = max(m.width-1, 10) // as collect prints
	var b strings.Builder
	rows := 0
	for i, it := range m.items[:end] {
		s := fitLines(renderItem(it, v), v.width)
		if s == "" {
			continue
		}
		if i > 0 {
			b.WriteString("\x1b[K\r\n") // a blank line between blocks
			rows++
		}
		for line := range strings.SplitSeq(s, "\n") {
			b.WriteString(line)
			b.WriteString("\x1b[K\r\n")
			rows++
		}
	}
	m.printed, m.screenRows = end, min(rows, m.height)
	m.started = true // for the copy; set for good once the write is out
	live := strings.Split(m.View().Content, "\n")
	m.started, m.starting = false, true
	b.WriteString("\x1b[J")
	b.WriteString(strings.Join(live, "\r\n"))
	b.WriteString("\r")
	if len(live) > 1 {
		b.WriteString("\x1b[" + strconv.Itoa(len(live)-1) + "A")
	}
	// The renderer draws nothing until the write is out (startedMsg comes
	// after the program has taken it). A long session's sums hold the
	// agent for a moment: they start with it, and fill the footer in when
	// they are done.
	return tea.Batch(tea.Sequence(tea.Raw(b.String()), func() tea.Msg { return startedMsg{} }), m.statsCmd())
}

// syncOutput is the terminal with each write of the program made one
// synchronized update (mode 2026): a terminal that supports it shows a
// frame or a print whole, never half drawn; others ignore the mode. The
// renderer turns the mode on itself only where the terminal answers its
// query, which tmux and terminals reached over SSH do not.
type syncOutput struct{ *os.File }

// Write writes p between the begin and end of a synchronized update.
func (o syncOutput) Write(p []byte) (int, error) {
	buf := make([]byte, 0, len(p)+16)
	buf = append(buf, "\x1b[?2026h"...)
	buf = append(buf, p...)
	buf = append(buf, "\x1b[?2026l"...)
	if _, err := o.File.Write(buf); err != nil {
		return 0, err
	}
	return len(p), nil
}
