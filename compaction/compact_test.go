package compaction

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// sessionSpan is a realistic span: requests with constraints, tool calls
// that succeed and fail, a bash execution, a pending call.
func sessionSpan(t *testing.T) *builder {
	b := newBuilder(t)
	b.user("u1", "Add a --dry-run flag to the deploy script. Never touch prod.yaml! Keep the output format stable.")
	b.assistant("a1", []llm.Content{llm.Thinking{Thinking: "need to read it"}, llm.Text{Text: "Reading the script."}, call("c1", "read", `{"path":"deploy.sh"}`)}, llm.Usage{})
	b.toolResult("r1", "c1", "read", deployScript, false)
	b.assistant("a2", []llm.Content{call("c2", "edit", `{"path":"deploy.sh","old":"echo","new":"printf"}`), call("c3", "bash", `{"command":"sh -n deploy.sh"}`)}, llm.Usage{})
	b.toolResult("r2", "c2", "edit", "ok", false)
	b.toolResult("r3", "c3", "bash", "deploy.sh: line 3: syntax error near unexpected token `fi'", true)
	exit1 := 1
	b.add("b1", &session.MessageEntry{Message: &session.BashExecution{Command: "make test", Output: "ok 1\nFAIL TestDeploy", ExitCode: &exit1}})
	b.user("u2", "Also update the README, and make sure the tests pass.")
	b.assistant("a3", []llm.Content{llm.Text{Text: "Updating."}, call("c4", "write", `{"path":"README.md","content":"..."}`), call("c5", "edit", `{"path":"deploy.sh"}`)}, llm.Usage{})
	b.toolResult("r4", "c4", "write", "written", false)
	b.user("u3", "What is left?")
	b.assistant("a4", []llm.Content{llm.Text{Text: strings.Repeat("Only the docs. ", 200)}}, llm.Usage{Input: 900, Output: 100, TotalTokens: 1000})
	return b
}

// deployScript is the file sessionSpan reads.
var deployScript = "#!/bin/sh\nset -eu\n" + strings.Repeat("echo \"deploying $service to $region\"\nkubectl apply -f manifests/$service.yaml --context \"$region\"\n", 30)

var sectionOrder = []string{"## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress", "### Blocked",
	"## Key Decisions", "## Reasoning Digest", "## Next Steps", "## Critical Context"}

func checkFormat(t *testing.T, summary string) {
	t.Helper()
	at := 0
	for _, h := range sectionOrder {
		i := strings.Index(summary[at:], "\n"+h+"\n")
		if at == 0 && strings.HasPrefix(summary, h+"\n") {
			i = -1
			at = len(h)
			continue
		}
		if i < 0 {
			t.Fatalf("%s missing or out of order in:\n%s", h, summary)
		}
		at += i + 1
	}
}

func TestCompactOffline(t *testing.T) {
	b := sessionSpan(t)
	p := mustPrepare(t, b.path, keep(100))
	var events []Progress
	res, err := Compact(t.Context(), p, Options{CustomInstructions: " keep the flag name ", Progress: func(e Progress) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	checkFormat(t, res.Summary)
	for _, want := range []string{
		// the first request and the user's rules, verbatim
		"## Goal\n- Add a --dry-run flag to the deploy script. Never touch prod.yaml! Keep the output format stable.\n",
		"- Never touch prod.yaml!\n", "- Keep the output format stable.\n", "- Also update the README, and make sure the tests pass.\n",
		// files changed, failures not resolved, calls without a result
		"### Done\n- [x] Changed README.md (1 write), deploy.sh (1 edit)\n",
		"- `sh -n deploy.sh` failed: deploy.sh: line 3: syntax error near unexpected token `fi'\n",
		"- `make test` failed (exit 1): FAIL TestDeploy\n",
		"### In Progress\n- [ ] Latest request: What is left?\n- [ ] edit deploy.sh: no result recorded\n",
		// the latest request and the last failure as the next steps
		"1. Carry on with the latest request: What is left?\n2. Fix the last failure: `make test` failed (exit 1): FAIL TestDeploy\n",
		// exact errors, commands and exit codes, the marker
		"- Error from `make test` (exit 1): ok 1\n    FAIL TestDeploy\n",
		"- Exit codes of the commands that failed, newest first (oldest code → newest): `make test` 1; `sh -n deploy.sh` error\n",
		"Built by code without a model (no summarizer model was available (offline))",
		"The user asked this summary to focus on: keep the flag name",
		"\n\n<modified-files>\nREADME.md\ndeploy.sh\n</modified-files>",
	} {
		if !strings.Contains(res.Summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, res.Summary)
		}
	}
	d, ok := ParseDetails(res.Details)
	if !ok || d.Summarizer != SummarizerDeterministic || d.DeterministicReason != offlineReason {
		t.Errorf("details = %s", res.Details)
	}
	if !strings.Contains(string(res.Details), `"readFiles":[`) || !strings.Contains(string(res.Details), `"modifiedFiles":["README.md","deploy.sh"]`) {
		t.Errorf("details lists are not pi's arrays: %s", res.Details)
	}
	if res.Usage != nil || !res.Deterministic || res.ModelError != nil || res.CustomInstructions != "keep the flag name" {
		t.Errorf("result: %+v", res)
	}
	if len(events) != 1 || events[0].Kind != ProgressFallback || events[0].Phase != PhaseDeterministic {
		t.Errorf("progress = %+v", events)
	}
	e := res.Entry()
	if e.FirstKeptEntryID != p.FirstKeptEntryID || e.TokensBefore != p.TokensBefore || e.CustomInstructions != "keep the flag name" || e.FromHook {
		t.Errorf("entry = %+v", e)
	}
	// The stored entry round-trips and puts the summary first in the context.
	b.add("C1", e)
	ctx, err := session.BuildContext(b.path)
	if err != nil {
		t.Fatal(err)
	}
	if sm, ok := ctx.Messages[0].(*session.CompactionSummaryMessage); !ok || sm.Summary != res.Summary {
		t.Errorf("first message after compaction: %#v", ctx.Messages[0])
	}
}

// TestCompactOfflineRepeated: a second deterministic compaction merges the
// first one's sections instead of nesting it, and stays bounded.
func TestCompactOfflineRepeated(t *testing.T) {
	b := sessionSpan(t)
	p := mustPrepare(t, b.path, keep(100))
	res, err := Compact(t.Context(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b.add("C1", res.Entry())
	b.user("u5", "Now add a --verbose flag. Always print timings.")
	b.assistant("a5", []llm.Content{llm.Text{Text: "Adding."}, call("c9", "edit", `{"path":"cli.go"}`)}, llm.Usage{})
	b.toolResult("r9", "c9", "edit", "ok", false)
	b.user("u6", strings.Repeat("and more ", 300))
	b.assistant("a6", []llm.Content{llm.Text{Text: strings.Repeat("z", 400)}}, llm.Usage{})
	p2 := mustPrepare(t, b.path, keep(100))
	if p2.PreviousSummarizer != SummarizerDeterministic {
		t.Errorf("previousSummarizer = %q", p2.PreviousSummarizer)
	}
	res2, err := Compact(t.Context(), p2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkFormat(t, res2.Summary)
	s := res2.Summary
	for _, want := range []string{"Add a --dry-run flag", "Now add a --verbose flag", "- Then: Now add a --verbose flag.", "- Always print timings.", "- Never touch prod.yaml!",
		"### Done\n- [x] Changed cli.go (1 edit), README.md (1 write), deploy.sh (1 edit)\n", "cli.go\ndeploy.sh"} {
		if !strings.Contains(s, want) {
			t.Errorf("second summary lacks %q:\n%s", want, s)
		}
	}
	if c := strings.Count(s, deterministicMarker); c != 1 {
		t.Errorf("%d deterministic markers, want 1", c)
	}
	if c := strings.Count(s, "## Goal"); c != 1 {
		t.Errorf("%d Goal sections, want 1:\n%s", c, s)
	}
	if c := strings.Count(s, "<modified-files>"); c != 1 {
		t.Errorf("%d file lists, want 1", c)
	}
}

// TestDeterministicBounded: however long the span and however small the
// output limit, the summary by code fits the limit and keeps the format.
func TestDeterministicBounded(t *testing.T) {
	var span []session.Message
	for i := range 2000 {
		id := "c" + strings.Repeat("x", i%7)
		span = append(span, userMsg(llm.Text{Text: strings.Repeat("You must do this carefully. ", 40)}),
			assistantMsg(call(id, "bash", `{"command":"run `+strings.Repeat("y", i%50)+`"}`)), resultMsg(id, "bash", "failed badly", i%3 == 0))
	}
	pasted := pastedRounds(30, 250) // multi-line requests of 4,000 characters
	for _, tc := range []struct {
		name  string
		span  []session.Message
		limit int
	}{{"many rounds", span, 2000}, {"pasted logs", pasted, 2000}, {"pasted logs, limit 1000", pasted, 1000}, {"pasted logs, limit 300", pasted, 300}} {
		t.Run(tc.name, func(t *testing.T) {
			got := deterministicSummary(tc.span, strings.Repeat("## Goal\n- old goal\n", 500), "", "test", tc.limit, nil)
			if n := llm.UTF16Len(got); n > tc.limit*4 {
				t.Errorf("summary is %d units, over %d", n, tc.limit*4)
			}
			checkFormat(t, got)
			if !strings.Contains(got, " left out)") {
				t.Error("no omission note")
			}
			if !strings.Contains(got, "- old goal") {
				t.Error("the oldest goal was dropped")
			}
		})
	}
}

func TestParseSummaryMerge(t *testing.T) {
	prev := "Intro line\n\n## Goal\n- Ship v2\n\n## Constraints & Preferences\n- (none)\n\n## Progress\n### Done\n- [x] Wrote parser\n\n### In Progress\n- [ ] Tests\n\n### Blocked\n- (none)\n\n" +
		"## Key Decisions\n- **Go**: speed\n\n## Reasoning Digest\n- **Cache**: dropped, too slow\n\n## Next Steps\n1. Write tests\n2. Release\n\n## Critical Context\n- Port 8080\n\n---\n\n**Earlier part of the current turn (the turn was split):**\n\n## Turn Request\nfix CI\n\n<read-files>\na.go\n</read-files>"
	s := parseSummary(stripFileLists(prev))
	want := sections{
		goal: []string{"- Ship v2"}, done: []string{"- [x] Wrote parser"}, inProgress: []string{"- [ ] Tests"},
		decisions: []string{"- **Go**: speed"}, reasoning: []string{"- **Cache**: dropped, too slow"},
		next:     []string{"Write tests", "Release"},
		critical: []string{"- Intro line", "- Port 8080", "- **Earlier part of the current turn (the turn was split):**", "- From an earlier summary, Turn Request:", "- fix CI"},
	}
	if diff := cmp.Diff(want, s, cmp.AllowUnexported(sections{})); diff != "" {
		t.Errorf("parse (-want +got):\n%s", diff)
	}
}

func TestStripFileLists(t *testing.T) {
	for in, want := range map[string]string{
		"s\n\n<read-files>\na\n</read-files>\n\n<modified-files>\nb\n</modified-files>": "s",
		"s\n\n<modified-files>\nb\n</modified-files>\n":                                 "s",
		"s <read-files>x</read-files> more":                                             "s <read-files>x</read-files> more",
		"plain":                                                                         "plain",
	} {
		if got := stripFileLists(in); got != want {
			t.Errorf("stripFileLists(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCompactSplitOffline: an offline split turn is one structured summary
// over history and prefix; a split with no history keeps the previous
// summary (#10).
func TestCompactSplitOffline(t *testing.T) {
	b := newBuilder(t).parse("u1:40 a1:40 u2:40 a2:40")
	b.compaction("C1", "u2", "## Goal\n- Earlier goal\n\n<read-files>\nold.go\n</read-files>", `{"readFiles":["old.go"],"modifiedFiles":[]}`, false)
	b.parse("u3:1200 a3:400") // a turn prefix large enough for a summary by code to be smaller
	p := mustPrepare(t, b.path, keep(100))
	if !p.IsSplitTurn || len(p.MessagesToSummarize) != 2 {
		t.Fatalf("prep: split %v, %d history", p.IsSplitTurn, len(p.MessagesToSummarize))
	}
	p.MessagesToSummarize = nil // as if a hook emptied the history
	res, err := Compact(t.Context(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- Earlier goal", "u3 xxx"} {
		if !strings.Contains(res.Summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, res.Summary)
		}
	}
	if strings.Count(res.Summary, "<read-files>") != 1 {
		t.Errorf("file lists repeated:\n%s", res.Summary)
	}
}

func TestCompactCancelled(t *testing.T) {
	b := sessionSpan(t)
	p := mustPrepare(t, b.path, keep(100))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, opts := range []Options{{}, {Model: gptModel}} {
		res, err := Compact(ctx, p, opts)
		if res != nil || !errors.Is(err, context.Canceled) {
			t.Errorf("Compact on a cancelled context = %v, %v", res, err)
		}
	}
	branch, _ := PrepareBranch(b.path, 0)
	if res, err := SummarizeBranch(ctx, branch, Options{}); res != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("SummarizeBranch on a cancelled context = %v, %v", res, err)
	}
}

func TestCompactBadInput(t *testing.T) {
	if _, err := Compact(t.Context(), nil, Options{}); err == nil {
		t.Error("nil preparation accepted")
	}
	if _, err := Compact(t.Context(), &Preparation{}, Options{}); !errors.Is(err, ErrNothingToCompact) {
		t.Errorf("empty preparation: %v", err)
	}
	p := &Preparation{MessagesToSummarize: []session.Message{userMsg(llm.Text{Text: "x"})}}
	if _, err := Compact(t.Context(), p, Options{}); err == nil || !strings.Contains(err.Error(), "first kept entry") {
		t.Errorf("no first kept entry: %v", err)
	}
}

// TestSpanFailureKeepsProgress: when the model fails midway, the fallback
// starts from the summary so far and the messages not yet summarized.
func TestSpanFailureKeepsProgress(t *testing.T) {
	f := &spanFailure{reason: "the summarizer model failed", err: llm.ErrOverloaded, running: "## Goal\n- from the model", remaining: []session.Message{userMsg(llm.Text{Text: "later request"})}}
	s := newSummarizer(Options{}, DefaultReserveTokens)
	var got []Progress
	s.opts.Progress = func(p Progress) { got = append(got, p) }
	fb := s.fallbackFrom(PhaseHistory, f)
	if fb.reason != "the summarizer model failed: provider overloaded" || !errors.Is(fb.err, llm.ErrOverloaded) {
		t.Errorf("fallback = %+v", fb)
	}
	if len(got) != 1 || got[0].Kind != ProgressFallback || got[0].Err == nil {
		t.Errorf("progress = %+v", got)
	}
	text := deterministicSummary(f.remaining, f.running, "", fb.reason, 1000, nil)
	if !strings.Contains(text, "- from the model") || !strings.Contains(text, "later request") {
		t.Errorf("fallback summary:\n%s", text)
	}
}

func TestCompareUTF16(t *testing.T) {
	in := []string{"b", "a", "\U0001F600", "\uFF5E", "ab", ""}
	var ft fileTracker
	for _, p := range in {
		addTo(&ft.read, p)
	}
	// JavaScript sorts the astral character (lead surrogate U+D83D) before
	// U+FF5E; an empty path (which a summary's list may hold) first.
	want := []string{"", "a", "ab", "b", "\U0001F600", "\uFF5E"}
	if got := ft.ops().Read; !slices.Equal(got, want) {
		t.Errorf("sorted = %q, want %q", got, want)
	}
}
