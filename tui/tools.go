package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/tui/markdown"

	"github.com/prime-agent/prime/agent"
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
func (t *toolItem) setResult(r agent.ToolResult) {
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

// title is the block's first line: what the call does, from its
// arguments.
func (t *toolItem) title() string {
	if noArgs(t.args) && t.rawArgs != "" {
		if a, err := llm.NewArguments([]byte(t.rawArgs)); err == nil {
			t.args = a
		}
	}
	if noArgs(t.args) && t.rawArgs != "" {
		switch t.name {
		case "bash", "read", "edit", "write", "grep", "find", "ls":
		default:
			return t.name + " " + oneLine(t.rawArgs)
		}
	}
	return agent.ToolTitle(t.name, t.args)
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
	var of []int // the output line each row is a part of
	for i, l := range strings.Split(text, "\n") {
		rows := strings.Split(wrapPlain(l, width), "\n")
		lines = append(lines, rows...)
		for range rows {
			of = append(of, i)
		}
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
			// The end of a command's output matters most. The count is of
			// the output's lines out of view (one cut counts), not of
			// screen rows.
			hidden := len(lines) - limit
			n := of[hidden]
			if of[hidden-1] == of[hidden] {
				n++
			}
			out = append(out, v.st.muted.Render(fmt.Sprintf("… (%d earlier %s, ctrl+o to expand)", n, plural(n, "line", "lines"))))
			lines = lines[hidden:]
		} else {
			more = of[len(of)-1] - of[limit-1] // the lines wholly out of view
			if of[limit] == of[limit-1] {
				more++ // and the one cut
			}
			lines = lines[:limit]
		}
	}
	for _, l := range lines {
		out = append(out, style.Render(l))
	}
	if more > 0 {
		out = append(out, v.st.muted.Render(fmt.Sprintf("… (%d more %s, ctrl+o to expand)", more, plural(more, "line", "lines"))))
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
		Truncation     *agent.ToolTruncation `json:"truncation"`
		FullOutputPath string                `json:"fullOutputPath"`
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
		l = truncate(markdown.ExpandTabs(l), width)
		switch {
		case strings.HasPrefix(l, "+"):
			out = append(out, paint(v.st.diffAdd, l))
		case strings.HasPrefix(l, "-"):
			out = append(out, paint(v.st.diffDel, l))
		default:
			out = append(out, paint(v.st.diffCtx, l))
		}
	}
	if more > 0 {
		out = append(out, v.st.muted.Render(fmt.Sprintf("… (%d more lines, ctrl+o to expand)", more)))
	}
	return out
}
