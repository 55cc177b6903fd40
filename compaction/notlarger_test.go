package compaction

import (
	"errors"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// TestWithinReplaced: a summary built by code is never larger than what it
// replaces; each step of the fallback, from the whole summary down to
// refusing, is taken where it must be.
func TestWithinReplaced(t *testing.T) {
	user := func(chars int) session.Message {
		return &llm.UserMessage{Content: []llm.Content{llm.Text{Text: strings.Repeat("x", chars)}}}
	}
	lists := FormatFileLists([]string{"a.go"}, []string{"b.go"})
	for _, tc := range []struct {
		name              string
		span              int // characters of the one message replaced
		previous, summary int // characters
		want              string
	}{
		{"fits with its lists", 4000, 0, 1000, "whole"},
		{"the previous summary counts", 400, 3000, 1000, "whole"},
		{"cut, the lists kept", 1200, 0, 3000, "cut with lists"},
		{"the lists dropped", 280, 0, 260, "without lists"},
		{"cut, the lists dropped", 300, 0, 3000, "cut alone"},
		{"nothing worth compacting", 100, 0, 600, "refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prep := &Preparation{MessagesToSummarize: []session.Message{user(tc.span)}, PreviousSummary: strings.Repeat("p", tc.previous)}
			summary := "## Goal\n" + strings.Repeat("s", tc.summary)
			got, gotLists, err := withinReplaced(summary, lists, prep, offlineReason)
			replaced := (tc.span+3)/4 + (tc.previous+3)/4
			outcome := "whole"
			switch {
			case errors.Is(err, ErrNothingToCompact):
				outcome = "refused"
				if !strings.Contains(err.Error(), offlineReason+", and a summary built by code would take") {
					t.Errorf("the refusal does not say why: %v", err)
				}
			case err != nil:
				t.Fatal(err)
			case got != summary && gotLists != "":
				outcome = "cut with lists"
			case got != summary:
				outcome = "cut alone"
			case gotLists == "":
				outcome = "without lists"
			}
			if outcome != tc.want {
				t.Fatalf("%s, want %s", outcome, tc.want)
			}
			if err == nil {
				if n := tokensOf(got + gotLists); n > replaced {
					t.Errorf("the summary takes %d tokens, more than the %d it replaces", n, replaced)
				}
				if got != summary && !strings.HasPrefix(got, "## Goal\n") {
					t.Errorf("the cut lost the summary's head: %.40q", got)
				}
			}
		})
	}
}

// TestOfflineCompactionNeverGrows: compacting a short conversation by code
// leaves a context no larger than before, or is refused as nothing to
// compact; it never makes the context bigger (a walk once saw 1,056 tokens
// become 1,169).
func TestOfflineCompactionNeverGrows(t *testing.T) {
	for _, spec := range []string{
		"u1:60 a1:80 u2:60 a2:80",
		"u1:400 a1:600 u2:200 a2:300",
		"u1:900 a1:1500 u2:300 a2:700",
		"u1:4000 a1:6000 u2:300 a2:700",
	} {
		t.Run(spec, func(t *testing.T) {
			b := newBuilder(t).parse(spec)
			prep := mustPrepare(t, b.path, keep(1))
			res, err := Compact(t.Context(), prep, Options{})
			if errors.Is(err, ErrNothingToCompact) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !res.Deterministic {
				t.Fatal("not built by code")
			}
			before := contextTokens(t, b.path)
			if after := contextTokens(t, appended(t, b.path, "c0mp4c7e", res.Entry())); after > before {
				t.Errorf("the context grew from %d to %d tokens:\n%s", before, after, res.Summary)
			}
		})
	}
}
