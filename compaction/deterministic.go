package compaction

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// The deterministic summarizer builds a summary in the spec's format from a
// span by code, when there is no model or the model cannot do it. It keeps
// what survives compaction best (peers.md §(d) 2–3) and what a model needs
// to carry on, and little else:
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
// section, within the output limit.

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

// A failure is a tool call or command that failed.
type failure struct {
	key  string // what failed, as Blocked names it: "`cmd`" or "edit path"
	exit string // " (exit 1)", or ""
	text string // the error text
}

// A tally counts what was done to one file or by one command.
type tally struct {
	key           string
	edits, writes int // files
	runs          int // commands
}

// digest is what the summary takes from a span.
type digest struct {
	first       string   // the first substantive request
	changes     []string // later requests that changed direction
	latest      string   // the latest request
	constraints []string
	files       tallies  // changed files, by last change
	commands    tallies  // commands that succeeded, by last success
	pending     []string // calls without a result
	failed      []failure
	successes   []string // keys of the calls and commands that succeeded
	exits       exitLogs // commands run, by last run
	touched     []string // files the latest request's work touched
	context     []string // abandoned branches, extension messages
	assistant   string   // the last assistant text
	requests    int
}

// exitLog is the exit codes of one command, oldest first, each code once
// in a row.
type exitLog struct {
	cmd   string
	codes []string
}

// exitLogs are the exit codes of commands, the command run last last.
type exitLogs struct {
	order []*exitLog
	byCmd map[string]*exitLog
}

// add records codes of cmd; it becomes the newest.
func (es *exitLogs) add(cmd string, codes ...string) {
	if es.byCmd == nil {
		es.byCmd = map[string]*exitLog{}
	}
	e := es.byCmd[cmd]
	if e == nil {
		e = &exitLog{cmd: cmd}
		es.byCmd[cmd] = e
	} else {
		es.order = removePtr(es.order, e)
	}
	for _, c := range codes {
		if n := len(e.codes); n == 0 || e.codes[n-1] != c {
			e.codes = append(e.codes, c)
		}
	}
	es.order = append(es.order, e)
}

// item lists the newest commands that ever failed with their codes (those
// that only succeeded are in Done), newest first; "" if there are none.
func (es *exitLogs) item() string {
	var parts []string
	for i := len(es.order) - 1; i >= 0 && len(parts) < 10; i-- {
		e := es.order[i]
		if len(e.codes) > 1 || e.codes[0] != "0" {
			parts = append(parts, shortKey(e.cmd, 100)+" "+strings.Join(e.codes[max(0, len(e.codes)-4):], " → "))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return commandsItem + strings.Join(parts, "; ")
}

// exitEntry reads one command and its codes back from that item.
var exitEntry = regexp.MustCompile("(`.+?`) ((?:[^ ;→]+)(?: → [^ ;→]+)*)(?:; |$)")

// parse reads back the item; false if it is not one.
func (es *exitLogs) parse(item string) bool {
	entries, ok := readBack(item, commandsItem, exitEntry)
	for _, e := range entries {
		es.add(e[1], strings.Split(e[2], " → ")...)
	}
	return ok
}

// readBack reads back an item this summarizer wrote: prefix, then entries
// newest first. It returns the entries oldest first, as the submatches of
// the entry pattern; false if item does not start with prefix.
func readBack(item, prefix string, entry *regexp.Regexp) ([][]string, bool) {
	list, ok := strings.CutPrefix(item, prefix)
	if !ok {
		return nil, false
	}
	entries := entry.FindAllStringSubmatch(list, -1)
	slices.Reverse(entries)
	return entries, true
}

// digestSpan reads a span of messages.
func digestSpan(span []session.Message) *digest {
	d := &digest{}
	succeededKeys := map[string]bool{}
	type call struct {
		key, name, path string
		answered        bool
	}
	var calls []*call
	byID := map[string]*call{}
	latestAt := 0 // index in calls where the latest request's work starts
	succeed := func(key string) {
		if !succeededKeys[key] {
			succeededKeys[key] = true
			d.successes = append(d.successes, key)
		}
		d.failed = slices.DeleteFunc(d.failed, func(f failure) bool { return resolves(key, f.key) })
	}
	fail := func(f failure) {
		d.failed = append(slices.DeleteFunc(d.failed, func(g failure) bool { return g.key == f.key }), f)
	}
	ran := d.exits.add
	for _, m := range span {
		switch m := m.(type) {
		case *llm.UserMessage:
			text := strings.TrimSpace(contentText(m.Content))
			if text == "" {
				continue
			}
			d.requests++
			d.addRequest(text)
			d.constraints = appendRules(d.constraints, rulesIn(text))
			latestAt = len(calls)
		case *llm.AssistantMessage:
			if t := strings.TrimSpace(m.Text()); t != "" {
				d.assistant = t
			}
			for _, tc := range m.ToolCalls() {
				c := &call{key: callKey(tc), name: tc.Name}
				c.path, _ = tc.Arguments.StringArg("path")
				calls = append(calls, c)
				if tc.ID != "" {
					byID[tc.ID] = c
				}
			}
		case *llm.ToolResultMessage:
			c := byID[m.ToolCallID]
			if c == nil || c.answered {
				continue
			}
			c.answered = true
			text := contentText(m.Content)
			isBash := strings.HasPrefix(c.key, "`")
			if m.IsError {
				f := failure{key: c.key, text: text}
				if isBash {
					code := exitCodeIn(text)
					if code != "error" {
						f.exit = " (exit " + code + ")"
					}
					ran(c.key, code)
				}
				fail(f)
				continue
			}
			succeed(c.key)
			switch {
			case isBash:
				ran(c.key, "0")
				d.commands.add(&tally{key: c.key, runs: 1})
			case c.name == "edit":
				d.files.add(&tally{key: c.path, edits: 1})
			case c.name == "write":
				d.files.add(&tally{key: c.path, writes: 1})
			}
		case *session.BashExecution:
			key := "`" + oneLine(m.Command, 300) + "`"
			switch {
			case m.Cancelled:
				fail(failure{key: key, exit: " (cancelled)", text: m.Output})
				ran(key, "cancelled")
			case m.ExitCode != nil && *m.ExitCode != 0:
				code := strconv.Itoa(*m.ExitCode)
				fail(failure{key: key, exit: " (exit " + code + ")", text: m.Output})
				ran(key, code)
			default:
				succeed(key)
				ran(key, "0")
				d.commands.add(&tally{key: key, runs: 1})
			}
		case *session.BranchSummaryMessage:
			d.context = append(d.context, "- An abandoned branch: "+briefSummary(m.Summary))
		case *session.CustomMessage:
			if text := strings.TrimSpace(contentText(m.Content)); text != "" {
				d.context = append(d.context, "- Extension message ("+m.CustomType+"): "+oneLine(text, 300))
			}
		}
	}
	for _, c := range calls {
		if !c.answered {
			d.pending = appendUnique(d.pending, "- [ ] "+c.key+": no result recorded")
		}
	}
	for _, c := range calls[latestAt:] {
		if c.path != "" {
			d.touched = appendUnique(d.touched, c.path)
		}
	}
	return d
}

// addRequest files a user request: the first substantive one is the goal,
// later ones that change direction are listed, the last is the latest.
func (d *digest) addRequest(text string) {
	d.latest = text
	switch {
	case d.first == "" && substantive(text):
		d.first = text
	case d.first != "" && changesDirection(text):
		d.changes = append(d.changes, text)
	}
}

// substantive reports whether a request says what to do, unlike "carry
// on", "yes" or "try again".
func substantive(text string) bool { return len(strings.Fields(text)) >= 6 }

var (
	// directionWords mark a request that leaves the current work.
	directionWords = regexp.MustCompile(`(?i)^(now|next|then)\b|\b(actually|instead|next task|new task|change of plan|scratch (that|the)|let's (move on|switch|park|drop|go back)|forget (that|it|about)|different approach|try this differently|new thing|moving on)\b`)
	// followWords open a request that continues the current work.
	followWords = regexp.MustCompile(`(?i)^(no\b|not\b|hmm|wait|also\b|and\b|looks good|great|ok\b|okay|close,|that's|please don't|thanks|yes\b|why\b|how\b|what\b|can you also|sorry)`)
)

// changesDirection reports whether a later request starts other work: it
// does not open as a follow-up or a correction, and it says so, or it is a
// long request (not counting the rules it states) that does not ask.
func changesDirection(text string) bool {
	first, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if followWords.MatchString(first) {
		return false
	}
	if directionWords.MatchString(headOf(text, 300)) { // said up front, if at all
		return true
	}
	if strings.HasSuffix(strings.TrimSpace(first), "?") {
		return false
	}
	words := 0
	for _, sent := range splitSentences(withoutCodeBlocks(headOf(text, 2000))) {
		if !isRule(sent) {
			words += len(strings.Fields(sent))
		}
	}
	return words >= 20
}

// brief is a request on a line or two: without pasted code blocks.
func brief(request string) string {
	text := withoutCodeBlocks(request)
	if text != request {
		text = strings.TrimSpace(text) + " [pasted block left out]"
	}
	return oneLine(text, 300)
}

// shortKey bounds a key to about n units; a command keeps its closing
// backquote, so a list of them reads back.
func shortKey(key string, n int) string {
	if llm.UTF16Len(key) <= n {
		return key
	}
	if inner, ok := strings.CutPrefix(key, "`"); ok {
		return "`" + oneLine(strings.TrimSuffix(inner, "`"), n-2) + "`"
	}
	return oneLine(key, n)
}

// headOf returns about the first n bytes of s, cut at a rune boundary.
func headOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// callKey names a tool call the way Done, Blocked and the resolution of
// failures see it: a command in backquotes, or the tool and its path (or
// pattern, query, …).
func callKey(tc llm.ToolCall) string {
	if v, ok := tc.Arguments.StringArg("command"); ok && v != "" {
		return "`" + oneLine(v, 300) + "`"
	}
	for _, key := range []string{"path", "pattern", "query", "url"} {
		if v, ok := tc.Arguments.StringArg(key); ok && v != "" {
			return tc.Name + " " + oneLine(v, 300)
		}
	}
	return tc.Name + " " + oneLine(tc.Arguments.String(), 200)
}

// resolves reports whether a success of one call or command resolves an
// earlier failure: the same command or tool on the same file; an edit or a
// write of the same file; a command run over "./..." resolves the same
// command on any package.
func resolves(success, failed string) bool {
	if success == failed {
		return true
	}
	if p, ok := strings.CutPrefix(success, "edit "); ok && failed == "write "+p {
		return true
	}
	if p, ok := strings.CutPrefix(success, "write "); ok && failed == "edit "+p {
		return true
	}
	wide, ok := strings.CutSuffix(strings.TrimSuffix(success, "`"), " ./...")
	return ok && strings.HasPrefix(failed, wide+" ")
}

// resolvedBy reports whether one of the span's successes resolves an
// earlier summary's failure of key.
func (d *digest) resolvedBy(key string) bool {
	for _, s := range d.successes {
		if resolves(s, key) {
			return true
		}
	}
	return false
}

func removePtr[T any](list []*T, p *T) []*T {
	for i, q := range list {
		if q == p {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// exitCode finds the exit status a bash tool reports at the end of its
// output ("Command exited with code 2").
var exitCode = regexp.MustCompile(`(?i)exit(?:ed)?(?: with)? (?:code|status) (-?\d+)`)

func exitCodeIn(text string) string {
	if m := exitCode.FindAllStringSubmatch(text, -1); m != nil {
		return m[len(m)-1][1]
	}
	return "error"
}

// briefSummary is a branch summary on one line, without its preamble,
// headings and file lists.
func briefSummary(summary string) string {
	var parts []string
	for _, line := range strings.Split(stripFileLists(summary), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || placeholder(line) || strings.Contains(branchPreamble, line+"\n") {
			continue
		}
		parts = append(parts, strings.TrimPrefix(line, "- "))
	}
	return oneLine(strings.Join(parts, "; "), 400)
}

// merge adds a span's digest to sections parsed from a previous summary.
func (s *sections) merge(d *digest) {
	// Goal: the previous goal stays first; the span's first request joins
	// it only when it changes direction.
	switch {
	case len(s.goal) == 0 && d.first != "":
		s.goal = append(s.goal, firstRequestItem+quoteBlock(d.first))
	case len(s.goal) == 0 && d.latest != "":
		s.goal = append(s.goal, firstRequestItem+quoteBlock(d.latest))
	case d.first != "" && changesDirection(d.first):
		s.goal = append(s.goal, changeItem+oneLine(d.first, changeUnits))
	}
	for _, c := range d.changes {
		s.goal = append(s.goal, changeItem+oneLine(c, changeUnits))
	}
	s.constraints = appendRules(s.constraints, d.constraints)

	// Done: the previous counts of files and commands, plus the span's.
	var other []string
	var files, commands tallies
	for _, it := range s.done {
		switch {
		case files.parseFiles(it), commands.parseCommands(it):
		default:
			other = append(other, it)
		}
	}
	for _, t := range d.files.order {
		files.add(t)
	}
	for _, t := range d.commands.order {
		commands.add(t)
	}
	s.done = append(append(other, files.fileItems()...), commands.commandItems()...)

	if d.requests > 0 {
		s.inProgress = []string{latestItem + brief(d.latest)}
	}
	s.inProgress = append(s.inProgress, d.pending...)

	// Blocked: the previous items the span did not resolve, then its own.
	var blocked []string
	for _, it := range s.blocked {
		key, ok := blockedKey(it)
		if ok && (d.resolvedBy(key) || failedIn(d.failed, key)) {
			continue
		}
		blocked = append(blocked, it)
	}
	for _, f := range d.failed {
		blocked = append(blocked, "- "+f.key+" failed"+f.exit+": "+errorGist(f.text))
	}
	s.blocked = blocked

	// Next Steps: the span's, then what a model planned before.
	var next []string
	if d.latest != "" {
		next = append(next, continueStep+brief(d.latest))
	} else if len(s.inProgress) > 0 {
		for _, it := range s.inProgress {
			if r, ok := strings.CutPrefix(it, latestItem); ok {
				next = append(next, continueStep+r)
			}
		}
	}
	if n := len(s.blocked); n > 0 {
		next = append(next, fixStep+strings.TrimPrefix(s.blocked[n-1], "- "))
	}
	for _, it := range s.next {
		if !strings.HasPrefix(it, continueStep) && !strings.HasPrefix(it, fixStep) {
			next = append(next, it)
		}
	}
	s.next = next

	// Critical Context: the previous items but those the span replaces,
	// then the span's.
	var critical []string
	var exits exitLogs
	for _, it := range s.critical {
		switch {
		case strings.HasPrefix(it, "- "+deterministicMarker), strings.HasPrefix(it, "- The user asked this summary to focus on"),
			strings.HasPrefix(it, repairRequest), strings.HasPrefix(it, repairFailure), strings.HasPrefix(it, repairPin):
			// The ledger puts back its current items.
		case d.assistant != "" && strings.HasPrefix(it, lastAssistantItem):
		case exits.parse(it):
		case d.requests > 0 && strings.HasPrefix(it, touchedItem):
		case strings.HasPrefix(it, errorItem) && resolvedError(it, d):
		default:
			critical = append(critical, it)
		}
	}
	for i := max(0, len(d.failed)-2); i < len(d.failed); i++ {
		f := d.failed[i]
		if text := withoutExitLine(f.text); text != "" && oneLine(text, 1<<20) != errorGist(f.text) {
			critical = append(critical, errorItem+f.key+f.exit+": "+quoteBlock(headTail(text, 700, 500)))
		}
	}
	for _, e := range d.exits.order {
		exits.add(e.cmd, e.codes...)
	}
	if it := exits.item(); it != "" {
		critical = append(critical, it)
	}
	if len(d.touched) > 0 {
		critical = append(critical, touchedItem+strings.Join(d.touched[max(0, len(d.touched)-12):], ", "))
	}
	critical = append(critical, d.context...)
	if d.assistant != "" {
		critical = append(critical, lastAssistantItem+quoteBlock(headTail(d.assistant, 600, 400)))
	}
	s.critical = critical
}

// changeUnits bounds a change of direction in Goal, in UTF-16 units: one
// short line.
const changeUnits = 150

// The items the summary writes and recognises when it merges.
const (
	firstRequestItem  = "- "
	changeItem        = "- Then: "
	latestItem        = "- [ ] Latest request: "
	continueStep      = "Carry on with the latest request: "
	fixStep           = "Fix the last failure: "
	errorItem         = "- Error from "
	commandsItem      = "- Exit codes of the commands that failed, newest first (oldest code → newest): "
	touchedItem       = "- Files the latest request's work touched: "
	lastAssistantItem = "- Last assistant message: "
)

// tallies are counts by key, oldest last change first.
type tallies struct {
	order []*tally
	byKey map[string]*tally
}

// add counts t; its key becomes the newest.
func (ts *tallies) add(t *tally) {
	if ts.byKey == nil {
		ts.byKey = map[string]*tally{}
	}
	if p := ts.byKey[t.key]; p != nil {
		p.edits += t.edits
		p.writes += t.writes
		p.runs += t.runs
		ts.order = removePtr(ts.order, p)
		t = p
	} else {
		t = &tally{key: t.key, edits: t.edits, writes: t.writes, runs: t.runs}
		ts.byKey[t.key] = t
	}
	ts.order = append(ts.order, t)
}

// The Done items of changed files (one per directory, newest first) and of
// commands that succeeded (one item, newest first), and how they read back.
const (
	changedItem   = "- [x] Changed "
	succeededItem = "- [x] Commands that succeeded, newest first: "
)

var (
	changedFiles  = regexp.MustCompile(`([^,]+?) \(((?:\d+ (?:edit|write)s?(?:, )?)+)\)(?:, |$)`)
	countOf       = regexp.MustCompile(`(\d+) (edit|write)`)
	succeededRuns = regexp.MustCompile("(`.+?`)(?: ×(\\d+))?(?:, |$)")
)

// fileItems lists the files by directory ("Changed in dir/: a.go (2
// edits), b.go (1 write)", the newest first), the directory changed last
// last.
func (ts *tallies) fileItems() []string {
	var dirs []string
	files := map[string][]*tally{}
	for _, t := range ts.order {
		dir := ""
		if i := strings.LastIndexByte(t.key, '/'); i >= 0 {
			dir = t.key[:i+1]
		}
		if i := slices.Index(dirs, dir); i >= 0 {
			dirs = append(dirs[:i], dirs[i+1:]...)
		}
		dirs = append(dirs, dir)
		files[dir] = append(files[dir], t)
	}
	var out []string
	for _, dir := range dirs {
		var parts []string
		fs := files[dir]
		for i := len(fs) - 1; i >= 0; i-- {
			var counts []string
			if fs[i].edits > 0 {
				counts = append(counts, plural(fs[i].edits, "edit"))
			}
			if fs[i].writes > 0 {
				counts = append(counts, plural(fs[i].writes, "write"))
			}
			parts = append(parts, strings.TrimPrefix(fs[i].key, dir)+" ("+strings.Join(counts, ", ")+")")
		}
		if dir == "" {
			out = append(out, changedItem+strings.Join(parts, ", "))
		} else {
			out = append(out, changedItem+"in "+dir+": "+strings.Join(parts, ", "))
		}
	}
	return out
}

// parseFiles reads back a file item; false if it is not one.
func (ts *tallies) parseFiles(item string) bool {
	list, ok := strings.CutPrefix(item, changedItem)
	if !ok || strings.Contains(list, "\n") {
		return false
	}
	prefix := ""
	if rest, ok := strings.CutPrefix(list, "in "); ok {
		if dir, l, ok := strings.Cut(rest, "/: "); ok {
			prefix, list = dir+"/", l
		}
	}
	ms := changedFiles.FindAllStringSubmatch(list, -1)
	if ms == nil {
		return false
	}
	for i := len(ms) - 1; i >= 0; i-- { // oldest first
		t := &tally{key: prefix + ms[i][1]}
		for _, c := range countOf.FindAllStringSubmatch(ms[i][2], -1) {
			n, _ := strconv.Atoi(c[1])
			if c[2] == "edit" {
				t.edits += n
			} else {
				t.writes += n
			}
		}
		ts.add(t)
	}
	return true
}

// commandItems lists the commands, the newest first, on one line.
func (ts *tallies) commandItems() []string {
	if len(ts.order) == 0 {
		return nil
	}
	var parts []string
	for i := len(ts.order) - 1; i >= 0; i-- {
		t := ts.order[i]
		part := shortKey(t.key, 100)
		if t.runs > 1 {
			part += " ×" + strconv.Itoa(t.runs)
		}
		parts = append(parts, part)
	}
	return []string{succeededItem + strings.Join(parts, ", ")}
}

// parseCommands reads back the commands item; false if it is not one.
func (ts *tallies) parseCommands(item string) bool {
	entries, ok := readBack(item, succeededItem, succeededRuns)
	for _, e := range entries {
		n, err := strconv.Atoi(e[2])
		if err != nil {
			n = 1
		}
		ts.add(&tally{key: e[1], runs: n})
	}
	return ok
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// blockedKey reads back the key of a Blocked item this summarizer wrote
// ("- `cmd` failed …", "- edit path failed …").
func blockedKey(item string) (string, bool) {
	rest, ok := strings.CutPrefix(item, "- ")
	if !ok {
		return "", false
	}
	key := leadingKey(rest)
	return key, key != "" && strings.HasPrefix(rest[len(key):], " failed")
}

// leadingKey is the call or command key an item of ours starts with: a
// command in backquotes, or the words before " failed", " (" or ": ".
func leadingKey(rest string) string {
	if strings.HasPrefix(rest, "`") {
		for i := 1; i < len(rest); i++ {
			if after := rest[i+1:]; rest[i] == '`' && (strings.HasPrefix(after, " failed") || strings.HasPrefix(after, " (") || strings.HasPrefix(after, ":")) {
				return rest[:i+1]
			}
		}
		return ""
	}
	end := len(rest)
	for _, sep := range []string{" failed", " (", ": "} {
		if i := strings.Index(rest, sep); i >= 0 && i < end {
			end = i
		}
	}
	return rest[:end]
}

func failedIn(failed []failure, key string) bool {
	for _, f := range failed {
		if f.key == key {
			return true
		}
	}
	return false
}

// resolvedError reports whether an earlier summary's error item names a
// failure the span resolved or failed again (its new text replaces it).
func resolvedError(item string, d *digest) bool {
	key := leadingKey(strings.TrimPrefix(item, errorItem))
	return key != "" && (d.resolvedBy(key) || failedIn(d.failed, key))
}

// errorLine matches the lines of an error text that say what went wrong;
// location matches a source position ("planner_test.go:88:"), the most
// telling line of a compiler's or a test's report.
var (
	errorLine = regexp.MustCompile(`(?i)(fail|error|panic|cannot|can't|could not|undefined|expected|want|not found|no such|denied|refused|timed? ?out|exception|invalid|missing|locked)`)
	location  = regexp.MustCompile(`[\w.-]+\.\w+:\d+`)
)

// errorGist is the telling part of an error text on one line: its first
// line that says what went wrong and its first source position, else its
// first line. Bare status lines ("FAIL", "FAIL\tpkg 0.1s") say nothing.
func errorGist(text string) string {
	var what, where, first string
	for _, line := range strings.Split(withoutExitLine(text), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || isBareStatus(line) {
			continue
		}
		if first == "" {
			first = line
		}
		if where == "" && location.MatchString(line) {
			where = line
		}
		if what == "" && errorLine.MatchString(line) {
			what = line
		}
	}
	var picked []string
	switch {
	case what != "" && where != "" && what != where:
		picked = []string{what, where}
	case what != "":
		picked = []string{what}
	case where != "":
		picked = []string{where}
	case first != "":
		picked = []string{first}
	default:
		return "(no output)"
	}
	return oneLine(strings.Join(picked, " / "), 240)
}

// withoutExitLine drops the line a bash tool adds after the output to
// report the exit status (the summary shows the status on its own).
func withoutExitLine(text string) string {
	text = strings.TrimSpace(text)
	i := strings.LastIndexByte(text, '\n')
	if exitCode.MatchString(text[i+1:]) && len(text)-i < 60 {
		return strings.TrimSpace(text[:max(i, 0)])
	}
	return text
}

// isBareStatus matches status lines that say nothing on their own: "FAIL",
// a package's "FAIL\tpkg\t0.1s" or "ok  \tpkg".
func isBareStatus(line string) bool {
	return line == "FAIL" || line == "FAILED" || line == "ERROR" || strings.HasPrefix(line, "FAIL\t") || strings.HasPrefix(line, "ok  \t")
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
var numberedItem = regexp.MustCompile(`^\d+[.)]\s+`)

// parseSummary reads a summary in the spec's format back into sections, so
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
		strings.HasPrefix(l, deterministicMarker) || strings.HasSuffix(l, "left out)") && strings.HasPrefix(l, "(")
}

// A sentence states a rule or a preference when it has a modal of
// obligation anywhere, or a clause that starts with a directive word
// ("Never …", "…, and make sure …", "…; keep …"); "passes that never rise"
// does not.
var (
	ruleModal = regexp.MustCompile(`(?i)\b(must|mustn't|should|shouldn't|have to|has to|not allowed|is required|are required|no longer)\b`)
	ruleLead  = regexp.MustCompile(`(?i)(^|[;:,]\s+|\b(and|but|so|please|then)\s+)(never|always|don't|do not|avoid|prefer|make sure|ensure|keep|only|stop)\b`)
)

// ruleWords are the first words of what the two patterns match, lower
// case: a sentence with none of them is no rule, and the patterns are not
// run.
var ruleWords = map[string]bool{
	"must": true, "mustn't": true, "should": true, "shouldn't": true, "have": true, "has": true, "not": true,
	"required": true, "no": true, "never": true, "always": true, "don't": true, "do": true, "avoid": true,
	"prefer": true, "make": true, "ensure": true, "keep": true, "only": true, "stop": true,
}

// isRule reports whether a sentence states a rule: not a question, not a
// fragment.
func isRule(sent string) bool {
	if strings.HasSuffix(sent, "?") || len(strings.Fields(sent)) < 3 || !hasRuleWord(sent) {
		return false
	}
	return ruleModal.MatchString(sent) || ruleLead.MatchString(sent)
}

// hasRuleWord reports whether text holds one of ruleWords, in any case
// (ASCII letters: the words are ASCII), looking at each word once.
func hasRuleWord(text string) bool {
	var word [9]byte
	for i := 0; i < len(text); {
		if !asciiLetter(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && (asciiLetter(text[j]) || text[j] == '\'') {
			j++
		}
		if n := j - i; n >= 2 && n <= len(word) {
			for k := range n {
				c := text[i+k]
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				word[k] = c
			}
			if ruleWords[string(word[:n])] {
				return true
			}
		}
		i = j
	}
	return false
}

func asciiLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// rulesIn returns the sentences of a user message that state a rule or
// preference, outside code blocks, without leading symbols (an emoji that
// closed the sentence before).
func rulesIn(text string) []string {
	var out []string
	for _, sent := range splitSentences(withoutCodeBlocks(text)) {
		sent = strings.TrimLeftFunc(sent, func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("\"'`", r)
		})
		if isRule(sent) {
			out = append(out, "- "+oneLine(sent, 600))
		}
	}
	return out
}

// appendRules adds rules to list once each (compared without case and
// spacing); a rule stated again moves to the end, as the newest.
func appendRules(list, rules []string) []string {
	for _, r := range rules {
		k := ruleKey(r)
		for i, x := range list {
			if ruleKey(x) == k {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		list = append(list, r)
	}
	return list
}

func ruleKey(r string) string {
	return strings.ToLower(strings.Join(strings.Fields(strings.TrimPrefix(r, "- ")), " "))
}

// withoutCodeBlocks removes fenced code blocks (pasted logs, code).
func withoutCodeBlocks(text string) string {
	if !strings.Contains(text, "```") {
		return text
	}
	var b strings.Builder
	in := false
	for _, line := range strings.SplitAfter(text, "\n") {
		if trimmed := strings.TrimSpace(line); strings.HasPrefix(trimmed, "```") {
			// A closing fence with text after it ("```. Keep it small.")
			// keeps the text: people write on after pasting.
			if rest := strings.TrimLeft(trimmed, "`"); in && rest != "" {
				b.WriteString(rest)
			}
			in = !in
			b.WriteString("\n")
			continue
		}
		if !in {
			b.WriteString(line)
		}
	}
	return b.String()
}

// splitSentences splits text at line breaks and at sentence ends: ., ! or
// ? followed by space and a capital, a digit, a quote or a non-ASCII
// letter (so "go test ./... before" and "e.g. this" stay whole).
func splitSentences(text string) []string {
	var out []string
	start := 0
	emit := func(end int) {
		if s := strings.TrimSpace(text[start:end]); s != "" {
			out = append(out, s)
		}
	}
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '\n':
			emit(i)
			start = i + 1
		case c == '.' || c == '!' || c == '?':
			j := i + 1
			for j < len(text) && (text[j] == '.' || text[j] == '!' || text[j] == '?') {
				j++
			}
			k := j
			for k < len(text) && (text[k] == ' ' || text[k] == '\t') {
				k++
			}
			if k == j && k < len(text) {
				i = j - 1
				continue
			}
			if k == len(text) || sentenceStart(text[k:]) {
				emit(j)
				start = k
			}
			i = k - 1
		}
	}
	emit(len(text))
	return out
}

func sentenceStart(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r) || unicode.IsDigit(r) || strings.ContainsRune("\"'`(*[", r) || r >= 0x2E80
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

// quoteBlock renders possibly multi-line text inside a list item: its
// first line continues the item's line, the others are indented under it
// (blank lines dropped, so the item reads back whole).
func quoteBlock(text string) string {
	text = strings.TrimSpace(text)
	if !strings.Contains(text, "\n") {
		return text
	}
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimRight(line, " \t\r"); strings.TrimSpace(line) != "" {
			if b.Len() > 0 {
				b.WriteString("\n" + quoteIndent)
			}
			b.WriteString(line)
		}
	}
	return b.String()
}

// quoteIndent indents the continuation lines of an item.
const quoteIndent = "    "

// unquote undoes quoteBlock's indentation.
func unquote(item string) string { return strings.ReplaceAll(item, "\n"+quoteIndent, "\n") }

func appendUnique(list []string, item string) []string {
	for _, it := range list {
		if it == item {
			return list
		}
	}
	return append(list, item)
}
