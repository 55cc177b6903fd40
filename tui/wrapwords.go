package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// wrapWords wraps s at spaces only, so that a flag such as --model or a
// name such as claude-haiku-4-5 is never split at its hyphens (as ansi.Wrap
// does); a word wider than width is cut. Used for notices, which name
// flags and models.
func wrapWords(s string, width int) string {
	if width <= 0 {
		return s
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line, lineWidth := "", 0
		for _, word := range strings.Fields(para) {
			w := ansi.StringWidth(word)
			switch {
			case line == "":
			case lineWidth+1+w <= width:
				line += " "
				lineWidth++
			default:
				out = append(out, line)
				line, lineWidth = "", 0
			}
			if line == "" && w > width {
				// A word wider than the line is cut into lines of
				// width cells in one pass over it (cutting a line off
				// and measuring the rest again at each cut was
				// quadratic: a 1 MB word in an error took minutes).
				pieces := strings.Split(ansi.Hardwrap(word, width, true), "\n")
				out = append(out, pieces[:len(pieces)-1]...)
				word = pieces[len(pieces)-1]
				w = ansi.StringWidth(word)
			}
			line += word
			lineWidth += w
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// wrapSpaces wraps one line of program output at its spaces, as pi does,
// never inside a word (ansi.Wrap also breaks after a hyphen): the spaces
// where the line breaks are dropped, others (indentation, aligned
// columns) are kept; a word wider than width is cut.
func wrapSpaces(s string, width int) string {
	s = strings.ToValidUTF8(s, "\uFFFD") // as a terminal shows a stray byte
	if width <= 0 || ansi.StringWidth(s) <= width {
		return s
	}
	var out []string
	var line strings.Builder
	lineWidth := 0
	spaces := 0 // spaces waiting between the line and the next word
	flush := func() {
		out = append(out, line.String())
		line.Reset()
		lineWidth = 0
	}
	for i := 0; i < len(s); {
		if s[i] == ' ' {
			spaces++
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] != ' ' {
			j++
		}
		word := s[i:j]
		i = j
		w := ansi.StringWidth(word)
		if line.Len() > 0 && lineWidth+spaces+w > width {
			flush()
			spaces = 0
		}
		if line.Len() == 0 && len(out) == 0 && spaces > 0 && spaces+w <= width {
			// Indentation at the start of the line (not at a break).
			line.WriteString(strings.Repeat(" ", spaces))
			lineWidth = spaces
		} else if line.Len() > 0 {
			line.WriteString(strings.Repeat(" ", spaces))
			lineWidth += spaces
		}
		spaces = 0
		// The width of what is left is the width less the cut's:
		// measuring the rest again at every cut made a long word at a
		// narrow width quadratic (a 16 KB line at width 1 took 12 s).
		for lineWidth+w > width {
			cut, cw := cutWidth(word, width-lineWidth)
			line.WriteString(word[:cut])
			flush()
			word = word[cut:]
			w -= cw
		}
		line.WriteString(word)
		lineWidth += w
	}
	if line.Len() > 0 || len(out) == 0 {
		out = append(out, line.String())
	}
	return strings.Join(out, "\n")
}

// cutWidth is the length in bytes of the longest start of s at most width
// cells wide, but at least its first character, and that start's width.
func cutWidth(s string, width int) (int, int) {
	n, w := 0, 0
	for n < len(s) {
		g, gw := ansi.FirstGraphemeCluster(s[n:], ansi.GraphemeWidth)
		if len(g) == 0 {
			g = s[n : n+1]
		}
		if n > 0 && w+gw > width {
			break
		}
		n, w = n+len(g), w+gw
	}
	return n, w
}

// firstGrapheme is the first character of s.
func firstGrapheme(s string) string {
	n, _ := cutWidth(s, 0)
	return s[:n]
}
