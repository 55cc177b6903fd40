package sessiongen

import "strings"

// Texts are written from templates whose placeholders name parts of the
// current task: {title}, {sym}, {file}, {file2}, {test}, {pkg}, {cmd},
// {symptom}, {cause}, {fix}, {station}, {sat}. Anything else in braces
// (JSON, JSX, Go) is left as it is.

// slots fills the placeholders.
type slots struct {
	t            *task
	station, sat string
	file2, cmd   string
}

// expand writes tmpl with its placeholders filled.
func (s *slots) expand(b *strings.Builder, tmpl string) {
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			return
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			b.WriteString(tmpl)
			return
		}
		name := tmpl[i+1 : i+j]
		v, ok := s.value(name)
		b.WriteString(tmpl[:i])
		if ok {
			if strings.IndexByte(v, '{') >= 0 && name != "symptom" {
				s.expand(b, v)
			} else {
				b.WriteString(v)
			}
		} else {
			b.WriteString(tmpl[i : i+j+1])
		}
		tmpl = tmpl[i+j+1:]
	}
}

func (s *slots) value(name string) (string, bool) {
	t := s.t
	switch name {
	case "title":
		return t.title, true
	case "sym":
		return t.sym, true
	case "file":
		return t.files[0], true
	case "file2":
		return s.file2, true
	case "test":
		return t.test, true
	case "pkg":
		return orDefaultString(t.pkg, "web"), true
	case "cmd":
		return s.cmd, true
	case "symptom":
		return t.symptom, true
	case "cause":
		return t.cause, true
	case "fix":
		return t.fix, true
	case "station":
		return s.station, true
	case "sat":
		return s.sat, true
	}
	return "", false
}

// text returns tmpl expanded.
func (s *slots) text(tmpl string) string {
	var b strings.Builder
	s.expand(&b, tmpl)
	return b.String()
}

// fill returns tmpl expanded, its first letter capitalised.
func (s *slots) fill(tmpl string) string { return capitalize(s.text(tmpl)) }

// capitalize upper-cases the first letter of s, unless its first word is
// code (an identifier such as createStation, a path): that keeps its case.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	for i := 1; i < len(s) && s[i] != ' '; i++ {
		if c := s[i]; (c < 'a' || c > 'z') && c != ',' && c != ':' && c != '\'' {
			return s
		}
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// The assistant's lines, by what it is doing.
var (
	introLines = []string{
		"I'll start by reading {file} to see how {sym} works.",
		"Let me look at {sym} and the tests around it first.",
		"Let me check how {sym} is called before changing anything.",
		"I'll reproduce the problem first, then look at {sym}.",
	}
	rereadLines = []string{
		"The edit did not apply: the text in {file} is not what I expected. Let me read the file again.",
		"My oldText did not match {file} exactly (whitespace, probably). Re-reading it.",
	}
	editLines = []string{
		"Found it: {cause}. I'll {fix}.",
		"The cause is clear now: {cause}. The fix is to {fix}.",
		"I'll {fix}, and add a test case for it.",
		"Applying the change to {file}.",
	}
	testLines = []string{
		"Now let me run the tests.",
		"Running `{cmd}` to check the change.",
		"Let me run `{cmd}` to see where we stand.",
	}
	retestLines = []string{
		"The test still fails: `{symptom}`. The fix was incomplete; I'll look at the failing case again.",
		"Still red: `{symptom}`. I missed a path through {sym}.",
	}
	commitLines = []string{
		"Committing the change.",
		"Let me check the working tree, then commit.",
	}
	thinkingLines = []string{
		"The user wants to {title}. The place to look is {sym} in {file}.",
		"If the failure only shows up at the boundary, the window arithmetic is the first suspect, not the data.",
		"{cause}; that would explain `{symptom}` exactly.",
		"I should not change the public signature of {sym}: other packages call it, and the user cares about that.",
		"A table-driven test with the failing case and its neighbours will pin this down.",
		"The simplest correct change is to {fix}. Anything cleverer is not needed now.",
		"Before editing, I want to see the exact text around {sym} so the edit's oldText matches.",
		"Running only `{cmd}` first is faster; the full suite can come at the end.",
		"There may be a second caller with the same assumption; a quick search will tell.",
		"Time zones: everything inside is UTC, only the UI converts, so the bug is not in formatting.",
	}
	doneLines = []string{
		"Done: {cause}, so I changed {sym} in {file} to {fix}.",
		"Fixed: {sym} now does what it should. The cause was that {cause}.",
		"The change is in {file}: I {fix}.",
	}
	doneDetailLines = []string{
		"I added `{test}`, which failed before the change with `{symptom}` and passes now.",
		"`{cmd}` passes.",
		"Nothing outside {file} and its test changed; the public API is untouched.",
		"I kept the diff small, as you asked.",
		"One thing to watch: the same assumption may exist in the web UI, which I did not touch.",
	}
	stuckLines = []string{
		"I couldn't get `{test}` green yet: it still reports `{symptom}`.",
		"Not fixed yet. `{cmd}` still fails with `{symptom}`.",
	}
	stuckDetailLines = []string{
		"My current theory is that {cause}. The next step is to {fix}.",
		"Shall I continue along these lines, or would you rather look at the failing case first?",
	}
	findingLines = []string{
		"Here's what I found: {cause}.",
		"I read {file}: {cause}.",
	}
	findingDetailLines = []string{
		"I'd {fix}. That touches only {file} and its test.",
		"Shall I go ahead and {fix}?",
		"The test `{test}` would pin it down: today it would fail with `{symptom}`.",
	}
	answerLines = []string{
		"Good question. {cause}, and that is why I chose to {fix}.",
		"Special-casing the boundary would fix today's report but not the next one; the change to {sym} removes the assumption itself.",
		"For {station} nothing else changes: the results are the same except where the old code was wrong.",
		"If {station} has no pass in the window, {sym} returns an empty slice and no error, as before.",
		"The cost is negligible: one more comparison per step, no allocation.",
		"I checked the other callers of {sym}; none depends on the old behaviour.",
	}
)

// The user's lines, by what they want.
var (
	nextOpeners     = []string{"Next task: ", "Let's move on. ", "Actually, let's park that and switch to something more urgent. ", "Change of plan: ", "New thing. ", "", "", ""}
	askClosers      = []string{"Start by reading the code and tell me what you find before changing anything.", "Keep the change small.", "Write a failing test first.", "Thanks!", "", "", "", ""}
	correctionLines = []string{
		"No, that's not what I meant. Keep {sym} as it is and fix the caller instead.",
		"Hmm, wait: you changed {file2}, but I only wanted {file} touched. Please revert that part.",
		"That's not right, the test still fails for me with TZ=Asia/Tokyo: `{symptom}`. Look again.",
		"Please don't rename things in this change; keep the diff minimal.",
		"Close, but the error message should mention the station, e.g. \"plan {station}: no visibility window\".",
	}
	questionLines = []string{
		"Why {fix}? Wouldn't it be simpler to special-case the boundary?",
		"What happens when {station} has no passes at all in the window?",
		"How confident are you that this doesn't change the results for other stations?",
		"Does this cost anything in performance? {sym} runs for every station every night.",
	}
	continueLines = []string{"Carry on.", "Yes, go ahead.", "OK, continue.", "Sounds good, do it.", "Go on 👍"}
	retryLines    = []string{"That failed with an API error. Try again, please.", "Try again.", "The request errored out, please retry."}
	resumeLines   = []string{"Sorry, I pressed Esc by accident. Please continue where you were.", "Oops, didn't mean to stop you. Continue."}
	commitAsks    = []string{"Great, that works. Commit it with a descriptive message.", "Commit this, then we move on. 🚀", "Looks good to me, please commit."}
	rephraseLines = []string{"Let's try this differently. ", "Scratch the last approach. ", "Going back a step: "}
	imageLines    = []string{"Here's a screenshot of how it looks on my phone:", "This is what I see in the browser:"}
)
