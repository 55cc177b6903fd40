package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/hook"
	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
)

// transcriptSession copies testdata/transcript.jsonl (a coding session with
// reasoning, an image, tool calls with an error, a user's shell command and
// two turns, the leaf a6) into a temporary file and opens it.
func transcriptSession(t *testing.T) *session.Session {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestTranscriptInEventsIsTheRequest is the golden test of the exported
// serialization: for the same session, the text compaction.Transcript makes
// of session.ToLLM of the preparation, the text session_before_compact and
// session_before_tree carry, and the transcript inside the summary requests
// the fake server received are one and the same, byte for byte: the history
// and the split turn's prefix of a compaction, and the branch left by a move
// with a summary. Reasoning is kept for an OpenAI-compatible summarizer and
// left out for a Claude one.
func TestTranscriptInEventsIsTheRequest(t *testing.T) {
	for _, api := range []string{"openai", "anthropic"} {
		t.Run(api, func(t *testing.T) {
			srv := llmtest.NewOpenAI(t)
			if api == "anthropic" {
				srv = llmtest.NewAnthropic(t)
			}
			srv.Handle(echo)
			model := srv.Model()
			opts := compaction.TranscriptOptionsFor(model)
			if opts.Reasoning != (api == "openai") {
				t.Fatalf("options %+v for %s", opts, api)
			}
			var got seen
			observe := &hook.Hooks{
				Name: "observe",
				BeforeCompact: func(_ context.Context, e *hook.BeforeCompactEvent) (*hook.BeforeCompactResult, error) {
					got.add("compact", e)
					return nil, nil
				},
				BeforeTree: func(_ context.Context, e *hook.BeforeTreeEvent) (*hook.BeforeTreeResult, error) {
					got.add("tree", e)
					return nil, nil
				},
			}
			s := transcriptSession(t)
			ag := agent.New(s, withHooks(config(agentDir(t, srv), testSettings(t, "compaction.keepRecentTokens", "1"), nil), observe))
			choice := agent.SummarizerChoice{Model: model.Provider + "/" + model.ID}

			res, err := ag.Compact(t.Context(), agent.CompactRequest{Summarizer: choice})
			if err != nil {
				t.Fatal(err)
			}
			prep := res.Plan.Preparation
			if !prep.IsSplitTurn || len(prep.MessagesToSummarize) == 0 || len(prep.TurnPrefixMessages) == 0 {
				t.Fatalf("the test needs a split turn with history: %+v", prep)
			}
			reqs := summaryRequests(srv)
			if len(reqs) != 2 {
				t.Fatalf("%d summary requests, want the history's and the turn prefix's", len(reqs))
			}
			ev := last[*hook.BeforeCompactEvent](&got)
			if ev == nil || ev.Transcript == nil || ev.Transcript.Options != opts {
				t.Fatalf("session_before_compact carried %+v", ev)
			}
			history, prefix := llmtest.Conversation(t, reqs[0]), llmtest.Conversation(t, reqs[1])
			for _, c := range []struct{ what, got, want string }{
				{"Transcript(ToLLM(messagesToSummarize))", compaction.Transcript(session.ToLLM(prep.MessagesToSummarize), opts), history},
				{"Transcript(ToLLM(turnPrefixMessages))", compaction.Transcript(session.ToLLM(prep.TurnPrefixMessages), opts), prefix},
				{"the event's history", ev.Transcript.History, history},
				{"the event's turn prefix", ev.Transcript.TurnPrefix, prefix},
			} {
				if c.got != c.want {
					t.Errorf("%s:\n%s\n\nthe request holds:\n%s", c.what, c.got, c.want)
				}
			}
			golden.Check(t, "transcript-"+api+"-history.golden", history)
			golden.Check(t, "transcript-"+api+"-turn-prefix.golden", prefix)

			// A move back to a3 with a summary of what is left: r3 (its
			// call is not in the branch, so it is dropped) to the
			// compaction just written.
			if _, err := ag.Navigate(t.Context(), agent.NavigateRequest{TargetID: "a3", Summarize: true, Summarizer: choice}); err != nil {
				t.Fatal(err)
			}
			reqs = summaryRequests(srv)
			if len(reqs) != 3 {
				t.Fatalf("%d summary requests, want one more for the branch", len(reqs))
			}
			branch := llmtest.Conversation(t, reqs[2])
			tree := last[*hook.BeforeTreeEvent](&got)
			if tree == nil || tree.Transcript == nil || tree.Transcript.Options != opts || tree.Transcript.Branch != branch {
				t.Fatalf("session_before_tree carried %+v\n\nthe request holds:\n%s", tree, branch)
			}
			if strings.Contains(branch, "call_3") {
				t.Errorf("the orphaned result of call_3 is in the branch's text:\n%s", branch)
			}
			golden.Check(t, "transcript-"+api+"-branch.golden", branch)
		})
	}
}

// TestTranscriptWithoutAModel: when a hook writes the summary because no
// model can be used (offline), the events still carry the texts, projected
// as for an unknown model (reasoning kept), and no request is made.
func TestTranscriptWithoutAModel(t *testing.T) {
	var got seen
	write := &hook.Hooks{Name: "write", BeforeCompact: func(_ context.Context, e *hook.BeforeCompactEvent) (*hook.BeforeCompactResult, error) {
		got.add("compact", e)
		return &hook.BeforeCompactResult{Compaction: &hook.CustomCompaction{
			Summary: "from the hook", FirstKeptEntryID: e.Preparation.FirstKeptEntryID, TokensBefore: e.Preparation.TokensBefore,
		}}, nil
	}}
	s := transcriptSession(t)
	ag := agent.New(s, withHooks(config(t.TempDir(), testSettings(t, "compaction.keepRecentTokens", "1"), nil), write))
	res, err := ag.Compact(t.Context(), agent.CompactRequest{Summarizer: agent.SummarizerChoice{Offline: true}})
	if err != nil || !res.FromHook {
		t.Fatalf("%v %+v", err, res)
	}
	ev := last[*hook.BeforeCompactEvent](&got)
	want := hook.NewCompactTranscript(res.Plan.Preparation, compaction.TranscriptOptionsFor(llm.Model{}))
	if ev.Transcript == nil || *ev.Transcript != *want || !want.Options.Reasoning || !strings.Contains(want.TurnPrefix, "[Assistant reasoning]: A table test") {
		t.Errorf("the event carried %+v, want %+v", ev.Transcript, want)
	}
}
