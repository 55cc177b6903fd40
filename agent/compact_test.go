package agent_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/hook"
	"github.com/prime-agent/prime/internal/pifixtures"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/llm/registry"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
)

// genFile writes a generated session to a temporary file: 1,500 entries
// with compactions and branches (a 40,000-token window).
func genFile(t *testing.T, seed uint64) (string, []byte) {
	t.Helper()
	data := sessiongen.Bytes(sessiongen.Options{Entries: 1500, Seed: seed, ContextWindow: 40_000, KeepRecentTokens: 6_000, ReserveTokens: 4_000})
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, data
}

// compactOffline loads the session in path with cfg and compacts it by
// code. The agent is closed when the test ends.
func compactOffline(t *testing.T, path string, cfg agent.Config) (*agent.Agent, *agent.CompactionResult) {
	t.Helper()
	ag, err := agent.Load(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ag.Close() })
	res, err := ag.Compact(t.Context(), agent.CompactRequest{Summarizer: agent.SummarizerChoice{Offline: true}})
	if err != nil {
		t.Fatal(err)
	}
	return ag, res
}

// genFileOf writes the session o generates to a temporary file.
func genFileOf(t *testing.T, o sessiongen.Options) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, sessiongen.Bytes(o), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkCompacted checks the file after one compaction: the old bytes are
// untouched, one compaction entry was appended as a child of the old leaf,
// and the file loads with the summary first in the context.
func checkCompacted(t *testing.T, path string, before []byte, res *agent.CompactionResult) *session.Session {
	t.Helper()
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(after, before) || bytes.Count(after[len(before):], []byte("\n")) != 1 {
		t.Fatalf("the file was not changed by exactly one appended line")
	}
	s, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	old, err := session.Parse("before", before)
	if err != nil {
		t.Fatal(err)
	}
	leaf := s.Leaf()
	if leaf.Type != session.TypeCompaction || leaf.ID != res.Entry.ID || leaf.ParentID != old.LeafID() {
		t.Fatalf("last entry %s %s (parent %s), want the compaction below %s", leaf.Type, leaf.ID, leaf.ParentID, old.LeafID())
	}
	p, err := leaf.Payload()
	if err != nil {
		t.Fatal(err)
	}
	ce := p.(*session.CompactionEntry)
	if ce.Summary != res.Compaction.Summary || ce.Summary == "" || ce.TokensBefore != res.TokensBefore || ce.TokensBefore <= 0 ||
		ce.FirstKeptEntryID == "" || s.Entry(ce.FirstKeptEntryID) == nil || ce.FromHook {
		t.Errorf("stored compaction %+v", ce)
	}
	c, err := s.Context("")
	if err != nil {
		t.Fatal(err)
	}
	msgs := c.Messages
	if ce.SystemMessage != nil {
		if msgs[0].Role() != session.RoleSystem {
			t.Fatalf("context starts with %T, want the compaction's system state", msgs[0])
		}
		msgs = msgs[1:]
	}
	first, ok := msgs[0].(*session.CompactionSummaryMessage)
	if !ok || first.Summary != ce.Summary {
		t.Fatalf("context starts with %T, want the new summary", msgs[0])
	}
	if res.TokensAfter <= 0 || res.TokensAfter != estimate(c.Messages) || res.TokensAfter != c.EstimateNext().Tokens {
		t.Errorf("tokens %d → %d", res.TokensBefore, res.TokensAfter)
	}
	return s
}

// TestCompactAgainstFakes compacts a generated session with a model served
// over each vendor's wire format: the session's own model (Anthropic, its
// built-in provider pointed at the fake by models.json), and models named
// in the request (OpenAI-compatible servers).
func TestCompactAgainstFakes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		server func(t *testing.T) *llmtest.Server
		// sessionModel makes the summarizer the session's own model.
		sessionModel bool
	}{
		{"anthropic-session-model", func(t *testing.T) *llmtest.Server { return llmtest.NewAnthropic(t) }, true},
		{"openai", func(t *testing.T) *llmtest.Server { return llmtest.NewOpenAI(t) }, false},
		{"ollama", func(t *testing.T) *llmtest.Server { return llmtest.NewOpenAI(t, llmtest.FlavorOllama) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := tc.server(t)
			srv.Handle(echo)
			path, before := genFile(t, 7)
			if tc.sessionModel {
				// Make the session's model the fake's: a model change at the end.
				s, err := session.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				m := srv.Model()
				if _, err := s.Append(&session.ModelChangeEntry{Provider: m.Provider, ModelID: m.ID}); err != nil {
					t.Fatal(err)
				}
				s.Close()
				before, _ = os.ReadFile(path)
			}
			var ev events
			ag, err := agent.Load(path, config(agentDir(t, srv), testSettings(t, "compaction.keepRecentTokens", "4000"), &ev))
			if err != nil {
				t.Fatal(err)
			}
			defer ag.Close()
			req := agent.CompactRequest{Instructions: "  keep the parser notes  "}
			if !tc.sessionModel {
				req.Summarizer.Model = srv.Model().Provider + "/" + srv.Model().ID
			}
			res, err := ag.Compact(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			want := agent.SourceRequest
			if tc.sessionModel {
				want = agent.SourceSession
			}
			if res.Plan.Summarizer.Source != want || res.Compaction.Deterministic {
				t.Errorf("summarizer %+v, deterministic %v (%s)", res.Plan.Summarizer, res.Compaction.Deterministic, res.Compaction.FallbackReason)
			}
			s := checkCompacted(t, path, before, res)
			p, _ := s.Leaf().Payload()
			ce := p.(*session.CompactionEntry)
			if ce.CustomInstructions != "keep the parser notes" || ce.Usage == nil || ce.Usage.Output == 0 {
				t.Errorf("instructions %q, usage %+v", ce.CustomInstructions, ce.Usage)
			}
			if !strings.Contains(ce.Summary, "Summarized by the fake model.") || !strings.Contains(ce.Summary, "keep the parser notes") {
				t.Errorf("summary %q", ce.Summary)
			}
			reqs := summaryRequests(srv)
			if len(reqs) == 0 || len(reqs) != len(srv.Requests()) {
				t.Fatalf("%d summary requests of %d", len(reqs), len(srv.Requests()))
			}
			// The output limit is 80 % of reserveTokens (Anthropic adds the
			// thinking budget of the session's level on top).
			r := reqs[0]
			if r.Model() != srv.Model().ID || !strings.Contains(r.System(), "checkpoint summaries") ||
				!strings.Contains(r.LastUserText(), "[User]: ") || r.MaxTokens() < 13107 || (srv.API() == llm.APIOpenAICompletions && r.MaxTokens() != 13107) || len(r.ToolNames()) != 0 {
				t.Errorf("request: model %q, max tokens %d, tools %v, system %q", r.Model(), r.MaxTokens(), r.ToolNames(), r.System())
			}
			if k := ev.kinds(); !strings.HasPrefix(k, "start planned request text") || !strings.HasSuffix(k, "end") {
				t.Errorf("events %s", k)
			}
		})
	}
}

// TestCompactOffline builds the summary by code: no model is asked, the
// details say so, and the next compaction would rewrite it.
func TestCompactOffline(t *testing.T) {
	path, before := genFile(t, 8)
	var ev events
	ag, res := compactOffline(t, path, config(t.TempDir(), testSettings(t, "compaction.keepRecentTokens", "4000"), &ev))
	checkCompacted(t, path, before, res)
	d, ok := compaction.ParseDetails(res.Compaction.Details)
	if !ok || d.Summarizer != compaction.SummarizerDeterministic || !strings.Contains(d.DeterministicReason, "offline") || res.Compaction.Usage != nil {
		t.Errorf("details %+v, usage %v", d, res.Compaction.Usage)
	}
	if k := ev.kinds(); k != "start planned fallback end" {
		t.Errorf("events %q", k)
	}
	// A second compaction right away has nothing to do.
	_, err := ag.Compact(t.Context(), agent.CompactRequest{Summarizer: agent.SummarizerChoice{Offline: true}})
	if !errors.Is(err, compaction.ErrAlreadyCompacted) {
		t.Errorf("second compaction: %v", err)
	}
}

// TestCompactOverflowEverywhere: a provider that answers "context overflow"
// to every request still ends in a compaction, built by code and marked.
func TestCompactOverflowEverywhere(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.FlavorVLLM)
	srv.Handle(func(*llmtest.Request) llmtest.Reply { return llmtest.Overflow() })
	path, before := genFile(t, 9)
	var ev events
	ag, err := agent.Load(path, config(agentDir(t, srv), testSettings(t, "compaction.keepRecentTokens", "4000"), &ev))
	if err != nil {
		t.Fatal(err)
	}
	defer ag.Close()
	res, err := ag.Compact(t.Context(), agent.CompactRequest{Summarizer: agent.SummarizerChoice{Model: "vllm/gpt-test"}})
	if err != nil {
		t.Fatal(err)
	}
	checkCompacted(t, path, before, res)
	d, _ := compaction.ParseDetails(res.Compaction.Details)
	if !res.Compaction.Deterministic || d.Summarizer != compaction.SummarizerDeterministic || !errors.Is(res.Compaction.ModelError, llm.ErrContextOverflow) {
		t.Errorf("deterministic %v, details %+v, model error %v", res.Compaction.Deterministic, d, res.Compaction.ModelError)
	}
	if n := len(srv.Requests()); n != 1+compaction.MaxOverflowRetries {
		t.Errorf("%d requests, want the first and %d smaller ones", n, compaction.MaxOverflowRetries)
	}
	if k := ev.kinds(); k != "start planned request overflowRetry request overflowRetry request fallback end" {
		t.Errorf("events %q", k)
	}
}

// TestCompactCancelled: a provider that never answers, then Ctrl-C
// (the context cancelled): nothing is written, the file is byte-identical,
// and the error says so.
func TestCompactCancelled(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	asked := llmtest.Hold(srv, "never sent")
	path, before := genFile(t, 10)
	var ev events
	ag, err := agent.Load(path, config(agentDir(t, srv), testSettings(t, "compaction.keepRecentTokens", "4000"), &ev))
	if err != nil {
		t.Fatal(err)
	}
	defer ag.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go cancelWhen(ctx, asked, cancel)
	res, err := ag.Compact(ctx, agent.CompactRequest{Summarizer: agent.SummarizerChoice{Model: "anthropic/claude-test"}})
	var ce *agent.CancelledError
	if res != nil || !errors.As(err, &ce) || !errors.Is(err, agent.ErrCancelled) || !errors.Is(err, context.Canceled) ||
		err.Error() != "compaction cancelled, nothing written" {
		t.Fatalf("got %v, %v", res, err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Fatal("a cancelled compaction changed the file")
	}
	if aborted, op := lastEnd(t, ev.all()); !aborted || op != agent.OpCompaction {
		t.Errorf("last event: aborted %v, %s", aborted, op)
	}
	if ag.Session().LeafID() != mustParse(t, before).LeafID() {
		t.Error("the leaf moved")
	}
}

// estimate is the size of messages by chars/4.
func estimate(msgs []session.Message) int {
	n := 0
	for _, m := range msgs {
		n += session.EstimateTokens(m)
	}
	return n
}

func mustParse(t *testing.T, data []byte) *session.Session {
	t.Helper()
	s, err := session.Parse("s", data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCompactModelErrors: the summarizer cannot be used. Nothing is written
// and the error says which model and why; a dry run still plans.
func TestCompactModelErrors(t *testing.T) {
	path, before := genFile(t, 11)
	for _, tc := range []struct {
		name   string
		st     []string
		choice agent.SummarizerChoice
		want   error
		text   string
	}{
		{"no key", nil, agent.SummarizerChoice{}, registry.ErrNoKey, "(the session's model): no API key: set "},
		{"unknown model", nil, agent.SummarizerChoice{Model: "nobody/nothing"}, registry.ErrUnknownModel, "summarizer nobody/nothing: not a model Prime knows"},
		{"unknown settings model", []string{"compaction.model", "acme/m1"}, agent.SummarizerChoice{}, registry.ErrUnknownModel, "(compaction.model)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ag, err := agent.Load(path, config(t.TempDir(), testSettings(t, append(tc.st, "compaction.keepRecentTokens", "4000")...), nil))
			if err != nil {
				t.Fatal(err)
			}
			plan, err := ag.PlanCompaction(t.Context(), agent.CompactRequest{Summarizer: tc.choice})
			if err != nil || plan.Preparation == nil || !errors.Is(plan.Summarizer.Err, tc.want) {
				t.Fatalf("plan: %v, summarizer %+v", err, plan.Summarizer)
			}
			_, err = ag.RunCompaction(t.Context(), plan)
			var me *agent.ModelError
			if !errors.As(err, &me) || !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Errorf("run: %v", err)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
				t.Error("the file changed")
			}
		})
	}
	// A session that names no model, and no compaction.model.
	s, _ := session.Create("", session.Options{})
	s.Append(&session.MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: strings.Repeat("x", 400)}}}})
	s.Append(&session.MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: "y"}}}})
	ag := agent.New(s, config(t.TempDir(), testSettings(t, "compaction.keepRecentTokens", "1"), nil))
	if _, err := ag.Compact(t.Context(), agent.CompactRequest{}); !errors.Is(err, agent.ErrNoModel) {
		t.Errorf("no model: %v", err)
	}
}

// TestCompactLeafAndSettings: --leaf compacts an earlier point (the entry
// becomes a child of that leaf, a new branch); settings and per-model
// overrides reach the preparation; an unknown leaf is ErrNotFound.
func TestCompactLeafAndSettings(t *testing.T) {
	path, before := genFile(t, 12)
	old := mustParse(t, before)
	leaf := old.LeafPath()[len(old.LeafPath())-40].ID
	st := testSettings(t, "compaction.keepRecentTokens", "2000")
	ag, err := agent.Load(path, config(t.TempDir(), st, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer ag.Close()
	if _, err := ag.PlanCompaction(t.Context(), agent.CompactRequest{LeafID: "nope"}); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("unknown leaf: %v", err)
	}
	res, err := ag.Compact(t.Context(), agent.CompactRequest{LeafID: leaf, Summarizer: agent.SummarizerChoice{Offline: true, ContextWindow: 50_000}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Entry.ParentID != leaf || res.Plan.Preparation.Settings.KeepRecentTokens != 2000 ||
		res.Plan.ContextWindow != 50_000 || res.Plan.Threshold != 50_000-compaction.DefaultReserveTokens {
		t.Errorf("parent %s, settings %+v, window %d, threshold %d", res.Entry.ParentID, res.Plan.Preparation.Settings, res.Plan.ContextWindow, res.Plan.Threshold)
	}
	s, _ := session.Load(path)
	if s.LeafID() != res.Entry.ID || len(s.Children(leaf)) != 2 {
		t.Errorf("leaf %s, %d children of %s", s.LeafID(), len(s.Children(leaf)), leaf)
	}
}

// TestCompactMigratesOldFile: pi's version-1 file is compacted; the write
// migrates it (backup kept) and the compaction lands below the leaf the
// plan saw, whose id the migration keeps.
func TestCompactMigratesOldFile(t *testing.T) {
	data, err := os.ReadFile(pifixtures.Path(t, pifixtures.LargeSession))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "old.jsonl")
	os.WriteFile(path, data, 0o600)
	// Open leaves an old file alone until something is written.
	ag, err := agent.Open(path, config(t.TempDir(), testSettings(t), nil))
	if err != nil {
		t.Fatal(err)
	}
	defer ag.Close()
	if ag.Session().FileVersion() != 1 {
		t.Skipf("fixture is version %d", ag.Session().FileVersion())
	}
	plan, err := ag.PlanCompaction(t.Context(), agent.CompactRequest{Summarizer: agent.SummarizerChoice{Offline: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".bak"); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the file was migrated before anything was written")
	}
	res, err := ag.RunCompaction(t.Context(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Migrated || res.Entry.ParentID != plan.LeafID {
		t.Errorf("migrated %v, parent %s, want %s", res.Migrated, res.Entry.ParentID, plan.LeafID)
	}
	if bak, _ := os.ReadFile(path + ".bak"); !bytes.Equal(bak, data) {
		t.Error("no backup of the original")
	}
	s, err := session.Load(path)
	if err != nil || s.FileVersion() != session.CurrentVersion || s.LeafID() != res.Entry.ID {
		t.Fatalf("reloaded: %v, version %d, leaf %s", err, s.FileVersion(), s.LeafID())
	}
}

// TestCompactStoresSystemState: a compaction entry carries the system state
// in force at its leaf (pi 1.6's systemMessage: the replay of the system
// message and its patch, stamped with the entry's time), whether the
// summarizer or a hook wrote the summary; the context after it starts with
// that state.
func TestCompactStoresSystemState(t *testing.T) {
	decl := session.ToolDeclaration{Name: "read", Description: "Read a file.", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
	write := func(t *testing.T) string {
		path := filepath.Join(t.TempDir(), "s.jsonl")
		s, err := session.Create(path, session.Options{CWD: "/tmp"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		msgs := []session.Message{
			&session.SystemMessage{Sections: []session.SystemSection{{Name: "preamble", Text: "You are Prime."}, {Name: "cwd", Text: "/tmp"}},
				ToolsAdded: []session.ToolDeclaration{decl}, Timestamp: 1},
		}
		for i := range 6 {
			msgs = append(msgs, userMessage(strings.Repeat("question ", 40)+string(rune('a'+i))),
				&llm.AssistantMessage{Content: []llm.Content{llm.Text{Text: strings.Repeat("answer ", 40)}}, Provider: "anthropic",
					Model: "claude-sonnet-4-5", StopReason: llm.StopReasonStop, Usage: llm.Usage{Input: 500, Output: 80, TotalTokens: 580}, Timestamp: 2})
			if i == 3 {
				msgs = append(msgs, &session.SystemMessage{Sections: []session.SystemSection{{Name: "cwd", Text: "/tmp/sub"}}, Timestamp: 3})
			}
		}
		for _, m := range msgs {
			if _, err := s.Append(&session.MessageEntry{Message: m}); err != nil {
				t.Fatal(err)
			}
		}
		return path
	}
	check := func(t *testing.T, path string, res *agent.CompactionResult) {
		t.Helper()
		s, err := session.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Leaf().Payload()
		if err != nil {
			t.Fatal(err)
		}
		sys := p.(*session.CompactionEntry).SystemMessage
		if sys == nil || sys.Prompt() != "You are Prime.\n\n/tmp/sub" || len(sys.ToolsAdded) != 1 || sys.ToolsAdded[0].Name != "read" ||
			sys.Timestamp != s.Leaf().Millis() {
			t.Fatalf("stored system state %+v (entry at %d)", sys, s.Leaf().Millis())
		}
		c, err := s.Context("")
		if err != nil {
			t.Fatal(err)
		}
		if c.Messages[0].Role() != session.RoleSystem || c.Messages[1].Role() != session.RoleCompactionSummary || c.System().Prompt() != sys.Prompt() {
			t.Errorf("context starts %s, %s", c.Messages[0].Role(), c.Messages[1].Role())
		}
		if res.TokensAfter != c.EstimateNext().Tokens {
			t.Errorf("tokens after %d, the next estimate %d", res.TokensAfter, c.EstimateNext().Tokens)
		}
	}
	cfg := func(t *testing.T) agent.Config {
		return config(t.TempDir(), testSettings(t, "compaction.keepRecentTokens", "200"), nil)
	}
	t.Run("summarizer", func(t *testing.T) {
		path := write(t)
		_, res := compactOffline(t, path, cfg(t))
		check(t, path, res)
	})
	t.Run("hook", func(t *testing.T) {
		path := write(t)
		custom := &hook.Hooks{Name: "custom", BeforeCompact: func(_ context.Context, e *hook.BeforeCompactEvent) (*hook.BeforeCompactResult, error) {
			return &hook.BeforeCompactResult{Compaction: &hook.CustomCompaction{
				Summary: "the hook's summary", FirstKeptEntryID: e.Preparation.FirstKeptEntryID, TokensBefore: 999,
			}}, nil
		}}
		ag, err := agent.Load(path, withHooks(cfg(t), custom))
		if err != nil {
			t.Fatal(err)
		}
		defer ag.Close()
		res, err := ag.Compact(t.Context(), agent.CompactRequest{Summarizer: agent.SummarizerChoice{Offline: true}})
		if err != nil || !res.FromHook {
			t.Fatalf("%v, from hook %v", err, res != nil && res.FromHook)
		}
		check(t, path, res)
	})
}
