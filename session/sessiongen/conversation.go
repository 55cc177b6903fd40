package sessiongen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// What a user prompt asks for.
type promptKind int

const (
	askNew      promptKind = iota // a new task (after the first: a change of direction)
	askFollow                     // more work on the current task
	askCorrect                    // a correction, sometimes with a pasted log
	askQuestion                   // a question about the work
	askContinue                   // "carry on"
	askRetry                      // after a failed turn
	askResume                     // after an aborted turn
	askCommit                     // commit the work
	askRephrase                   // the first prompt after a branch move
)

// What one assistant round does.
type phase int

const (
	investigate phase = iota
	change
	check
	commit
)

// How the last round ended; of several results in a round, the greatest
// counts.
type outcome int

const (
	nothing outcome = iota
	readDone
	edited
	editMissed
	testPassed
	testFailed
	committed
)

// conversation is the state of the work the session is about.
type conversation struct {
	started   bool
	task      int  // index in tasks
	first     int  // the first task
	open      bool // the task's problem is not fixed yet
	turns     int  // user turns on the task so far
	last      outcome
	committed bool
	// failed, aborted and branched say how the previous turn ended.
	failed, aborted, branched bool
	stated                    []string // constraints stated so far, once each
	done                      []int    // tasks committed, oldest first, once each
}

func (c *conversation) current() *task { return &tasks[c.task] }

// conversationTurn writes a user prompt, the assistant's rounds of tool
// calls and its final answer.
func (g *gen) conversationTurn() {
	c := &g.conv
	kind := g.nextKind()
	text := g.prompt(kind)
	t := c.current()
	c.turns++
	g.s = slots{t: t, station: stations[g.rng.IntN(len(stations))], sat: satellites[g.rng.IntN(len(satellites))], file2: t.files[min(1, len(t.files)-1)], cmd: testCommand(t)}
	m := &llm.UserMessage{Timestamp: g.ms(), Content: []llm.Content{llm.Text{Text: text}}}
	if g.chance(g.o.ImageRate) {
		m.Content = []llm.Content{llm.Text{Text: imageLines[g.rng.IntN(len(imageLines))] + "\n\n" + text}, g.image()}
	}
	if !g.emitMessage(m) {
		return
	}
	if !g.named && g.count > 3 {
		g.named = true
		g.emit(&session.SessionInfoEntry{Name: "Orbit: " + t.title}, node{kind: session.TypeSessionInfo})
	}
	phases := g.plan(kind)
	retried := false
	for i := 0; i < len(phases); i++ {
		if !g.round(phases[i]) || g.full() {
			return
		}
		switch {
		case c.last == editMissed:
			// Re-read and edit again before anything else.
			phases = slices.Insert(phases, i+1, change)
		case c.last == testFailed && !retried && len(phases) < 6 && g.chance(0.7):
			retried = true
			phases = append(phases, change, check)
		}
	}
	g.finalAnswer(kind)
}

// nextKind decides what the user asks for next.
func (g *gen) nextKind() promptKind {
	c := &g.conv
	switch {
	case c.failed:
		c.failed = false
		if g.chance(0.9) {
			return askRetry
		}
	case c.aborted:
		c.aborted = false
		if g.chance(0.85) {
			return askResume
		}
	}
	if c.branched {
		c.branched = false
		return askRephrase
	}
	if !c.started || c.committed {
		return askNew
	}
	r := g.rng.IntN(100)
	if c.last == testPassed && c.turns >= 2 {
		switch {
		case r < 40:
			return askCommit
		case r < 60:
			return askFollow
		case r < 75:
			return askQuestion
		case r < 85:
			return askNew
		}
		return askContinue
	}
	switch {
	case r < 25:
		return askFollow
	case r < 40:
		return askCorrect
	case r < 52:
		return askQuestion
	case r < 75:
		return askContinue
	case r < 85:
		return askNew
	}
	return askFollow
}

// prompt returns the user's message for kind, and moves the work on.
func (g *gen) prompt(kind promptKind) string {
	c := &g.conv
	var b strings.Builder
	s := slots{t: c.current(), station: stations[g.rng.IntN(len(stations))], sat: satellites[g.rng.IntN(len(satellites))]}
	switch kind {
	case askNew:
		if c.started {
			b.WriteString(nextOpeners[g.rng.IntN(len(nextOpeners))])
			c.task = g.nextTask()
		} else {
			c.task = g.rng.IntN(len(tasks))
			c.first, c.started = c.task, true
		}
		c.open, c.turns, c.last, c.committed = true, 0, nothing, false
		t := c.current()
		s.t = t
		s.expand(&b, t.asks[g.rng.IntN(len(t.asks))])
		g.addConstraints(&b, 0.3)
		if closer := askClosers[g.rng.IntN(len(askClosers))]; closer != "" {
			b.WriteString(" " + closer)
		}
	case askRephrase:
		b.WriteString(rephraseLines[g.rng.IntN(len(rephraseLines))])
		s.expand(&b, s.t.asks[g.rng.IntN(len(s.t.asks))])
		g.addConstraints(&b, 0.2)
		c.open = true
	case askFollow:
		if g.chance(0.5) {
			b.WriteString("Looks good. ")
		}
		s.file2 = s.t.files[len(s.t.files)-1]
		s.expand(&b, s.t.follow[g.rng.IntN(len(s.t.follow))])
		g.addConstraints(&b, 0.15)
		c.open = c.open || g.chance(0.5)
	case askCorrect:
		s.file2 = s.t.files[len(s.t.files)-1]
		b.WriteString(s.fill(correctionLines[g.rng.IntN(len(correctionLines))]))
		if g.chance(0.3) {
			b.WriteString(" Here's the output:\n\n```\n" + g.testOutput(s.t, true) + "```")
		}
		g.addConstraints(&b, 0.2)
		c.open = true
	case askQuestion:
		b.WriteString(s.fill(questionLines[g.rng.IntN(len(questionLines))]))
	case askContinue:
		b.WriteString(continueLines[g.rng.IntN(len(continueLines))])
	case askRetry:
		b.WriteString(retryLines[g.rng.IntN(len(retryLines))])
	case askResume:
		b.WriteString(resumeLines[g.rng.IntN(len(resumeLines))])
	case askCommit:
		b.WriteString(commitAsks[g.rng.IntN(len(commitAsks))])
		g.addConstraints(&b, 0.1)
	}
	return b.String()
}

// nextTask picks a task not done yet (once all are, any but the current).
func (g *gen) nextTask() int {
	c := &g.conv
	var open []int
	for i := range tasks {
		if i != c.task && !slices.Contains(c.done, i) {
			open = append(open, i)
		}
	}
	if len(open) == 0 {
		next := g.rng.IntN(len(tasks) - 1)
		if next >= c.task {
			next++
		}
		return next
	}
	return open[g.rng.IntN(len(open))]
}

// addConstraints appends one (sometimes two) of the user's rules with
// chance p.
func (g *gen) addConstraints(b *strings.Builder, p float64) {
	for range 2 {
		if !g.chance(p) {
			return
		}
		rule := constraints[g.rng.IntN(len(constraints))]
		b.WriteString(" " + rule)
		if !containsString(g.conv.stated, rule) {
			g.conv.stated = append(g.conv.stated, rule)
		}
		p /= 3
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// plan decides the rounds of tool calls answering a prompt.
func (g *gen) plan(kind promptKind) []phase {
	c := &g.conv
	switch kind {
	case askNew, askRephrase:
		var p []phase
		if g.chance(0.85) {
			p = append(p, investigate)
		}
		if g.chance(0.3) {
			p = append(p, investigate)
		}
		if len(p) > 0 && g.chance(0.2) {
			return p // the user asked for findings first
		}
		return append(p, change, check)
	case askFollow, askCorrect:
		if g.chance(0.85) {
			return []phase{change, check}
		}
		return []phase{change}
	case askQuestion:
		if g.chance(0.25) {
			return []phase{investigate}
		}
		return nil
	case askCommit:
		return []phase{commit}
	}
	switch {
	case c.open || c.last == nothing || c.last == readDone || c.last == editMissed:
		return []phase{change, check}
	case c.last != testPassed:
		return []phase{check}
	}
	return nil
}

// round writes one assistant message with its tool calls and their
// results; false when the turn ended (a failed turn, or the session is
// full).
func (g *gen) round(ph phase) bool {
	if g.chance(0.007) {
		g.failedAssistant()
		return false
	}
	if g.o.Pi16 && g.chance(0.02) {
		g.failedAttempt() // retried at once, below
		if g.full() {
			return false
		}
	}
	c := &g.conv
	intro, calls := g.roundCalls(ph)
	for i := range calls {
		if g.chance(g.o.HugeRate) {
			calls[i] = g.hugeCall()
		}
	}
	m := g.newAssistant()
	g.addThinking(m, 2+g.rng.IntN(6))
	m.Content = append(m.Content, llm.Text{Text: g.say(intro, 1)})
	for _, u := range calls {
		m.Content = append(m.Content, u.call)
	}
	g.finishAssistant(m)
	if !g.emitMessage(m) {
		return false
	}
	last := nothing
	for _, u := range calls {
		g.tick(30)
		u.result.Timestamp = g.ms()
		if !g.emitMessage(u.result) {
			return false
		}
		last = max(last, u.outcome)
	}
	if last != nothing {
		c.last = last
	}
	if last == testFailed {
		c.open = true
	}
	if ph == commit {
		c.committed = true
		if i := slices.Index(c.done, c.task); i >= 0 {
			c.done = slices.Delete(c.done, i, i+1) // done again: move it last
		}
		c.done = append(c.done, c.task)
	}
	return true
}

// roundCalls chooses what the assistant says and the tools it calls in a round
// of phase ph, from the current task and how the last round ended.
func (g *gen) roundCalls(ph phase) (intro []string, calls []toolUse) {
	c := &g.conv
	t := c.current()
	switch ph {
	case investigate:
		intro = introLines
		if c.last == editMissed {
			intro = rereadLines
		}
		calls = append(calls, g.readCall(t.files[0], c.last != editMissed && g.chance(0.3)))
		if len(t.files) > 1 && g.chance(0.5) {
			calls = append(calls, g.readCall(t.files[1], false))
		}
		if g.chance(0.2) {
			calls = append(calls, g.searchCall(t))
		}
	case change:
		intro = editLines
		if c.last == testFailed {
			intro = retestLines
		}
		if c.last == editMissed {
			intro = rereadLines
			calls = append(calls, g.readCall(t.files[0], false))
		}
		miss := g.chance(0.06)
		calls = append(calls, g.editCall(t.files[0], t.patch, miss))
		if !miss && c.open && g.chance(0.7) {
			c.open = false
		}
		if len(t.files) > 1 && g.chance(0.4) {
			if g.chance(0.25) {
				calls = append(calls, g.writeCall(t.files[len(t.files)-1]))
			} else {
				calls = append(calls, g.editCall(t.files[1], "", false))
			}
		}
	case check:
		intro = testLines
		calls = append(calls, g.testCall(t, c.open))
		if g.chance(0.2) {
			calls = append(calls, g.bashCall("go vet ./...", "(no output)", 0))
		}
		if g.chance(0.15) {
			calls = append(calls, g.bashCall("git diff --stat", g.diffStat(t), 0))
		}
	case commit:
		intro = commitLines
		if g.chance(0.4) {
			calls = append(calls, g.bashCall("git status --short", g.gitStatus(t), 0))
		}
		msg := commitMessage(*t)
		u := g.bashCall("git add -A && git commit -m "+shellQuote(msg), fmt.Sprintf("[main %07x] %s\n %d files changed, %d insertions(+), %d deletions(-)\n", g.rng.Uint32()&0xfffffff, msg, len(t.files), 5+g.rng.IntN(80), g.rng.IntN(30)), 0)
		u.outcome = committed
		calls = append(calls, u)
	}
	return intro, calls
}

// finalAnswer closes the turn with a message that says where the work
// stands.
func (g *gen) finalAnswer(kind promptKind) {
	c := &g.conv
	var lead, detail []string
	n := 2 + g.rng.IntN(3)
	switch {
	case kind == askQuestion:
		lead, detail = answerLines, answerLines
	case kind == askCommit && c.last == committed:
		msg := commitMessage(*c.current())
		m := g.newAssistant()
		g.addThinking(m, 1)
		m.Content = append(m.Content, llm.Text{Text: "Committed: \"" + msg + "\". The working tree is clean."})
		g.finishAssistant(m)
		g.emitMessage(m)
		return
	case c.last == testFailed:
		lead, detail = stuckLines, stuckDetailLines
	case c.last == readDone || c.last == nothing:
		lead, detail = findingLines, findingDetailLines
	default:
		lead, detail = doneLines, doneDetailLines
	}
	m := g.newAssistant()
	g.addThinking(m, 1+g.rng.IntN(3))
	text := g.say(lead, 1) + "\n\n" + g.say(detail, n)
	if kind != askQuestion && c.last == testPassed && g.chance(0.4) {
		text += "\n\nChanged files:\n"
		for _, f := range c.current().files {
			text += "- `" + f + "`\n"
		}
	}
	m.Content = append(m.Content, llm.Text{Text: text})
	g.finishAssistant(m)
	g.emitMessage(m)
}

// addThinking adds a reasoning block of about n sentences when the session
// thinks (and sometimes when it does not).
func (g *gen) addThinking(m *llm.AssistantMessage, n int) {
	if g.thinking != "" && g.thinking != "off" || g.chance(0.3) {
		m.Content = append(m.Content, llm.Thinking{Thinking: g.say(thinkingLines, n), Signature: g.signature()})
	}
}

func (g *gen) signature() string {
	b := g.bytes(48)
	var s strings.Builder
	s.Grow(64)
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for _, c := range b {
		s.WriteByte(alphabet[c&63])
	}
	return s.String()
}

// say returns about n sentences (scaled by SizeScale) from pool, each
// filled for the current task, none twice while the pool lasts.
func (g *gen) say(pool []string, n int) string {
	n = g.scaled(n)
	var b strings.Builder
	var used uint64 // pools are shorter than 64 lines
	for i := range n {
		k := g.rng.IntN(len(pool))
		for used&(1<<k) != 0 && i < len(pool) {
			k = (k + 1) % len(pool)
		}
		used |= 1 << k
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(g.s.fill(pool[k]))
	}
	return b.String()
}

func testCommand(t *task) string {
	if t.pkg == "" {
		return "npm test --prefix web"
	}
	return "go test " + t.pkg
}

func commitMessage(t task) string {
	dir := t.files[0][:max(0, strings.LastIndexByte(t.files[0], '/'))]
	return dir[strings.LastIndexByte(dir, '/')+1:] + ": " + t.title
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// compactionSummary is the summary a model would have written at this
// point, in the summary format, with pi's file lists.
func (g *gen) compactionSummary() string {
	c := &g.conv
	t := c.current()
	s := &g.s
	var b strings.Builder
	fmt.Fprintf(&b, "## Goal\nWork through orbit's backlog with the user, one task at a time. It started with: %s. Current task: %s.\n\n", tasks[c.first].title, t.title)
	b.WriteString("## Constraints & Preferences\n")
	list(&b, c.stated, 10, func(x string) string { return x })
	b.WriteString("\n## Progress\n### Done\n")
	list(&b, c.done, 8, func(i int) string { return "[x] " + capitalize(tasks[i].title) })
	if c.committed {
		b.WriteString("\n### In Progress\n- (none: the last task was committed)\n\n### Blocked\n")
	} else {
		fmt.Fprintf(&b, "\n### In Progress\n- [ ] %s\n\n### Blocked\n", capitalize(t.title))
	}
	if c.last == testFailed {
		fmt.Fprintf(&b, "- `%s` still fails: `%s`\n", t.test, t.symptom)
	} else {
		b.WriteString("- (none)\n")
	}
	fmt.Fprintf(&b, "\n## Key Decisions\n- **%s**: because %s.\n\n## Reasoning Digest\n- **The cause is in %s, not in the data**: `%s` failed with `%s` before the fix.\n\n", s.fill(t.fix), s.text(t.cause), t.sym, t.test, t.symptom)
	fmt.Fprintf(&b, "## Next Steps\n1. Finish \"%s\" and run `%s`.\n2. Commit when the tests pass.\n\n## Critical Context\n- Main file: %s; test: %s.\n", t.title, testCommand(t), t.files[0], t.test)
	fmt.Fprintf(&b, "\n<read-files>\n%s\n</read-files>\n\n<modified-files>\n%s\n</modified-files>", strings.Join(sortedKeys(g.read), "\n"), strings.Join(sortedKeys(g.modified), "\n"))
	return b.String()
}

// branchSummary is the summary of the branch being left, as Prime writes
// one.
func (g *gen) branchSummary() string {
	t := g.conv.current()
	s := &g.s
	var b strings.Builder
	b.WriteString("The user explored another branch of this session and then came back here.\nWhat happened on that branch:\n\n")
	fmt.Fprintf(&b, "## Goal\n%s\n\n## Progress\n### Done\n- [x] Read %s\n- [x] Tried to %s\n\n### Blocked\n- `%s` kept failing: `%s`\n\n", capitalize(t.title), t.files[0], s.text(t.fix), t.test, t.symptom)
	fmt.Fprintf(&b, "## Next Steps\n1. Try a different approach to %s.\n\n<read-files>\n%s\n</read-files>", t.title, strings.Join(t.files, "\n"))
	return b.String()
}

// list writes the newest n items of xs as a Markdown list, or "(none)".
func list[T any](b *strings.Builder, xs []T, n int, show func(T) string) {
	if len(xs) == 0 {
		b.WriteString("- (none)\n")
		return
	}
	for _, x := range xs[max(0, len(xs)-n):] {
		b.WriteString("- " + show(x) + "\n")
	}
}
