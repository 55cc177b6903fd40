package tui

import (
	"image/color"

	"charm.land/lipgloss/v2"

	"github.com/prime-agent/prime/tui/markdown"
)

// replies renders model text as styled terminal text and remembers the
// last result of each text at the width drawn, so that a transcript drawn
// again unchanged is not parsed again.
type replies struct {
	r     *markdown.Renderer
	width int
	cache map[string]string
}

// markdownTheme is the look of replies, in the terminal's own 16 colours.
func markdownTheme() markdown.Theme {
	fg := func(c color.Color) lipgloss.Style { return lipgloss.NewStyle().Foreground(c) }
	muted := fg(lipgloss.BrightBlack)
	return markdown.Theme{
		Heading1: lipgloss.NewStyle().Bold(true).Underline(true).Foreground(lipgloss.Cyan),
		Heading2: lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Cyan),
		Heading:  lipgloss.NewStyle().Bold(true),
		Bold:     lipgloss.NewStyle().Bold(true),
		Italic:   lipgloss.NewStyle().Italic(true),
		Strike:   lipgloss.NewStyle().Strikethrough(true),
		Code:     fg(lipgloss.Yellow),
		Link:     lipgloss.NewStyle().Underline(true).Foreground(lipgloss.Blue),
		URL:      muted, Marker: fg(lipgloss.Cyan), Quote: muted, Rule: muted, Border: muted, Fence: muted, HTML: muted,
		Keyword: fg(lipgloss.Magenta), String: fg(lipgloss.Green), Comment: muted, Number: fg(lipgloss.Yellow),
		Type: fg(lipgloss.Cyan), Added: fg(lipgloss.Green), Removed: fg(lipgloss.Red), Hunk: fg(lipgloss.Cyan),
	}
}

// render returns finished text rendered for width cells.
func (md *replies) render(text string, width int) string {
	if md.r == nil {
		md.r = markdown.New(markdownTheme())
	}
	if md.width != width || md.cache == nil {
		md.width, md.cache = width, map[string]string{}
	}
	if out, ok := md.cache[text]; ok {
		return out
	}
	out := md.r.Render(text, width)
	if len(md.cache) > 512 {
		md.cache = map[string]string{}
	}
	md.cache[text] = out
	return out
}

// renderPartial renders a reply still streaming (nothing remembered: the
// text changes with each delta).
func (md *replies) renderPartial(text string, width int) string {
	if md.r == nil {
		md.r = markdown.New(markdownTheme())
	}
	return md.r.RenderPartial(text, width)
}
