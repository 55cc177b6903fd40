package compaction

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// The must-survive ledger. Models drop what matters most after a compaction
// (peers.md §0: about a sixth of the user's constraints survive a typical
// summarizer): the user's rules, the files changed, what was being done.
// Prime does not rely on the model for them. Before any summary is asked
// for, code extracts from the span what must not be lost; after the model
// (or code) answered, each item is looked for in the summary, and what is
// missing is written back by code into its section, within a bound, so the
// context still shrinks. The ledger is stored in the entry's details and
// read back by the next compaction, like the file lists, so it carries over
// any number of compactions.
//
// The items:
//
//   - Constraints: every sentence of the user's messages (and of /compact
//     instructions) that states a rule or a preference (never, always,
//     don't, must, prefer, make sure, keep, …), word for word, once each,
//     oldest first. Restored into "Constraints & Preferences".
//   - Files: every modified file. The file lists are appended by code to
//     every summary Prime writes, so they are always there; the check counts
//     them.
//   - Request: the user's latest substantive request in the summarized part,
//     when the kept part holds no user message (a long turn split by the
//     cut: the request is then nowhere else). Restored into "Critical
//     Context".
//   - Failure: the latest failing command or tool call not resolved since
//     (a later success of the same command, or of the same tool on the same
//     file, resolves it, in the span or in the kept part), with its telling
//     error line. Restored into "Critical Context".
//   - Pins: the texts the user pinned (see [Pins]). The system prompt the
//     compaction carries normally holds them word for word; a pin it does
//     not hold is restored into "Critical Context".
//
// Branch summaries have no request: the branch was left.
//
// An item is present when its text is in the summary word for word, white
// space aside. Repairs go into the history part of a split turn's summary,
// never after its separator; a missing section is created (Constraints after
// Goal, Critical Context at the end). The repaired summary (its file lists
// aside, which the bound never covered) is at most [SummaryBound] tokens:
// never more than a model's summary may be, and a quarter smaller than what
// it replaces. A summary already larger than that gets no repair. Items that
// find no room are reported as unfit; they stay in the ledger and are checked
// again next time. Summaries a hook supplies are the hook's and are not
// repaired; like the file lists, the ledger's chain breaks there.

// Ledger is what a summary must not lose (see the package's "must-survive
// ledger"). Constraints, Request and Failure are stored in the details of
// the entry (member "ledger"); Pins are known from the path.
type Ledger struct {
	// Constraints are the user's sentences stating a rule or preference,
	// word for word (white space folded), oldest first, once each.
	Constraints []string `json:"constraints,omitzero"`
	// Request is the user's latest substantive request in the summarized
	// part (head and tail when long); empty when the kept part holds a
	// user message, which the model then sees verbatim.
	Request string `json:"request,omitzero"`
	// Failure is the latest failure not resolved since, or nil.
	Failure *LedgerFailure `json:"failure,omitzero"`
	// Pins are the texts pinned on the path. They are not stored in the
	// details: the pin entries are their record.
	Pins []LedgerPin `json:"pins,omitzero"`
}

// LedgerPin is a pinned text, and whether the system prompt the compaction
// carries holds it word for word (then it needs no repair).
type LedgerPin struct {
	Text           string `json:"text"`
	InSystemPrompt bool   `json:"inSystemPrompt"`
}

// LedgerFailure is a failing command or tool call.
type LedgerFailure struct {
	// Call names it: a command in backquotes, or the tool and its path.
	Call string `json:"call"`
	// Exit is the exit code ("1", "cancelled"), when known.
	Exit string `json:"exit,omitzero"`
	// Error is the telling line of its output.
	Error string `json:"error"`
}

// LedgerKind names the kind of a ledger item.
type LedgerKind string

// Kinds of ledger items.
const (
	LedgerConstraint LedgerKind = "constraint"
	LedgerFile       LedgerKind = "file"
	LedgerRequest    LedgerKind = "request"
	LedgerFailed     LedgerKind = "failure"
	LedgerPinned     LedgerKind = "pin"
)

// LedgerItem is one item the check found missing.
type LedgerItem struct {
	Kind LedgerKind `json:"kind"`
	Text string     `json:"text"`
}

// LedgerCheck is what the check of a summary against its ledger found and
// did (stored in the details as "ledgerCheck").
type LedgerCheck struct {
	// Bound is the most tokens the summary may take ([SummaryBound]),
	// SummaryTokens what the summarizer wrote and RepairedTokens the size
	// after the repairs, the file lists left out of all three.
	Bound          int `json:"bound"`
	SummaryTokens  int `json:"summaryTokens"`
	RepairedTokens int `json:"repairedTokens"`
	// Checked counts the items looked for; Kept those the summary had.
	Checked int `json:"checked"`
	Kept    int `json:"kept"`
	// Repaired are the items written back; Unfit those missing that found
	// no room within the bound.
	Repaired []LedgerItem `json:"repaired"`
	Unfit    []LedgerItem `json:"unfit"`
}

// SummaryBound is the most tokens a summary (its file lists aside) may take,
// repairs included, when it replaces replaced tokens and a model's summary
// may take limit: min(limit, ¾ replaced). The summary built by code stays
// within it by construction (its own budget is smaller).
func SummaryBound(replaced, limit int) int {
	return max(min(limit, replaced*3/4), 0)
}

// The most constraints a ledger carries; beyond, the oldest are dropped.
const maxLedgerConstraints = 100

// requestUnits bounds the request a ledger keeps, in UTF-16 units (head
// and tail of a longer one).
const (
	requestUnits = 1000
	requestHead  = 700
	requestTail  = 250
)

// boundedRequest is a request as the ledger keeps it: pasted code blocks
// left out (said so), head and tail when still long.
func boundedRequest(text string) string {
	if stripped := withoutCodeBlocks(text); stripped != text {
		text = strings.TrimSpace(stripped) + " [pasted block left out]"
	}
	if llm.UTF16Len(text) <= requestUnits {
		return text
	}
	return headTail(text, requestHead, requestTail)
}

// ledgerScan builds a ledger from earlier ledgers and the messages of a
// span, in path order.
type ledgerScan struct {
	led     Ledger
	rules   map[string]bool
	calls   map[string]llm.ToolCall // the current turn's tool calls by id
	failure *LedgerFailure
	// request is an earlier ledger's, users the texts of the span's user
	// messages: the newest substantive one is the request.
	request string
	users   []string
}

func newLedgerScan() *ledgerScan {
	return &ledgerScan{rules: map[string]bool{}, calls: map[string]llm.ToolCall{}}
}

// absorb takes in an earlier ledger (a previous compaction's, or a summary's
// inside the span): its constraints in order, its request and failure as
// the newest so far.
func (l *ledgerScan) absorb(prev *Ledger) {
	if prev == nil {
		return
	}
	for _, r := range prev.Constraints {
		l.rule(r)
	}
	if prev.Request != "" {
		l.request = prev.Request
	}
	if prev.Failure != nil {
		f := *prev.Failure
		l.failure = &f
	}
}

// rule adds a constraint once (compared without case and spacing).
func (l *ledgerScan) rule(text string) {
	text = strings.Join(strings.Fields(text), " ")
	k := strings.ToLower(text)
	if text == "" || l.rules[k] {
		return
	}
	l.rules[k] = true
	l.led.Constraints = append(l.led.Constraints, text)
}

// rulesOf adds the rules stated in text.
func (l *ledgerScan) rulesOf(text string) {
	if !hasRuleWord(text) {
		return // most messages: not worth splitting into sentences
	}
	for _, r := range rulesIn(text) {
		l.rule(strings.TrimPrefix(r, "- "))
	}
}

// message reads one message of the span.
func (l *ledgerScan) message(m session.Message) {
	switch m := m.(type) {
	case *llm.UserMessage:
		clear(l.calls) // results follow their calls within a turn
		text := userText(m)
		if text == "" {
			return
		}
		l.rulesOf(text)
		l.users = append(l.users, text)
	case *llm.AssistantMessage:
		l.assistant(m)
	case *llm.ToolResultMessage:
		tc, ok := l.calls[m.ToolCallID]
		if !ok {
			return
		}
		delete(l.calls, m.ToolCallID) // a second result for a call counts once
		if !m.IsError {
			l.succeededCall(tc)
			return
		}
		key := callKey(tc)
		text := contentText(m.Content)
		f := &LedgerFailure{Call: key, Error: errorGist(text)}
		if strings.HasPrefix(key, "`") {
			if code := exitCodeIn(text); code != "error" {
				f.Exit = code
			}
		}
		l.failure = f
	case *session.BashExecution:
		if m.ExcludeFromContext {
			return
		}
		key := "`" + oneLine(m.Command, 300) + "`"
		switch {
		case m.Cancelled:
			l.failure = &LedgerFailure{Call: key, Exit: "cancelled", Error: errorGist(m.Output)}
		case m.ExitCode != nil && *m.ExitCode != 0:
			l.failure = &LedgerFailure{Call: key, Exit: strconv.Itoa(*m.ExitCode), Error: errorGist(m.Output)}
		default:
			l.succeeded(key)
		}
	}
}

// assistant records a reply's tool calls.
func (l *ledgerScan) assistant(m *llm.AssistantMessage) {
	for _, c := range m.Content {
		if tc, ok := c.(llm.ToolCall); ok && tc.ID != "" {
			l.calls[tc.ID] = tc
		}
	}
}

// userText is a user message's text, trimmed.
func userText(m *llm.UserMessage) string {
	if len(m.Content) == 1 {
		if t, ok := m.Content[0].(llm.Text); ok {
			return strings.TrimSpace(t.Text)
		}
	}
	return strings.TrimSpace(contentText(m.Content))
}

// atLeastWords reports whether text has n words or more, as
// len(strings.Fields(text)) >= n does, without making the list.
func atLeastWords(text string, n int) bool {
	words, in := 0, false
	for i := 0; i < len(text); {
		c := text[i]
		var space bool
		if c < utf8.RuneSelf {
			space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
			i++
		} else {
			r, size := utf8.DecodeRuneInString(text[i:])
			space = unicode.IsSpace(r)
			i += size
		}
		if !space && !in {
			if words++; words >= n {
				return true
			}
		}
		in = !space
	}
	return false
}

// succeededCall is succeeded for a tool call, its key computed only when
// there is a failure it could resolve.
func (l *ledgerScan) succeededCall(tc llm.ToolCall) {
	if l.failure != nil {
		l.succeeded(callKey(tc))
	}
}

// kept reads a message of the kept part, which the model sees word for
// word: only a success there that resolves the failure matters.
func (l *ledgerScan) kept(m session.Message) {
	if l.failure == nil {
		return
	}
	switch m := m.(type) {
	case *llm.UserMessage:
		clear(l.calls)
	case *llm.AssistantMessage:
		l.assistant(m)
	case *llm.ToolResultMessage:
		if tc, ok := l.calls[m.ToolCallID]; ok && !m.IsError {
			l.succeededCall(tc)
		}
	case *session.BashExecution:
		if !m.ExcludeFromContext && !m.Cancelled && (m.ExitCode == nil || *m.ExitCode == 0) {
			l.succeeded("`" + oneLine(m.Command, 300) + "`")
		}
	}
}

// succeeded clears the failure a success resolves.
func (l *ledgerScan) succeeded(key string) {
	if l.failure != nil && resolves(key, l.failure.Call) {
		l.failure = nil
	}
}

// done returns the ledger; keptRequest reports that the kept part holds a
// user message, so no request is recorded.
func (l *ledgerScan) done(keptRequest bool) *Ledger {
	led := Ledger{Constraints: l.led.Constraints}
	if n := len(led.Constraints); n > maxLedgerConstraints {
		led.Constraints = led.Constraints[n-maxLedgerConstraints:]
	}
	request := l.request
	for i := len(l.users) - 1; i >= 0; i-- {
		if atLeastWords(l.users[i], 6) { // substantive, unlike "carry on"
			request = l.users[i]
			break
		}
	}
	if !keptRequest && request != "" {
		led.Request = boundedRequest(request)
	}
	led.Failure = l.failure
	return &led
}

// LedgerOf extracts the ledger of a span of messages with no earlier ledger:
// what [Compact] and [SummarizeBranch] use when the preparation was not made
// by [Prepare] or [PrepareBranch].
func LedgerOf(msgs []session.Message) *Ledger {
	l := newLedgerScan()
	for _, m := range msgs {
		l.message(m)
	}
	return l.done(false)
}

// withInstructions returns a copy of the ledger with the rules stated in
// the user's /compact instructions added as constraints.
func (led *Ledger) withInstructions(instructions string) *Ledger {
	out := *led
	l := newLedgerScan()
	for _, r := range led.Constraints {
		l.rule(r)
	}
	l.rulesOf(instructions)
	out.Constraints = l.done(true).Constraints
	return &out
}

// modified returns the modified files the lists show.
func (f FileOps) modified() []string { _, m := f.Lists(); return m }

// spanTokens is what a summary of msgs updating previous replaces, in
// tokens: the basis of its bound.
func spanTokens(msgs []session.Message, previous string) int {
	n := tokensOf(stripFileLists(previous))
	for _, m := range msgs {
		n += session.EstimateTokens(m)
	}
	return n
}

// replacedTokens is what the preparation's summary replaces: the previous
// summary and both spans.
func (p *Preparation) replacedTokens() int {
	history, prefix := p.spans()
	return spanTokens(append(history[:len(history):len(history)], prefix...), p.PreviousSummary)
}

// Model-facing texts of the repaired items (Prime's words).
const (
	constraintsHeading = "## Constraints & Preferences"
	criticalHeading    = "## Critical Context"
	repairRequest      = "- Current request (verbatim): "
	repairFailure      = "- Latest failure, not resolved since: "
	repairPin          = "- Pinned by the user (verbatim): "
)

// failureLine is a failure as the summary states it.
func (f *LedgerFailure) line() string {
	exit := ""
	if f.Exit != "" {
		exit = " (exit " + f.Exit + ")"
		if f.Exit == "cancelled" {
			exit = " (cancelled)"
		}
	}
	return f.Call + " failed" + exit + ": " + f.Error
}

// folded is text with white space folded to single spaces.
func folded(text string) string { return strings.Join(strings.Fields(text), " ") }

// repairs are the items of a ledger missing from a summary, in the order
// they are put back: the pins, the request, the failure, then the
// constraints, oldest first.
type repair struct {
	item    LedgerItem
	section string // the heading it goes under
	line    string // the line written
}

// check looks for every item of the ledger in summary (and the pins in the
// system prompt too) and returns those missing, counting those present.
func (led *Ledger) check(summary string, c *LedgerCheck) []repair {
	have := folded(summary)
	var missing []repair
	look := func(kind LedgerKind, text, probe, section, line string, elsewhere bool) {
		c.Checked++
		if probe = folded(probe); strings.Contains(have, probe) || elsewhere {
			c.Kept++
			return
		}
		missing = append(missing, repair{LedgerItem{kind, text}, section, line})
	}
	for _, p := range led.Pins {
		look(LedgerPinned, p.Text, p.Text, criticalHeading, repairPin+quoteBlock(p.Text), p.InSystemPrompt)
	}
	if led.Request != "" {
		probe, _ := llm.UTF16Prefix(folded(led.Request), 300)
		look(LedgerRequest, led.Request, probe, criticalHeading, repairRequest+quoteBlock(led.Request), false)
	}
	if f := led.Failure; f != nil {
		probe := f.Error
		if probe == "" || probe == "(no output)" {
			probe = strings.Trim(f.Call, "`")
		}
		look(LedgerFailed, f.line(), probe, criticalHeading, repairFailure+f.line(), false)
	}
	for _, r := range led.Constraints {
		look(LedgerConstraint, r, r, constraintsHeading, "- "+r, false)
	}
	return missing
}

// repair checks summary (its file lists left out) against the ledger and
// writes back what is missing while the summary stays within bound tokens.
// modified are the modified files, which the file lists carry; they are
// counted as checked and kept.
func (led *Ledger) repair(summary string, modified []string, bound int) (string, *LedgerCheck) {
	c := &LedgerCheck{Bound: bound, SummaryTokens: tokensOf(summary), Repaired: []LedgerItem{}, Unfit: []LedgerItem{}}
	c.Checked += len(modified)
	c.Kept += len(modified)
	missing := led.check(summary, c)
	if len(missing) == 0 {
		c.RepairedTokens = c.SummaryTokens
		return summary, c
	}
	d := parseDoc(summary)
	for _, r := range missing {
		next := d.clone()
		next.add(r.section, r.line)
		if tokensOf(next.String()) > bound {
			c.Unfit = append(c.Unfit, r.item)
			continue
		}
		d = next
		c.Repaired = append(c.Repaired, r.item)
	}
	if len(c.Repaired) == 0 {
		c.RepairedTokens = c.SummaryTokens
		return summary, c
	}
	if !unfitConstraints(c.Unfit) {
		d.dropLeftOut(constraintsHeading)
	}
	out := d.String()
	c.RepairedTokens = tokensOf(out)
	return out, c
}

func unfitConstraints(items []LedgerItem) bool {
	for _, it := range items {
		if it.Kind == LedgerConstraint {
			return true
		}
	}
	return false
}

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

func (d *doc) has(section string) bool { at, _ := d.find(section); return at >= 0 }

// add writes line at the end of section's body, dropping a "(none)"
// placeholder there, creating the section where it belongs when the summary
// has none: Constraints after the Goal section (else first), Critical
// Context last.
func (d *doc) add(section, line string) {
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
	d.lines = insert(d.lines, last, line)
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
