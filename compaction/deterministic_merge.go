package compaction

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Merging a span's digest into the sections of a previous summary, and the
// items the summary writes and reads back.

// merge adds a span's digest to sections parsed from a previous summary,
// section by section.
func (s *sections) merge(d *digest) {
	s.mergeGoal(d)
	s.constraints = appendRules(s.constraints, d.constraints)
	s.mergeDone(d)
	if d.requests > 0 {
		s.inProgress = []string{latestItem + brief(d.latest)}
	}
	s.inProgress = append(s.inProgress, d.pending...)
	s.mergeBlocked(d)
	s.mergeNext(d)
	s.mergeCritical(d)
}

// mergeGoal merges Goal: the previous goal stays first; the span's first
// request joins it only when it changes direction.
func (s *sections) mergeGoal(d *digest) {
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
}

// mergeDone merges Done: the previous counts of files and commands, plus
// the span's.
func (s *sections) mergeDone(d *digest) {
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
}

// mergeBlocked merges Blocked: the previous items the span did not
// resolve, then its own.
func (s *sections) mergeBlocked(d *digest) {
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
}

// mergeNext merges Next Steps: the span's, then what a model planned
// before.
func (s *sections) mergeNext(d *digest) {
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
}

// mergeCritical merges Critical Context: the previous items but those the
// span replaces, then the span's.
func (s *sections) mergeCritical(d *digest) {
	var critical []string
	var exits exitLogs
	for _, it := range s.critical {
		switch {
		case strings.HasPrefix(it, "- "+deterministicMarker), strings.HasPrefix(it, "- The user asked this summary to focus on"),
			strings.HasPrefix(it, repairRequest), strings.HasPrefix(it, repairFailure), strings.HasPrefix(it, repairPin),
			strings.HasPrefix(it, repairSaid):
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

// changedFiles, countOf and succeededRuns read the changed-files and the
// succeeded-commands items of a previous summary back.
var (
	changedFiles = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`([^,]+?) \(((?:\d+ (?:edit|write)s?(?:, )?)+)\)(?:, |$)`)
	})
	countOf       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(\d+) (edit|write)`) })
	succeededRuns = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("(`.+?`)(?: ×(\\d+))?(?:, |$)") })
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
	ms := changedFiles().FindAllStringSubmatch(list, -1)
	if ms == nil {
		return false
	}
	for i := len(ms) - 1; i >= 0; i-- { // oldest first
		t := &tally{key: prefix + ms[i][1]}
		for _, c := range countOf().FindAllStringSubmatch(ms[i][2], -1) {
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
	entries, ok := readBack(item, succeededItem, succeededRuns())
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
	errorLine = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(fail|error|panic|cannot|can't|could not|undefined|expected|want|not found|no such|denied|refused|timed? ?out|exception|invalid|missing|locked)`)
	})
	location = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[\w.-]+\.\w+:\d+`) })
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
		if where == "" && location().MatchString(line) {
			where = line
		}
		if what == "" && errorLine().MatchString(line) {
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
	if exitCode().MatchString(text[i+1:]) && len(text)-i < 60 {
		return strings.TrimSpace(text[:max(i, 0)])
	}
	return text
}

// isBareStatus matches status lines that say nothing on their own: "FAIL",
// a package's "FAIL\tpkg\t0.1s" or "ok  \tpkg".
func isBareStatus(line string) bool {
	return line == "FAIL" || line == "FAILED" || line == "ERROR" || strings.HasPrefix(line, "FAIL\t") || strings.HasPrefix(line, "ok  \t")
}
