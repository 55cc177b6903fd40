package compaction

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
)

// TestLedgerRepair: every item of the ledger is looked for in the summary;
// what is missing is written back into its section (created where it
// belongs when the summary has none), placeholders go, the turn prefix of a
// split turn is left alone, what is present (white space aside) is counted
// as kept, and nothing is added past the bound. The repaired texts are
// pinned by golden files: they are what the model reads.
func TestLedgerRepair(t *testing.T) {
	rules := []string{"Never commit anything under web/dist.", "Always run go test ./... before you commit.", "Prefer table-driven tests."}
	failure := &LedgerFailure{Call: "`go test ./planner`", Exit: "1", Error: "planner_test.go:88: got 3 passes, want 4"}
	for _, tc := range []struct {
		name     string
		summary  string
		ledger   Ledger
		bound    int
		repaired []LedgerKind
		unfit    int
	}{
		{
			name:     "dropped-constraints",
			summary:  "## Goal\n- Fix the planner\n\n## Constraints & Preferences\n- (none)\n\n## Progress\n### Done\n- [x] Read planner.go\n\n## Critical Context\n- (none)",
			ledger:   Ledger{Constraints: rules},
			bound:    1000,
			repaired: []LedgerKind{LedgerConstraint, LedgerConstraint, LedgerConstraint},
		},
		{
			name:    "goal-only",
			summary: "## Goal\nContinue.",
			ledger: Ledger{Constraints: rules, Request: "Now make the pass planner skip stations below the horizon mask.", Failure: failure,
				Pins: []LedgerPin{{Text: "The staging database is pg-staging-2, never pg-prod."}}},
			bound:    1000,
			repaired: []LedgerKind{LedgerPinned, LedgerRequest, LedgerFailed, LedgerConstraint, LedgerConstraint, LedgerConstraint},
		},
		{
			name: "split-turn",
			summary: "## Goal\n- Fix the planner\n\n## Next Steps\n1. Run the tests" + splitTurnSeparator +
				"## Turn Request\n- the flaky test\n\n## Done in This Turn So Far\n- ran it",
			ledger:   Ledger{Constraints: rules[:1], Failure: failure},
			bound:    1000,
			repaired: []LedgerKind{LedgerFailed, LedgerConstraint},
		},
		{
			name:    "kept-white-space-aside",
			summary: "## Goal\n- x\n\n## Constraints & Preferences\n- Never  commit anything\n  under web/dist.\n- Prefer table-driven tests.\n\n## Critical Context\n- `go test ./planner` failed: planner_test.go:88: got 3 passes,  want 4",
			ledger: Ledger{Constraints: []string{rules[0], rules[2]}, Failure: failure,
				Pins: []LedgerPin{{Text: "Use the v2 API.", InSystemPrompt: true}}},
			bound: 1000,
		},
		{
			name:     "bound",
			summary:  "## Goal\n- Fix the planner",
			ledger:   Ledger{Constraints: rules},
			bound:    40,
			repaired: []LedgerKind{LedgerConstraint, LedgerConstraint},
			unfit:    1,
		},
		{
			name:    "over-the-bound-already",
			summary: "## Goal\n- " + strings.Repeat("long ", 100),
			ledger:  Ledger{Constraints: rules},
			bound:   50,
			unfit:   3,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, c := tc.ledger.repair(tc.summary, []string{"planner/planner.go"}, tc.bound)
			var kinds []LedgerKind
			for _, it := range c.Repaired {
				kinds = append(kinds, it.Kind)
				if !strings.Contains(folded(got), folded(it.Text)) {
					t.Errorf("repaired %s %q is not in the summary", it.Kind, it.Text)
				}
			}
			if !slices.Equal(kinds, tc.repaired) || len(c.Unfit) != tc.unfit {
				t.Errorf("repaired %v, %d unfit; want %v, %d", kinds, len(c.Unfit), tc.repaired, tc.unfit)
			}
			items := 1 + len(tc.ledger.Constraints) + len(tc.ledger.Pins)
			if tc.ledger.Failure != nil {
				items++
			}
			if tc.ledger.Request != "" {
				items++
			}
			if c.Checked != items || c.Kept+len(c.Repaired)+len(c.Unfit) != items {
				t.Errorf("checked %d, kept %d, repaired %d, unfit %d; want %d items", c.Checked, c.Kept, len(c.Repaired), len(c.Unfit), items)
			}
			if len(c.Repaired) == 0 && got != tc.summary {
				t.Errorf("nothing repaired but the summary changed:\n%s", got)
			}
			if c.RepairedTokens != tokensOf(got) || c.SummaryTokens != tokensOf(tc.summary) {
				t.Errorf("sizes %d → %d, want %d → %d", c.SummaryTokens, c.RepairedTokens, tokensOf(tc.summary), tokensOf(got))
			}
			if len(c.Repaired) > 0 && c.RepairedTokens > tc.bound {
				t.Errorf("repaired to %d tokens, over the bound of %d", c.RepairedTokens, tc.bound)
			}
			if head, tail, ok := strings.Cut(tc.summary, splitTurnSeparator); ok {
				if !strings.HasSuffix(got, splitTurnSeparator+tail) || !strings.HasPrefix(got, strings.SplitN(head, "\n", 2)[0]) {
					t.Errorf("the turn prefix was touched:\n%s", got)
				}
			}
			d := parseDoc(got)
			for _, it := range c.Repaired {
				section := criticalHeading
				if it.Kind == LedgerConstraint {
					section = constraintsHeading
				}
				at, end := d.find(section)
				for _, line := range d.lines[at+1 : end] {
					if isNone(line) {
						t.Errorf("a placeholder is left in the repaired section %s:\n%s", section, got)
					}
				}
			}
			golden.Check(t, "ledger-"+tc.name+".golden", got)
		})
	}
}

// ledgerPath is a path of rounds: a user message (its text given), an
// assistant answer that calls a tool, and the result.
func ledgerPath(t *testing.T, rounds ...ledgerRound) *builder {
	b := newBuilder(t)
	for i, r := range rounds {
		id := fmt.Sprintf("%d", i)
		b.user("u"+id, r.user)
		args := `{"path":"` + r.path + `"}`
		name := "edit"
		if r.command != "" {
			name, args = "bash", `{"command":"`+r.command+`"}`
		}
		b.assistant("a"+id, []llm.Content{llm.Text{Text: "on it " + strings.Repeat("x", 200)}, call("c"+id, name, args)}, llm.Usage{})
		b.toolResult("r"+id, "c"+id, name, r.result+strings.Repeat(" y", 1500), r.failed)
	}
	return b
}

type ledgerRound struct {
	user, path, command, result string
	failed                      bool
}

// TestLedgerExtraction: Prepare's ledger holds the user's rules (once, in
// the order stated, and those of the previous compaction's ledger first),
// the latest substantive request when the kept part has none, and the
// latest failure not resolved since; /compact instructions add their rules.
func TestLedgerExtraction(t *testing.T) {
	b := ledgerPath(t,
		ledgerRound{user: "Fix the horizon mask in the planner please. Never commit anything under web/dist.", path: "planner/mask.go", result: "ok"},
		ledgerRound{user: "Run the tests. Always run go test ./... before you commit.", command: "go test ./planner", result: "planner_test.go:88: got 3 passes, want 4\nFAIL\nCommand exited with code 1", failed: true},
		ledgerRound{user: "Fix that failing test. NEVER commit anything under web/dist.", path: "planner/mask.go", result: "ok"},
		ledgerRound{user: "And again the lint, make sure it stays quiet.", command: "golangci-lint run", result: "mask.go:3: unused variable x\nCommand exited with code 1", failed: true},
	)
	b.user("u9", "short")
	prep := mustPrepare(t, b.path, keep(10))
	led := prep.Ledger
	want := []string{"Never commit anything under web/dist.", "Always run go test ./... before you commit.", "And again the lint, make sure it stays quiet."}
	if !slices.Equal(led.Constraints, want) {
		t.Errorf("constraints %q, want %q", led.Constraints, want)
	}
	if led.Request != "" {
		t.Errorf("the kept part holds a user message, yet the request %q was recorded", led.Request)
	}
	if led.Failure == nil || led.Failure.Call != "`golangci-lint run`" || led.Failure.Exit != "1" || led.Failure.Error != "mask.go:3: unused variable x" {
		t.Errorf("failure %+v", led.Failure)
	}

	// Cut inside the last round: the request is only in the span.
	b = ledgerPath(t,
		ledgerRound{user: "Fix the horizon mask in the planner please, stations below 10 degrees.", path: "planner/mask.go", result: "ok"},
		ledgerRound{user: "Now run the planner tests and tell me what fails.", command: "go test ./planner", result: "FAIL planner_test.go:88\nCommand exited with code 1", failed: true},
	)
	b.parse("a7:400 a8:400")
	prep = mustPrepare(t, b.path, keep(150))
	if prep.Ledger.Request != "Now run the planner tests and tell me what fails." {
		t.Errorf("request %q", prep.Ledger.Request)
	}
	res, err := Compact(t.Context(), prep, Options{CustomInstructions: "Focus on the planner. Keep the public API unchanged."})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := ParseDetails(res.Details)
	if d.Ledger == nil || !slices.Contains(d.Ledger.Constraints, "Keep the public API unchanged.") || d.Ledger.Pins != nil {
		t.Errorf("stored ledger %+v", d.Ledger)
	}
	if d.LedgerCheck == nil || d.LedgerCheck.Checked == 0 || d.LedgerCheck.Kept+len(d.LedgerCheck.Repaired)+len(d.LedgerCheck.Unfit) != d.LedgerCheck.Checked {
		t.Errorf("stored check %+v", d.LedgerCheck)
	}
	for _, s := range []string{"Keep the public API unchanged.", prep.Ledger.Request, "planner_test.go:88"} {
		if !strings.Contains(res.Summary, s) {
			t.Errorf("the summary by code lacks %q:\n%s", s, res.Summary)
		}
	}
}

// TestLedgerCarriesOver: the ledger of one compaction is read back by the
// next (from the details), so a rule stated once survives compactions that
// never see it again, and a failure resolved later is dropped.
func TestLedgerCarriesOver(t *testing.T) {
	b := ledgerPath(t,
		ledgerRound{user: "Start with the mask. Don't touch the public API in internal/api, other teams depend on it.", path: "planner/mask.go", result: "ok"},
		ledgerRound{user: "Run the tests now please and report back to me.", command: "go test ./planner", result: "mask_test.go:12: want 4\nCommand exited with code 1", failed: true},
		ledgerRound{user: "Look at the failing test and fix it for me.", path: "planner/mask.go", result: "ok"},
	)
	first := mustPrepare(t, b.path, keep(10))
	p, m := scripted(t, "## Goal\n- Fix the mask")
	res, err := Compact(t.Context(), first, Options{Provider: p, Model: m})
	if err != nil {
		t.Fatal(err)
	}
	// The model dropped the rule; the repair put it back.
	if !strings.Contains(res.Summary, "Don't touch the public API in internal/api, other teams depend on it.") {
		t.Fatalf("first summary lacks the rule:\n%s", res.Summary)
	}
	path := appended(t, b.path, "C1", res.Entry())
	for i := range 4 {
		path = appendRound(t, path, i, ledgerRound{user: fmt.Sprintf("Next step %d of the work on the mask, carefully.", i), command: "go test ./planner", result: "ok"})
		prep := mustPrepare(t, path, keep(10))
		if !slices.Contains(prep.Ledger.Constraints, "Don't touch the public API in internal/api, other teams depend on it.") {
			t.Fatalf("compaction %d: the ledger lost the rule: %+v", i+2, prep.Ledger)
		}
		if prep.Ledger.Failure != nil {
			t.Errorf("compaction %d: the failure was resolved by a later run, yet %+v", i+2, prep.Ledger.Failure)
		}
		p, m := scripted(t, "## Goal\nContinue.")
		res, err = Compact(t.Context(), prep, Options{Provider: p, Model: m})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Summary, "Don't touch the public API in internal/api, other teams depend on it.") {
			t.Fatalf("compaction %d lacks the rule:\n%s", i+2, res.Summary)
		}
		path = appended(t, path, fmt.Sprintf("C%d", i+2), res.Entry())
	}
}

// scripted is a summarizer that always answers with text, over a fake
// server.
func scripted(t *testing.T, text string) (llm.Provider, llm.Model) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(func(*llmtest.Request) llmtest.Reply {
		return llmtest.Stream(llmtest.Text(text), llmtest.Usage(100, 20))
	})
	return srv.Provider(), srv.Model()
}

// appendRound appends a round to a copy of path.
func appendRound(t *testing.T, path []*session.Entry, n int, r ledgerRound) []*session.Entry {
	id := fmt.Sprintf("n%d", n)
	path = appended(t, path, "u"+id, &session.MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: r.user}}}})
	path = appended(t, path, "a"+id, &session.MessageEntry{Message: &llm.AssistantMessage{
		Content:    []llm.Content{llm.Text{Text: "on it " + strings.Repeat("x", 200)}, call("c"+id, "bash", `{"command":"`+r.command+`"}`)},
		StopReason: llm.StopReasonToolUse,
	}})
	return appended(t, path, "r"+id, &session.MessageEntry{Message: &llm.ToolResultMessage{
		ToolCallID: "c" + id, ToolName: "bash", Content: []llm.Content{llm.Text{Text: r.result + strings.Repeat(" y", 150)}}, IsError: r.failed,
	}})
}

// TestDeterministicKeepsOldestRules: the summary built by code, bounded so
// that its list of rules must shrink, keeps the oldest rules over many
// compactions: the ledger holds them and every rendering must make room
// for them.
func TestDeterministicKeepsOldestRules(t *testing.T) {
	var path []*session.Entry
	b := newBuilder(t)
	b.user("u0", "Begin the work on the planner, in small steps.")
	path = b.path
	var stated []string
	for round := range 6 {
		for i := range 8 {
			rule := fmt.Sprintf("Never rename the field number %d of round %d in the JSON output.", i, round)
			stated = append(stated, rule)
			path = appendRound(t, path, round*10+i, ledgerRound{user: "Carry on with the next part of it. " + rule, command: "go vet ./...", result: "ok"})
		}
		prep := mustPrepare(t, path, keep(50))
		prep.Settings.ReserveTokens = 1600 // a small output limit: the rules compete for room
		res, err := Compact(t.Context(), prep, Options{})
		if err != nil {
			t.Fatal(err)
		}
		d, _ := ParseDetails(res.Details)
		if len(d.LedgerCheck.Unfit) > 0 {
			t.Fatalf("round %d: %d items found no room", round, len(d.LedgerCheck.Unfit))
		}
		path = appended(t, path, fmt.Sprintf("C%d", round), res.Entry())
	}
	c, err := session.BuildContext(path)
	if err != nil {
		t.Fatal(err)
	}
	text := contextText(c.Messages)
	lost := 0
	for _, r := range stated {
		if !strings.Contains(text, r) {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d rules lost after six compactions by code; the first is %q", lost, len(stated), stated[0])
	}
}

// contextText is every text the model sees in msgs, one after the other.
func contextText(msgs []session.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		switch m := m.(type) {
		case *session.CompactionSummaryMessage:
			b.WriteString(m.Summary)
		case *session.SystemMessage:
			b.WriteString(m.Prompt())
		case *llm.UserMessage:
			b.WriteString(contentText(m.Content))
		case *llm.AssistantMessage:
			b.WriteString(m.Text())
		case *llm.ToolResultMessage:
			b.WriteString(contentText(m.Content))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// FuzzLedgerRepair: whatever the summary and the items, the repair never
// fails, never touches a split turn's prefix, puts in every item it reports
// as repaired, and stays within the bound when it repairs anything.
func FuzzLedgerRepair(f *testing.F) {
	f.Add("## Goal\nContinue.", "Never do X.", "request", 100)
	f.Add("## Constraints & Preferences\n- (none)\n## Critical Context", "Always y.\nKeep z.", "", 10)
	f.Add("text"+splitTurnSeparator+"## Turn Request\n- r", "Prefer a.", "do it", 1000)
	f.Add("#\n##\n### Constraints\n-\n", "", "  ", 0)
	f.Fuzz(func(t *testing.T, summary, rules, request string, bound int) {
		led := Ledger{Constraints: strings.Split(rules, "\n"), Request: request}
		got, c := led.repair(summary, nil, bound)
		if head, tail, ok := strings.Cut(summary, splitTurnSeparator); ok && !strings.HasSuffix(got, splitTurnSeparator+tail) {
			t.Fatalf("the turn prefix after %q was touched", head)
		}
		if len(c.Repaired) > 0 && tokensOf(got) > bound {
			t.Fatalf("repaired past the bound: %d > %d", tokensOf(got), bound)
		}
		for _, it := range c.Repaired {
			if !strings.Contains(folded(got), folded(it.Text)) {
				t.Fatalf("repaired %q is not in %q", it.Text, got)
			}
		}
		if c.Kept+len(c.Repaired)+len(c.Unfit) != c.Checked {
			t.Fatalf("counts %+v", c)
		}
	})
}

// TestLedgerLifts: a rule the user lifts leaves the ledger, whether it was
// stated in the span or carried from an earlier ledger, and its line leaves
// the summary; stated again, it is a rule again.
func TestLedgerLifts(t *testing.T) {
	user := func(text string) session.Message {
		return &llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}}
	}
	rule, other := "The generated protobuf code is untouchable.", "Keep the changes minimal."
	lift := "You can touch the generated protobuf code now, I regenerated it."
	led := LedgerOf([]session.Message{user("Start with the parser. " + rule + " " + other), user(lift)})
	if !slices.Equal(led.Constraints, []string{other}) || !slices.Equal(led.Lifted, []string{rule}) {
		t.Fatalf("constraints %q, lifted %q", led.Constraints, led.Lifted)
	}
	summary := "## Goal\n- Fix the parser\n\n## Constraints & Preferences\n- " + rule + "\n- " + other + "\n\n## Critical Context\n- (none)"
	got, c := led.repair(summary, nil, 1000)
	if strings.Contains(got, rule) || len(c.Lifted) != 1 || !strings.Contains(got, other) {
		t.Errorf("lifted %+v, summary:\n%s", c.Lifted, got)
	}

	// Carried from an earlier ledger: the next span lifts it.
	l := newLedgerScan()
	l.absorb(&Ledger{Constraints: []string{rule, other}})
	l.message(user(lift))
	if next := l.done(true); slices.Contains(next.Constraints, rule) || !slices.Contains(next.Constraints, other) {
		t.Errorf("carried: constraints %q", next.Constraints)
	}
	// Stated again after the lift: a rule again, no longer lifted.
	l.message(user("Fine, back to the old way. " + rule))
	if next := l.done(true); !slices.Contains(next.Constraints, rule) || len(next.Lifted) != 0 {
		t.Errorf("stated again: constraints %q, lifted %q", next.Constraints, next.Lifted)
	}
}

// TestLedgerBudget: however much the user writes, the ledger's rules and
// words stay within LedgerBudget; the rules come first, newest first, then
// the newest words; the request's own words are not kept twice.
func TestLedgerBudget(t *testing.T) {
	var msgs []session.Message
	for i := range 400 {
		text := fmt.Sprintf("Here is the next part of the job, number %d, with some detail about it. Keep the field f%d stable.", i, i)
		msgs = append(msgs, &llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}})
	}
	led := LedgerOf(msgs)
	n := 0
	for _, r := range led.Constraints {
		n += tokensOf(ruleLine(r))
	}
	for _, s := range led.Said {
		n += tokensOf(saidLine(s))
	}
	if n > LedgerBudget || n < LedgerBudget*9/10 {
		t.Errorf("rules and words take %d tokens, budget %d", n, LedgerBudget)
	}
	if len(led.Constraints) == 0 || led.Constraints[len(led.Constraints)-1] != "Keep the field f399 stable." {
		t.Errorf("the newest rule is not kept: %q", led.Constraints[len(led.Constraints)-1:])
	}
	if len(led.Constraints) == 400 || len(led.Said) > 0 && !strings.Contains(led.Said[len(led.Said)-1], "number 398") {
		t.Errorf("%d rules, said %q", len(led.Constraints), led.Said)
	}
	if led.Tokens() < n || led.Tokens() > n+tokensOf(repairRequest+led.Request) {
		t.Errorf("Tokens() = %d, want %d and the request", led.Tokens(), n)
	}
}
