package compaction

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiontest"
)

func keep(n int) Settings {
	return Settings{Enabled: true, ReserveTokens: DefaultReserveTokens, KeepRecentTokens: n}
}

func mustPrepare(t *testing.T, path []*session.Entry, s Settings) *Preparation {
	t.Helper()
	p, err := Prepare(path, s)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	return p
}

// TestPrepareTable pins the cut, the split and the two spans on small
// paths, pi 1.6 behaviour with Prime's fixes. Token sizes are ceil(chars/4):
// u0:40 is 10 tokens.
func TestPrepareTable(t *testing.T) {
	tests := []struct {
		name      string
		path      string
		keep      int
		firstKept string
		split     bool
		history   []string
		prefix    []string
	}{
		{
			// Appendix A.1: a5 is kept, the turn u2… is split.
			name: "A.1 split turn", path: "u0:40 a1:40 u2:40 a3:8!read=x.ts r4:400 a5:40", keep: 50,
			firstKept: "a5", split: true, history: []string{"u0", "a1"}, prefix: []string{"u2", "a3", "r4"},
		},
		{
			// Appendix A.2 with Prime's fix (#6): the kept range starts at
			// the metadata entry as in pi, but it is not a split: the
			// previous turn is history.
			name: "A.2 metadata before a user cut", path: "u0:40 a1:40 m2 u3:40 a4:400", keep: 110,
			firstKept: "m2", history: []string{"u0", "a1"},
		},
		{
			name: "A.2 without the metadata", path: "u0:40 a1:40 u3:40 a4:400", keep: 110,
			firstKept: "u3", history: []string{"u0", "a1"},
		},
		{
			// C7d: an empty branch summary is invisible, like metadata.
			name: "empty branch summary before a user cut", path: "u0:40 a1:40 e2 u3:40 a4:400", keep: 110,
			firstKept: "e2", history: []string{"u0", "a1"},
		},
		{
			name: "several invisible entries are pulled in", path: "u0:40 a1:40 m2 l3 M4 x5 u6:40 a7:400", keep: 110,
			firstKept: "m2", history: []string{"u0", "a1"},
		},
		{
			// Appendix A.3, pi 1.6 (C7b): the trailing tool result alone
			// exceeds the budget, so the last cut point (its assistant) is
			// the cut and the user message the turn prefix.
			name: "A.3 trailing tool result", path: "u0:40 a1:8!read=x.ts r2:400", keep: 50,
			firstKept: "a1", split: true, prefix: []string{"u0"},
		},
		{
			// C7a: a custom message's tokens count in the walk.
			name: "custom message counts", path: "u0:40 a1:40 u2:40 c3:400", keep: 100,
			firstKept: "c3", history: []string{"u0", "a1", "u2"},
		},
		{
			// C7c: the scan-back stops at a custom message.
			name: "scan-back stops at a visible entry", path: "u0:40 a1:40 c2:40 u3:40 a4:400", keep: 110,
			firstKept: "u3", history: []string{"u0", "a1", "c2"},
		},
		{
			// C6a: a cut on a bash execution is a turn start, not a split.
			name: "cut on a bash execution", path: "u0:40 a1:40 b2:400 a3:40", keep: 110,
			firstKept: "b2", history: []string{"u0", "a1"},
		},
		{
			name: "cut on a non-empty branch summary", path: "u0:40 a1:40 s2:400 a3:40", keep: 110,
			firstKept: "s2", history: []string{"u0", "a1"},
		},
		{
			name: "cut mid-turn on an assistant", path: "u0:40 a1:40 u2:40 a3:400!read=a r4:40 a5:400", keep: 110,
			firstKept: "a5", split: true, history: []string{"u0", "a1"}, prefix: []string{"u2", "a3", "r4"},
		},
		{
			// keepRecentTokens 1 (pi's tests: "summarize almost everything").
			name: "keep 1", path: "u0:40 a1:40 u2:40 a3:40", keep: 1,
			firstKept: "a3", split: true, history: []string{"u0", "a1"}, prefix: []string{"u2"},
		},
		{
			name: "keep 0", path: "u0:40 a1:40 u2:40 a3:40", keep: 0,
			firstKept: "a3", split: true, history: []string{"u0", "a1"}, prefix: []string{"u2"},
		},
		{
			// Appendix A.5 / C7e: the span starts at the previous kept
			// entry u2; the old summary is not part of it.
			name: "A.5 repeated compaction", path: "u1:40 a1:40 u2:40 a2:40 C1(keep u2) u3:40 a3:40", keep: 1,
			firstKept: "a3", split: true, history: []string{"u2", "a2"}, prefix: []string{"u3"},
		},
		{
			// C7e: the scan-back crosses the compaction boundary onto a
			// metadata entry at the end of the kept range.
			name: "scan-back into the kept range", path: "u1:40 a1:40 u2:40 a2:40 m2 C1(keep u2) u3:40 a3:400", keep: 110,
			firstKept: "m2", history: []string{"u2", "a2"},
		},
		{
			// The previous compaction's kept entry is not on the path: the
			// span starts right after the compaction.
			name: "kept entry missing", path: "u1:40 a1:40 C1(keep gone) u2:40 a2:40 u3:40 a3:400", keep: 110,
			firstKept: "u3", history: []string{"u2", "a2"},
		},
		{
			// A span that starts mid-turn (the previous compaction kept an
			// assistant): no turn start before the cut, so no split.
			name: "span starts mid-turn", path: "u1:40 a1:40 a2:40 C1(keep a2) a3:40 a4:400", keep: 100,
			firstKept: "a4", history: []string{"a2", "a3"},
		},
		{
			// pi 1.6: a system message counts in the walk (the cut falls
			// on a1 because of it) but is neither a cut point nor
			// summarized.
			name: "system message counts, is not summarized", path: "S0:400 u1:40 a1:40 u2:40 a2:400", keep: 115,
			firstKept: "a1", split: true, prefix: []string{"u1"},
		},
		{
			// A system patch where the walk stops: the cut is the next cut
			// point, and the scan-back stops at the patch, which the model
			// sees; the compaction's system state carries it on.
			name: "system patch before the cut", path: "u0:40 a1:40 S2:400 u3:40 a4:40", keep: 110,
			firstKept: "u3", history: []string{"u0", "a1"},
		},
		{
			name: "a hidden entry is invisible", path: "u0:40 a1:400 H2(a1) a3:40 u4:40 a5:400", keep: 110,
			firstKept: "u4", history: []string{"u0", "a3"},
		},
		{
			// The scan-back crosses the edit and what it hides; as for
			// metadata, Prime does not make the turn before a split (#6).
			name: "scan-back over a hidden attempt", path: "u0:40 a1:40 u2:40 a3:400 H4(a3) u5:40 a6:400", keep: 110,
			firstKept: "a3", history: []string{"u0", "a1", "u2"},
		},
		{
			name: "a replaced entry counts and shows its replacement", path: "u0:40 a1:4000 R2:40(a1) u3:40 a4:40", keep: 15,
			firstKept: "R2", history: []string{"u0", "R2"},
		},
		{
			// pi 1.6's recovery: what follows the cut is a failed attempt
			// the model no longer sees, so the cut moves past the last
			// input, which becomes the split turn's prefix.
			name: "a trailing hidden attempt", path: "u0:40 a1:40 u2:400 a3:40 H4(a3)", keep: 50,
			firstKept: "a3", split: true, history: []string{"u0", "a1"}, prefix: []string{"u2"},
		},
		{
			name: "a trailing attempt the model sees", path: "u0:40 a1:40 u2:400 a3:40", keep: 50,
			firstKept: "u2", history: []string{"u0", "a1"},
		},
		{
			// An edit there that replaces an entry outside the attempt
			// is not part of one: the cut stays.
			name: "a trailing hidden attempt and a replacement", path: "u0:40 a1:40 u2:400 a3:40 H4(a3) R5:4(u0)", keep: 50,
			firstKept: "u2", history: []string{"R5", "a1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newBuilder(t).parse(tc.path)
			p := mustPrepare(t, b.path, keep(tc.keep))
			if p.FirstKeptEntryID != tc.firstKept {
				t.Errorf("firstKeptEntryId = %s, want %s", p.FirstKeptEntryID, tc.firstKept)
			}
			if p.IsSplitTurn != tc.split {
				t.Errorf("isSplitTurn = %v, want %v", p.IsSplitTurn, tc.split)
			}
			if diff := cmp.Diff(tc.history, ids(t, p.MessagesToSummarize), cmpEmpty); diff != "" {
				t.Errorf("messagesToSummarize (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.prefix, ids(t, p.TurnPrefixMessages), cmpEmpty); diff != "" {
				t.Errorf("turnPrefixMessages (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpEmpty = cmp.Comparer(func(a, b []string) bool { return slices.Equal(a, b) })

// TestPrepareA1FileOps is Appendix A.1's file tracking: read x.ts.
func TestPrepareA1FileOps(t *testing.T) {
	b := newBuilder(t).parse("u0:40 a1:40 u2:40 a3:8!read=x.ts r4:400 a5:40")
	p := mustPrepare(t, b.path, keep(50))
	if got := p.ReadFiles(); !slices.Equal(got, []string{"x.ts"}) {
		t.Errorf("readFiles = %q", got)
	}
	if got := p.ModifiedFiles(); len(got) != 0 {
		t.Errorf("modifiedFiles = %q", got)
	}
	// After the compaction the model sees the summary and a5 only.
	res, err := Compact(t.Context(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b.add("C", res.Entry())
	ctx, err := session.BuildContext(b.path)
	if err != nil {
		t.Fatal(err)
	}
	if got := roles(ctx.Messages); !slices.Equal(got, []string{"compactionSummary", "assistant"}) {
		t.Errorf("context after compaction: %v", got)
	}
	if !strings.HasSuffix(res.Summary, "\n\n<read-files>\nx.ts\n</read-files>") {
		t.Errorf("summary does not end with the file list:\n%s", res.Summary)
	}
}

func roles(msgs []session.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Role())
	}
	return out
}

// TestPrepareNothing covers the outcomes without a preparation (C4).
func TestPrepareNothing(t *testing.T) {
	tests := []struct {
		name, path string
		keep       int
		want       error
		reason     string
	}{
		{"empty path", "", 10, ErrNothingToCompact, "no entries"},
		{"last entry is a compaction", "u1 a1 u2 a2 C1(keep u2)", 1, ErrAlreadyCompacted, "last entry"},
		{"only metadata after the compaction", "u1 a1 u2 a2 C1(keep u2) m1 l1", 100000, ErrAlreadyCompacted, "nothing the model sees"},
		{"everything fits", "u1:40 a1:40", 100, ErrNothingToCompact, "keepRecentTokens"},
		// §9.1 #9: a single assistant is the first cut point: nothing before it.
		{"single assistant", "a1:4000", 1000, ErrNothingToCompact, "keepRecentTokens"},
		// §9.2 #23: everything kept earlier still fits.
		{"kept range still fits", "u1 a1 u2 a2 u3 a3@5000/1000 C1(keep u2) u4 a4@8000/2000", DefaultKeepRecentTokens, ErrNothingToCompact, "keepRecentTokens"},
		{"no messages", "m1 l1 x1", 0, ErrNothingToCompact, "no messages"},
		{"only tool-free metadata then a user", "m1 u1:40", 0, ErrNothingToCompact, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newBuilder(t).parse(tc.path)
			_, err := Prepare(b.path, keep(tc.keep))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			var nc *NotCompactableError
			if !errors.As(err, &nc) || !strings.Contains(nc.Reason, tc.reason) {
				t.Errorf("reason %q does not mention %q", err, tc.reason)
			}
		})
	}
}

// TestCutNeverToolResultNothingLost is a property over one mixed session and
// every keepRecentTokens: the first kept entry is never a tool result, and
// every message the model sees is summarized, in the turn prefix, or kept —
// exactly once.
func TestCutNeverToolResultNothingLost(t *testing.T) {
	spec := "u0:40 a1:80!read=a.go r2:300 m3 a4:60!edit=a.go!write=b.go r5:500 r6:20 u7:100 c8:120 a9:30 e10 b11:200 " +
		"u12:40 a13:400!read=c.go r14:900:err a15:40 s16:300 u17:64 a18:20!bash=x r19:2000"
	for _, withCompaction := range []bool{false, true} {
		b := newBuilder(t).parse(spec)
		if withCompaction {
			b.parse("C20(keep u7) u21:80 a22:40!read=d.go r23:1000 a24:44")
		}
		all := visibleMessages(t, b.path)
		total := 0
		for _, m := range all {
			total += session.EstimateTokens(m)
		}
		for k := 0; k <= total+10; k += 7 {
			p, err := Prepare(b.path, keep(k))
			if errors.Is(err, ErrNothingToCompact) {
				continue
			}
			if err != nil {
				t.Fatalf("keep %d: %v", k, err)
			}
			first := b.path[b.index(p.FirstKeptEntryID)]
			if m, _ := session.ContextMessage(first); m != nil && m.Role() == llm.RoleToolResult {
				t.Fatalf("keep %d: cut at tool result %s", k, first.ID)
			}
			// Rebuild what the model sees after this compaction and check
			// that summarized + prefix + kept is the visible sequence.
			kept := keptAfter(t, b, p)
			got := append(append(ids(t, p.MessagesToSummarize), ids(t, p.TurnPrefixMessages)...), kept...)
			if want := ids(t, all); !slices.Equal(got, want) {
				t.Fatalf("keep %d: summarized+prefix+kept = %v\nwant %v", k, got, want)
			}
		}
	}
}

// visibleMessages is the span a compaction of path may cover: the previous
// compaction's kept range and everything after it (the model's context less
// the summary).
func visibleMessages(t *testing.T, path []*session.Entry) []session.Message {
	ctx, err := session.BuildContext(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []session.Message
	for _, m := range ctx.Messages {
		if m.Role() != session.RoleCompactionSummary {
			out = append(out, m)
		}
	}
	return out
}

// keptAfter appends a compaction for p to a copy of the path and returns
// the ids of the messages it keeps.
func keptAfter(t *testing.T, b *builder, p *Preparation) []string {
	path := appended(t, b.path, "Cx", &session.CompactionEntry{Summary: "s", FirstKeptEntryID: p.FirstKeptEntryID})
	return ids(t, visibleMessages(t, path))
}

// TestTokensBefore pins tokensBefore (C5).
func TestTokensBefore(t *testing.T) {
	t.Run("usage after the compaction is trusted", func(t *testing.T) {
		// §9.2 #22: the context's size is a4's usage, 10000.
		b := newBuilder(t).parse("u1 a1 u2 a2 u3 a3@5000/1000 C1(keep u2) u4 a4@8000/2000")
		proj, err := projectPath(b.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := tokensBefore(proj); got != 10000 {
			t.Errorf("tokensBefore = %d, want 10000", got)
		}
		ctx, _ := session.BuildContext(b.path)
		if want := session.EstimateContextTokens(ctx.Messages).Tokens; want != 10000 {
			t.Errorf("EstimateContextTokens = %d", want)
		}
	})
	t.Run("usage at or before the compaction is distrusted", func(t *testing.T) {
		b := newBuilder(t).parse("u1:400 a1:40@9000/1000 u2:400 a2:400@20000/1000 C1(keep u2) u3:4000")
		p := mustPrepare(t, b.path, keep(100))
		ctx, _ := session.BuildContext(b.path)
		want := 0
		for _, m := range ctx.Messages {
			want += session.EstimateTokens(m)
		}
		if p.TokensBefore != want {
			t.Errorf("tokensBefore = %d, want chars/4 over the context = %d", p.TokensBefore, want)
		}
		if est := session.EstimateContextTokens(ctx.Messages).Tokens; est == want {
			t.Errorf("the plain estimate should use a2's usage (%d)", est)
		}
	})
	t.Run("no compaction: usage plus trailing estimate", func(t *testing.T) {
		b := newBuilder(t).parse("u1:400 a1:40@9000/1000 u2:400 a2:400")
		p := mustPrepare(t, b.path, keep(50))
		if p.TokensBefore != 10000+100+100 {
			t.Errorf("tokensBefore = %d, want 10200", p.TokensBefore)
		}
	})
}

// TestPrepareRepeatedCompaction is §9.2 #24: with long texts and keep 100,
// the span includes the previously kept u2 and u3 but not the old summary.
func TestPrepareRepeatedCompaction(t *testing.T) {
	b := newBuilder(t).parse("u1:2000 a1:2000 u2:2000 a2:2000 u3:2000 a3:2000@5000/1000")
	b.compaction("C1", "u2", "First summary", "", false)
	b.parse("u4:2000 a4:2000@8000/2000")
	p := mustPrepare(t, b.path, keep(100))
	if p.PreviousSummary != "First summary" {
		t.Errorf("previousSummary = %q", p.PreviousSummary)
	}
	text := renderTranscript(append(slices.Clone(p.MessagesToSummarize), p.TurnPrefixMessages...), TranscriptOptions{ToolBodies: 3})
	for _, want := range []string{"u2 x", "u3 x"} {
		if !strings.Contains(text, want) {
			t.Errorf("summarized text lacks %q", want)
		}
	}
	if strings.Contains(text, "First summary") {
		t.Error("summarized text contains the old summary")
	}
}

// TestPrepareFileOps pins cumulative file tracking.
func TestPrepareFileOps(t *testing.T) {
	t.Run("previous details, span and prefix; kept part not scanned", func(t *testing.T) {
		b := newBuilder(t).parse("u0:40 a1:40!read=old.go")
		b.compaction("C1", "u0", "s", `{"readFiles":["prev-read.go"],"modifiedFiles":["prev-mod.go"]}`, false)
		b.parse("u2:40 a3:40!edit=e.go!read=r.go r4:40 r5:40 u6:40 a7:40!write=w.go r8:4 a9:400!edit=kept.go r10:40")
		p := mustPrepare(t, b.path, keep(100))
		want := FileOps{Read: []string{"old.go", "prev-read.go", "r.go"}, Written: []string{"w.go"}, Edited: []string{"e.go", "prev-mod.go"}}
		if diff := cmp.Diff(want, p.FileOps); diff != "" {
			t.Errorf("fileOps (-want +got):\n%s", diff)
		}
		if got := p.ModifiedFiles(); !slices.Equal(got, []string{"e.go", "prev-mod.go", "w.go"}) {
			t.Errorf("modifiedFiles = %q", got)
		}
	})
	t.Run("a hook's compaction breaks the chain", func(t *testing.T) {
		b := newBuilder(t).parse("u0:40 a1:40")
		b.compaction("C1", "u0", "s", `{"readFiles":["prev-read.go"],"modifiedFiles":["prev-mod.go"]}`, true)
		b.parse("u2:40 a3:40 u4:40 a5:400")
		p := mustPrepare(t, b.path, keep(100))
		if len(p.FileOps.Read)+len(p.FileOps.Edited)+len(p.FileOps.Written) != 0 {
			t.Errorf("fileOps = %+v, want none", p.FileOps)
		}
	})
	t.Run("branch summary details and nested calls", func(t *testing.T) {
		b := newBuilder(t).parse("u0:40")
		b.add("s1", &session.BranchSummaryEntry{FromID: "x", Summary: "branch", Details: []byte(`{"readFiles":["b-read.go"],"modifiedFiles":["b-mod.go"]}`)})
		b.assistant("a2", []llm.Content{call("c1", "script", `{"code":"..."}`), call("c2", "script", `{"code":"..."}`)}, llm.Usage{})
		// pi 1.6's record is the result's own nestedCalls; details are the
		// tool's and say nothing about files.
		b.add("r3", &session.MessageEntry{Message: &llm.ToolResultMessage{ToolCallID: "c1", ToolName: "script",
			Content: []llm.Content{llm.Text{Text: "r3"}},
			NestedCalls: []byte(`{"calls":[{"id":"n1","name":"edit","status":"ok","arguments":{"path":"nested.go"}},` +
				`{"name":"read","arguments":{"path":7}},{"name":"read","argumentsBytes":90000,"status":"ok"},{"name":"write","arguments":{"path":""}},"junk",null],"complete":false}`),
			Details: []byte(`{"nestedCalls":[{"name":"edit","arguments":{"path":"details.go"}}]}`)}})
		b.add("r4", &session.MessageEntry{Message: &llm.ToolResultMessage{ToolCallID: "c2", ToolName: "script",
			Content: []llm.Content{llm.Text{Text: "r4"}}, NestedCalls: []byte(`{"calls":{"name":"read"}}`)}})
		b.parse("u5:40 a6:400")
		p := mustPrepare(t, b.path, keep(100))
		want := FileOps{Read: []string{"b-read.go"}, Written: []string{}, Edited: []string{"b-mod.go", "nested.go"}}
		if diff := cmp.Diff(want, p.FileOps); diff != "" {
			t.Errorf("fileOps (-want +got):\n%s", diff)
		}
	})
}

// TestPrepareEmptyBranchSummaryFiles: a branch summary whose summary is
// empty (a hook's empty summary, an empty model answer) is not in the
// context, but the files its details list were really read and changed on
// that branch: the compaction's cumulative lists keep them, as they keep a
// non-empty summary's (issue 21 item 15, with fix #20).
func TestPrepareEmptyBranchSummaryFiles(t *testing.T) {
	for _, summary := range []string{"", "branch"} {
		b := newBuilder(t).parse("u0:40")
		b.add("s1", &session.BranchSummaryEntry{FromID: "x", Summary: summary, Details: []byte(`{"readFiles":["b-read.go"],"modifiedFiles":["b-mod.go"]}`)})
		b.parse("u2:40 a3:40 u4:40 a5:400")
		p := mustPrepare(t, b.path, keep(100))
		want := FileOps{Read: []string{"b-read.go"}, Written: []string{}, Edited: []string{"b-mod.go"}}
		if diff := cmp.Diff(want, p.FileOps); diff != "" {
			t.Errorf("summary %q: fileOps (-want +got):\n%s", summary, diff)
		}
	}
}

// TestPrepareOlderCompactionInKeptRange: a compaction inside the latest
// one's kept range is not in the projection (the model never sees it).
func TestPrepareOlderCompactionInKeptRange(t *testing.T) {
	b := newBuilder(t).parse("u1:40 a1:40 C1(keep u1) u2:40 a2:40")
	b.compaction("C2", "u1", "summary C2", "", false)
	b.parse("u3:40 a3:400")
	p := mustPrepare(t, b.path, keep(110))
	if got := ids(t, p.MessagesToSummarize); !slices.Equal(got, []string{"u1", "a1", "u2", "a2"}) {
		t.Errorf("messagesToSummarize = %v", got)
	}
	if p.PreviousSummary != "summary C2" {
		t.Errorf("previousSummary = %q", p.PreviousSummary)
	}
}

// TestPrepareDoesNotChangeEntries: preparing reads entries and never
// changes their bytes.
func TestPrepareDoesNotChangeEntries(t *testing.T) {
	b := newBuilder(t).parse("u0:40 a1:40!edit=a.go r2:40 u3:40 a4:400")
	before := make([]string, len(b.path))
	for i, e := range b.path {
		before[i] = string(sessiontest.Line(t, e))
	}
	mustPrepare(t, b.path, keep(50))
	for i, e := range b.path {
		if string(sessiontest.Line(t, e)) != before[i] {
			t.Errorf("entry %s changed", e.ID)
		}
	}
}

func TestSettingsValidate(t *testing.T) {
	if _, err := Prepare(nil, Settings{KeepRecentTokens: -1}); err == nil || !strings.Contains(err.Error(), "keepRecentTokens") {
		t.Errorf("negative keepRecentTokens: %v", err)
	}
	if err := (Settings{ReserveTokens: -5}).Validate(); err == nil {
		t.Error("negative reserveTokens accepted")
	}
	if err := DefaultSettings().Validate(); err != nil {
		t.Error(err)
	}
}

func TestPrepareMissingID(t *testing.T) {
	b := newBuilder(t).parse("u0:40 a1:40")
	prefix := b.path
	line, err := session.EncodeEntry("", "a1", "2025-12-03T15:00:00.000Z", &session.MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: "u2"}}}})
	if err != nil {
		t.Fatal(err)
	}
	noID, err := session.NewEntry(line)
	if err != nil {
		t.Fatal(err)
	}
	last := newBuilder(t).parse("a3:400").path[0]
	path := append(slices.Clone(prefix), noID, last)
	_, err = Prepare(path, keep(101))
	if err == nil || !strings.Contains(err.Error(), "no id") {
		t.Errorf("err = %v, want a missing-id error", err)
	}
}

// projectPath is project of the context of path.
func projectPath(path []*session.Entry) (*projection, error) {
	ctx, err := session.BuildContext(path)
	if err != nil {
		return nil, err
	}
	return project(ctx)
}
