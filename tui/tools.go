package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/tool"
)

// toolItem is one tool call: created when the call starts streaming,
// updated with its partial output while it runs, finished with its result.
type toolItem struct {
	id      string
	name    string
	args    llm.Arguments
	rawArgs string // the arguments' JSON as streamed so far
	started time.Time
	running bool
	output  string // partial or final text
	details jsontext.Value
	isError bool
	done    bool
	took    time.Duration
}

func (t *toolItem) finished() bool { return t.done }

// toolPreviewLines is how many lines of output a collapsed block shows.
const toolPreviewLines = 5

// setResult records a (partial or final) result.
func (t *toolItem) setResult(r tool.Result) {
	t.output = llm.TextOf(r.Content)
	if r.Details != nil {
		t.details = r.Details
	}
	if r.IsError {
		t.isError = true
	}
}

func (t *toolItem) render(v *view) string {
	style := v.st.toolPending
	switch {
	case t.done && t.isError:
		style = v.st.toolError
	case t.done:
		style = v.st.toolOK
	}
	var b strings.Builder
	b.WriteString(style.Render("● ") + v.st.bold.Render(truncate(t.title(), max(v.width-2, 1))))
	body := t.body(v)
	for _, l := range body {
		b.WriteString("\n  " + l)
	}
	switch {
	case t.done && t.took > 0:
		b.WriteString("\n  " + v.st.muted.Render("Took "+formatDuration(t.took)))
	case t.running && !t.started.IsZero():
		b.WriteString("\n  " + v.st.muted.Render("Elapsed "+formatDuration(v.now.Sub(t.started).Truncate(time.Second))))
	}
	return b.String()
}

// noArgs reports arguments not known yet (the empty object).
func noArgs(a llm.Arguments) bool { return a.Len() == 0 || a.String() == "{}" }

// arg returns a string argument, or "".
func (t *toolItem) arg(name string) string {
	s, _ := t.args.StringArg(name)
	return s
}

// numArg returns a numeric argument, or 0.
func (t *toolItem) numArg(name string) float64 {
	v, ok := t.args.Get(name)
	if !ok {
		return 0
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return 0
	}
	return f
}

// title is the block's first line: what the call does, from its
// arguments.
func (t *toolItem) title() string {
	if noArgs(t.args) && t.rawArgs != "" {
		if a, err := llm.NewArguments([]byte(t.rawArgs)); err == nil {
			t.args = a
		}
	}
	path := t.arg("path")
	switch t.name {
	case "bash":
		s := "$ " + oneLine(t.arg("command"))
		if n := t.numArg("timeout"); n > 0 {
			s += fmt.Sprintf(" (timeout %gs)", n)
		}
		return s
	case "read":
		s := "read " + path
		off, lim := int(t.numArg("offset")), int(t.numArg("limit"))
		switch {
		case off > 0 && lim > 0:
			s += fmt.Sprintf(":%d-%d", off, off+lim-1)
		case off > 0:
			s += fmt.Sprintf(":%d-", off)
		case lim > 0:
			s += fmt.Sprintf(":1-%d", lim)
		}
		return s
	case "edit", "write":
		return t.name + " " + path
	case "grep":
		s := "grep /" + t.arg("pattern") + "/"
		if path != "" {
			s += " in " + path
		}
		if g := t.arg("glob"); g != "" {
			s += " (" + g + ")"
		}
		return s
	case "find":
		s := "find " + t.arg("pattern")
		if path != "" {
			s += " in " + path
		}
		return s
	case "ls":
		if path == "" {
			path = "."
		}
		return "ls " + path
	}
	args := t.args.String()
	if noArgs(t.args) && t.rawArgs != "" {
		args = t.rawArgs
	}
	return t.name + " " + oneLine(args)
}

// body is the block's output lines, bounded unless expanded.
func (t *toolItem) body(v *view) []string {
	width := max(v.width-2, 1)
	if t.name == "edit" && t.done && !t.isError {
		var d struct {
			Diff string `json:"diff"`
		}
		if t.details != nil && json.Unmarshal(t.details, &d) == nil && d.Diff != "" {
			return diffLines(v, d.Diff, width)
		}
	}
	text := strings.TrimRight(t.output, "\n")
	if t.name == "write" && !t.isError {
		if !v.expanded {
			if c := t.arg("content"); c != "" {
				n := strings.Count(strings.TrimRight(c, "\n"), "\n") + 1
				return []string{v.st.muted.Render(fmt.Sprintf("%d lines (ctrl+o to show)", n))}
			}
			return nil
		}
		text = strings.TrimRight(t.arg("content"), "\n")
	}
	if t.name == "read" && !t.isError && !v.expanded {
		if text == "" {
			return nil
		}
		n := strings.Count(text, "\n") + 1
		return []string{v.st.muted.Render(fmt.Sprintf("%d lines (ctrl+o to show)", n))}
	}
	if text == "" {
		return nil
	}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		lines = append(lines, strings.Split(wrapPlain(l, width), "\n")...)
	}
	style := v.st.muted
	if t.isError {
		style = v.st.errorText
	}
	var out []string
	limit := toolPreviewLines
	if t.isError {
		limit = 10
	}
	more := 0
	if !v.expanded && len(lines) > limit {
		if t.name == "bash" {
			// The end of a command's output matters most.
			hidden := len(lines) - limit
			out = append(out, v.st.muted.Render(fmt.Sprintf("… (%d earlier lines, ctrl+o to expand)", hidden)))
			lines = lines[hidden:]
		} else {
			more = len(lines) - limit
			lines = lines[:limit]
		}
	}
	for _, l := range lines {
		out = append(out, style.Render(l))
	}
	if more > 0 {
		out = append(out, v.st.muted.Render(fmt.Sprintf("… (%d more lines, ctrl+o to expand)", more)))
	}
	if note := t.truncationNote(); note != "" {
		out = append(out, v.st.warning.Render(note))
	}
	return out
}

// truncationNote says, from a bash result's details, that the output was
// cut and where the whole of it is.
func (t *toolItem) truncationNote() string {
	if t.details == nil {
		return ""
	}
	var d struct {
		Truncation     *tool.Truncation `json:"truncation"`
		FullOutputPath string           `json:"fullOutputPath"`
	}
	if json.Unmarshal(t.details, &d) != nil || d.Truncation == nil || !d.Truncation.Truncated {
		return ""
	}
	s := fmt.Sprintf("output cut to %d of %d lines", d.Truncation.OutputLines, d.Truncation.TotalLines)
	if d.FullOutputPath != "" {
		s += "; the whole output is in " + d.FullOutputPath
	}
	return s
}

// diffLines colours an edit's display diff: added lines green, removed
// red, context dim.
func diffLines(v *view, diff string, width int) []string {
	lines := strings.Split(diff, "\n")
	limit := 40
	var more int
	if !v.expanded && len(lines) > limit {
		more = len(lines) - limit
		lines = lines[:limit]
	}
	out := make([]string, 0, len(lines)+1)
	for _, l := range lines {
		l = truncate(l, width)
		switch {
		case strings.HasPrefix(l, "+"):
			out = append(out, v.st.diffAdd.Render(l))
		case strings.HasPrefix(l, "-"):
			out = append(out, v.st.diffDel.Render(l))
		default:
			out = append(out, v.st.diffCtx.Render(l))
		}
	}
	if more > 0 {
		out = append(out, v.st.muted.Render(fmt.Sprintf("… (%d more lines, ctrl+o to expand)", more)))
	}
	return out
}
