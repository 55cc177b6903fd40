package compaction

import (
	"slices"
	"strings"
)

// doc is a summary as lines, for repairs: the history part and, for a split
// turn, the separator and the turn's summary after it, which repairs never
// touch.
type doc struct {
	lines []string
	tail  string
}

func parseDoc(summary string) *doc {
	head, tail := summary, ""
	if i := strings.Index(summary, splitTurnSeparator); i >= 0 {
		head, tail = summary[:i], summary[i:]
	}
	head = strings.TrimRight(head, " \t\r\n")
	d := &doc{tail: tail}
	if head != "" {
		d.lines = strings.Split(head, "\n")
	}
	return d
}

func (d *doc) clone() *doc {
	return &doc{lines: append([]string(nil), d.lines...), tail: d.tail}
}

func (d *doc) String() string {
	return strings.Join(d.lines, "\n") + d.tail
}

// heading returns the level and the lower-case name of a heading line
// ("## Goal" → 2, "goal"), or 0 for any other line.
func heading(line string) (int, string) {
	t := strings.TrimSpace(line)
	n := len(t) - len(strings.TrimLeft(t, "#"))
	if n == 0 || n > 6 || len(t) == n || t[n] != ' ' {
		return 0, ""
	}
	return n, strings.ToLower(strings.TrimSpace(strings.Trim(t[n:], " *:")))
}

// sectionNames maps a heading of the format to the names models give it.
var sectionNames = map[string][]string{
	constraintsHeading: {"constraints & preferences", "constraints and preferences", "constraints", "preferences"},
	criticalHeading:    {"critical context"},
}

// find returns the index of section's heading and the end of its body (the
// next heading of the same or a higher level), or -1.
func (d *doc) find(section string) (at, end int) { return d.findName(sectionNames[section]...) }

// findName is find for a heading with one of names (lower case).
func (d *doc) findName(names ...string) (at, end int) {
	for i, line := range d.lines {
		level, name := heading(line)
		if level == 0 || !slices.Contains(names, name) {
			continue
		}
		end = len(d.lines)
		for j := i + 1; j < len(d.lines); j++ {
			if l, _ := heading(d.lines[j]); l > 0 && l <= level {
				end = j
				break
			}
		}
		return i, end
	}
	return -1, -1
}

// plain reports whether section is there with no placeholder in its body:
// adding a line to it adds that line and a line break, nothing else.
func (d *doc) plain(section string) bool {
	at, end := d.find(section)
	if at < 0 || len(d.lines) == 0 {
		return false
	}
	for _, line := range d.lines[at+1 : end] {
		if isNone(line) {
			return false
		}
	}
	return true
}

func (d *doc) has(section string) bool { at, _ := d.find(section); return at >= 0 }

// add writes line at the end of section's body, dropping a "(none)"
// placeholder there, creating the section where it belongs when the summary
// has none: Constraints after the Goal section (else first), Critical
// Context last.
func (d *doc) add(section, line string) { d.addBefore(section, line, 0) }

// addBefore is add with line written before the last n lines of the
// section's body.
func (d *doc) addBefore(section, line string, n int) {
	at, end := d.find(section)
	if at < 0 {
		pos := len(d.lines)
		if section == constraintsHeading {
			pos = 0
			if g, gend := d.findName("goal"); g >= 0 {
				for pos = gend; pos > g+1 && strings.TrimSpace(d.lines[pos-1]) == ""; pos-- {
				}
			}
		}
		block := []string{section}
		if pos > 0 && strings.TrimSpace(d.lines[pos-1]) != "" {
			block = append([]string{""}, block...)
		}
		if pos < len(d.lines) && strings.TrimSpace(d.lines[pos]) != "" {
			block = append(block, "")
		}
		d.lines = insert(d.lines, pos, block...)
		at, end = d.find(section)
	}
	for i := end - 1; i > at; i-- {
		if isNone(d.lines[i]) {
			d.lines = append(d.lines[:i], d.lines[i+1:]...)
			end--
		}
	}
	last := end
	for last > at+1 && strings.TrimSpace(d.lines[last-1]) == "" {
		last--
	}
	d.lines = insert(d.lines, max(last-n, at+1), line)
}

// dropRule takes out the list lines that state rule (white space and case
// aside), reporting whether there was one.
func (d *doc) dropRule(rule string) bool {
	k := strings.ToLower(folded(rule))
	n := len(d.lines)
	d.lines = slices.DeleteFunc(d.lines, func(line string) bool {
		t := strings.TrimSpace(line)
		item, ok := strings.CutPrefix(t, "- ")
		return ok && strings.Contains(strings.ToLower(folded(item)), k)
	})
	return len(d.lines) < n
}

// dropLeftOut removes the "(N older rules left out)" note of the summary by
// code from section once every rule is back.
func (d *doc) dropLeftOut(section string) {
	at, end := d.find(section)
	for i := end - 1; i > at; i-- {
		l := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(d.lines[i]), "-"))
		if strings.HasPrefix(l, "(") && strings.HasSuffix(l, "left out)") {
			d.lines = append(d.lines[:i], d.lines[i+1:]...)
		}
	}
}

// isNone reports a placeholder saying a section is empty.
func isNone(line string) bool {
	l := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "-")))
	return l == "(none)" || l == "none" || l == "none." || l == "(none yet)"
}

func insert(lines []string, at int, add ...string) []string {
	out := make([]string, 0, len(lines)+len(add))
	out = append(out, lines[:at]...)
	out = append(out, add...)
	return append(out, lines[at:]...)
}
