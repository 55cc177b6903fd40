package tui

import (
	"image/color"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
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
func tokenCount(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n)
	case n < 10_000:
		return trimZero(strconv.FormatFloat(float64(n)/1000, 'f', 1, 64)) + "k"
	case n < 1_000_000:
		return strconv.Itoa((n+500)/1000) + "k"
	case n < 10_000_000:
		return trimZero(strconv.FormatFloat(float64(n)/1_000_000, 'f', 1, 64)) + "M"
	}
	return strconv.Itoa((n+500_000)/1_000_000) + "M"
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// padRight pads s with spaces to width cells.
func padRight(s string, width int) string {
	if w := ansi.StringWidth(s); w < width {
		return s + strings.Repeat(" ", width-w)
	}
	return s
}
