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

// The must-survive ledger. Models drop what matters most after a compaction:
// the user's rules, the files changed, what was being done.
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
//   - Constraints: every sentence the user wrote (user messages, steering,
//     /compact instructions) that reads as a standing instruction, however
//     it is phrased (see rules.go), word for word, once each, oldest
//     first. A rule the user later lifts ("you can touch the generated
//     code now") leaves the ledger, and its line leaves the summary.
//     Restored into "Constraints & Preferences".
//   - Said: the rest of what the user wrote (requests, questions,
//     remarks), word for word, one item per message: a rule the reading
//     missed survives as what the user said. Restored into "Critical
//     Context".
//   - The budget: rules and Said together take at most [LedgerBudget]
//     tokens; past it the rules come first, newest first, then what the
//     user said, newest first. So the ledger never grows without bound.
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
	// Said are the user's other sentences, word for word (white space
	// folded), one item per message, oldest first.
	Said []string `json:"said,omitzero"`
	// Lifted are the rules the user took back in the span: their lines
	// are taken out of the summary. Not carried to the next ledger.
	Lifted []string `json:"lifted,omitzero"`
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
	LedgerSaid       LedgerKind = "said"
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
	// Lifted are the rules taken back, whose lines were taken out.
	Lifted []LedgerItem `json:"lifted,omitzero"`
	// LedgerTokens is the ledger's own size (its rules, what the user
	// said, the request and the failure, as the summary writes them);
	// LedgerBudget the most its rules and Said may take.
	LedgerTokens int `json:"ledgerTokens,omitzero"`
	LedgerBudget int `json:"ledgerBudget,omitzero"`
}

// UnfitItems returns the items that found no room but the user's other
// words, and how many of those did not (they are the ledger's lower tier:
// kept while they fit, not worth listing one by one).
func (c *LedgerCheck) UnfitItems() (items []LedgerItem, said int) {
	for _, it := range c.Unfit {
		if it.Kind == LedgerSaid {
			said++
			continue
		}
		items = append(items, it)
	}
	return items, said
}

// SummaryBound is the most tokens a summary (its file lists aside) may take,
// repairs included, when it replaces replaced tokens and a model's summary
// may take limit: min(limit, ¾ replaced). The summary built by code stays
// within it by construction (its own budget is smaller).
func SummaryBound(replaced, limit int) int {
	return max(min(limit, replaced*3/4), 0)
}

// LedgerBudget is the most tokens the rules and the user's other words of
// a ledger take, as the summary writes them: a few thousand, small next to
// what a compaction replaces, large enough for every word of most users.
const LedgerBudget = 3000

// saidUnits bounds one message's words in Said, in UTF-16 units (head and
// tail of a longer one).
const (
	saidUnits = 1200
	saidHead  = 800
	saidTail  = 350
)

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
	said    map[string]bool
	calls   map[string]llm.ToolCall // the current turn's tool calls by id
	failure *LedgerFailure
	// request is an earlier ledger's, users the texts of the span's user
	// messages: the newest substantive one is the request.
	request string
	users   []string
}

func newLedgerScan() *ledgerScan {
	return &ledgerScan{rules: map[string]bool{}, said: map[string]bool{}, calls: map[string]llm.ToolCall{}}
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
	for _, r := range prev.Said {
		l.saidItem(r)
	}
	if prev.Request != "" {
		l.request = prev.Request
	}
	if prev.Failure != nil {
		f := *prev.Failure
		l.failure = &f
	}
}

// rule adds a constraint once (compared without case and spacing); a rule
// stated again after it was lifted is a rule again.
func (l *ledgerScan) rule(text string) {
	text = folded(text)
	k := strings.ToLower(text)
	if text == "" || l.rules[k] {
		return
	}
	l.rules[k] = true
	l.led.Constraints = append(l.led.Constraints, text)
	l.led.Lifted = slices.DeleteFunc(l.led.Lifted, func(r string) bool { return strings.ToLower(r) == k })
}

// lift takes back the rules a sentence lifts; false when it names none.
func (l *ledgerScan) lift(sent string) bool {
	at := english().lifted(sent, l.led.Constraints)
	if len(at) == 0 {
		return false
	}
	for i := len(at) - 1; i >= 0; i-- {
		r := l.led.Constraints[at[i]]
		delete(l.rules, strings.ToLower(r))
		l.led.Lifted = append(l.led.Lifted, r)
		l.led.Constraints = slices.Delete(l.led.Constraints, at[i], at[i]+1)
	}
	return true
}

// saidItem adds what the user said once; said again, it is the newest.
func (l *ledgerScan) saidItem(text string) {
	text = folded(text)
	k := strings.ToLower(text)
	if text == "" {
		return
	}
	if l.said[k] {
		l.led.Said = slices.DeleteFunc(l.led.Said, func(s string) bool { return strings.ToLower(s) == k })
	}
	l.said[k] = true
	l.led.Said = append(l.led.Said, text)
}

// userWords reads every sentence the user wrote in text: the rules become
// constraints, a lift takes its rule back, the rest is kept as said when
// keep is true (not for /compact instructions, which speak of one summary).
func (l *ledgerScan) userWords(text string, keep bool) {
	var rest []string
	for _, sent := range userSentences(text) {
		switch english().classify(sent) {
		case sentenceRule:
			l.rule(sent)
			continue
		case sentenceLift:
			if l.lift(sent) {
				rest = append(rest, sent) // the user's words, not a rule
				continue
			}
		}
		if atLeastWords(sent, 3) {
			rest = append(rest, sent)
		}
	}
	if said := strings.Join(rest, " "); said != "" && keep {
		if llm.UTF16Len(said) > saidUnits {
			said = headTail(said, saidHead, saidTail)
		}
		l.saidItem(said)
	}
}

// userSentences are the sentences of a user's text outside code blocks,
// without leading symbols (an emoji that closed the sentence before).
func userSentences(text string) []string {
	var out []string
	for _, sent := range splitSentences(withoutCodeBlocks(text)) {
		sent = strings.TrimLeftFunc(sent, func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("\"'`", r)
		})
		if sent != "" && (len(sent) > 600 || strings.ContainsAny(sent, "\t\r\n") || strings.Contains(sent, "  ")) {
			sent = oneLine(sent, 600)
		}
		if sent != "" {
			out = append(out, sent)
		}
	}
	return out
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
		l.userWords(text, true)
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

// done returns the ledger within its budget; keptRequest reports that the
// kept part holds a user message, so no request is recorded.
func (l *ledgerScan) done(keptRequest bool) *Ledger {
	led := Ledger{Constraints: l.led.Constraints, Said: l.led.Said, Lifted: slices.Clone(l.led.Lifted)}
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
	led.fit(LedgerBudget)
	return &led
}

// fit keeps the rules and what the user said within budget tokens: the
// rules first, newest first, then the words, newest first; the words of
// the request are its item's.
func (led *Ledger) fit(budget int) {
	left := budget
	keep := func(items []string, line func(string) string) []string {
		var out []string
		for i := len(items) - 1; i >= 0; i-- {
			if t := tokensOf(line(items[i])); t <= left {
				left -= t
				out = append(out, items[i])
			}
		}
		slices.Reverse(out)
		return out
	}
	led.Constraints = keep(led.Constraints, ruleLine)
	request := folded(led.Request)
	led.Said = keep(slices.DeleteFunc(slices.Clone(led.Said), func(s string) bool {
		return request != "" && strings.Contains(request, s)
	}), saidLine)
	if len(led.Said) == 0 {
		led.Said = nil
	}
	if len(led.Constraints) == 0 {
		led.Constraints = nil
	}
}

// Tokens is the ledger's size as the summary writes its items (the pins
// aside: the system prompt holds them).
func (led *Ledger) Tokens() int {
	n := 0
	for _, r := range led.Constraints {
		n += tokensOf(ruleLine(r))
	}
	for _, s := range led.Said {
		n += tokensOf(saidLine(s))
	}
	if led.Request != "" {
		n += tokensOf(repairRequest + quoteBlock(led.Request))
	}
	if led.Failure != nil {
		n += tokensOf(repairFailure + led.Failure.line())
	}
	return n
}

func ruleLine(r string) string { return "- " + r }
func saidLine(s string) string { return repairSaid + quoteBlock(s) }

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

// withInstructions returns a copy of the ledger with the user's /compact
// instructions read as every user sentence is: their rules added as
// constraints, their lifts taking rules back.
func (led *Ledger) withInstructions(instructions string) *Ledger {
	out := *led
	if strings.TrimSpace(instructions) == "" {
		return &out
	}
	l := newLedgerScan()
	for _, r := range led.Constraints {
		l.rule(r)
	}
	for _, s := range led.Said {
		l.saidItem(s)
	}
	l.led.Lifted = slices.Clone(led.Lifted)
	l.userWords(instructions, false)
	out.Constraints, out.Said, out.Lifted = l.led.Constraints, l.led.Said, l.led.Lifted
	out.fit(LedgerBudget)
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
	repairSaid         = "- The user said (verbatim): "
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
// constraints and what the user said, each newest first (the newest have
// the room first) and written oldest first.
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
	for _, r := range slices.Backward(led.Constraints) {
		look(LedgerConstraint, r, r, constraintsHeading, ruleLine(r), false)
	}
	for _, s := range slices.Backward(led.Said) {
		look(LedgerSaid, s, s, criticalHeading, saidLine(s), false)
	}
	return missing
}

// repair checks summary (its file lists left out) against the ledger,
// takes out the lines of the rules the user lifted, and writes back what
// is missing while the summary stays within bound tokens. modified are the
// modified files, which the file lists carry; they are counted as checked
// and kept.
func (led *Ledger) repair(summary string, modified []string, bound int) (string, *LedgerCheck) {
	c := &LedgerCheck{Bound: bound, SummaryTokens: tokensOf(summary), Repaired: []LedgerItem{}, Unfit: []LedgerItem{},
		LedgerTokens: led.Tokens(), LedgerBudget: LedgerBudget}
	c.Checked += len(modified)
	c.Kept += len(modified)
	d := parseDoc(summary)
	for _, r := range led.Lifted {
		if d.dropRule(r) {
			c.Lifted = append(c.Lifted, LedgerItem{LedgerConstraint, r})
		}
	}
	if len(c.Lifted) > 0 {
		summary = d.String()
	}
	missing := led.check(summary, c)
	if len(missing) == 0 {
		c.RepairedTokens = tokensOf(summary)
		return summary, c
	}
	back := map[LedgerKind]int{} // lines put back newest first, per kind
	units := llm.UTF16Len(d.String())
	for _, r := range missing {
		n := 0
		if reversed := r.item.Kind == LedgerConstraint || r.item.Kind == LedgerSaid; reversed {
			n = back[r.item.Kind]
			back[r.item.Kind]++
		}
		if d.plain(r.section) { // one line more, its size known
			if (units+llm.UTF16Len(r.line)+1+3)/4 > bound {
				c.Unfit = append(c.Unfit, r.item)
				back[r.item.Kind] = n
				continue
			}
			d.addBefore(r.section, r.line, n)
			units += llm.UTF16Len(r.line) + 1
		} else {
			next := d.clone()
			next.addBefore(r.section, r.line, n)
			text := next.String()
			if tokensOf(text) > bound {
				c.Unfit = append(c.Unfit, r.item)
				back[r.item.Kind] = n
				continue
			}
			d, units = next, llm.UTF16Len(text)
		}
		c.Repaired = append(c.Repaired, r.item)
	}
	if len(c.Repaired) == 0 {
		c.RepairedTokens = tokensOf(summary)
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
