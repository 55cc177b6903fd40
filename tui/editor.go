package tui

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// editor is the message editor: a multi-line text area with history
// (Up and Down at its first and last line), and the suggestions of the
// completion under it (/ commands, @ files).
type editor struct {
	ta      textarea.Model
	history []string
	// histPos is the history entry shown, len(history) when none is; draft
	// is what was typed before browsing.
	histPos int
	draft   string

	// suggestions are the completions offered for the word at the cursor
	// (sugFor); sel is the one highlighted.
	suggestions []suggestion
	sugFor      string
	sel         int

	// pastes are the large pastes the editor shows as markers
	// ("[paste #1 +30 lines]"), by number; pasted counts them. A marker
	// the user edits no longer matches and is sent as typed.
	pastes map[int]string
	pasted int
}

// suggestion is one completion: the text that replaces the word, and a
// description.
type suggestion struct {
	text, note string
	// args says the command takes arguments: accepting it adds a space
	// instead of sending it.
	args bool
}

func newEditor() editor {
	ta := textarea.New()
	ta.Prompt = ""
	ta.ShowLineNumbers = false
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = 12
	ta.CharLimit = 0
	km := textarea.DefaultKeyMap()
	km.InsertNewline = key.NewBinding(key.WithKeys("shift+enter", "ctrl+j"))
	km.LinePrevious = key.NewBinding(key.WithKeys("up"))
	km.LineNext = key.NewBinding(key.WithKeys("down"))
	km.DeleteCharacterForward = key.NewBinding(key.WithKeys("delete"))
	km.TransposeCharacterBackward = key.NewBinding()
	ta.KeyMap = km
	s := ta.Styles()
	for _, st := range []*textarea.StyleState{&s.Focused, &s.Blurred} {
		st.Base = lipgloss.NewStyle()
		st.CursorLine = lipgloss.NewStyle()
		st.Text = lipgloss.NewStyle()
		st.Prompt = lipgloss.NewStyle()
		st.EndOfBuffer = lipgloss.NewStyle()
		st.Placeholder = lipgloss.NewStyle().Faint(true)
	}
	s.Cursor.Blink = false
	ta.SetStyles(s)
	ta.Focus()
	return editor{ta: ta}
}

// value is the text as shown, paste markers included.
func (e *editor) value() string { return e.ta.Value() }

// text is the text to send: value with each paste marker replaced by
// what was pasted.
func (e *editor) text() string {
	v := e.ta.Value()
	if len(e.pastes) == 0 {
		return v
	}
	return pasteMarker().ReplaceAllStringFunc(v, func(mk string) string {
		if c, ok := e.pastes[markerNumber(mk)]; ok {
			return c
		}
		return mk
	})
}

func (e *editor) setValue(s string) {
	e.ta.SetValue(s)
	e.ta.MoveToEnd()
	e.histPos = len(e.history)
}

func (e *editor) reset() {
	e.ta.Reset()
	e.pastes, e.pasted = nil, 0
	e.histPos = len(e.history)
	e.suggestions, e.sugFor = nil, ""
}

func (e *editor) setWidth(w int) { e.ta.SetWidth(max(w, 4)) }

// remember adds a sent text to the history (not twice in a row).
func (e *editor) remember(s string) {
	if strings.TrimSpace(s) == "" {
		return
	}
	if n := len(e.history); n == 0 || e.history[n-1] != s {
		e.history = append(e.history, s)
	}
	e.histPos = len(e.history)
}

// browse moves through the history: -1 older, +1 newer. It reports whether
// it moved (at the first or last line only).
func (e *editor) browse(dir int) bool {
	if dir < 0 && e.ta.Line() > 0 || dir > 0 && e.ta.Line() < e.ta.LineCount()-1 {
		return false
	}
	if len(e.history) == 0 {
		return false
	}
	if e.histPos == len(e.history) {
		e.draft = e.ta.Value()
	}
	next := e.histPos + dir
	if next < 0 || next > len(e.history) {
		return false
	}
	e.histPos = next
	if next == len(e.history) {
		e.ta.SetValue(e.draft)
	} else {
		e.ta.SetValue(e.history[next])
	}
	e.ta.MoveToEnd()
	return true
}

// Pastes longer than these (pi's limits) are shown as a marker.
const (
	foldPasteLines = 10
	foldPasteChars = 1000
)

// pasteMarker matches the markers of large pastes: "[paste #N +L lines]"
// or "[paste #N C chars]", as pi writes them.
var pasteMarker = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\[paste #([0-9]+)(?: \+[0-9]+ lines| [0-9]+ chars)\]`)
})

// markerNumber is the paste number of a marker pasteMarker matched.
func markerNumber(mk string) int {
	n, _ := strconv.Atoi(pasteMarker().FindStringSubmatch(mk)[1])
	return n
}

// paste inserts pasted text at the cursor: as it is, or, when it is longer
// than foldPasteLines lines or foldPasteChars characters, as a marker that
// keeps the editor small and stands for the text until it is sent (pi and
// Claude Code fold pastes so).
func (e *editor) paste(content string) tea.Cmd {
	content = strings.ReplaceAll(strings.ReplaceAll(content, "\r\n", "\n"), "\r", "\n")
	lines := strings.Count(strings.TrimSuffix(content, "\n"), "\n") + 1
	chars := utf8.RuneCountInString(content)
	if lines <= foldPasteLines && chars <= foldPasteChars {
		return e.update(tea.PasteMsg{Content: content})
	}
	e.pasted++
	if e.pastes == nil {
		e.pastes = map[int]string{}
	}
	e.pastes[e.pasted] = content
	mk := fmt.Sprintf("[paste #%d %d chars]", e.pasted, chars)
	if lines > foldPasteLines {
		mk = fmt.Sprintf("[paste #%d +%d lines]", e.pasted, lines)
	}
	e.ta.InsertString(mk)
	return nil
}

// deleteMarker is Backspace right after a paste marker: the whole marker
// goes, and its paste with it. It reports whether there was one.
func (e *editor) deleteMarker() bool {
	if len(e.pastes) == 0 {
		return false
	}
	lines := strings.Split(e.ta.Value(), "\n")
	row := min(e.ta.Line(), len(lines)-1)
	line := []rune(lines[row])
	before := string(line[:min(e.ta.Column(), len(line))])
	loc := pasteMarker().FindAllStringIndex(before, -1)
	if len(loc) == 0 || loc[len(loc)-1][1] != len(before) {
		return false
	}
	mk := before[loc[len(loc)-1][0]:]
	n := markerNumber(mk)
	if _, ok := e.pastes[n]; !ok {
		return false
	}
	delete(e.pastes, n)
	for range utf8.RuneCountInString(mk) {
		e.ta, _ = e.ta.Update(tea.KeyPressMsg{Code: tea.KeyBackspace})
	}
	return true
}

// update passes a message to the text area.
func (e *editor) update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	e.ta, cmd = e.ta.Update(msg)
	return cmd
}

// word returns the word the cursor is at the end of, on the current line:
// what a completion replaces.
func (e *editor) word() string {
	lines := strings.Split(e.ta.Value(), "\n")
	row := e.ta.Line()
	if row >= len(lines) {
		return ""
	}
	line := []rune(lines[row])
	col := min(e.ta.Column(), len(line))
	start := col
	for start > 0 && line[start-1] != ' ' && line[start-1] != '\t' {
		start--
	}
	return string(line[start:col])
}

// completionWord returns the word to complete and its kind: '/' for a
// command (only as the first word of the text), '@' for a file; 0 for
// none.
func (e *editor) completionWord() (string, byte) {
	w := e.word()
	switch {
	case strings.HasPrefix(w, "@"):
		return w, '@'
	case strings.HasPrefix(w, "/") && e.ta.Line() == 0 && strings.HasPrefix(e.ta.Value(), w) && !strings.Contains(e.ta.Value(), " "):
		return w, '/'
	}
	return "", 0
}

// accept replaces the word at the cursor with the highlighted suggestion.
// It returns the suggestion.
func (e *editor) accept() (suggestion, bool) {
	if len(e.suggestions) == 0 {
		return suggestion{}, false
	}
	s := e.suggestions[e.sel]
	text := s.text
	if (strings.HasPrefix(text, "@") || s.args) && !strings.HasSuffix(text, "/") {
		text += " "
	}
	lines := strings.Split(e.ta.Value(), "\n")
	row := min(e.ta.Line(), len(lines)-1)
	line := []rune(lines[row])
	col := min(e.ta.Column(), len(line))
	start := col - len([]rune(e.word()))
	lines[row] = string(line[:start]) + text + string(line[col:])
	e.ta.SetValue(strings.Join(lines, "\n"))
	e.ta.MoveToBegin()
	for range row {
		e.ta.CursorDown()
	}
	e.ta.SetCursorColumn(start + len([]rune(text)))
	e.suggestions, e.sugFor = nil, ""
	return s, true
}

// render draws the editor between two rules; label, when set, is drawn in
// the top rule (the working or compaction indicator).
func (e *editor) render(v *view, label string, ruleStyle lipgloss.Style) string {
	var b strings.Builder
	top := "──"
	if label != "" {
		top += " " + label + " "
	}
	top = truncate(top, v.width)
	if w := lipgloss.Width(top); w < v.width {
		top += strings.Repeat("─", v.width-w)
	}
	b.WriteString(ruleStyle.Render(top) + "\n")
	b.WriteString(e.ta.View() + "\n")
	b.WriteString(ruleStyle.Render(strings.Repeat("─", v.width)))
	if len(e.suggestions) > 0 {
		start := 0
		const shown = 8
		if e.sel >= shown {
			start = e.sel - shown + 1
		}
		for i := start; i < len(e.suggestions) && i < start+shown; i++ {
			s := e.suggestions[i]
			line := "  " + padRight(s.text, 18) + " " + v.st.muted.Render(s.note)
			if i == e.sel {
				line = v.st.accent.Render("› ") + padRight(s.text, 18) + " " + v.st.muted.Render(s.note)
			}
			b.WriteString("\n" + truncate(line, v.width))
		}
	}
	return b.String()
}
