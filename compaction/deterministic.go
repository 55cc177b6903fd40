package compaction

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// The deterministic summarizer builds a summary in the spec's format from a
// span by code, when there is no model or the model cannot do it. It keeps
// what survives compaction best (peers.md §(d) 2–3): the user's requests
// and stated constraints word for word, tool actions and their outcomes,
// errors, and the latest request as the next step. It cannot judge, so Key
// Decisions and Reasoning Digest say so, and a line in Critical Context
// (and details.summarizer) marks the summary for the next compaction to
// rewrite with a model. A previous summary is merged section by section, so
// repeated deterministic compactions stay in one structure, and the whole is
// bounded like a model's summary.

// deterministicMarker starts the Critical Context line that marks a summary
// built by code; a later merge recognises and replaces it.
const deterministicMarker = "Built by code without a model"

// Bounds of the deterministic summary, in UTF-16 units or items.
const (
	requestHead, requestTail = 1200, 800 // one user request
	lineLimit                = 400       // one action, error or constraint
	assistantHead            = 1500      // the last assistant text
)

// sections are the seven sections of the format, as lists of lines.
type sections struct {
	goal, constraints, done, inProgress, blocked, decisions, reasoning, next, critical []string
}

// constraintWords find sentences in which the user states a rule or a
// preference.
var constraintWords = regexp.MustCompile(`(?i)\b(must|mustn't|never|always|don't|do not|doesn't|should|shouldn't|only|prefer|avoid|make sure|ensure|without|instead of|keep|no longer|required?)\b`)

// sentenceEnd splits text into sentences and lines.
var sentenceEnd = regexp.MustCompile(`[.!?](\s+|$)|\n+`)

// deterministicSummary summarizes span by code, merging previous into it,
// within about limitTokens.
func deterministicSummary(span []session.Message, previous, instructions, reason string, limitTokens int) string {
	var s sections
	if previous != "" {
		s = parseSummary(stripFileLists(previous))
	}
	s.add(digestSpan(span))
	s.critical = append([]string{"- " + deterministicMarker + " (" + reason + "); the next compaction should rewrite it with a model."}, s.critical...)
	if in := strings.TrimSpace(instructions); in != "" {
		s.critical = append(s.critical, "- The user asked this summary to focus on: "+oneLine(in, lineLimit))
	}
	if len(s.decisions) == 0 {
		s.decisions = []string{"- (not recorded: no model judged the conversation)"}
	}
	if len(s.reasoning) == 0 {
		s.reasoning = []string{"- (not recorded: no model judged the conversation)"}
	}
	// Shrink until it fits: fewer items per list (the first and the newest
	// stay), then shorter items, so the format survives any limit; only a
	// limit too small for the headings themselves cuts the text.
	limit := limitTokens * 4
	text := s.render(-1, 0)
	for _, shrink := range []struct{ keep, itemUnits int }{{40, 0}, {20, 0}, {10, 0}, {5, 0}, {2, 0}, {2, 600}, {2, 200}, {1, 80}, {1, 30}} {
		if llm.UTF16Len(text) <= limit {
			return text
		}
		text = s.render(shrink.keep, shrink.itemUnits)
	}
	if llm.UTF16Len(text) > limit {
		units := max(limit-100, 0)
		text = headTail(text, units/2, units-units/2)
	}
	return text
}

// digestSpan extracts the sections from a span of messages.
func digestSpan(span []session.Message) sections {
	var s sections
	type action struct {
		text  string
		done  bool
		error string
	}
	var actions []*action
	byID := make(map[string]*action)
	var requests []string
	var lastAssistant string
	var lastError string
	for _, m := range span {
		switch m := m.(type) {
		case *llm.UserMessage:
			text := strings.TrimSpace(contentText(m.Content))
			if text == "" {
				continue
			}
			requests = append(requests, text)
			for _, c := range constraintsIn(text) {
				s.constraints = appendUnique(s.constraints, "- "+c)
			}
		case *llm.AssistantMessage:
			if t := strings.TrimSpace(m.Text()); t != "" {
				lastAssistant = t
			}
			for _, tc := range m.ToolCalls() {
				a := &action{text: describeCall(tc)}
				actions = append(actions, a)
				if tc.ID != "" {
					byID[tc.ID] = a
				}
			}
		case *llm.ToolResultMessage:
			a := byID[m.ToolCallID]
			if a == nil {
				continue
			}
			a.done = true
			if m.IsError {
				a.error = firstLines(contentText(m.Content))
				lastError = a.text + ": " + a.error
			}
		case *session.BashExecution:
			a := &action{text: "ran `" + oneLine(m.Command, lineLimit) + "`", done: true}
			switch {
			case m.Cancelled:
				a.error = "cancelled"
			case m.ExitCode != nil && *m.ExitCode != 0:
				a.error = "exit code " + strconv.Itoa(*m.ExitCode) + ": " + lastLines(m.Output)
			}
			if a.error != "" {
				lastError = a.text + ": " + a.error
			}
			actions = append(actions, a)
		case *session.BranchSummaryMessage:
			s.critical = append(s.critical, "- Summary of a branch explored earlier: "+oneLine(stripFileLists(m.Summary), requestHead))
		case *session.CustomMessage:
			if text := strings.TrimSpace(contentText(m.Content)); text != "" {
				s.critical = append(s.critical, "- Extension message ("+m.CustomType+"): "+oneLine(text, lineLimit))
			}
		}
	}
	for _, r := range requests {
		s.goal = append(s.goal, "- User request: "+quoteBlock(headTail(r, requestHead, requestTail)))
	}
	counts := make(map[string]int)
	for _, a := range actions {
		if a.done && a.error == "" {
			counts[a.text]++
		}
	}
	for _, a := range actions {
		switch {
		case !a.done:
			s.inProgress = appendUnique(s.inProgress, "- [ ] "+a.text+" (no result recorded)")
		case a.error != "":
			s.blocked = append(s.blocked, "- "+a.text+" failed: "+a.error)
		case counts[a.text] > 0:
			line := "- [x] " + a.text
			if n := counts[a.text]; n > 1 {
				line += " (" + strconv.Itoa(n) + " times)"
			}
			s.done = append(s.done, line)
			counts[a.text] = 0
		}
	}
	if len(requests) > 0 {
		last := requests[len(requests)-1]
		s.inProgress = append(s.inProgress, "- [ ] Latest request: "+oneLine(last, lineLimit))
		s.next = append(s.next, "Carry on with the latest request: "+quoteBlock(headTail(last, requestHead, requestTail)))
	}
	if lastError != "" {
		s.next = append(s.next, "Check whether this last error is resolved: "+oneLine(lastError, lineLimit))
	}
	if lastAssistant != "" {
		s.critical = append(s.critical, "- Last assistant message: "+quoteBlock(headTail(lastAssistant, assistantHead, 500)))
	}
	return s
}

// add appends another digest's lines after s's (Next Steps: the newer
// first, since they describe where the work stands now).
func (s *sections) add(o sections) {
	s.goal = append(s.goal, o.goal...)
	for _, c := range o.constraints {
		s.constraints = appendUnique(s.constraints, c)
	}
	s.done = append(s.done, o.done...)
	s.inProgress = append(s.inProgress, o.inProgress...)
	s.blocked = append(s.blocked, o.blocked...)
	s.decisions = append(s.decisions, o.decisions...)
	s.reasoning = append(s.reasoning, o.reasoning...)
	s.next = append(o.next, s.next...)
	s.critical = append(s.critical, o.critical...)
}

// render prints the sections in the spec's format. keep > 0 bounds every
// list to its first item and its newest keep-1 items (the oldest goal is
// usually the task itself); -1 keeps all. itemUnits > 0 folds every item
// onto one line of at most that many UTF-16 units.
func (s *sections) render(keep, itemUnits int) string {
	var b strings.Builder
	list := func(items []string, numbered bool) {
		if keep > 0 && len(items) > keep {
			omitted := len(items) - keep
			items = append([]string{items[0], "- (" + strconv.Itoa(omitted) + " more items left out)"}, items[len(items)-keep+1:]...)
		}
		if len(items) == 0 {
			b.WriteString("- (none)\n")
			return
		}
		n := 0
		for _, it := range items {
			if itemUnits > 0 {
				it = oneLine(it, itemUnits)
			}
			if numbered && !strings.HasPrefix(it, "- (") {
				n++
				b.WriteString(strconv.Itoa(n) + ". " + it + "\n")
				continue
			}
			b.WriteString(it + "\n")
		}
	}
	for i, sec := range []struct {
		heading string
		items   []string
	}{
		{"## Goal", s.goal}, {"## Constraints & Preferences", s.constraints},
		{"## Progress\n### Done", s.done}, {"### In Progress", s.inProgress}, {"### Blocked", s.blocked},
		{"## Key Decisions", s.decisions}, {"## Reasoning Digest", s.reasoning},
		{"## Next Steps", s.next}, {"## Critical Context", s.critical},
	} {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(sec.heading + "\n")
		list(sec.items, sec.heading == "## Next Steps")
	}
	return strings.TrimRight(b.String(), "\n")
}

// numberedItem matches "1. text" lines of a numbered list.
var numberedItem = regexp.MustCompile(`^\d+[.)]\s+`)

// parseSummary reads a summary in the spec's format back into sections, so
// a deterministic summary can extend it. Lines under a known heading keep
// their text; placeholders ("(none)", "(not recorded…)") and the marker
// of an earlier deterministic summary are dropped. Anything else (text
// before the first heading, unknown headings such as a split turn's) is
// carried into Critical Context verbatim.
func parseSummary(summary string) sections {
	var s sections
	var cur *[]string
	numbered := false
	other := func(line string) { s.critical = append(s.critical, "- "+line) }
	for _, raw := range strings.Split(summary, "\n") {
		line := strings.TrimRight(raw, " \t\r")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" {
			continue
		}
		if trimmed == "---" { // a split turn's separator ends the sections
			cur = nil
			continue
		}
		if strings.HasPrefix(trimmed, "#") {
			cur, numbered = s.section(strings.TrimSpace(strings.TrimLeft(trimmed, "#")))
			if cur == nil {
				other("From an earlier summary, " + strings.TrimSpace(strings.TrimLeft(trimmed, "#")) + ":")
			}
			continue
		}
		if placeholder(trimmed) {
			continue
		}
		if cur == nil {
			other(trimmed)
			continue
		}
		if numbered {
			line = numberedItem.ReplaceAllString(trimmed, "")
		}
		*cur = append(*cur, line)
	}
	return s
}

// section maps a heading to its list; nil for headings not in the format.
func (s *sections) section(heading string) (list *[]string, numbered bool) {
	switch strings.ToLower(heading) {
	case "goal":
		return &s.goal, false
	case "constraints & preferences":
		return &s.constraints, false
	case "progress":
		return &s.done, false // lines directly under Progress: treated as done
	case "done":
		return &s.done, false
	case "in progress":
		return &s.inProgress, false
	case "blocked":
		return &s.blocked, false
	case "key decisions":
		return &s.decisions, false
	case "reasoning digest":
		return &s.reasoning, false
	case "next steps":
		return &s.next, true
	case "critical context":
		return &s.critical, false
	}
	return nil, false
}

func placeholder(line string) bool {
	l := strings.TrimSpace(strings.TrimPrefix(line, "-"))
	return l == "(none)" || l == "none" || strings.HasPrefix(l, "(not recorded") ||
		strings.HasPrefix(l, deterministicMarker) || strings.HasSuffix(l, "more items left out)")
}

// constraintsIn returns the sentences of a user message that state a rule
// or preference, each bounded.
func constraintsIn(text string) []string {
	var out []string
	for _, sent := range splitSentences(text) {
		if constraintWords.MatchString(sent) {
			out = append(out, oneLine(sent, lineLimit))
		}
	}
	return out
}

func splitSentences(text string) []string {
	var out []string
	last := 0
	for _, loc := range sentenceEnd.FindAllStringIndex(text, -1) {
		end := loc[0] + 1
		if text[loc[0]] == '\n' {
			end = loc[0]
		}
		if sent := strings.TrimSpace(text[last:end]); sent != "" {
			out = append(out, sent)
		}
		last = loc[1]
	}
	if sent := strings.TrimSpace(text[last:]); sent != "" {
		out = append(out, sent)
	}
	return out
}

// describeCall names a tool action by its most telling argument: a path, a
// command, a pattern or a query; else the arguments as JSON, bounded.
func describeCall(tc llm.ToolCall) string {
	for _, key := range []string{"path", "command", "pattern", "query", "url"} {
		if v, ok := tc.Arguments.StringArg(key); ok && v != "" {
			if key == "path" {
				return tc.Name + " " + oneLine(v, lineLimit)
			}
			return tc.Name + " `" + oneLine(v, lineLimit) + "`"
		}
	}
	return tc.Name + " " + oneLine(tc.Arguments.String(), lineLimit)
}

// oneLine folds text onto one line and bounds it to n units.
func oneLine(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	if llm.UTF16Len(text) <= n {
		return text
	}
	p, _ := llm.UTF16Prefix(text, n)
	return p + "…"
}

// quoteBlock renders possibly multi-line text inside a list item: one line
// stays as it is; several are indented under the item.
func quoteBlock(text string) string {
	if !strings.Contains(text, "\n") {
		return text
	}
	return "\n    " + strings.ReplaceAll(strings.TrimSpace(text), "\n", "\n    ")
}

// firstLines returns the start of an error text, on one line.
func firstLines(text string) string { return oneLine(text, lineLimit) }

// lastLines returns the end of a command's output (where failures are
// reported), on one line.
func lastLines(text string) string {
	t, _ := utf16Suffix(strings.TrimSpace(text), lineLimit)
	return strings.Join(strings.Fields(t), " ")
}

func appendUnique(list []string, item string) []string {
	for _, it := range list {
		if it == item {
			return list
		}
	}
	return append(list, item)
}
