package compaction

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

func pathTo(b *builder, id string) []*session.Entry {
	var path []*session.Entry
	for cur := b.byID[id]; cur != nil; cur = b.byID[cur.ParentID] {
		path = append(path, cur)
		if cur.ParentID == "" {
			break
		}
	}
	slices.Reverse(path)
	return path
}

func entryIDs(es []*session.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

// tree: A ─┬─ B ─ C ─ D   and  A ─ E ─ F (spec diagram), B has a side leaf G.
func branchTree(t *testing.T) *builder {
	b := newBuilder(t).parse("uA aB:40!read=b.go rC:40 uD:40")
	b.addUnder("aE", "uA", &session.MessageEntry{Message: &llm.AssistantMessage{Content: []llm.Content{llm.Text{Text: "aE"}}, StopReason: llm.StopReasonStop}})
	b.addUnder("uF", "aE", &session.MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: "uF text"}}}})
	b.addUnder("uG", "aB", &session.MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: "uG"}}}})
	return b
}

func TestCollectBranch(t *testing.T) {
	b := branchTree(t)
	tests := []struct {
		name, from, to, ancestor string
		entries                  []string
	}{
		{"sibling branch (spec diagram)", "uD", "uF", "uA", []string{"aB", "rC", "uD"}},
		{"target is an ancestor", "uD", "aB", "aB", []string{"rC", "uD"}},
		{"target is the root", "uD", "uA", "uA", []string{"aB", "rC", "uD"}},
		{"target is a descendant", "aB", "uD", "aB", nil},
		{"same entry", "uD", "uD", "uD", nil},
		{"side leaf", "uD", "uG", "aB", []string{"rC", "uD"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := CollectBranch(pathTo(b, tc.from), pathTo(b, tc.to))
			if got.CommonAncestorID != tc.ancestor || got.OldLeafID != tc.from || got.TargetID != tc.to {
				t.Errorf("got %+v", got)
			}
			if ids := entryIDs(got.Entries); !slices.Equal(ids, tc.entries) {
				t.Errorf("entries = %v, want %v", ids, tc.entries)
			}
		})
	}
	if got := CollectBranch(nil, pathTo(b, "uF")); len(got.Entries) != 0 || got.CommonAncestorID != "" {
		t.Errorf("no old leaf: %+v", got)
	}
	other := newBuilder(t).parse("u9 a9")
	if got := CollectBranch(other.path, pathTo(b, "uF")); got.CommonAncestorID != "" || len(got.Entries) != 2 {
		t.Errorf("disjoint trees: %+v", got)
	}
}

// TestNewLeaf is pi-reference §9.10 #60–64, #69: a user message moves the
// leaf to its parent and hands its text back; anything else is the leaf.
func TestNewLeaf(t *testing.T) {
	b := branchTree(t)
	b.addUnder("cH", "uD", &session.CustomMessageEntry{CustomType: "n", Content: []llm.Content{llm.Text{Text: "custom "}, llm.Text{Text: "text"}}})
	b.addUnder("mI", "cH", &session.ThinkingLevelChangeEntry{ThinkingLevel: llm.ThinkingLow})
	for _, tc := range []struct{ target, leaf, text string }{
		{"uA", "", "uA"},        // root user message: leaf null
		{"uF", "aE", "uF text"}, // a later user message: its parent
		{"aB", "aB", ""},        // an assistant: itself
		{"rC", "rC", ""},        // a tool result: itself
		{"cH", "uD", "custom text"},
		{"mI", "mI", ""},
	} {
		leaf, text, err := NewLeaf(b.byID[tc.target])
		if err != nil || leaf != tc.leaf || text != tc.text {
			t.Errorf("NewLeaf(%s) = %q, %q, %v; want %q, %q", tc.target, leaf, text, err, tc.leaf, tc.text)
		}
	}
}

func TestPrepareBranch(t *testing.T) {
	b := newBuilder(t).parse("u0:40 a1:40!read=early.go r2:40")
	b.compaction("C3", "u0", "summary C3", `{"readFiles":["c-read.go"],"modifiedFiles":["c-mod.go"]}`, false)
	b.add("s4", &session.BranchSummaryEntry{FromID: "z", Summary: "branch s4 " + strings.Repeat("x", 400), Details: []byte(`{"readFiles":[],"modifiedFiles":["s-mod.go"]}`)})
	b.parse("e5 u6:400 a7:40!edit=late.go r8:400 m9")
	entries := b.path

	t.Run("no budget takes every message, tool results included", func(t *testing.T) {
		p, err := PrepareBranch(entries, 0)
		if err != nil {
			t.Fatal(err)
		}
		// The empty branch summary e5 is a message too (pi 1.6).
		if got := ids(t, p.Messages); !slices.Equal(got, []string{"u0", "a1", "r2", "compactionSummary", "s4", "(empty)", "u6", "a7", "r8"}) {
			t.Errorf("messages = %v", got)
		}
		if p.EntriesCollected != len(entries) {
			t.Errorf("entriesCollected = %d", p.EntriesCollected)
		}
	})
	t.Run("budget filled newest first; file ops from every entry", func(t *testing.T) {
		p, err := PrepareBranch(entries, 216) // r8 100 + a7 16 + u6 100 + e5 0 = 216
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(t, p.Messages); !slices.Equal(got, []string{"(empty)", "u6", "a7", "r8"}) {
			t.Errorf("messages = %v", got)
		}
		if p.TotalTokens != 216 {
			t.Errorf("totalTokens = %d", p.TotalTokens)
		}
		read, mod := p.FileOps.Lists()
		if !slices.Equal(read, []string{"c-read.go", "early.go"}) || !slices.Equal(mod, []string{"c-mod.go", "late.go", "s-mod.go"}) {
			t.Errorf("files read %v modified %v", read, mod)
		}
	})
	t.Run("a summary past the budget is taken below 90%", func(t *testing.T) {
		p, err := PrepareBranch(entries, 250) // 216 < 0.9 × 250
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(t, p.Messages); !slices.Equal(got, []string{"s4", "(empty)", "u6", "a7", "r8"}) {
			t.Errorf("messages = %v", got)
		}
	})
	t.Run("but not at 90% or more", func(t *testing.T) {
		p, err := PrepareBranch(entries, 240) // 216 ≥ 0.9 × 240
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(t, p.Messages); !slices.Equal(got, []string{"(empty)", "u6", "a7", "r8"}) {
			t.Errorf("messages = %v", got)
		}
	})
}

func TestBranchBudget(t *testing.T) {
	if got := BranchBudget(llm.Model{ContextWindow: 200000}, 16384); got != 183616 {
		t.Errorf("budget = %d", got)
	}
	if got := BranchBudget(llm.Model{}, 0); got != DefaultContextWindow-DefaultBranchSummaryReserveTokens {
		t.Errorf("default budget = %d", got)
	}
}

func TestSummarizeBranchOffline(t *testing.T) {
	b := branchTree(t)
	br := CollectBranch(pathTo(b, "uD"), pathTo(b, "uF"))
	p, err := PrepareBranch(br.Entries, BranchBudget(llm.Model{}, 0))
	if err != nil {
		t.Fatal(err)
	}
	res, err := SummarizeBranch(t.Context(), p, Options{CustomInstructions: "mention MARKER"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Summary, branchPreamble+"## Goal\n") {
		t.Errorf("summary does not open with the preamble:\n%s", res.Summary)
	}
	checkFormat(t, strings.TrimPrefix(res.Summary, branchPreamble))
	for _, want := range []string{"## Goal\n- uD xxx", "- [ ] Latest request: uD xxx", "focus on: mention MARKER", "\n\n<read-files>\nb.go\n</read-files>"} {
		if !strings.Contains(res.Summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, res.Summary)
		}
	}
	e := res.Entry(br.OldLeafID)
	if e.FromID != "uD" || e.FromHook || e.Summary != res.Summary {
		t.Errorf("entry = %+v", e)
	}
	// Stored under the new leaf, the model sees the summary after aE.
	leaf, _, _ := NewLeaf(b.byID["uF"])
	b.addUnder("S", leaf, e)
	ctx, err := session.BuildContext(b.path)
	if err != nil {
		t.Fatal(err)
	}
	if got := roles(ctx.Messages); !slices.Equal(got, []string{"user", "assistant", "branchSummary"}) {
		t.Errorf("context = %v", got)
	}
}

// TestSummarizeBranchNothing: no messages, no entry (#22); nor when the
// only messages show nothing (an empty branch summary, a system message).
func TestSummarizeBranchNothing(t *testing.T) {
	b := newBuilder(t).parse("u0 m1 l2 e3")
	b.add("s4", &session.MessageEntry{Message: &session.SystemMessage{Content: "prompt", Timestamp: 1}})
	p, err := PrepareBranch(b.path[1:], 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Messages) != 2 || p.TotalTokens != 2 {
		t.Errorf("messages %v, %d tokens; want the empty summary and the system message, 2 tokens", ids(t, p.Messages), p.TotalTokens)
	}
	if _, err := SummarizeBranch(t.Context(), p, Options{}); !errors.Is(err, ErrNothingToSummarize) {
		t.Errorf("err = %v", err)
	}
	if _, err := SummarizeBranch(t.Context(), nil, Options{}); !errors.Is(err, ErrNothingToSummarize) {
		t.Errorf("nil preparation: %v", err)
	}
}

// TestPrepareBranchPi16 covers pi 1.6's transcript features in a branch:
// the branch's context edits hide or replace messages (not summaries),
// system messages count, and the compaction's system state does not.
func TestPrepareBranchPi16(t *testing.T) {
	b := newBuilder(t).parse("S0:400 u1:40 a2:40!read=hidden.go r3:40 H4(a2) H5(r3) a6:4000 R7:40(a6) s8:40 H9(s8)")
	b.add("C10", &session.CompactionEntry{Summary: "summary C10", FirstKeptEntryID: "u1",
		SystemMessage: &session.SystemMessage{Content: strings.Repeat("p", 4000), Timestamp: 1}})
	p, err := PrepareBranch(b.path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(t, p.Messages); !slices.Equal(got, []string{"system", "u1", "R7", "s8", "compactionSummary"}) {
		t.Errorf("messages = %v", got)
	}
	// 100 (system) + 10 + 10 (the replacement) + 12 + 3 (the summary).
	if p.TotalTokens != 135 {
		t.Errorf("totalTokens = %d", p.TotalTokens)
	}
	// The hidden call's file is not there: the model never saw it.
	if read, _ := p.FileOps.Lists(); len(read) != 0 {
		t.Errorf("files read %v", read)
	}
	// pi's rules leave the tool results out; here they are hidden anyway.
	pi, err := prepareBranch(b.path, 0, true)
	if err != nil || !slices.Equal(ids(t, pi.Messages), ids(t, p.Messages)) {
		t.Errorf("pi's rules: %v, %v", ids(t, pi.Messages), err)
	}
	// A budget the system message alone passes: the walk stops before it.
	if p, _ = PrepareBranch(b.path, 50); !slices.Equal(ids(t, p.Messages), []string{"u1", "R7", "s8", "compactionSummary"}) {
		t.Errorf("budget 50: %v", ids(t, p.Messages))
	}
}
