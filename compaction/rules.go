package compaction

import (
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Telling the user's standing instructions from the rest of what they
// write, without a model. A sentence of the user is one of:
//
//   - a rule: a standing instruction, whatever its form: an imperative or
//     a prohibition ("leave the vendored code as it is", "no new
//     dependencies"), a policy ("the public API is frozen", "we use pnpm",
//     "tests go next to the code", "timestamps are stored in UTC"), a
//     preference ("I'd rather…", "please keep…"), a scope limit ("only…",
//     "just the backend for now", "until 2.0"), a gate ("ask before…");
//   - a lift: it takes back an earlier rule ("you can touch the generated
//     code now"); the rule it names leaves the ledger;
//   - a task: a one-off request ("fix the flaky test"), done once done;
//   - a question, or a remark ("thanks", "the build was green").
//
// The sentence is cut into clauses (at commas, semicolons, colons, dashes,
// parentheses and "and/but/so/then"); each clause's opening words are read
// after dropping fillers ("ok", "also", "please", "while you're at it"). An
// imperative whose verb sets a manner (use, keep, leave, stick to, avoid,
// ask…) is a rule; one whose verb does a job (fix, add, run, rename…) is a
// task unless something makes it standing (every, any, whenever, before
// you…, in this repo). A statement is a rule when it states a
// policy: a copula with a policy word (frozen, off-limits, read-only), a
// present passive ("are stored in"), a verb of staying or placing (stays,
// goes next to, belongs in, follows), a quantified subject with a copula
// ("all timestamps are UTC"), "we" with a verb of manner or a prohibition
// ("we use pnpm", "we don't mock…"), or an "I" of preference. Cues of obligation, prohibition, scope and standing time
// (should, never, only, from now on, rather than, …) make a rule anywhere.
// Past tense, hedges and questions do not.
//
// The words come from a [lexicon]: English is the one there is; another
// language joins with a lexicon of its own (its fillers, verbs, cues), the
// reading stays the same.

// sentenceKind is what a sentence of the user is.
type sentenceKind int

const (
	sentenceOther sentenceKind = iota
	sentenceRule
	sentenceLift
	sentenceTask
	sentenceQuestion
)

// A lexicon is one language's words for reading the user's sentences.
// Phrases are lower case, words separated by one space.
type lexicon struct {
	// fillers open a clause without saying anything about it.
	fillers phrases
	// manner verbs make an imperative a rule; task verbs make it a task
	// unless a standing word is in the clause.
	manner, task map[string]bool
	// cues make a rule wherever they are; clauseCues only when they open
	// a clause or follow a subject pronoun ("never log…", "we never…").
	cues, clauseCues phrases
	// obligations make a rule unless the user speaks of themselves ("we
	// have to fix it" is a task); subjects are the pronouns after which a
	// clause cue counts; "only" after notOnly does not ("the only file").
	obligations phrases
	subjects    map[string]bool
	notOnly     map[string]bool
	// subordinate words open a clause that says when or why, not what.
	subordinate map[string]bool
	// standing words make a task's imperative a rule ("every", "before
	// you"); a quantifier counts when no determiner follows it.
	standing    phrases
	quantifiers map[string]bool
	// determiners open a noun phrase; pronouns a statement.
	determiners, pronouns map[string]bool
	// copulas and the policy words after them; placing verbs and the
	// prepositions after them; staying verbs state a policy alone.
	copulas, policyWords, placing, placePreps, staying map[string]bool
	// states are participles of a finished state ("is done"), no policy.
	states map[string]bool
	// prefer are the openings of a preference in the first person
	// ("i'd rather"); want those of a wish, a rule only when it is standing
	// ("I want every endpoint…", not "I'd like it to print JSON");
	// preferTo the openings after which a task is asked.
	prefer, want, preferTo phrases
	// we is the first person plural; wePast its verbs that tell, not rule.
	we     map[string]bool
	wePast map[string]bool
	// polite openings turn a question into a request ("could you").
	polite phrases
	// asking words open a question, "?" or not.
	asking map[string]bool
	// negative openings of a prohibition, and words after "no" that
	// answer rather than forbid.
	prohibit phrases
	noAnswer map[string]bool
	// hedges make a contrast a remark ("I think it is X, not Y").
	hedges phrases
	// lifts: permissions, the times that make a permission a lift, and
	// phrases that take a rule back on their own.
	permit, permitTime, takeBack phrases
	// stop words carry no content when a lift is matched to a rule.
	stop map[string]bool
	// intensifiers strengthen without changing what is said; they are
	// skipped inside a sentence.
	intensifiers map[string]bool
}

// english is the English lexicon, built on first use: its maps are the
// largest part of this package's init, and most runs of Prime (a version,
// a listing) read no sentence of the user.
var english = sync.OnceValue(func() *lexicon {
	set := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, w := range strings.Fields(s) {
			m[w] = true
		}
		return m
	}
	list := newPhrases
	return &lexicon{
		fillers: list("ok|okay|also|and|but|so|then|oh|btw|hey|alright|well|now|next|first|finally|yes|yeah|" +
			"please|pls|plz|kindly|careful|note|fyi|important|by the way|one more thing|while you're at it|while you are at it|" +
			"go ahead and|heads up|just so you know|for the record|as a reminder|if possible|if you can|and also|" +
			"let's|let us|i need you to|i want you to|i'd like you to|i would like you to|can you|could you|would you|will you|would you mind"),
		manner: set("use keep leave stick follow respect preserve maintain put place store name format prefix target pin " +
			"mirror match treat stay limit restrict avoid prefer favour favor ask consult wait mind skip ensure sign " +
			"be route assume"),
		task: set("fix add implement create write run look check investigate rename remove delete refactor update bump show " +
			"tell explain find debug try build deploy merge open read summarize summarise review revert rebase split move wire " +
			"regenerate generate install set change replace convert port migrate test profile measure compare list print send " +
			"start restart stop clean drop squash commit push pull release publish tag document draft finish continue help make " +
			"do go get give see configure extract inline simplify optimize optimise speed reduce increase handle cover copy " +
			"paste call rewrite redo undo upgrade downgrade trace log"),
		cues: list("must|mustn't|should|shouldn't|ought to|make sure|be sure to|ensure|" +
			"remember to|don't forget|do not forget|not allowed|off-limits|off limits|hands off|no-go|not to be|is not to|are not to|" +
			"at all times|every time|each time|whenever|from now on|going forward|from here on|for now|for the time being|" +
			"until|by default|as a rule|under no circumstances|nowhere else|rather than|instead of|better to|prefer|" +
			"preferably|favour|favor|keep it that way|as it is|as is|as they are|leave them be|leave it be|stay out|keep out|" +
			"stay away|strictly|in mind|check with me|wait for my|without asking|without checking|without my|ask me first|" +
			"ask first|ask before|nothing but|nothing else|is required|are required|required to|is mandatory|are mandatory"),
		clauseCues:  list("never|always|only|just the|just this|just these|nothing|nobody|no one|ever"),
		obligations: list("have to|has to|need to|needs to"),
		subjects:    set("i we you they"),
		notOnly:     set("the an my our your their not if"),
		subordinate: set("unless if when because since as that which where while whether although though once after before"),
		standing:    list("whenever|always|never|before you|after you|before committing|before pushing|before merging|in this repo|in this project|in this codebase|everywhere|throughout|consistently|in future|in the future"),
		quantifiers: set("any anything every each all everything"),
		determiners: set("the a an this that these those my our your their its his her some"),
		pronouns:    set("i i'm i'd i've i'll it it's this that there there's he she they you you're we we're"),
		copulas:     set("is are isn't aren't 's 're"),
		policyWords: set("off-limits frozen read-only readonly locked untouchable sacred mandatory required forbidden banned " +
			"deprecated final immutable non-negotiable not-negotiable"),
		placing:    set("go goes belong belongs live lives"),
		placePreps: set("in into to next under through beside inside with on"),
		staying:    set("stay stays remain remains follow follows"),
		states: set("done finished completed fixed merged deployed released shipped broken failed gone closed solved " +
			"resolved updated green red back up down ready here there fine ok okay slow fast flaky wrong right"),
		prefer:   list("i'd rather|i would rather|i prefer|i'd prefer|i would prefer|i'd appreciate|i would appreciate|i don't want|i do not want|i never want|i like it when|i'm fine with|i am fine with|i'm ok with|i expect"),
		want:     list("i want|i'd like|i would like|i wish"),
		preferTo: list("i want you to|i'd like you to|i would like you to|i need you to"),
		we:       set("we we're our"),
		wePast: set("was were had did have got saw went made talked discussed said agreed tried found can could might may " +
			"will would 'll just already also"),
		polite:   list("can you|could you|would you|will you|can we|could we|would you mind|please"),
		asking:   set("what what's why how where which who whose whom"),
		prohibit: list("don't|do not|never|let's not|let us not|please don't|no|avoid"),
		noAnswer: set("problem worries idea luck need way doubt thanks"),
		hedges:   list("i think|i guess|maybe|probably|perhaps|seems|looks like|i suspect|might|not sure"),
		permit: list("you can|you may|you're allowed to|you are allowed to|you're free to|you are free to|feel free to|" +
			"fine to|ok to|okay to|go ahead and|is fine|are fine|is yours|are yours|you're no longer|you are no longer|no need to|" +
			"don't have to|do not have to|don't need to|do not need to|doesn't have to|isn't|aren't|is not|are not|not needed|not required"),
		permitTime:   list("now|again|anymore|any more|from here on|from now on|after all|no longer"),
		takeBack:     list("forget what i said|forget about|forget my|forget the rule|ignore what i said|ignore my earlier|ignore my previous|scratch that|never mind|disregard|is lifted|are lifted|unfrozen|no longer frozen|no longer off-limits"),
		intensifiers: set("really definitely absolutely honestly seriously truly strongly very"),
		stop: set("the a an this that these those my our your it its is are be to of in on at for from with by and or but so " +
			"you you're we i i'd me not no now again anymore more can may any all every each new just only please it's " +
			"there here then than use using used fine free feel ok okay go ahead what said about forget ever never always " +
			"don't do does did have has had will would should could must need needs get gets got"),
	}
})

// withoutCodeSpans replaces each `code span` by the word "code": what it
// quotes is not the user's prose ("fails with `database is locked`").
func withoutCodeSpans(text string) string {
	if strings.Count(text, "`") < 2 {
		return text
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(text, '`')
		j := -1
		if i >= 0 {
			j = strings.IndexByte(text[i+1:], '`')
		}
		if j < 0 {
			b.WriteString(text)
			return b.String()
		}
		b.WriteString(text[:i] + "code")
		text = text[i+1+j+1:]
	}
}

// dashes folds typographic apostrophes and sets dashes apart.
var dashes = strings.NewReplacer("’", "'", "‘", "'", "—", " — ", "–", " – ")

// words are a sentence cut for reading: lower-case words, and the places
// where a clause ends.
type words struct {
	w     []string
	ends  []bool // ends[i]: a clause ends after w[i]
	comma []bool // comma[i]: a comma follows w[i]
}

// readWords cuts text into words (apostrophes folded to ', punctuation
// around words dropped) and clause ends.
func (lx *lexicon) readWords(text string) words {
	var ws words
	if strings.ContainsAny(text, "’‘—–") {
		text = dashes.Replace(text)
	}
	text = strings.ToLower(withoutCodeSpans(text))
	for _, f := range strings.Fields(text) {
		if f == "—" || f == "–" || f == "-" {
			if n := len(ws.ends); n > 0 {
				ws.ends[n-1] = true
			}
			continue
		}
		if strings.HasPrefix(f, "(") && len(ws.ends) > 0 {
			ws.ends[len(ws.ends)-1] = true
		}
		e, ends, comma := len(f), false, false
		for ; e > 0 && closing(f[e-1]); e-- {
			switch f[e-1] {
			case ',':
				ends, comma = true, true
			case ';', ':', ')':
				ends = true
			}
		}
		b := 0
		for b < e && opening(f[b]) {
			b++
		}
		w := f[b:e]
		if w == "" {
			if n := len(ws.ends); n > 0 && ends {
				ws.ends[n-1] = true
			}
			continue
		}
		if lx.intensifiers[w] && len(ws.w) > 0 {
			continue // "I really don't want…" reads as "I don't want…"
		}
		ws.w = append(ws.w, w)
		ws.ends = append(ws.ends, ends)
		ws.comma = append(ws.comma, comma)
	}
	return ws
}

// closing and opening report the punctuation around a word.
func closing(c byte) bool {
	switch c {
	case '.', ',', ';', ':', '!', '?', ')', '"', '\'', '`', ']':
		return true
	}
	return false
}

func opening(c byte) bool {
	switch c {
	case '(', '"', '\'', '`', '[', '*':
		return true
	}
	return false
}

// clauses are the word ranges of the clauses, conjunctions opening a new
// one.
func (ws words) clauses() [][]string {
	var out [][]string
	start := 0
	for i := range ws.w {
		conj := i > start && (ws.w[i] == "and" || ws.w[i] == "but" || ws.w[i] == "so" || ws.w[i] == "then")
		if conj {
			out = append(out, ws.w[start:i])
			start = i
		}
		if ws.ends[i] {
			out = append(out, ws.w[start:i+1])
			start = i + 1
		}
	}
	if start < len(ws.w) {
		out = append(out, ws.w[start:])
	}
	return out
}

// phrases are word sequences, by their first word.
type phrases map[string][][]string

// newPhrases makes phrases of a list separated by "|".
func newPhrases(list string) phrases {
	ps := phrases{}
	for _, p := range strings.Split(list, "|") {
		ws := strings.Fields(p)
		ps[ws[0]] = append(ps[ws[0]], ws)
	}
	return ps
}

// at returns the length in words of the longest phrase ws starts with.
func (ps phrases) at(ws []string) (int, bool) {
	if len(ws) == 0 {
		return 0, false
	}
	n := 0
	for _, p := range ps[ws[0]] {
		if len(p) > n && len(p) <= len(ws) && slices.Equal(ws[:len(p)], p) {
			n = len(p)
		}
	}
	return n, n > 0
}

// in returns where the first phrase found in ws ends.
func (ps phrases) in(ws []string) (int, bool) {
	for i := range ws {
		if n, ok := ps.at(ws[i:]); ok {
			return i + n, true
		}
	}
	return 0, false
}

// contrast reports "x, not y": a word, a comma, then "not".
func contrast(ws words) bool {
	for i := 0; i+1 < len(ws.w); i++ {
		if ws.comma[i] && ws.w[i+1] == "not" {
			return true
		}
	}
	return false
}

// classify says what a sentence of the user is.
func (lx *lexicon) classify(sent string) sentenceKind {
	ws := lx.readWords(sent)
	if len(ws.w) == 0 {
		return sentenceOther
	}
	clauses := ws.clauses()
	question := strings.HasSuffix(strings.TrimSpace(sent), "?")
	if lx.asking[ws.w[0]] {
		question = true // "what's the difference between the two"
	}
	if question {
		rest, polite := lx.afterPolite(ws.w)
		if !polite {
			return sentenceQuestion
		}
		if lx.clauseKind(rest) == sentenceRule || lx.anyCue(ws, clauses) {
			return sentenceRule
		}
		return sentenceTask
	}
	if lx.lifts(ws.w) {
		return sentenceLift
	}
	if len(ws.w) < 3 && !lx.prohibits(ws.w) {
		return sentenceOther // "new thing", "hands up"
	}
	if lx.anyCue(ws, clauses) {
		return sentenceRule
	}
	kind := sentenceOther
	for _, c := range clauses {
		switch lx.clauseKind(c) {
		case sentenceRule:
			return sentenceRule
		case sentenceTask:
			kind = sentenceTask
		}
	}
	return kind
}

// afterPolite drops a polite opening ("could you please"), reporting it.
func (lx *lexicon) afterPolite(ws []string) ([]string, bool) {
	n, ok := lx.polite.at(ws)
	if !ok {
		return ws, false
	}
	rest := ws[n:]
	if len(rest) > 0 && rest[0] == "please" {
		rest = rest[1:]
	}
	return rest, true
}

// anyCue reports a cue of a rule anywhere in the sentence, or opening one
// of its clauses, or after a subject pronoun.
func (lx *lexicon) anyCue(all words, clauses [][]string) bool {
	ws := all.w
	if _, ok := lx.cues.in(ws); ok {
		return true
	}
	if contrast(all) && !lx.hedged(ws) {
		return true
	}
	for i := range ws {
		if i > 0 && lx.subjects[ws[i-1]] && (ws[i-1] == "we" || ws[i-1] == "i") {
			continue
		}
		if _, ok := lx.obligations.at(ws[i:]); ok {
			return true
		}
	}
	for i, w := range ws {
		if w == "only" && (i == 0 || !lx.notOnly[ws[i-1]]) {
			return true
		}
	}
	for i := range ws {
		start := i == 0 || lx.subjects[ws[i-1]]
		if !start {
			continue
		}
		if _, ok := lx.clauseCues.at(ws[i:]); ok {
			return true
		}
	}
	// A clause opening with a cue: after a clause end.
	for _, c := range clauses {
		c = lx.dropFillers(c)
		if _, ok := lx.clauseCues.at(c); ok {
			return true
		}
	}
	return false
}

func (lx *lexicon) hedged(ws []string) bool {
	_, ok := lx.hedges.in(ws)
	return ok
}

// dropFillers drops the fillers opening a clause.
func (lx *lexicon) dropFillers(c []string) []string {
	for {
		n, ok := lx.fillers.at(c)
		if !ok {
			return c
		}
		if (c[0] == "let's" || c[0] == "let") && len(c) > n && c[n] == "not" {
			return c // a prohibition: "let's not…"
		}
		c = c[n:]
	}
}

// clauseKind reads one clause: an imperative, a prohibition, a statement.
func (lx *lexicon) clauseKind(c []string) sentenceKind {
	if at, toYou := lx.preferTo.in(c); toYou {
		return lx.imperative(c[at:])
	}
	if _, ok := lx.prefer.in(c); ok {
		return sentenceRule
	}
	if at, ok := lx.want.in(c); ok {
		for _, w := range c[at:] {
			if lx.manner[w] || lx.staying[w] {
				return sentenceRule // "I want the output to stay…"
			}
		}
		if lx.standingIn(c[at:]) {
			return sentenceRule
		}
		return sentenceTask
	}
	c = lx.dropFillers(c)
	if len(c) == 0 || lx.subordinate[c[0]] {
		return sentenceOther
	}
	if lx.prohibits(c) {
		return sentenceRule
	}
	if lx.statement(c) {
		return lx.policy(c)
	}
	return lx.imperative(c)
}

// prohibits reports a clause that opens with a prohibition ("no force
// pushes", "don't bump…"), not an answer ("no problem", "don't worry").
func (lx *lexicon) prohibits(c []string) bool {
	n, ok := lx.prohibit.at(c)
	if !ok || len(c) == n {
		return false
	}
	return !(c[0] == "no" && lx.noAnswer[c[1]]) && !(c[0] == "don't" && c[1] == "worry")
}

// statement reports whether a clause states rather than asks: it opens
// with a pronoun, a determiner or a quantifier, or a verb of being or
// placing follows its first words (a noun phrase: "tests go next to…").
func (lx *lexicon) statement(c []string) bool {
	if lx.pronouns[c[0]] || lx.determiners[c[0]] || lx.we[c[0]] {
		return true
	}
	if lx.task[c[0]] || lx.manner[c[0]] {
		return false
	}
	if len(c) > 2 && len(c[1]) > 3 && strings.HasSuffix(c[1], "s") && !strings.HasSuffix(c[1], "ss") &&
		!lx.determiners[c[1]] && !lx.pronouns[c[1]] {
		return true // "PlanPasses runs for…"
	}
	for i := 1; i < len(c) && i < 6; i++ {
		w := c[i]
		if lx.copulas[w] || lx.placing[w] || lx.staying[w] || w == "get" || w == "gets" || w == "need" || w == "needs" ||
			w == "was" || w == "were" || w == "has" || w == "have" || w == "looks" || w == "seems" || strings.HasSuffix(w, "ed") && i == 1 {
			return true
		}
	}
	return lx.quantifiers[c[0]]
}

// imperative reads a clause that opens with its verb.
func (lx *lexicon) imperative(c []string) sentenceKind {
	if len(c) == 0 {
		return sentenceOther
	}
	if lx.manner[c[0]] {
		return sentenceRule
	}
	if lx.standingIn(c) {
		return sentenceRule
	}
	return sentenceTask
}

// standingIn reports a word that makes a task standing.
func (lx *lexicon) standingIn(c []string) bool {
	if _, ok := lx.standing.in(c); ok {
		return true
	}
	for i, w := range c {
		if lx.quantifiers[w] && (i+1 == len(c) || !lx.determiners[c[i+1]] && c[i+1] != "of") {
			return true
		}
	}
	return false
}

// policy reads a statement: a rule when it states a policy.
func (lx *lexicon) policy(c []string) sentenceKind {
	if lx.we[c[0]] {
		if len(c) > 1 && c[0] == "we're" {
			if v, ok := strings.CutSuffix(c[1], "ing"); ok && (lx.manner[v] || lx.manner[v+"e"] || len(v) > 2 && lx.manner[v[:len(v)-1]]) {
				return sentenceRule // "we're sticking with…"
			}
			return sentenceOther
		}
		if len(c) > 1 && c[0] == "we" && (lx.manner[c[1]] || lx.prohibits(c[1:]) || lx.standingIn(c[1:]) && !lx.wePast[c[1]]) {
			return sentenceRule
		}
	}
	if lx.quantifiers[c[0]] || c[0] == "no" {
		for _, w := range c[1:] {
			if lx.copulas[w] {
				return sentenceRule // "all timestamps are UTC"
			}
		}
	}
	for i := 1; i < len(c); i++ {
		w, next := c[i], ""
		if i+1 < len(c) {
			next = c[i+1]
		}
		switch {
		case w == "was" || w == "were" || w == "had" || w == "did":
			return sentenceOther
		case lx.copulas[w]:
			if next == "not" && i+2 < len(c) {
				next = c[i+2]
			}
			if lx.policyWords[next] {
				return sentenceRule
			}
			if participle(next) && !lx.states[next] && !lx.pronouns[c[0]] {
				return sentenceRule // a present passive: "are stored in"
			}
			return sentenceOther
		case lx.staying[w]:
			return sentenceRule
		case lx.placing[w] && lx.placePreps[next]:
			return sentenceRule
		case (w == "get" || w == "gets") && (participle(next) || next == "a" || next == "an"):
			return sentenceRule
		case (w == "need" || w == "needs") && !lx.pronouns[c[0]] && !lx.pronouns[next]:
			return sentenceRule
		}
	}
	return sentenceOther
}

// participle reports a word that reads as a past participle.
func participle(w string) bool {
	if len(w) > 3 && (strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "en")) {
		return true
	}
	switch w {
	case "kept", "made", "set", "put", "built", "run", "shown", "written", "read", "held", "left", "found", "sent", "done":
		return true
	}
	return false
}

// lifts reports a sentence that takes a rule back: a permission with a
// time that makes it new ("you can touch … now"), or a phrase that takes
// back on its own ("forget what I said about…").
func (lx *lexicon) lifts(ws []string) bool {
	if _, ok := lx.takeBack.in(ws); ok {
		return true
	}
	if _, ok := lx.permit.in(ws); !ok {
		return false
	}
	_, ok := lx.permitTime.in(ws)
	return ok
}

// contentWords are the words of a text that say what it is about, folded
// (plural and -ing endings off), for matching a lift to its rule.
func (lx *lexicon) contentWords(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range lx.readWords(text).w {
		w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if len(w) < 3 || lx.stop[w] || lx.manner[w] || lx.policyWords[w] {
			continue
		}
		out[stem(w)] = true
	}
	return out
}

// stem folds the common endings of a word.
func stem(w string) string {
	for _, suf := range []string{"ing", "ed", "es", "s"} {
		if len(w) > len(suf)+3 && strings.HasSuffix(w, suf) {
			return strings.TrimSuffix(w, suf)
		}
	}
	return w
}

// lifted returns the indexes of the rules a lift takes back: those sharing
// the most content words with it, two at least, by share of the rule's
// content words.
func (lx *lexicon) lifted(lift string, rules []string) []int {
	lw := lx.contentWords(lift)
	best, bestShare := []int(nil), 0.0
	for i, r := range rules {
		rw := lx.contentWords(r)
		common := 0
		for w := range rw {
			if lw[w] {
				common++
			}
		}
		if common < 2 {
			continue
		}
		share := float64(common) / float64(len(rw))
		switch {
		case share > bestShare:
			best, bestShare = []int{i}, share
		case share == bestShare:
			best = append(best, i)
		}
	}
	return best
}
