package agent

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/internal/numfmt"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// Description is the one-line wording of an entry, the same in every front
// end (the TUI's /tree, prime session tree).
type Description struct {
	// Text says what the entry is: "user: …", "[compaction: 12k tokens]",
	// "[bash: go test]", "[title: …]". It may hold newlines of the
	// entry's own text; a front end folds it onto its line.
	Text string
	// User marks a user message, ToolResult a tool's result.
	User, ToolResult bool
	// ToolCallsOnly marks an assistant reply that only calls tools and is
	// not the leaf: a tree hides it by default.
	ToolCallsOnly bool
}

// Describer words entries. It remembers the tool calls of the replies it
// has described, so that a tool result is named by its call: describe a
// reply before its results (any walk from the roots does).
type Describer struct {
	calls map[string]llm.ToolCall
}

// NewDescriber returns a Describer that has seen no entries.
func NewDescriber() *Describer { return &Describer{calls: map[string]llm.ToolCall{}} }

// Describe words e; leaf says whether e is the current leaf.
func (d *Describer) Describe(e *session.Entry, leaf bool) Description {
	desc := Description{Text: "[" + e.Type + "]"}
	p, err := e.Payload()
	if err != nil {
		return desc
	}
	switch p := p.(type) {
	case *session.MessageEntry:
		desc = d.message(p.Message, leaf)
	case *session.CompactionEntry:
		desc.Text = fmt.Sprintf("[compaction: %s tokens]", numfmt.Tokens(p.TokensBefore))
	case *session.BranchSummaryEntry:
		desc.Text = "[branch summary]: " + p.Summary
	case *session.CustomMessageEntry:
		desc.Text = "[" + p.CustomType + "]: " + llm.TextOf(p.Content)
	case *session.ModelChangeEntry:
		desc.Text = "[model: " + p.ModelID + "]"
	case *session.ThinkingLevelChangeEntry:
		desc.Text = "[thinking: " + string(p.ThinkingLevel) + "]"
	case *session.ContextEditEntry:
		desc.Text = "[context omit: " + p.TargetID + "]"
	case *session.LabelEntry:
		desc.Text = "[label: " + p.Label + "]"
	case *session.SessionInfoEntry:
		desc.Text = "[title: " + p.Name + "]"
	case *session.CustomEntry:
		desc.Text = customText(e, p)
	}
	return desc
}

// customText names Prime's own custom entries by what they do; another
// extension's state shows as its type.
func customText(e *session.Entry, p *session.CustomEntry) string {
	switch p.CustomType {
	case compaction.CustomTypePin:
		if pins := compaction.Pins([]*session.Entry{e}); len(pins) == 1 {
			return "[pin]: " + pins[0].Text
		}
	case compaction.CustomTypeUnpin:
		return "[unpin]"
	case CustomTypeUncompact:
		return "[compaction undone]"
	}
	return "[" + p.CustomType + "]"
}

// message words a message entry.
func (d *Describer) message(msg session.Message, leaf bool) Description {
	switch m := msg.(type) {
	case *llm.UserMessage:
		return Description{Text: "user: " + UserText(m.Content), User: true}
	case *llm.AssistantMessage:
		return d.reply(m, leaf)
	case *llm.ToolResultMessage:
		return Description{Text: d.result(m), ToolResult: true}
	case *session.BashExecution:
		return Description{Text: "[bash]: " + m.Command}
	case *session.CustomMessage:
		return Description{Text: "[" + m.CustomType + "]: " + llm.TextOf(m.Content)}
	case *session.SystemMessage:
		// A patch names the sections it changes (such as the pins); the
		// whole prompt (with its preamble) is just the system prompt.
		var names []string
		for _, sec := range m.Sections {
			if sec.Name == "preamble" {
				return Description{Text: "[system]"}
			}
			names = append(names, sec.Name)
		}
		if len(names) == 0 {
			return Description{Text: "[system]"}
		}
		return Description{Text: "[system: " + strings.Join(names, ", ") + "]"}
	}
	return Description{Text: "[" + msg.Role() + "]"}
}

// reply words an assistant message and remembers its tool calls.
func (d *Describer) reply(m *llm.AssistantMessage, leaf bool) Description {
	for _, c := range m.ToolCalls() {
		d.calls[c.ID] = c
	}
	text := strings.TrimSpace(m.Text())
	switch {
	case m.StopReason == llm.StopReasonAborted:
		return Description{Text: "assistant: (aborted)"}
	case m.StopReason == llm.StopReasonError:
		return Description{Text: "assistant: (error: " + m.ErrorMessage + ")"}
	case text != "":
		return Description{Text: "assistant: " + text}
	case len(m.ToolCalls()) > 0:
		return Description{Text: "assistant: (tool calls)", ToolCallsOnly: !leaf}
	}
	return Description{Text: "assistant: (no content)"}
}

// result words a tool result by the call it answers.
func (d *Describer) result(m *llm.ToolResultMessage) string {
	c, ok := d.calls[m.ToolCallID]
	if !ok {
		return "[" + m.ToolName + "]"
	}
	title := ToolTitle(c.Name, c.Arguments)
	switch c.Name {
	case "bash":
		return "[bash: " + cutRunes(strings.TrimPrefix(title, "$ "), 50) + "]"
	case "read", "write", "edit", "grep", "find", "ls":
		return "[" + strings.Replace(title, " ", ": ", 1) + "]"
	}
	return "[" + c.Name + ": " + cutRunes(c.Arguments.String(), 50) + "]"
}

// ToolTitle says in one line what a call of a built-in tool does ("$ go
// test", "read main.go:10-29", "grep /TODO/ in src (*.go)"); any other
// tool's call is its name and arguments.
func ToolTitle(name string, args llm.Arguments) string {
	arg := func(k string) string { s, _ := args.StringArg(k); return s }
	path := arg("path")
	switch name {
	case "bash":
		s := "$ " + oneLine(arg("command"))
		if n := numArg(args, "timeout"); n > 0 {
			s += fmt.Sprintf(" (timeout %gs)", n)
		}
		return s
	case "read":
		s := "read " + path
		off, lim := int(numArg(args, "offset")), int(numArg(args, "limit"))
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
		return name + " " + path
	case "grep":
		s := "grep /" + arg("pattern") + "/"
		if path != "" {
			s += " in " + path
		}
		if g := arg("glob"); g != "" {
			s += " (" + g + ")"
		}
		return s
	case "find":
		s := "find " + arg("pattern")
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
	return name + " " + oneLine(args.String())
}

// numArg returns a numeric argument, or 0.
func numArg(args llm.Arguments, name string) float64 {
	v, ok := args.Get(name)
	if !ok {
		return 0
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return 0
	}
	return f
}

// UserText is a user message's content as text, an image as [image].
func UserText(content []llm.Content) string {
	var parts []string
	for _, c := range content {
		switch c := c.(type) {
		case llm.Text:
			parts = append(parts, c.Text)
		case llm.Image:
			parts = append(parts, "[image]")
		}
	}
	return strings.Join(parts, "\n")
}

// oneLine folds s's white space, newlines included, into single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cutRunes returns s cut to n runes, with "…" when it was cut.
func cutRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
