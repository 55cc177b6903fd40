package agent_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
)

// The fidelity of compaction: generated sessions go through five
// compactions in a row, with new work between them, by five summarizers:
// a faithful one, one that drops every constraint, one that drops the file
// lists and Critical Context, one that answers only "## Goal\nContinue.",
// and the summary built by code. The user states rules along the way
// (sentences the test knows), and pins a note at the start. After the fifth
// compaction, what the model sees must hold every modified path and at
// least 95 % of the rules word for word, and the pin; no summary may be
// grown by the ledger past its bound, and every compaction shrinks the
// context.

// fidelityRules are the user's rules the test injects into the generated
// session's user messages, in several phrasings; most come early, so they
// are the oldest by the last compaction.
var fidelityRules = func() []string {
	var out []string
	for i, form := range []string{
		"Never rename the column station_%d in the passes table.",
		"Always keep the retry budget of job %d at three attempts.",
		"Don't touch the fixture file testdata/orbit_%d.tle, it is generated.",
		"The cache key for region %d must stay stable across releases.",
		"Prefer plain loops over reflection in decoder %d.",
		"Make sure migration %d can be rolled back.",
		"Keep the log field sat_%d in snake case.",
		"Avoid allocating in the hot path of planner step %d.",
	} {
		for n := range 5 {
			out = append(out, fmt.Sprintf(form, i*10+n))
		}
	}
	return out
}()

const fidelityPin = "The deploy key lives in vault at secret/orbit/deploy-7; never print it."

// A fidelitySummarizer answers summary requests as a model would, or
// badly; nil means the summary built by code.
type fidelitySummarizer struct {
	name   string
	answer func(r *llmtest.Request) string
}

var (
	userPart     = regexp.MustCompile(`(?s)\[User\]: (.*?)(?:\n\n\[|\n</conversation>)`)
	modifiedCall = regexp.MustCompile(`(?:write|edit)#[^(]*\(path="([^"]*)"`)
	ruleSentence = regexp.MustCompile(`(?:^|[.!?]\s+)((?:Never|Always|Don't|Prefer|Make sure|Keep|Avoid|The [^.]*? must)\b[^.!?]*[.!?])`)
)

// faithfulSummary writes the format from the request: the previous
// summary's rules and critical items carried on, the rules the user stated
// in the conversation, the files changed; keep says which sections to
// write.
func faithfulSummary(r *llmtest.Request, rules, critical bool) string {
	text := r.LastUserText()
	task := text[strings.LastIndex(text, "</conversation>")+1:]
	if i := strings.LastIndex(task, "</previous-summary>"); i >= 0 {
		task = task[i:] // a previous summary may hold a split turn's headings
	}
	if strings.Contains(task, "## Turn Request") {
		return "## Turn Request\n- the work of the turn\n\n## Done in This Turn So Far\n- some steps\n\n## Needed to Follow the Rest\n- the files open"
	}
	prevRules, prevCritical := previousSection(text, "## Constraints & Preferences"), previousSection(text, "## Critical Context")
	var stated []string
	for _, m := range userPart.FindAllStringSubmatch(text, -1) {
		for _, s := range ruleSentence.FindAllStringSubmatch(m[1], -1) {
			if !slices.Contains(stated, s[1]) {
				stated = append(stated, s[1])
			}
		}
	}
	var files []string
	for _, m := range modifiedCall.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(files, m[1]) {
			files = append(files, m[1])
		}
	}
	var b strings.Builder
	b.WriteString("## Goal\n- Keep the orbit planner work going.\n\n## Constraints & Preferences\n")
	if rules {
		for _, r := range append(prevRules, stated...) {
			b.WriteString("- " + strings.TrimPrefix(r, "- ") + "\n")
		}
	} else {
		b.WriteString("- (none)\n")
	}
	b.WriteString("\n## Progress\n### Done\n- [x] Worked on the tasks\n\n### In Progress\n- [ ] The current task\n\n### Blocked\n- (none)\n\n")
	b.WriteString("## Key Decisions\n- **Small steps**: asked for\n\n## Reasoning Digest\n- (none)\n\n## Next Steps\n1. Carry on\n")
	if critical {
		b.WriteString("\n## Critical Context\n")
		for _, c := range prevCritical {
			if strings.HasPrefix(c, "- Files changed: ") {
				continue
			}
			b.WriteString(c + "\n")
		}
		b.WriteString("- Files changed: " + strings.Join(files, ", ") + "\n")
	}
	return strings.TrimSpace(b.String())
}

// previousSection returns the lines of a section of the previous summary
// in a request.
func previousSection(text, heading string) []string {
	_, prev, ok := strings.Cut(text, "<previous-summary>")
	if !ok {
		return nil
	}
	prev, _, _ = strings.Cut(prev, "</previous-summary>")
	_, body, ok := strings.Cut(prev, heading+"\n")
	if !ok {
		return nil
	}
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "#") {
			break
		}
		if strings.HasPrefix(line, "- ") && !strings.Contains(line, "(none)") {
			out = append(out, line)
		}
	}
	return out
}

var fidelitySummarizers = []fidelitySummarizer{
	{"faithful", func(r *llmtest.Request) string { return faithfulSummary(r, true, true) }},
	{"drops every constraint", func(r *llmtest.Request) string { return faithfulSummary(r, false, true) }},
	{"drops file lists and Critical Context", func(r *llmtest.Request) string { return faithfulSummary(r, true, false) }},
	{`answers "## Goal\nContinue."`, func(*llmtest.Request) string { return "## Goal\nContinue." }},
	{"built by code (--offline)", nil},
}

// fidelityMessages is a generated session's conversation, usage removed
// (it measured the uncompacted context), with the rules injected into the
// user messages: two thirds of them in the first fifth of the session.
func fidelityMessages(t *testing.T, seed uint64) []session.Payload {
	out, users := fidelitySession(t, seed, 1600)
	early, nEarly := len(users)/5, len(fidelityRules)*2/3
	for i, rule := range fidelityRules {
		at := users[i*early/nEarly]
		if i >= nEarly {
			at = users[early+(i-nEarly)*(len(users)-early)/(len(fidelityRules)-nEarly)]
		}
		appendUserText(out, at, rule)
	}
	return out
}

// fidelitySession is a generated session of entries entries as payloads,
// usage removed (it measured the uncompacted context), and the indexes of
// its user messages.
func fidelitySession(t *testing.T, seed uint64, entries int) ([]session.Payload, []int) {
	data := sessiongen.Bytes(sessiongen.Options{Entries: entries, Seed: seed, NoCompactions: true, BranchRate: -1, HugeRate: -1})
	s, err := session.Parse("gen", data)
	if err != nil {
		t.Fatal(err)
	}
	var out []session.Payload
	var users []int
	for _, e := range s.LeafPath() {
		p, err := e.Payload()
		if err != nil {
			t.Fatal(err)
		}
		switch p := p.(type) {
		case *session.MessageEntry:
			switch m := p.Message.(type) {
			case *llm.AssistantMessage:
				c := *m
				c.Usage = llm.Usage{}
				p = &session.MessageEntry{Message: &c}
			case *llm.UserMessage:
				users = append(users, len(out))
			}
			out = append(out, p)
		case *session.ModelChangeEntry, *session.ThinkingLevelChangeEntry:
			out = append(out, p)
		}
	}
	return out, users
}

// appendUserText adds text at the end of the user message out[at], as a
// new sentence.
func appendUserText(out []session.Payload, at int, text string) {
	u := *(out[at].(*session.MessageEntry).Message.(*llm.UserMessage))
	have := strings.TrimSpace(llm.TextOf(u.Content))
	if !strings.HasSuffix(have, ".") && !strings.HasSuffix(have, "!") && !strings.HasSuffix(have, "?") {
		have += "."
	}
	u.Content = []llm.Content{llm.Text{Text: have + " " + text}}
	out[at] = &session.MessageEntry{Message: &u}
}

// appendAll appends payloads to the session file at path.
func appendAll(t *testing.T, path string, ps []session.Payload) {
	s, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, p := range ps {
		if _, err := s.Append(p); err != nil {
			t.Fatal(err)
		}
	}
}

// contextText is everything the model sees at the leaf of the file at path:
// the system prompt, summaries, texts, tool calls and results.
func contextText(t *testing.T, path string) string {
	s, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Context("")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if sys := c.System(); sys != nil {
		b.WriteString(sys.Prompt() + "\n")
	}
	b.WriteString(compaction.Transcript(session.ToLLM(c.Messages), compaction.TranscriptOptions{Reasoning: true, ToolBodies: 1 << 30}))
	return b.String()
}

// modifiedPaths are the paths the assistant wrote or edited in ps.
func modifiedPaths(ps []session.Payload) []string {
	var out []string
	for _, p := range ps {
		me, ok := p.(*session.MessageEntry)
		if !ok {
			continue
		}
		if a, ok := me.Message.(*llm.AssistantMessage); ok {
			for _, tc := range a.ToolCalls() {
				if tc.Name == "write" || tc.Name == "edit" {
					if path, ok := tc.Arguments.StringArg("path"); ok && path != "" && !slices.Contains(out, path) {
						out = append(out, path)
					}
				}
			}
		}
	}
	return out
}

// fidelityRow is one line of the table.
type fidelityRow struct {
	summarizer          string
	paths, pathsKept    int
	rules, rulesKept    int
	pinKept             bool
	repaired, unfit     int
	worstBound          float64 // the largest repaired summary / its bound
	shrank, compactions int
}

func TestCompactionFidelity(t *testing.T) {
	var rows []fidelityRow
	for _, sum := range fidelitySummarizers {
		for _, seed := range []uint64{11, 12} {
			row := fidelityRun(t, sum, seed)
			rows = append(rows, row)
			where := fmt.Sprintf("%s, seed %d", sum.name, seed)
			if row.pathsKept != row.paths {
				t.Errorf("%s: %d of %d modified paths in the final context", where, row.pathsKept, row.paths)
			}
			if row.rulesKept*100 < row.rules*95 {
				t.Errorf("%s: %d of %d rules in the final context", where, row.rulesKept, row.rules)
			}
			if !row.pinKept {
				t.Errorf("%s: the pin is not in the final context", where)
			}
			if row.worstBound > 1 {
				t.Errorf("%s: a repaired summary is %.0f%% of its bound", where, 100*row.worstBound)
			}
			if row.shrank != row.compactions || row.compactions != 5 {
				t.Errorf("%s: %d of %d compactions shrank the context", where, row.shrank, row.compactions)
			}
		}
	}
	var b strings.Builder
	b.WriteString("\n| summarizer | seed | modified paths kept | rules kept (verbatim) | pin kept | items put back | no room | largest repaired summary / bound | compactions that shrank the context |\n|---|---|---|---|---|---|---|---|---|\n")
	for i, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d/%d | %d/%d | %v | %d | %d | %.0f%% | %d/%d |\n", r.summarizer, 11+i%2, r.pathsKept, r.paths, r.rulesKept, r.rules,
			r.pinKept, r.repaired, r.unfit, 100*r.worstBound, r.shrank, r.compactions)
	}
	t.Log(b.String())
}

// fidelityRun plays one session through five compactions by sum.
func fidelityRun(t *testing.T, sum fidelitySummarizer, seed uint64) fidelityRow {
	return fidelityPlay{msgs: fidelityMessages(t, seed), rules: fidelityRules, rounds: 5}.run(t, sum, seed).row
}

// A fidelityPlay is a session played through compactions: its messages,
// the rules to look for in the final context, how many compactions, and
// the /compact instructions of some of them (by round, from 0).
type fidelityPlay struct {
	msgs         []session.Payload
	rules        []string
	rounds       int
	instructions map[int]string
}

// fidelityEnd is how a play ended: its row, the final context, the last
// compaction's ledger and the ledger's size after each compaction.
type fidelityEnd struct {
	row     fidelityRow
	text    string
	ledger  *compaction.Ledger
	ledgers []int
}

// run plays the session: the first two fifths, then a compaction by sum
// after each further part, up to nine tenths of the session.
func (pl fidelityPlay) run(t *testing.T, sum fidelitySummarizer, seed uint64) fidelityEnd {
	msgs := pl.msgs
	end := fidelityEnd{row: fidelityRow{summarizer: sum.name}}
	row := &end.row
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s, err := session.Create(path, session.Options{CWD: "/home/dev/projects/orbit"})
	if err != nil {
		t.Fatal(err)
	}
	st := testSettings(t, "compaction.keepRecentTokens", "6000", "compaction.background", "false")
	cfg := config(t.TempDir(), st, nil)
	choice := agent.SummarizerChoice{Offline: true}
	if sum.answer != nil {
		srv := llmtest.NewAnthropic(t)
		srv.Handle(func(r *llmtest.Request) llmtest.Reply {
			return llmtest.Stream(llmtest.Text(sum.answer(r)), llmtest.Usage(llm.UTF16Len(r.Text())/4, 500))
		})
		cfg = config(agentDir(t, srv), st, nil)
		choice = agent.SummarizerChoice{Model: srv.Model().Provider + "/" + srv.Model().ID}
	}
	// The first chunk is two fifths of the session; each compaction but
	// the first is preceded by an equal share of the rest as new work.
	first := len(msgs) * 2 / 5
	step := (len(msgs)*9/10 - first) / max(pl.rounds-1, 1)
	for _, p := range msgs[:first] {
		if _, err := s.Append(p); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	ag, err := agent.Open(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Pin(fidelityPin); err != nil {
		t.Fatal(err)
	}
	ag.Close()
	done := first
	for round := range pl.rounds {
		if round > 0 {
			appendAll(t, path, msgs[done:done+step])
			done += step
		}
		ag, err := agent.Load(path, cfg)
		if err != nil {
			t.Fatal(err)
		}
		res, err := ag.Compact(t.Context(), agent.CompactRequest{Summarizer: choice, Instructions: pl.instructions[round]})
		ag.Close()
		if err != nil {
			t.Fatalf("%s: compaction %d: %v", sum.name, round+1, err)
		}
		row.compactions++
		if res.TokensAfter < res.TokensBefore {
			row.shrank++
		}
		if c := res.Compaction.LedgerCheck; c != nil {
			row.repaired += len(c.Repaired)
			row.unfit += len(c.Unfit)
			if len(c.Repaired) > 0 {
				row.worstBound = max(row.worstBound, float64(c.RepairedTokens)/float64(max(c.Bound, 1)))
			}
		}
		end.ledger = nil
		if d, ok := compaction.ParseDetails(res.Compaction.Details); ok {
			end.ledger = d.Ledger
		}
		size := 0
		if end.ledger != nil {
			size = end.ledger.Tokens()
		}
		end.ledgers = append(end.ledgers, size)
	}
	text := contextText(t, path)
	end.text = text
	for _, p := range modifiedPaths(msgs[:done]) {
		row.paths++
		if strings.Contains(text, p) {
			row.pathsKept++
		}
	}
	stated := strings.Builder{}
	for _, p := range msgs[:done] {
		if me, ok := p.(*session.MessageEntry); ok {
			if u, ok := me.Message.(*llm.UserMessage); ok {
				stated.WriteString(llm.TextOf(u.Content))
			}
		}
	}
	for _, in := range pl.instructions {
		stated.WriteString(in)
	}
	folded := strings.Join(strings.Fields(text), " ")
	dump := os.Getenv("PRIME_FIDELITY_DUMP") != ""
	for _, r := range pl.rules {
		if !strings.Contains(stated.String(), r) {
			continue // not reached by the last compaction
		}
		row.rules++
		if strings.Contains(folded, r) {
			row.rulesKept++
		} else if dump {
			t.Logf("lost: %q", r)
		}
	}
	row.pinKept = strings.Contains(folded, fidelityPin)
	if dump {
		t.Logf("%s, seed %d: final context:\n%s", sum.name, seed, text)
	}
	return end
}
