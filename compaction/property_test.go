package compaction

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
)

// Properties of compaction over generated sessions (session/sessiongen):
// every generator option, several seeds, leaves at the end, in the middle
// and right after compactions, and keepRecentTokens from 1 to more than
// the whole session.

// propertySession is one generated session with the leaves the properties
// are checked at.
type propertySession struct {
	name   string
	s      *session.Session
	leaves []*session.Entry
}

// propertySessions generates sessions of every kind the generator makes.
func propertySessions(t *testing.T) []propertySession {
	t.Helper()
	seeds := uint64(3)
	if testing.Short() {
		seeds = 1
	}
	kinds := []struct {
		name string
		o    sessiongen.Options
	}{
		{"default", sessiongen.Options{Entries: 700, ContextWindow: 60000}},
		{"no-compactions", sessiongen.Options{Entries: 400, NoCompactions: true}},
		{"nested-kept", sessiongen.Options{Entries: 700, ContextWindow: 40000}},
		{"branches", sessiongen.Options{Entries: 700, BranchRate: 0.25, ContextWindow: 50000}},
		{"huge-results", sessiongen.Options{Entries: 500, HugeRate: 0.05, TrailingHugeResults: 2, ContextWindow: 80000}},
		{"images", sessiongen.Options{Entries: 500, ImageRate: 0.3, ContextWindow: 50000}},
		{"small-texts", sessiongen.Options{Entries: 700, SizeScale: 0.2, ContextWindow: 20000, KeepRecentTokens: 2000}},
		{"trailing-huge", sessiongen.Options{Entries: 300, TrailingHugeResults: 3, NoCompactions: true}},
		{"pi16", sessiongen.Options{Entries: 700, ContextWindow: 60000, Pi16: true}},
		{"pi16-branches", sessiongen.Options{Entries: 700, BranchRate: 0.25, ContextWindow: 40000, Pi16: true}},
	}
	var out []propertySession
	for _, k := range kinds {
		for seed := range seeds {
			o := k.o
			o.Seed = seed + 11
			s, err := session.Parse(k.name, sessiongen.Bytes(o))
			if err != nil {
				t.Fatal(err)
			}
			es := s.Entries()
			leaves := []*session.Entry{es[len(es)-1], es[len(es)/2], es[len(es)/3]}
			leaves = append(leaves, s.Leaves()[:min(2, len(s.Leaves()))]...)
			for i, e := range es {
				if e.Type == session.TypeCompaction && len(leaves) < 9 {
					if kids := s.Children(e.ID); len(kids) > 0 {
						leaves = append(leaves, kids[0])
					}
				}
				if i > 0 && i%97 == 0 && len(leaves) < 12 {
					leaves = append(leaves, e)
				}
			}
			out = append(out, propertySession{fmt.Sprintf("%s-%d", k.name, o.Seed), s, leaves})
		}
	}
	return out
}

// keepsFor returns keepRecentTokens settings from 1 to more than the whole
// context at path.
func keepsFor(t *testing.T, path []*session.Entry) []int {
	total := contextTokens(t, path)
	keeps := []int{0, 1, 50, 500, 2000, 20000, total / 3, total / 2, total - 1, total, total + 1, 2 * total}
	slices.Sort(keeps)
	return slices.Compact(keeps)
}

// TestPropertyNothingLost: on every generated session, leaf and setting,
// the first kept entry is never a tool result and the kept part never
// starts with one; every message the model saw before is summarized, in
// the turn prefix or kept after the compaction is stored — in order, none
// lost, none twice; every kept tool result keeps its call; and when the
// kept part alone fits the window less the reserve, the summary and the
// kept part fit the window.
func TestPropertyNothingLost(t *testing.T) {
	const window = 60000
	settings := DefaultSettings()
	cases, compacted := 0, 0
	for _, ps := range propertySessions(t) {
		for _, leaf := range ps.leaves {
			path := ps.s.Path(leaf.ID)
			before, err := session.BuildContext(path)
			if err != nil {
				t.Fatal(err)
			}
			// What a compaction may summarize or keep: the messages but
			// the previous summary and the system messages (prompt state,
			// which the compaction entry carries instead).
			var visible []session.Message
			for _, m := range before.Messages {
				switch m.(type) {
				case *session.CompactionSummaryMessage, *session.SystemMessage:
					continue
				}
				visible = append(visible, m)
			}
			for _, k := range keepsFor(t, path) {
				cases++
				where := fmt.Sprintf("%s leaf %s keep %d", ps.name, leaf.ID, k)
				settings.KeepRecentTokens = k
				prep, err := Prepare(path, settings)
				if errors.Is(err, ErrNothingToCompact) || errors.Is(err, ErrAlreadyCompacted) {
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				compacted++
				first := ps.s.Entry(prep.FirstKeptEntryID)
				if m, _ := session.ContextMessage(first); m != nil && m.Role() == llm.RoleToolResult {
					t.Fatalf("%s: the cut is the tool result %s", where, first.ID)
				}
				res, err := Compact(t.Context(), prep, Options{})
				if errors.Is(err, ErrNothingToCompact) && replacedTokens(prep) < frameTokens {
					continue // a summary by code would be larger than the span
				}
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				after, err := session.BuildContext(appended(t, path, "c0mp4c7e", res.Entry()))
				if err != nil {
					t.Fatal(err)
				}
				if s, ok := after.Messages[0].(*session.CompactionSummaryMessage); !ok || s.Summary != res.Summary {
					t.Fatalf("%s: the summary is not first after the compaction", where)
				}
				kept := after.Messages[1:]
				if len(kept) > 0 && kept[0].Role() == llm.RoleToolResult {
					t.Fatalf("%s: the kept part starts with a tool result", where)
				}
				covered := slices.Concat(prep.MessagesToSummarize, prep.TurnPrefixMessages, kept)
				if !slices.Equal(covered, visible) {
					t.Fatalf("%s: summarized %d + prefix %d + kept %d messages are not the %d the model saw",
						where, len(prep.MessagesToSummarize), len(prep.TurnPrefixMessages), len(kept), len(visible))
				}
				checkCallsKept(t, where, visible, kept)
				keptTokens := 0
				for _, m := range kept {
					keptTokens += session.EstimateTokens(m)
				}
				if total := keptTokens + session.EstimateTokens(after.Messages[0]); keptTokens <= window-settings.ReserveTokens && total > window {
					t.Fatalf("%s: kept %d tokens fit, but with the summary the context is %d > %d", where, keptTokens, total, window)
				}
			}
		}
	}
	t.Logf("%d cases, %d compacted", cases, compacted)
}

// checkCallsKept fails when a kept tool result's call is not kept with it.
// (Results whose call the model never saw, after a failed turn whose
// content was lost, are orphans already before compacting.)
func checkCallsKept(t *testing.T, where string, visible, kept []session.Message) {
	t.Helper()
	seen := map[string]bool{}
	for _, m := range visible {
		if a, ok := m.(*llm.AssistantMessage); ok {
			for _, c := range a.ToolCalls() {
				seen[c.ID] = true
			}
		}
	}
	calls := map[string]bool{}
	for _, m := range kept {
		switch m := m.(type) {
		case *llm.AssistantMessage:
			for _, c := range m.ToolCalls() {
				calls[c.ID] = true
			}
		case *llm.ToolResultMessage:
			if seen[m.ToolCallID] && !calls[m.ToolCallID] {
				t.Fatalf("%s: kept tool result %s lost its call", where, m.ToolCallID)
			}
		}
	}
}

// TestPropertyRequestsFit: whatever the session's size (up to about 30
// times the summarizer's window here), every request sent to a small-window
// summarizer fits its window with the output reserve, the span is covered
// in order over as many sequential requests as it takes, and no request is
// made while another is running. The fake server checks each request as it
// arrives.
func TestPropertyRequestsFit(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	model := srv.Model()
	model.ContextWindow, model.MaxTokens = 12000, 1500
	var problems []string
	srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		if size := tokensOf(r.Text()) + r.MaxTokens(); size > model.ContextWindow {
			problems = append(problems, fmt.Sprintf("request of %d tokens with output %d > window %d", tokensOf(r.Text()), r.MaxTokens(), model.ContextWindow))
		}
		return llmtest.Stream(llmtest.Text("## Goal\n- part "+fmt.Sprint(len(problems))), llmtest.Usage(100, 10))
	})
	for _, size := range []int{60, 300, 900} {
		s, err := session.Parse("big", sessiongen.Bytes(sessiongen.Options{Entries: size, Seed: uint64(size), NoCompactions: true, HugeRate: 0.02}))
		if err != nil {
			t.Fatal(err)
		}
		path := s.LeafPath()
		prep, err := Prepare(path, keep(2000))
		if err != nil {
			t.Fatal(err)
		}
		span := 0
		for _, m := range slices.Concat(prep.MessagesToSummarize, prep.TurnPrefixMessages) {
			span += session.EstimateTokens(m)
		}
		calls := len(srv.Requests())
		res, err := Compact(t.Context(), prep, Options{Provider: srv.Provider(), Model: model})
		if err != nil {
			t.Fatal(err)
		}
		if res.Deterministic {
			t.Errorf("%d entries: fell back (%s)", size, res.FallbackReason)
		}
		t.Logf("%d entries: span of %d tokens (%.1f× the window) in %d requests", size, span, float64(span)/float64(model.ContextWindow), len(srv.Requests())-calls)
	}
	if len(problems) > 0 {
		t.Fatalf("%d requests did not fit, e.g. %s", len(problems), problems[0])
	}
}

// plantedConstraint matches the constraint sentences TestPropertyRepeated
// plants.
var plantedConstraint = regexp.MustCompile(`(Never|Always) [^.!]*rule-\d+-\d+[.!]`)

// TestPropertyRepeated compacts a session five times, with new work in
// between, using the deterministic summarizer (the worst case: nothing
// judges what matters): every modified file ever recorded stays in the
// summary's file lists, and at least 90 % of the rules the user stated
// ("never …", "always …") survive in the final summary (peers.md §(e)).
func TestPropertyRepeated(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(file, sessiongen.Bytes(sessiongen.Options{Entries: 400, Seed: seed + 5, NoCompactions: true, BranchRate: -1}), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := session.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			r := rand.New(rand.NewPCG(seed, 1))
			var rules []string
			modified := map[string]bool{}
			for _, f := range mustPrepare(t, s.LeafPath(), keep(1)).ModifiedFiles() {
				modified[f] = true
			}
			var last *Result
			for round := range 5 {
				for i := range 4 {
					rule := fmt.Sprintf("Never touch the generated code in rule-%d-%d.", round, i)
					if i%2 == 1 {
						rule = fmt.Sprintf("Always run make check for rule-%d-%d before committing!", round, i)
					}
					rules = append(rules, rule)
					path := fmt.Sprintf("pkg/round%d/file%d.go", round, i)
					modified[path] = true
					appendTurn(t, s, r, "Please continue with the next part of the work. "+rule+" Then report back.", path)
				}
				// Work without rules or edits follows, so that the kept
				// part holds none of them and all were summarized.
				for range 3 {
					appendTurn(t, s, r, "Carry on.", "")
				}
				prep := mustPrepare(t, s.LeafPath(), keep(1500))
				res, err := Compact(t.Context(), prep, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.Append(res.Entry()); err != nil {
					t.Fatal(err)
				}
				last = res
			}
			// The stored session loads and the last summary is what the
			// model sees first.
			reloaded, err := session.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			ctx, err := reloaded.Context("")
			if err != nil {
				t.Fatal(err)
			}
			if sm, ok := ctx.Messages[0].(*session.CompactionSummaryMessage); !ok || sm.Summary != last.Summary {
				t.Fatal("the last summary is not first in the reloaded context")
			}
			lists := last.Summary[strings.LastIndex(last.Summary, "<modified-files>"):]
			for f := range modified {
				if !strings.Contains(lists, "\n"+f+"\n") {
					t.Errorf("modified file %s lost after 5 compactions", f)
				}
			}
			kept := 0
			for _, rule := range rules {
				if strings.Contains(last.Summary, rule) {
					kept++
				}
			}
			t.Logf("%d of %d rules and all %d modified files survive 5 compactions (summary %d tokens)", kept, len(rules), len(modified), tokensOf(last.Summary))
			if kept*10 < len(rules)*9 {
				t.Errorf("only %d of %d rules survive 5 compactions; missing e.g. %q", kept, len(rules), missingRule(rules, last.Summary))
			}
		})
	}
}

func missingRule(rules []string, summary string) string {
	for _, r := range rules {
		if !strings.Contains(summary, r) {
			return r
		}
	}
	return ""
}

// appendTurn appends a user request, an assistant editing path (unless it
// is empty) and the result, a few test runs and a closing answer.
func appendTurn(t *testing.T, s *session.Session, r *rand.Rand, request, path string) {
	t.Helper()
	appendMsg := func(m session.Message) {
		if _, err := s.Append(&session.MessageEntry{Message: m}); err != nil {
			t.Fatal(err)
		}
	}
	appendMsg(&llm.UserMessage{Content: []llm.Content{llm.Text{Text: request}}, Timestamp: 1})
	if path != "" {
		id := fmt.Sprintf("call_%d", r.Uint64())
		appendMsg(&llm.AssistantMessage{Content: []llm.Content{llm.Text{Text: "Editing."}, call(id, "edit", `{"path":"`+path+`","oldText":"a","newText":"b"}`)},
			StopReason: llm.StopReasonToolUse, Usage: llm.Usage{Input: 1000, Output: 100, TotalTokens: 1100}})
		appendMsg(&llm.ToolResultMessage{ToolCallID: id, ToolName: "edit", Content: []llm.Content{llm.Text{Text: "Successfully replaced text in " + path}}})
	}
	for range 3 {
		id := fmt.Sprintf("call_%d", r.Uint64())
		appendMsg(&llm.AssistantMessage{Content: []llm.Content{llm.Text{Text: "Checking."}, call(id, "bash", `{"command":"go test ./..."}`)},
			StopReason: llm.StopReasonToolUse, Usage: llm.Usage{Input: 1000, Output: 100, TotalTokens: 1100}})
		appendMsg(&llm.ToolResultMessage{ToolCallID: id, ToolName: "bash", Content: []llm.Content{llm.Text{Text: strings.Repeat("ok  \tpkg\t0.1s\n", 40)}}})
	}
	appendMsg(&llm.AssistantMessage{Content: []llm.Content{llm.Text{Text: "Done with this part."}}, StopReason: llm.StopReasonStop,
		Usage: llm.Usage{Input: 1000, Output: 100, TotalTokens: 1100}})
}

// Preparing from a session's context (PrepareContext of Session.Context,
// which never makes the whole path's entries) decides exactly what
// preparing from the path does, at every leaf and keepRecentTokens.
func TestPrepareContextMatchesPrepare(t *testing.T) {
	for _, ps := range propertySessions(t) {
		for _, leaf := range ps.leaves {
			ctx, err := ps.s.Context(leaf.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []int{1, 2000, 20000, 1 << 30} {
				want, werr := Prepare(ps.s.Path(leaf.ID), keep(k))
				view, _ := ps.s.ViewOf(leaf.ID)
				got, gerr := PrepareContext(ctx, PinsOf(view), keep(k))
				if fmt.Sprint(gerr) != fmt.Sprint(werr) {
					t.Fatalf("%s at %s, keep %d: error %v, want %v", ps.name, leaf.ID, k, gerr, werr)
				}
				if werr != nil {
					continue
				}
				if g, w := preparationDigest(got), preparationDigest(want); g != w {
					t.Fatalf("%s at %s, keep %d:\n%s\nwant\n%s", ps.name, leaf.ID, k, g, w)
				}
			}
		}
	}
}

// preparationDigest writes what a preparation decided.
func preparationDigest(p *Preparation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "kept %s split %v before %d previous %q/%s\n", p.FirstKeptEntryID, p.IsSplitTurn, p.TokensBefore, p.PreviousSummary, p.PreviousSummarizer)
	for _, m := range p.MessagesToSummarize {
		fmt.Fprintf(&b, "s %s %d\n", m.Role(), session.EstimateTokens(m))
	}
	for _, m := range p.TurnPrefixMessages {
		fmt.Fprintf(&b, "t %s %d\n", m.Role(), session.EstimateTokens(m))
	}
	r, mod := p.FileOps.Lists()
	fmt.Fprintf(&b, "files %v %v\n", r, mod)
	return b.String()
}
