package tui

import (
	"image/color"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/prime-agent/prime/internal/numfmt"
)

// styles are the looks the UI uses, in the terminal's own 16 colours so that
// its theme decides the shades.
type styles struct {
	dim, muted, accent, warning, errorText, success, bold, italic lipgloss.Style
	user, thinking, diffAdd, diffDel, diffCtx                     lipgloss.Style
	toolPending, toolOK, toolError, selected, blockTitle          lipgloss.Style
	rule                                                          lipgloss.Style
}

func newStyles() styles {
	fg := func(c color.Color) lipgloss.Style { return lipgloss.NewStyle().Foreground(c) }
	return styles{
		dim:         lipgloss.NewStyle().Faint(true),
		muted:       fg(lipgloss.BrightBlack),
		accent:      fg(lipgloss.Cyan),
		warning:     fg(lipgloss.Yellow),
		errorText:   fg(lipgloss.Red),
		success:     fg(lipgloss.Green),
		bold:        lipgloss.NewStyle().Bold(true),
		italic:      lipgloss.NewStyle().Italic(true),
		user:        lipgloss.NewStyle().Background(lipgloss.BrightBlack).Foreground(lipgloss.BrightWhite),
		thinking:    fg(lipgloss.Magenta).Italic(true),
		diffAdd:     fg(lipgloss.Green),
		diffDel:     fg(lipgloss.Red),
		diffCtx:     fg(lipgloss.BrightBlack),
		toolPending: fg(lipgloss.BrightBlack),
		toolOK:      fg(lipgloss.Green),
		toolError:   fg(lipgloss.Red),
		selected:    lipgloss.NewStyle().Reverse(true),
		blockTitle:  lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Cyan),
		rule:        fg(lipgloss.BrightBlack),
	}
}

// paint draws every line of s in a style, each line opening and closing
// it: what Style.Render does for text of many lines, without measuring and
// padding each line to the widest (which costs a repaint most of its time).
func paint(st lipgloss.Style, s string) string {
	marked := st.Render("X")
	i := strings.IndexByte(marked, 'X')
	if i < 0 || marked == "X" {
		return s
	}
	open, close := marked[:i], marked[i+1:]
	lines := strings.Split(s, "\n")
	for j, l := range lines {
		if l != "" {
			lines[j] = open + l + close
		}
	}
	return strings.Join(lines, "\n")
}

// wrap breaks s into lines no wider than width, keeping escape codes intact.
func wrap(s string, width int) string {
	if width <= 0 {
		return s
	}
	return ansi.Wrap(s, width, "")
}

// truncate cuts s to width cells, with an ellipsis when it was cut.
func truncate(s string, width int) string {
	if width <= 0 {
		return ""
	}
	return ansi.Truncate(s, width, "…")
}

// oneLine folds s to one line: newlines and tabs become spaces, runs of
// spaces one space.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// cutRunes returns s cut to n runes, with "…" when it was cut.
func cutRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// tokenCount writes a token count as the footer shows it: 999, 1.2k, 12k,
// 1.2M, 12M.
func tokenCount(n int) string { return numfmt.Tokens(n) }

// padRight pads s with spaces to width cells.
func padRight(s string, width int) string {
	if w := ansi.StringWidth(s); w < width {
		return s + strings.Repeat(" ", width-w)
	}
	return s
}

// columnRow writes a row of a two-column list (the keys, the receipt):
// name padded to col, then text wrapped beside it and under it. A screen
// too narrow for the text to have 20 columns beside the names gets the name
// on a line of its own and the text wrapped under it, indented by 4, so
// that no line is wider than the screen.
func columnRow(v *view, indent string, name string, style lipgloss.Style, text string, col int) string {
	if v.width >= col+20 {
		lines := strings.Split(wrap(text, v.width-col), "\n")
		b := indent + style.Render(padRight(name, col-len(indent)-1)) + " " + lines[0]
		for _, l := range lines[1:] {
			b += "\n" + strings.Repeat(" ", col) + l
		}
		return b
	}
	b := indent + style.Render(truncate(name, max(v.width-len(indent), 1)))
	for _, l := range strings.Split(wrap(text, max(v.width-len(indent)-4, 6)), "\n") {
		b += "\n" + indent + "    " + l
	}
	return b
}

// fitLines wraps hard, styles kept, every line of s wider than width: the
// last guard before the terminal, which would wrap it where it likes and
// leave the rows counted for the screen short of the rows drawn.
func fitLines(s string, width int) string {
	if width <= 0 || !anyWider(s, width) {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if ansi.StringWidth(l) > width {
			lines[i] = ansi.Hardwrap(l, width, true)
		}
	}
	return strings.Join(lines, "\n")
}

// anyWider reports whether a line of s is wider than width cells.
func anyWider(s string, width int) bool {
	for l := range strings.SplitSeq(s, "\n") {
		if len(l) > width && ansi.StringWidth(l) > width {
			return true
		}
	}
	return false
}

// keysLine is a selector's line of keys, "  ↑↓ move · enter select · …",
// cut to the width at a " · ": the keys that do not fit are left out from
// the end, never one broken in two (the first is cut when it alone is too
// wide).
func keysLine(width int, keys ...string) string {
	line := "  " + keys[0]
	for _, k := range keys[1:] {
		next := line + " · " + k
		if ansi.StringWidth(next) > width {
			break
		}
		line = next
	}
	return truncate(line, width)
}

// wrapKeys writes keys joined by " · ", wrapped at the separators so that
// each key and what it does stay on one line ("! bash", not "!" at a line's
// end and "bash" on the next).
func wrapKeys(width int, keys ...string) string {
	var lines []string
	line := ""
	for _, k := range keys {
		switch {
		case line == "":
			line = k
		case ansi.StringWidth(line+" · "+k) <= width:
			line += " · " + k
		default:
			lines = append(lines, line)
			line = k
		}
	}
	lines = append(lines, line)
	return wrap(strings.Join(lines, "\n"), width)
}
