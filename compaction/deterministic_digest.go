package compaction

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// Reading a span: what the summary by code takes from the messages it
// replaces.

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
var exitEntry = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("(`.+?`) ((?:[^ ;→]+)(?: → [^ ;→]+)*)(?:; |$)") })

// parse reads back the item; false if it is not one.
func (es *exitLogs) parse(item string) bool {
	entries, ok := readBack(item, commandsItem, exitEntry())
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
	r := &spanReader{d: &digest{}, succeeded: map[string]bool{}, byID: map[string]*spanCall{}}
	for _, m := range span {
		r.read(m)
	}
	return r.finish()
}

// A spanCall is a tool call of the span and whether it got a result.
type spanCall struct {
	key, name, path string
	answered        bool
}

// spanReader is digestSpan's state while it reads the span.
type spanReader struct {
	d         *digest
	succeeded map[string]bool // keys in d.successes
	calls     []*spanCall
	byID      map[string]*spanCall
	latestAt  int // index in calls where the latest request's work starts
}

// read files one message.
func (r *spanReader) read(m session.Message) {
	d := r.d
	switch m := m.(type) {
	case *llm.UserMessage:
		text := strings.TrimSpace(contentText(m.Content))
		if text == "" {
			return
		}
		d.requests++
		d.addRequest(text)
		d.constraints = appendRules(d.constraints, rulesIn(text))
		r.latestAt = len(r.calls)
	case *llm.AssistantMessage:
		if t := strings.TrimSpace(m.Text()); t != "" {
			d.assistant = t
		}
		for _, tc := range m.ToolCalls() {
			c := &spanCall{key: callKey(tc), name: tc.Name}
			c.path, _ = tc.Arguments.StringArg("path")
			r.calls = append(r.calls, c)
			if tc.ID != "" {
				r.byID[tc.ID] = c
			}
		}
	case *llm.ToolResultMessage:
		r.toolResult(m)
	case *session.BashExecution:
		r.bashExecution(m)
	case *session.BranchSummaryMessage:
		d.context = append(d.context, "- An abandoned branch: "+briefSummary(m.Summary))
	case *session.CustomMessage:
		if text := strings.TrimSpace(contentText(m.Content)); text != "" {
			d.context = append(d.context, "- Extension message ("+m.CustomType+"): "+oneLine(text, 300))
		}
	}
}

// toolResult files the first result of a call: a failure, or a success
// that resolves earlier failures and counts as a change or a run.
func (r *spanReader) toolResult(m *llm.ToolResultMessage) {
	c := r.byID[m.ToolCallID]
	if c == nil || c.answered {
		return
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
			r.d.exits.add(c.key, code)
		}
		r.fail(f)
		return
	}
	r.succeed(c.key)
	switch {
	case isBash:
		r.d.exits.add(c.key, "0")
		r.d.commands.add(&tally{key: c.key, runs: 1})
	case c.name == "edit":
		r.d.files.add(&tally{key: c.path, edits: 1})
	case c.name == "write":
		r.d.files.add(&tally{key: c.path, writes: 1})
	}
}

// bashExecution files a command the user ran.
func (r *spanReader) bashExecution(m *session.BashExecution) {
	key := "`" + oneLine(m.Command, 300) + "`"
	switch {
	case m.Cancelled:
		r.fail(failure{key: key, exit: " (cancelled)", text: m.Output})
		r.d.exits.add(key, "cancelled")
	case m.ExitCode != nil && *m.ExitCode != 0:
		code := strconv.Itoa(*m.ExitCode)
		r.fail(failure{key: key, exit: " (exit " + code + ")", text: m.Output})
		r.d.exits.add(key, code)
	default:
		r.succeed(key)
		r.d.exits.add(key, "0")
		r.d.commands.add(&tally{key: key, runs: 1})
	}
}

// succeed records a success of key and drops the failures it resolves.
func (r *spanReader) succeed(key string) {
	d := r.d
	if !r.succeeded[key] {
		r.succeeded[key] = true
		d.successes = append(d.successes, key)
	}
	d.failed = slices.DeleteFunc(d.failed, func(f failure) bool { return resolves(key, f.key) })
}

// fail records f, replacing an earlier failure of the same key.
func (r *spanReader) fail(f failure) {
	r.d.failed = append(slices.DeleteFunc(r.d.failed, func(g failure) bool { return g.key == f.key }), f)
}

// finish lists the calls without a result and the files the latest
// request's work touched.
func (r *spanReader) finish() *digest {
	d := r.d
	for _, c := range r.calls {
		if !c.answered {
			d.pending = appendUnique(d.pending, "- [ ] "+c.key+": no result recorded")
		}
	}
	for _, c := range r.calls[r.latestAt:] {
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
	directionWords = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^(now|next|then)\b|\b(actually|instead|next task|new task|change of plan|scratch (that|the)|let's (move on|switch|park|drop|go back)|forget (that|it|about)|different approach|try this differently|new thing|moving on)\b`)
	})
	// followWords open a request that continues the current work.
	followWords = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^(no\b|not\b|hmm|wait|also\b|and\b|looks good|great|ok\b|okay|close,|that's|please don't|thanks|yes\b|why\b|how\b|what\b|can you also|sorry)`)
	})
)

// changesDirection reports whether a later request starts other work: it
// does not open as a follow-up or a correction, and it says so, or it is a
// long request (not counting the rules it states) that does not ask.
func changesDirection(text string) bool {
	first, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if followWords().MatchString(first) {
		return false
	}
	if directionWords().MatchString(headOf(text, 300)) { // said up front, if at all
		return true
	}
	if strings.HasSuffix(strings.TrimSpace(first), "?") {
		return false
	}
	words := 0
	for _, sent := range splitSentences(withoutCodeBlocks(headOf(text, 2000))) {
		if english().classify(sent) != sentenceRule {
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
var exitCode = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)exit(?:ed)?(?: with)? (?:code|status) (-?\d+)`)
})

func exitCodeIn(text string) string {
	if m := exitCode().FindAllStringSubmatch(text, -1); m != nil {
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
