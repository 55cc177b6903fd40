package markdown

import "strings"

// closeOpen returns a reply still streaming with the inline markers its
// last paragraph opened and has not closed yet closed (inline code, strong
// emphasis, strikethrough), so that it renders as it will once they
// arrive; a marker with nothing after it yet is left out. Inside an open
// code fence nothing is changed.
func closeOpen(src string) string {
	if inFence(src) {
		return src
	}
	start := strings.LastIndex(src, "\n\n") + 1
	body := strings.TrimRight(src[start:], " \t\n")
	trail := src[start+len(body):]
	if body == "" {
		return src
	}
	// Inline code first: inside it, no other marker counts.
	if i, open := openMarker(body, "`"); open {
		return src[:start] + closeAt(body, i, "`") + trail
	}
	prose := withoutCode(body)
	for _, m := range []string{"**", "~~"} {
		if i, open := openMarker(prose, m); open {
			body = closeAt(body, i+len(body)-len(prose), m)
			prose = withoutCode(body)
		}
	}
	return src[:start] + body + trail
}

// openMarker reports whether s has an odd number of m (counted left to
// right, not overlapping; backticks as runs of one) and where the last is.
func openMarker(s, m string) (int, bool) {
	count, last := 0, -1
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], m) {
			if m == "`" && strings.HasPrefix(s[i:], "``") {
				// A run of backticks: not a single one.
				j := i
				for j < len(s) && s[j] == '`' {
					j++
				}
				i = j
				continue
			}
			count++
			last = i
			i += len(m)
			continue
		}
		i++
	}
	return last, count%2 == 1
}

// closeAt closes the marker m opened at s[i:]: the closer goes at the end,
// or the opener is dropped when nothing follows it yet.
func closeAt(s string, i int, m string) string {
	if strings.TrimSpace(s[i+len(m):]) == "" {
		return strings.TrimRight(s[:i], " ")
	}
	return s + m
}

// withoutCode is s with its inline code blanked out, the same length.
func withoutCode(s string) string {
	b := []byte(s)
	in := false
	for i := range b {
		if b[i] == '`' {
			in = !in
			continue
		}
		if in {
			b[i] = ' '
		}
	}
	return string(b)
}

// inFence reports whether src ends inside a fenced code block.
func inFence(src string) bool {
	open := ""
	for _, l := range strings.Split(src, "\n") {
		t := strings.TrimLeft(l, " ")
		switch {
		case open == "" && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")):
			open = t[:3]
		case open != "" && strings.HasPrefix(t, open):
			open = ""
		}
	}
	return open != ""
}
