package compaction

import (
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// The deterministic summarizer builds a summary in the summary format from a
// span by code, when there is no model or the model cannot do it. It keeps
// what is most often lost in a compaction and what a model needs to carry
// on, and little else:
//
//   - Goal: the first substantive request word for word (its head and
//     tail when long), then each later request that changed direction, on
//     one short line.
//   - Constraints & Preferences: the user's sentences that state a rule
//     (must, never, always, don't, prefer, avoid, make sure, keep, …), word
//     for word, once each; when bounded, the newest stay.
//   - Progress: Done lists the files changed (edits and writes counted)
//     and the commands that succeeded (runs counted); In Progress the
//     latest request and calls without a result; Blocked the failures not
//     resolved since (a later success of the same command, or of the same
//     tool on the same file, resolves one).
//   - Next Steps: carry on with the latest request; fix what is failing.
//   - Critical Context: the marker line for the next compaction, the
//     user's /compact instructions, the exact text of the unresolved errors
//     (bounded), the commands with their exit codes, the files the latest
//     request touched, abandoned branches, extension messages, and the end
//     of the last assistant message.
//
// Key Decisions and Reasoning Digest need judgement, so they say they were
// not recorded. A previous summary is merged section by section (its lists
// of changed files and commands re-counted, its blocked items dropped once
// resolved), so repeated compactions by code stay one structure.
//
// A compaction must shrink the context, so the summary is bounded by what
// it replaces (the span and the summary it updates): at most a fifth of it,
// but at least min(1,000 tokens, three quarters of it) so a small span
// still gets a useful summary, and never more than the model-output limit.
// To fit, the lists shrink step by step (rules last) and long items are cut
// head and tail. Only what is smaller than the format's own frame (about
// 250 tokens: headings, placeholders, the marker and a line or two) gets a
// summary larger than its budget: the smallest rendering keeps every
// section, within the output limit. Even then the compaction never makes
// the context bigger: [Compact] cuts such a summary to what it replaces,
// or finds nothing worth compacting (see withinReplaced).

// deterministicMarker starts the Critical Context line that marks a summary
// built by code; a later merge recognises and replaces it.
const deterministicMarker = "Built by code without a model"

// The bound of a summary by code: replaced/summaryShare tokens, at least
// min(summaryFloor, ¾ replaced), at most the output limit.
const (
	summaryShare = 5
	summaryFloor = 1000
)

// deterministicBudget is the size in tokens a summary by code may take when
// it replaces replaced tokens and a model's summary could take limit.
func deterministicBudget(replaced, limit int) int {
	return max(min(max(replaced/summaryShare, min(summaryFloor, replaced*3/4)), limit), 0)
}

// sections are the sections of the format, as lists of items. An item is
// one list line, possibly followed by indented continuation lines.
type sections struct {
	goal, constraints, done, inProgress, blocked, decisions, reasoning, next, critical []string
}

// deterministicSummary summarizes span by code, merging previous into it,
// within deterministicBudget of what they replace and limitTokens. What the
// ledger holds (led, when not nil) is part of every rendering tried: a
// rendering that leaves out one of its items (the oldest rules, when the
// list is bounded) gets it back, and must still fit.
func deterministicSummary(span []session.Message, previous, instructions, reason string, limitTokens int, led *Ledger) string {
	previous = stripFileLists(previous)
	replaced := tokensOf(previous)
	for _, m := range span {
		replaced += session.EstimateTokens(m)
	}
	var s sections
	if previous != "" {
		s = parseSummary(previous)
	}
	d := digestSpan(span)
	s.merge(d)
	head := []string{"- " + deterministicMarker + " (" + reason + "); the next compaction should rewrite it with a model."}
	if in := strings.TrimSpace(instructions); in != "" {
		head = append(head, "- The user asked this summary to focus on: "+oneLine(in, 400))
	}
	complete := func(text string, boundTokens int) string { return text }
	if led != nil {
		complete = func(text string, boundTokens int) string {
			out, _ := led.repair(text, nil, boundTokens)
			return out
		}
	}
	return s.fit(head, deterministicBudget(replaced, limitTokens)*4, limitTokens*4, complete)
}

// fit renders the sections within budget UTF-16 units, shrinking the lists
// and items step by step; complete finishes each rendering (puts back what
// the ledger holds, within a bound in tokens) before it is measured. When
// no complete rendering fits, the smallest gets what still fits the budget;
// when even the smallest rendering is larger, it is used as long as it fits
// limit (the output limit); only a limit too small for the headings
// themselves cuts the text.
func (s *sections) fit(head []string, budget, limit int, complete func(text string, boundTokens int) string) string {
	var text string
	for _, c := range shrinkSteps {
		if text = complete(s.render(head, c), limit/4); llm.UTF16Len(text) <= budget {
			return text
		}
	}
	text = complete(s.render(head, shrinkSteps[len(shrinkSteps)-1]), budget/4)
	if llm.UTF16Len(text) <= limit {
		return text
	}
	units := max(limit-100, 0)
	return headTail(text, units/2, units-units/2)
}

// bounds are the sizes of one rendering: items kept per list and the
// length of one item, of one Done line (a directory's files, the
// commands) and of the first request, in UTF-16 units.
type bounds struct {
	changes, rules, done, blocked, critical, next int
	item, line, request                           int
}

// shrinkSteps go from the natural size to the smallest; the rules shrink
// last.
var shrinkSteps = []bounds{
	{changes: 8, rules: 40, done: 30, blocked: 5, critical: 14, next: 4, item: 700, line: 500, request: 2400},
	{changes: 6, rules: 36, done: 20, blocked: 4, critical: 10, next: 3, item: 500, line: 400, request: 1500},
	{changes: 4, rules: 32, done: 12, blocked: 3, critical: 7, next: 3, item: 360, line: 300, request: 900},
	{changes: 3, rules: 28, done: 8, blocked: 2, critical: 5, next: 2, item: 260, line: 240, request: 600},
	{changes: 2, rules: 24, done: 5, blocked: 2, critical: 3, next: 2, item: 200, line: 200, request: 400},
	{changes: 1, rules: 20, done: 3, blocked: 1, critical: 2, next: 2, item: 160, line: 160, request: 260},
	{changes: 0, rules: 12, done: 2, blocked: 1, critical: 1, next: 1, item: 120, line: 120, request: 160},
	{changes: 0, rules: 6, done: 1, blocked: 1, critical: 1, next: 1, item: 80, line: 80, request: 100},
	{changes: 0, rules: 4, done: 1, blocked: 1, critical: 1, next: 1, item: 50, line: 50, request: 60},
}

// render prints the sections within b: each list keeps its newest items
// (Goal its first, Next Steps its first) with a line saying how many were
// left out.
func (s *sections) render(head []string, b bounds) string {
	var out strings.Builder
	item := func(it string, units int) string {
		if llm.UTF16Len(it) <= units {
			return it
		}
		if strings.Contains(it, "\n") && units > 200 {
			return quoteBlock(headTail(unquote(it), units*2/3, units/3))
		}
		return oneLine(it, units)
	}
	write := func(items []string, numbered bool) {
		if len(items) == 0 {
			out.WriteString("- (none)\n")
			return
		}
		for i, it := range items {
			if numbered && !strings.HasPrefix(it, "- (") {
				out.WriteString(strconv.Itoa(i+1) + ". " + it + "\n")
				continue
			}
			out.WriteString(it + "\n")
		}
	}
	newest := func(items []string, n int, what string) []string {
		if len(items) <= n+1 { // a note for one item is no shorter than the item
			return items
		}
		return append([]string{"- (" + strconv.Itoa(len(items)-n) + " older " + what + " left out)"}, items[len(items)-n:]...)
	}
	bounded := func(items []string, units int) []string {
		out := make([]string, len(items))
		for i, it := range items {
			out[i] = item(it, units)
		}
		return out
	}

	goal := s.goal
	if len(goal) > 0 {
		first := item(goal[0], b.request)
		later := bounded(goal[1:], min(b.item, changeUnits))
		goal = append([]string{first}, newest(later, b.changes, "changes of direction")...)
	}
	next := bounded(s.next, b.item)
	if len(next) > b.next {
		next = next[:b.next]
	}
	critical := append(bounded(head, 600), newest(bounded(s.critical, b.item*2), b.critical, "items")...)
	decisions := newest(bounded(s.decisions, b.item), b.critical, "decisions")
	reasoning := newest(bounded(s.reasoning, b.item), b.critical, "items")
	if len(decisions) == 0 {
		decisions = []string{"- (not recorded: no model judged the conversation)"}
	}
	if len(reasoning) == 0 {
		reasoning = []string{"- (not recorded: no model judged the conversation)"}
	}
	for i, sec := range []struct {
		heading string
		items   []string
	}{
		{"## Goal", goal},
		{"## Constraints & Preferences", newest(bounded(s.constraints, max(b.item, 300)), b.rules, "rules")},
		{"## Progress\n### Done", newest(bounded(s.done, b.line), b.done, "items")},
		{"### In Progress", bounded(s.inProgress, b.item)},
		{"### Blocked", newest(bounded(s.blocked, b.item), b.blocked, "failures")},
		{"## Key Decisions", decisions},
		{"## Reasoning Digest", reasoning},
		{"## Next Steps", next},
		{"## Critical Context", critical},
	} {
		if i > 0 {
			out.WriteByte('\n')
		}
		out.WriteString(sec.heading + "\n")
		write(sec.items, sec.heading == "## Next Steps")
	}
	return strings.TrimRight(out.String(), "\n")
}

// numberedItem matches "1. text" lines of a numbered list.
var numberedItem = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d+[.)]\s+`) })

// parseSummary reads a summary in the summary format back into sections, so
// a deterministic summary can extend it. Lines under a known heading keep
// their text, and indented lines continue the item above them;
// placeholders ("(none)", "(not recorded…)", "(… left out)") and the
// marker of an earlier deterministic summary are dropped. Anything else
// (text before the first heading, unknown headings such as a split turn's)
// is carried into Critical Context verbatim.
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
		if cur != nil && len(*cur) > 0 && (line[0] == ' ' || line[0] == '\t') {
			(*cur)[len(*cur)-1] += "\n" + line
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
			line = numberedItem().ReplaceAllString(trimmed, "")
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
		strings.HasPrefix(l, deterministicMarker) || strings.HasSuffix(l, "left out)") && strings.HasPrefix(l, "(")
}
