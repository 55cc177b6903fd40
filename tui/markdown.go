package tui

import (
	"strings"

	"charm.land/glamour/v2"
	gansi "charm.land/glamour/v2/ansi"
	gstyles "charm.land/glamour/v2/styles"
)

// markdown renders model text as styled terminal text (glamour), one
// renderer per width, and remembers the last result of each text so that a
// reply streamed delta by delta, or redrawn unchanged, is not parsed again.
type markdown struct {
	width    int
	renderer *glamour.TermRenderer
	cache    map[string]string
}

// markdownStyle is glamour's dark style without the document's margin and
// blank lines around it: the transcript places blocks itself.
func markdownStyle() gansi.StyleConfig {
	c := gstyles.DarkStyleConfig
	zero := uint(0)
	c.Document.Margin = &zero
	c.Document.BlockPrefix = ""
	c.Document.BlockSuffix = ""
	c.Document.Color = nil
	return c
}

// render returns text rendered for width cells. Should glamour fail, the
// text is shown as it is, wrapped: a reply is never lost to a rendering
// problem.
func (md *markdown) render(text string, width int) string {
	if width < 10 {
		width = 10
	}
	if md.renderer == nil || md.width != width {
		r, err := glamour.NewTermRenderer(glamour.WithStyles(markdownStyle()), glamour.WithWordWrap(width))
		if err != nil {
			return wrap(text, width)
		}
		md.renderer, md.width, md.cache = r, width, map[string]string{}
	}
	if out, ok := md.cache[text]; ok {
		return out
	}
	out, err := md.renderer.Render(text)
	if err != nil {
		out = wrap(text, width)
	}
	out = strings.Trim(out, "\n")
	// Lines glamour pads to the width end in spaces; drop them so that
	// copying from the terminal gives the text.
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	out = strings.Join(lines, "\n")
	if len(md.cache) > 512 {
		md.cache = map[string]string{}
	}
	md.cache[text] = out
	return out
}
