package agent_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
)

// The scenarios of pi's agent-session-compaction.test.ts and the branch
// cases of agent-session-tree-navigation.test.ts, run against the fake servers with keepRecentTokens 1, as
// pi runs them against a live model.

// twoPrompts starts a session (a file, or memory when path is "") with two
// prompts answered by srv, and an agent for it whose summarizer is the
// session's model, served by srv.
func twoPrompts(t *testing.T, srv *llmtest.Server, path string, ev *events) (*agent.Agent, *session.Session) {
	t.Helper()
	s, err := session.Create(path, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	prompt(t, s, srv, "What is 2+2? Reply briefly.")
	prompt(t, s, srv, "And 3+3? Reply briefly.")
	return agent.New(s, config(agentDir(t, srv), testSettings(t, "compaction.keepRecentTokens", "1"), ev)), s
}

func TestPiCompactionScenarios(t *testing.T) {
	for _, api := range []string{"anthropic", "openai"} {
		t.Run(api, func(t *testing.T) {
			srv := llmtest.NewAnthropic(t)
			if api == "openai" {
				srv = llmtest.NewOpenAI(t)
			}
			srv.Handle(echo)

			// 49: two prompts, manual compaction: a summary, tokensBefore
			// above 0, the context starting with the summary.
			var ev events
			path := filepath.Join(t.TempDir(), "s.jsonl")
			ag, s := twoPrompts(t, srv, path, &ev)
			res, err := ag.Compact(t.Context(), agent.CompactRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Compaction.Summary == "" || res.TokensBefore <= 0 || res.Compaction.Deterministic {
				t.Errorf("49: summary %q, tokensBefore %d", res.Compaction.Summary, res.TokensBefore)
			}
			if _, ok := res.Context.Messages[0].(*session.CompactionSummaryMessage); !ok {
				t.Errorf("49: context starts with %T", res.Context.Messages[0])
			}

			// 50: after the compaction another prompt works, and the model
			// is sent the summary first.
			a := prompt(t, s, srv, "What was the first question?")
			if m, _ := a.Message(); !strings.HasPrefix(m.(*llm.AssistantMessage).Text(), "reply to: ") {
				t.Errorf("50: reply %v", m)
			}
			if first := srv.LastRequest().Messages()[0]; !strings.Contains(textOf(first), "Summarized by the fake model.") {
				t.Errorf("50: the next request starts with %v", first)
			}

			// 51: the persisted session has exactly one compaction, with a
			// summary, a firstKeptEntryId and tokensBefore.
			loaded, err := session.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if n := countType(loaded, session.TypeCompaction); n != 1 {
				t.Fatalf("51: %d compactions", n)
			}
			p, _ := loaded.Entry(res.Entry.ID).Payload()
			if c := p.(*session.CompactionEntry); c.Summary == "" || c.FirstKeptEntryID == "" || c.TokensBefore <= 0 {
				t.Errorf("51: %+v", c)
			}

			// 53: a manual compaction's events carry the manual reason, and
			// nothing announces an automatic one.
			for _, e := range ev.all() {
				var reason agent.Reason
				switch e := e.(type) {
				case agent.CompactionStart:
					reason = e.Reason
				case agent.CompactionEnd:
					reason = e.Reason
				default:
					continue
				}
				if reason != agent.ReasonManual {
					t.Errorf("53: %s event with reason %q", e.EventType(), reason)
				}
			}
			if k := ev.kinds(); !strings.HasPrefix(k, "start planned request text") || !strings.HasSuffix(k, "end") {
				t.Errorf("53: events %s", k)
			}

			// 52: an in-memory session compacts too; the entry is there.
			mem, ms := twoPrompts(t, srv, "", nil)
			res, err = mem.Compact(t.Context(), agent.CompactRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if ms.File() != "" || ms.Entry(res.Entry.ID) == nil || ms.LeafID() != res.Entry.ID {
				t.Errorf("52: the compaction is not in the in-memory session")
			}
		})
	}
}

// textOf is the text of a request message as the fake recorded it.
func textOf(m map[string]any) string {
	switch c := m["content"].(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, part := range c {
			if p, ok := part.(map[string]any); ok {
				if s, ok := p["text"].(string); ok {
					b.WriteString(s)
				}
			}
		}
		return b.String()
	}
	return ""
}

// tree is a session u1 a1 u2 a2 in a file, answered by srv.
type tree struct {
	path           string
	s              *session.Session
	ag             *agent.Agent
	u1, a1, u2, a2 *session.Entry
}

func newTree(t *testing.T, srv *llmtest.Server, ev *events) *tree {
	t.Helper()
	tr := &tree{path: filepath.Join(t.TempDir(), "tree.jsonl")}
	tr.ag, tr.s = twoPrompts(t, srv, tr.path, ev)
	es := tr.s.Entries()
	tr.u1, tr.a1, tr.u2, tr.a2 = es[0], es[1], es[2], es[3]
	return tr
}

func TestPiTreeNavigationScenarios(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	ctx := t.Context()
	summarize := func(target string) agent.NavigateRequest {
		return agent.NavigateRequest{TargetID: target, Summarize: true}
	}

	t.Run("60 root user message, no summary", func(t *testing.T) {
		tr := newTree(t, srv, nil)
		res, err := tr.ag.Navigate(ctx, agent.NavigateRequest{TargetID: tr.u1.ID})
		if err != nil {
			t.Fatal(err)
		}
		if res.EditorText != "What is 2+2? Reply briefly." || res.LeafID != "" || tr.ag.Session().LeafID() != "" || res.Written() {
			t.Errorf("editor %q, leaf %q", res.EditorText, res.LeafID)
		}
	})
	t.Run("61 assistant, no summary", func(t *testing.T) {
		tr := newTree(t, srv, nil)
		res, err := tr.ag.Navigate(ctx, agent.NavigateRequest{TargetID: tr.a1.ID})
		if err != nil {
			t.Fatal(err)
		}
		if res.EditorText != "" || res.LeafID != tr.a1.ID || tr.ag.Session().LeafID() != tr.a1.ID {
			t.Errorf("editor %q, leaf %q", res.EditorText, res.LeafID)
		}
	})
	t.Run("62 root user message with summary", func(t *testing.T) {
		tr := newTree(t, srv, nil)
		res, err := tr.ag.Navigate(ctx, summarize(tr.u1.ID))
		if err != nil {
			t.Fatal(err)
		}
		e := res.SummaryEntry
		if e == nil || e.ParentID != "" || res.LeafID != e.ID || tr.ag.Session().LeafID() != e.ID {
			t.Fatalf("summary entry %v, leaf %s", e, res.LeafID)
		}
		p, _ := e.Payload()
		bs := p.(*session.BranchSummaryEntry)
		if bs.Summary == "" || bs.FromID != tr.a2.ID || bs.Usage == nil {
			t.Errorf("branch summary %+v", bs)
		}
		// The move survives a reload: the summary is the last entry.
		if s, _ := session.Load(tr.path); s.LeafID() != e.ID {
			t.Errorf("reloaded leaf %s", s.LeafID())
		}
	})
	t.Run("63 second user message with summary", func(t *testing.T) {
		tr := newTree(t, srv, nil)
		res, err := tr.ag.Navigate(ctx, summarize(tr.u2.ID))
		if err != nil {
			t.Fatal(err)
		}
		if res.SummaryEntry == nil || res.SummaryEntry.ParentID != tr.a1.ID || res.EditorText != "And 3+3? Reply briefly." {
			t.Fatalf("summary %v, editor %q", res.SummaryEntry, res.EditorText)
		}
		if kids := tr.ag.Session().Children(tr.a1.ID); len(kids) != 2 || kids[0].ID != tr.u2.ID || kids[1].ID != res.SummaryEntry.ID {
			t.Errorf("children of a1: %v", kids)
		}
	})
	t.Run("64 first assistant with summary", func(t *testing.T) {
		tr := newTree(t, srv, nil)
		res, err := tr.ag.Navigate(ctx, summarize(tr.a1.ID))
		if err != nil {
			t.Fatal(err)
		}
		if res.SummaryEntry == nil || res.SummaryEntry.ParentID != tr.a1.ID || res.LeafID != res.SummaryEntry.ID || res.EditorText != "" {
			t.Errorf("summary %v, leaf %s", res.SummaryEntry, res.LeafID)
		}
	})
	t.Run("65 abort during summarization", func(t *testing.T) {
		slow := llmtest.NewAnthropic(t)
		slow.Handle(echo)
		var ev events
		tr := newTree(t, slow, &ev)
		asked := llmtest.Hold(slow, "late") // the summary's request
		n, leaf := tr.s.Len(), tr.s.LeafID()
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go cancelWhen(cctx, asked, cancel)
		res, err := tr.ag.Navigate(cctx, summarize(tr.u1.ID))
		if res != nil || !errors.Is(err, agent.ErrCancelled) || err.Error() != "branch summary cancelled, nothing written" {
			t.Fatalf("got %v, %v", res, err)
		}
		if tr.ag.Session().Len() != n || tr.ag.Session().LeafID() != leaf || countType(tr.ag.Session(), session.TypeBranchSummary) != 0 {
			t.Error("the session changed")
		}
		if aborted, op := lastEnd(t, ev.all()); !aborted || op != agent.OpBranchSummary {
			t.Errorf("last event: aborted %v, %s", aborted, op)
		}
	})
	t.Run("66 no summary writes nothing", func(t *testing.T) {
		tr := newTree(t, srv, nil)
		n := tr.s.Len()
		res, err := tr.ag.Navigate(ctx, agent.NavigateRequest{TargetID: tr.u2.ID})
		if err != nil {
			t.Fatal(err)
		}
		if res.Written() || tr.ag.Session().Len() != n || countType(tr.ag.Session(), session.TypeBranchSummary) != 0 {
			t.Errorf("entries %d → %d", n, tr.ag.Session().Len())
		}
	})
	t.Run("67 current leaf is a no-op", func(t *testing.T) {
		tr := newTree(t, srv, nil)
		n := tr.s.Len()
		res, err := tr.ag.Navigate(ctx, summarize(tr.a2.ID))
		if err != nil {
			t.Fatal(err)
		}
		if !res.Plan.AtTarget || res.Written() || res.LeafID != tr.a2.ID || tr.ag.Session().Len() != n {
			t.Errorf("%+v", res)
		}
	})
	t.Run("68 custom instructions reach the summary", func(t *testing.T) {
		tr := newTree(t, srv, nil)
		res, err := tr.ag.Navigate(ctx, agent.NavigateRequest{TargetID: tr.u1.ID, Summarize: true,
			Instructions: "Include the exact phrase MARKER-7731 in your summary."})
		if err != nil {
			t.Fatal(err)
		}
		if res.Summary == nil || !strings.Contains(res.Summary.Summary, "MARKER-7731") {
			t.Errorf("summary %v", res.Summary)
		}
	})
	t.Run("69 back from a new branch", func(t *testing.T) {
		tr := newTree(t, srv, nil)
		if _, err := tr.ag.Navigate(ctx, agent.NavigateRequest{TargetID: tr.a1.ID}); err != nil {
			t.Fatal(err)
		}
		a3 := prompt(t, tr.ag.Session(), srv, "Try another approach.")
		if a3.ParentID == tr.a2.ID {
			t.Fatal("the new prompt did not branch from a1")
		}
		before := len(summaryRequests(srv))
		res, err := tr.ag.Navigate(ctx, summarize(tr.u2.ID))
		if err != nil {
			t.Fatal(err)
		}
		if res.EditorText != "And 3+3? Reply briefly." || res.Summary == nil || res.Summary.Summary == "" || res.SummaryEntry.ParentID != tr.a1.ID {
			t.Fatalf("editor %q, summary %v", res.EditorText, res.Summary)
		}
		// The summary is of the branch left (u3, a3), not of u2's.
		reqs := summaryRequests(srv)[before:]
		if len(reqs) != 1 || !strings.Contains(reqs[0].LastUserText(), "Try another approach.") || strings.Contains(reqs[0].LastUserText(), "And 3+3?") {
			t.Errorf("summary request %v", reqs)
		}
		p, _ := res.SummaryEntry.Payload()
		if p.(*session.BranchSummaryEntry).FromID != a3.ID {
			t.Errorf("fromId %s, want %s", p.(*session.BranchSummaryEntry).FromID, a3.ID)
		}
	})
}

// TestNavigateOfflineAndEdges: a summary built by code; a branch with
// nothing to summarize; --from; unknown ids.
func TestNavigateOfflineAndEdges(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.Handle(echo)
	tr := newTree(t, srv, nil)
	ctx := t.Context()
	offline := agent.SummarizerChoice{Offline: true}

	// Forward to a descendant: nothing is left behind, nothing written.
	res, err := tr.ag.Navigate(ctx, agent.NavigateRequest{TargetID: tr.a2.ID, FromID: tr.a1.ID, Summarize: true, Summarizer: offline})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res.NotSummarized, compaction.ErrNothingToSummarize) || res.Written() || tr.s.LeafID() != tr.a2.ID {
		t.Errorf("not summarized %v, written %v, leaf %s", res.NotSummarized, res.Written(), tr.s.LeafID())
	}
	for _, req := range []agent.NavigateRequest{{TargetID: "nope"}, {TargetID: tr.a1.ID, FromID: "nope"}} {
		if _, err := tr.ag.Navigate(ctx, req); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("%+v: %v", req, err)
		}
	}

	res, err = tr.ag.Navigate(ctx, agent.NavigateRequest{TargetID: tr.u2.ID, Summarize: true, Summarizer: offline})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := compaction.ParseDetails(res.Summary.Details)
	if !res.Summary.Deterministic || d.Summarizer != compaction.SummarizerDeterministic || res.SummaryEntry.ParentID != tr.a1.ID {
		t.Errorf("offline summary: deterministic %v, details %+v", res.Summary.Deterministic, d)
	}
	plan := res.Plan
	// u2 is on the path left: it is the common ancestor, a2 the branch.
	if plan.Branch.CommonAncestorID != tr.u2.ID || plan.Preparation.EntriesCollected != 1 || len(plan.Preparation.Messages) != 1 ||
		plan.Budget != plan.ContextWindow-compaction.DefaultBranchSummaryReserveTokens {
		t.Errorf("plan %+v", plan)
	}
}
