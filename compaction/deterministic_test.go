package compaction

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
)

// contextTokens is the chars/4 estimate of the context at the end of path,
// as the model would be sent it.
func contextTokens(t *testing.T, path []*session.Entry) int {
	t.Helper()
	ctx, err := session.BuildContext(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range ctx.Messages {
		n += session.EstimateTokens(m)
	}
	return n
}

// replacedTokens is what a compaction's summary replaces: the span and the
// previous summary (without its file lists, which are rebuilt).
func replacedTokens(p *Preparation) int {
	n := tokensOf(stripFileLists(p.PreviousSummary))
	for _, m := range p.MessagesToSummarize {
		n += session.EstimateTokens(m)
	}
	for _, m := range p.TurnPrefixMessages {
		n += session.EstimateTokens(m)
	}
	return n
}

// frameTokens is about the smallest summary the format allows: headings,
// placeholders, the marker line and a line or two of content. What is
// smaller than it cannot be summarized smaller than itself.
const frameTokens = 250

// TestPropertyDeterministicShrinks: a compaction by code shrinks the
// context. On every generated session, leaf and keepRecentTokens setting,
// with the default, a small and a large reserveTokens, the context after an
// offline compaction (the summary with its file lists, then the kept part)
// is smaller than before whenever the summary replaces more than the
// format's own frame; and the summary stays within its budget (a fifth of
// what it replaces, or min(1,000 tokens, three quarters of it), within the
// output limit, 0.8 × reserveTokens here), or within the frame.
func TestPropertyDeterministicShrinks(t *testing.T) {
	reserves := []int{DefaultReserveTokens, 2000}
	if testing.Short() {
		reserves = reserves[:1]
	}
	cases, checked, tiny := 0, 0, 0
	worst := 0.0
	for _, ps := range propertySessions(t) {
		for _, leaf := range ps.leaves {
			path := ps.s.Path(leaf.ID)
			before := contextTokens(t, path)
			for _, k := range keepsFor(t, path) {
				for _, r := range reserves {
					prep, err := Prepare(path, Settings{Enabled: true, ReserveTokens: r, KeepRecentTokens: k})
					if errors.Is(err, ErrNothingToCompact) || errors.Is(err, ErrAlreadyCompacted) {
						continue
					}
					if err != nil {
						t.Fatal(err)
					}
					cases++
					where := fmt.Sprintf("%s leaf %s keep %d reserve %d", ps.name, leaf.ID, k, r)
					res, err := Compact(t.Context(), prep, Options{})
					replaced := replacedTokens(prep)
					if errors.Is(err, ErrNothingToCompact) && replaced < frameTokens {
						tiny++ // refused: a summary by code would be larger than the span
						continue
					}
					if err != nil {
						t.Fatalf("%s: %v", where, err)
					}
					summary := tokensOf(stripFileLists(res.Summary))
					budget := deterministicBudget(replaced, newSummarizer(Options{}, r).deterministicLimit())
					after := contextTokens(t, appended(t, path, "c0mp4c7e", res.Entry()))
					if replaced < frameTokens {
						// Cut to fit, never larger.
						tiny++
						if after > before {
							t.Errorf("%s: a small span's context of %d tokens after, %d before (summary %d replaces %d)", where, after, before, summary, replaced)
						}
						continue
					}
					checked++
					if summary > max(budget, frameTokens) {
						t.Errorf("%s: summary of %d tokens over its budget of %d (replaces %d)", where, summary, budget, replaced)
					}
					if after >= before {
						t.Errorf("%s: context of %d tokens after, %d before (summary %d replaces %d)", where, after, before, summary, replaced)
					}
					worst = max(worst, float64(summary)/float64(replaced))
				}
			}
		}
	}
	t.Logf("%d compactions: %d shrink the context (largest summary %.0f%% of what it replaces), %d replace less than %d tokens", cases, checked, 100*worst, tiny, frameTokens)
	if checked < cases/2 {
		t.Errorf("only %d of %d cases checked", checked, cases)
	}
}

func TestDeterministicBudget(t *testing.T) {
	for _, tc := range []struct{ replaced, limit, want int }{
		{0, 13107, 0},
		{100, 13107, 75},       // three quarters of a small span
		{1000, 13107, 750},     // still three quarters
		{2000, 13107, 1000},    // the floor
		{5000, 13107, 1000},    // the floor above a fifth
		{20000, 13107, 4000},   // a fifth
		{160000, 13107, 13107}, // the output limit
		{20000, 1600, 1600},
	} {
		if got := deterministicBudget(tc.replaced, tc.limit); got != tc.want {
			t.Errorf("deterministicBudget(%d, %d) = %d, want %d", tc.replaced, tc.limit, got, tc.want)
		}
	}
}

func TestRulesIn(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"Add a --dry-run flag. Never touch prod.yaml! Keep the output format stable.", []string{"Never touch prod.yaml!", "Keep the output format stable."}},
		{"Always run go test ./... before you commit.", []string{"Always run go test ./... before you commit."}},
		{"Also update the README, and make sure the tests pass.", []string{"Also update the README, and make sure the tests pass."}},
		{"Use log/slog for logging, never fmt.Println.", []string{"Use log/slog for logging, never fmt.Println."}},
		{"Passes that never get above the mask still show up.", nil},                                       // "never" describes, it does not rule
		{"Why don't we keep the old format?", nil},                                                         // a question
		{"Look:\n```\nyou must never do this\n```\nThanks.", nil},                                          // inside a code block
		{"Commit this, then we move on. 🚀 Never log the API token.", []string{"Never log the API token."}}, // the emoji closed the sentence before
		{"The component must not hard-code any of them.", []string{"The component must not hard-code any of them."}},
		{"e.g. this. Don't add dependencies.", []string{"Don't add dependencies."}},
		{"Fix the mask please. the staging database is off-limits", []string{"the staging database is off-limits"}}, // typed in lower case
		{"Run go test ./... before. the API is frozen, etc. and more", []string{"the API is frozen, etc. and more"}},
		{"the staging database is off-limits. we're sticking with v1.", []string{"the staging database is off-limits.", "we're sticking with v1."}},
		{`It says "no window". we don't mock the database`, []string{"we don't mock the database"}},
		{"Other teams depend on it. run the benchmarks. see no. 5 first. ask before you push", []string{"ask before you push"}},
		{"Thanks! we're sticking with the v1 wire format for now.", []string{"we're sticking with the v1 wire format for now."}},
	} {
		var got []string
		for _, r := range rulesIn(tc.text) {
			got = append(got, strings.TrimPrefix(r, "- "))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("rulesIn(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestChangesDirection(t *testing.T) {
	for text, want := range map[string]bool{
		"Next task: add a /healthz endpoint.":                                       true,
		"Actually, let's park that and fix the flaky test.":                         true,
		"Now add a --verbose flag.":                                                 true,
		"Scratch the last approach. Try the cache first.":                           true,
		"Looks good. Add the station name at the top level, the script needs it.":   false,
		"No, that's not what I meant. Keep it as it is and fix the caller instead.": false,
		"Carry on.": false,
		"What happens when Zürich has no passes at all in the window, and the mask is higher than any pass of the day for every satellite we track?":        false,
		"We need to store computed passes so the web UI doesn't recompute them on every request. Add a migration for a passes table and the store methods.": true,
		"Add an index on (station_id, start). Keep commits small, one logical change each. Never log the API token, not even at debug level.":               false, // short once its rules are set aside
	} {
		if got := changesDirection(text); got != want {
			t.Errorf("changesDirection(%q) = %v, want %v", text, got, want)
		}
	}
}

// TestBlockedResolution: a failure is blocked until a later success of the
// same command (or of "./..." over its package, or of the same file
// change); one span resolves the failures an earlier summary lists.
func TestBlockedResolution(t *testing.T) {
	bash := func(id, cmd string) session.Message {
		return assistantMsg(call(id, "bash", `{"command":"`+cmd+`"}`))
	}
	fail := func(id, text string) session.Message {
		return resultMsg(id, "bash", text+"\n\nCommand exited with code 1", true)
	}
	ok := func(id string) session.Message { return resultMsg(id, "bash", "ok", false) }
	span := []session.Message{
		userMsg(llm.Text{Text: "Fix the planner and the store, then run every test."}),
		assistantMsg(call("0", "read", `{"path":"planner.go"}`)), resultMsg("0", "read", strings.Repeat("\tpasses = append(passes, p)\n", 250), false),
		bash("1", "go test ./internal/orbit/"), fail("1", "--- FAIL: TestPlan\n    planner_test.go:88: got 3 passes, want 4\nFAIL"),
		bash("2", "go test ./internal/store/"), fail("2", "--- FAIL: TestStore\n    store_test.go:12: database is locked\nFAIL"),
		bash("3", "make lint"), fail("3", "lint: 2 problems"),
		assistantMsg(call("4", "edit", `{"path":"a.go","oldText":"x","newText":"y"}`)), resultMsg("4", "edit", "Could not find the exact text in a.go.", true),
		assistantMsg(call("5", "write", `{"path":"a.go","content":"y"}`)), resultMsg("5", "write", "Successfully wrote 1 bytes to a.go", false),
		bash("6", "go test ./..."), ok("6"),
		bash("7", "make lint"), fail("7", "lint: 1 problem"),
	}
	text := deterministicSummary(span, "", "", "test", 5000, nil)
	blocked := text[strings.Index(text, "### Blocked"):strings.Index(text, "## Key Decisions")]
	if want := "### Blocked\n- `make lint` failed (exit 1): lint: 1 problem\n\n"; blocked != want {
		t.Errorf("blocked:\n%s\nwant:\n%s", blocked, want)
	}
	for _, want := range []string{
		"2. Fix the last failure: `make lint` failed (exit 1): lint: 1 problem\n",
		"- Exit codes of the commands that failed, newest first (oldest code → newest): `make lint` 1; `go test ./internal/store/` 1; `go test ./internal/orbit/` 1\n",
		"- [x] Commands that succeeded, newest first: `go test ./...`\n",
		"- [x] Changed a.go (1 write)\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}

	// The next span fixes the lint; the earlier summary's failure goes.
	later := []session.Message{userMsg(llm.Text{Text: "Carry on."}), bash("8", "make lint"), ok("8")}
	text = deterministicSummary(later, text, "", "test", 5000, nil)
	if !strings.Contains(text, "### Blocked\n- (none)\n") || strings.Contains(text, "Fix the last failure") || strings.Contains(text, "Error from `make lint`") {
		t.Errorf("the lint failure was not resolved:\n%s", text)
	}
	if !strings.Contains(text, "`make lint`, `go test ./...`\n") {
		t.Errorf("the commands were not merged:\n%s", text)
	}
}

// TestDeterministicMergeMatchesWhole: summarizing a span in two parts, the
// second merged into the first's summary, gives the same rules, the same
// counts of changed files and commands, and the same failures as
// summarizing it whole: what the format carries survives a merge.
func TestDeterministicMergeMatchesWhole(t *testing.T) {
	head := []string{"- " + deterministicMarker + " (test)."}
	unbounded := bounds{changes: 1 << 20, rules: 1 << 20, done: 1 << 20, blocked: 1 << 20, critical: 1 << 20, next: 1 << 20, item: 1 << 20, line: 1 << 20, request: 1 << 20}
	for seed := range uint64(4) {
		s, err := session.Parse("gen", sessiongen.Bytes(sessiongen.Options{Entries: 800, Seed: seed + 20, NoCompactions: true, BranchRate: -1, HugeRate: -1}))
		if err != nil {
			t.Fatal(err)
		}
		ctx, err := session.BuildContext(s.LeafPath())
		if err != nil {
			t.Fatal(err)
		}
		msgs := ctx.Messages
		var cuts []int // where a compaction may cut: anywhere but at a tool result
		for _, at := range []int{1, len(msgs) / 3, len(msgs) / 2, len(msgs) - 2, len(msgs) * 3 / 4} {
			for at < len(msgs) && msgs[at].Role() == llm.RoleToolResult {
				at++
			}
			cuts = append(cuts, at)
		}
		for _, cut := range cuts {
			var whole sections
			whole.merge(digestSpan(msgs))
			var first sections
			first.merge(digestSpan(msgs[:cut]))
			merged := parseSummary(first.render(head, unbounded))
			merged.merge(digestSpan(msgs[cut:]))
			where := fmt.Sprintf("seed %d cut %d of %d", seed, cut, len(msgs))
			if !slices.Equal(whole.constraints, merged.constraints) {
				t.Errorf("%s: rules differ:\n%q\n%q", where, whole.constraints, merged.constraints)
			}
			if !slices.Equal(whole.done, merged.done) {
				t.Errorf("%s: done differs:\n%q\n%q", where, whole.done, merged.done)
			}
			if !slices.Equal(whole.blocked, merged.blocked) {
				t.Errorf("%s: blocked differs:\n%q\n%q", where, whole.blocked, merged.blocked)
			}
			if !slices.Equal(whole.inProgress, merged.inProgress) {
				t.Errorf("%s: in progress differs:\n%q\n%q", where, whole.inProgress, merged.inProgress)
			}
		}
	}
}

// TestDeterministicGolden pins the summary by code of generated sessions as
// text, for review: the README's demo, a session whose earlier compactions
// a model wrote, and a second compaction by code over a first.
func TestDeterministicGolden(t *testing.T) {
	type step struct {
		upTo int // entries of the session on the path (0: all)
		keep int
	}
	for _, tc := range []struct {
		name, desc string
		o          sessiongen.Options
		steps      []step
	}{
		{"deterministic-demo.golden", "prime dev gen-session --entries 5000 --seed 1 (the README's demo)",
			sessiongen.Options{Entries: 5000, Seed: 1}, []step{{0, DefaultKeepRecentTokens}}},
		{"deterministic-small-window.golden", "1,500 entries, seed 7, window 40,000, reserve 4,000, keep 6,000 (cmd/prime's test session)",
			sessiongen.Options{Entries: 1500, Seed: 7, ContextWindow: 40_000, KeepRecentTokens: 6_000, ReserveTokens: 4_000}, []step{{0, 4000}}},
		{"deterministic-repeated.golden", "1,200 entries, seed 5, no compactions, no branches; compacted by code after 700 entries, then at the end",
			sessiongen.Options{Entries: 1200, Seed: 5, NoCompactions: true, BranchRate: -1}, []step{{700, 4000}, {0, 4000}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := session.Parse("gen", sessiongen.Bytes(tc.o))
			if err != nil {
				t.Fatal(err)
			}
			full := s.LeafPath()
			var b strings.Builder
			fmt.Fprintf(&b, "# %s\n", tc.desc)
			var path []*session.Entry
			done := 0
			for i, st := range tc.steps {
				upTo := st.upTo
				if upTo == 0 {
					upTo = len(full)
				}
				if path == nil {
					path = full[:upTo]
				}
				for j, e := range full[done:upTo] { // re-append after the compaction
					if done == 0 {
						break
					}
					p, err := e.Payload()
					if err != nil {
						t.Fatal(err)
					}
					path = appended(t, path, fmt.Sprintf("r%07d", done+j), p)
				}
				done = upTo
				prep, err := Prepare(path, keep(st.keep))
				if err != nil {
					t.Fatal(err)
				}
				res, err := Compact(t.Context(), prep, Options{})
				if err != nil {
					t.Fatal(err)
				}
				before := contextTokens(t, path)
				path = appended(t, path, fmt.Sprintf("c%07d", i), res.Entry())
				replaced := replacedTokens(prep)
				fmt.Fprintf(&b, "# compaction %d (keepRecentTokens %d): context %d → %d tokens; the summary replaces %d tokens, may take %d, takes %d\n",
					i+1, st.keep, before, contextTokens(t, path), replaced, deterministicBudget(replaced, newSummarizer(Options{}, DefaultReserveTokens).deterministicLimit()), tokensOf(stripFileLists(res.Summary)))
				if i == len(tc.steps)-1 {
					b.WriteString(res.Summary + "\n")
				}
			}
			golden.Check(t, tc.name, b.String())
		})
	}
}
