package agent_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/hook"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/llm/registry"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiontest"
	"github.com/prime-agent/prime/settings"
)

// seen records the events in-process hooks received, as "event" strings and
// the events themselves.
type seen struct {
	mu  sync.Mutex
	log []string
	evs []any
}

func (s *seen) add(name string, ev any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, name)
	s.evs = append(s.evs, ev)
}

func (s *seen) names() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.log, " ")
}

// last returns the last event of type E.
func last[E any](s *seen) E {
	s.mu.Lock()
	defer s.mu.Unlock()
	var zero E
	for i := len(s.evs) - 1; i >= 0; i-- {
		if e, ok := s.evs[i].(E); ok {
			return e
		}
	}
	return zero
}

// observer returns hooks that record the after-events.
func (s *seen) observer() *hook.Hooks {
	return &hook.Hooks{
		Name:          "observer",
		Compact:       func(_ context.Context, ev *hook.CompactEvent) error { s.add("compact", ev); return nil },
		CompactFailed: func(_ context.Context, ev *hook.CompactFailedEvent) error { s.add("failed", ev); return nil },
		Tree:          func(_ context.Context, ev *hook.TreeEvent) error { s.add("tree", ev); return nil },
	}
}

// withHooks returns cfg with in-process hooks.
func withHooks(cfg agent.Config, hs ...*hook.Hooks) agent.Config {
	cfg.Hooks = hook.New(nil, hook.Options{Hooks: hook.Compose(hs...)})
	return cfg
}

// userMessage is a stored user message with text.
func userMessage(text string) session.Message {
	return &llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}, Timestamp: 1}
}

// hookReports returns the reports the events carried.
func hookReports(ev *events) []hook.Report {
	var out []hook.Report
	for _, e := range ev.all() {
		if p, ok := e.(*agent.Progress); ok && p.Kind == agent.ProgressHookReport {
			out = append(out, *p.HookReport)
		}
	}
	return out
}

func TestCompactWithHooks(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	// newAgent starts two prompts in a file and returns an agent whose
	// summarizer is srv (or, with noModel, a model Prime cannot use).
	newAgent := func(t *testing.T, noModel bool, ev *events, hs ...*hook.Hooks) (*agent.Agent, string, []byte) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "s.jsonl")
		_, s := twoPrompts(t, srv, path, nil)
		dir := agentDir(t, srv)
		if noModel {
			dir = t.TempDir()
		}
		before, _ := os.ReadFile(path)
		return agent.New(s, withHooks(config(dir, testSettings(t, "compaction.keepRecentTokens", "1"), ev), hs...)), path, before
	}

	t.Run("transformed arrays reach the summarizer", func(t *testing.T) {
		var got seen
		var ev events
		redact := &hook.Hooks{Name: "redact", BeforeCompact: func(_ context.Context, e *hook.BeforeCompactEvent) (*hook.BeforeCompactResult, error) {
			got.add("before", e)
			return &hook.BeforeCompactResult{Preparation: &hook.PreparationChange{
				MessagesToSummarize: []session.Message{userMessage("REDACTED HISTORY")},
			}}, nil
		}}
		ag, _, _ := newAgent(t, false, &ev, redact, got.observer())
		n := len(summaryRequests(srv))
		res, err := ag.Compact(t.Context(), agent.CompactRequest{Instructions: " focus "})
		if err != nil {
			t.Fatal(err)
		}
		// The history request (the split turn's prefix has its own).
		var texts []string
		for _, r := range summaryRequests(srv)[n:] {
			texts = append(texts, r.LastUserText())
		}
		all := strings.Join(texts, "\n")
		if !strings.Contains(all, "REDACTED HISTORY") || strings.Contains(all, "What is 2+2?") {
			t.Fatalf("the summarizer did not get the hook's messages:\n%s", all)
		}
		if res.FromHook || !slices.Equal(res.TransformedBy, []string{"redact"}) || res.Compaction.Deterministic {
			t.Errorf("result: fromHook %v, transformed by %v", res.FromHook, res.TransformedBy)
		}
		// The before-event had the plan's preparation, path and
		// instructions; the after-event the entry exactly as written.
		before := last[*hook.BeforeCompactEvent](&got)
		if before.Preparation.FirstKeptEntryID != res.Plan.Preparation.FirstKeptEntryID || len(before.BranchEntries) != len(res.Plan.Path) ||
			before.CustomInstructions != "focus" || before.Reason != hook.ReasonManual || before.WillRetry {
			t.Errorf("before event %+v", before)
		}
		after := last[*hook.CompactEvent](&got)
		if got.names() != "before compact" || after.FromExtension || after.CompactionEntry.ID != res.Entry.ID ||
			!bytes.Equal(sessiontest.Line(t, after.CompactionEntry), sessiontest.Line(t, res.Entry)) {
			t.Errorf("events %s, after %+v", got.names(), after)
		}
		if k := ev.kinds(); !strings.HasPrefix(k, "start planned hooks request text") || !strings.HasSuffix(k, "hooks end") {
			t.Errorf("agent events %s", k)
		}
	})

	t.Run("a hook's compaction needs no model", func(t *testing.T) {
		var got seen
		custom := &hook.Hooks{Name: "custom", BeforeCompact: func(_ context.Context, e *hook.BeforeCompactEvent) (*hook.BeforeCompactResult, error) {
			return &hook.BeforeCompactResult{Compaction: &hook.CustomCompaction{
				Summary: "the hook's summary", FirstKeptEntryID: e.Preparation.FirstKeptEntryID, TokensBefore: 999, Details: []byte(`{"by":"custom"}`),
			}}, nil
		}}
		ag, path, before := newAgent(t, true, nil, custom, got.observer())
		n := len(srv.Requests())
		plan, err := ag.PlanCompaction(t.Context(), agent.CompactRequest{})
		if err != nil || plan.Summarizer.Err == nil {
			t.Fatalf("the summarizer should be unusable: %v %+v", err, plan.Summarizer)
		}
		res, err := ag.RunCompaction(t.Context(), plan)
		if err != nil {
			t.Fatal(err)
		}
		if len(srv.Requests()) != n {
			t.Error("a model was asked")
		}
		p, _ := res.Entry.Payload()
		c := p.(*session.CompactionEntry)
		if !res.FromHook || res.Hook != "custom" || !c.FromHook || c.Summary != "the hook's summary" || c.TokensBefore != 999 || res.TokensBefore != 999 ||
			string(c.Details) != `{"by":"custom"}` || res.Compaction.Summary != c.Summary {
			t.Errorf("result %+v, entry %+v", res, c)
		}
		if after := last[*hook.CompactEvent](&got); !after.FromExtension || after.CompactionEntry.ID != res.Entry.ID {
			t.Errorf("after event %+v", after)
		}
		after, _ := os.ReadFile(path)
		if !bytes.HasPrefix(after, before) || bytes.Count(after[len(before):], []byte("\n")) != 1 {
			t.Error("not exactly one line appended")
		}
	})

	t.Run("without a before-hook a model error fails at once", func(t *testing.T) {
		var got seen
		var ev events
		ag, path, before := newAgent(t, true, &ev, got.observer())
		_, err := ag.Compact(t.Context(), agent.CompactRequest{})
		var me *agent.ModelError
		if !errors.As(err, &me) || !errors.Is(err, registry.ErrUnknownModel) {
			t.Fatalf("err %v", err)
		}
		failed := last[*hook.CompactFailedEvent](&got)
		if got.names() != "failed" || failed.ErrorMessage != err.Error() || failed.Aborted || failed.FromExtension {
			t.Errorf("events %s: %+v", got.names(), failed)
		}
		if k := ev.kinds(); k != "start hooks end" {
			t.Errorf("agent events %q: want the failure right after the start", k)
		}
		unchangedFile(t, path, before)
	})

	t.Run("a before-hook without an answer leaves the model error", func(t *testing.T) {
		var got seen
		quiet := &hook.Hooks{Name: "quiet", BeforeCompact: func(context.Context, *hook.BeforeCompactEvent) (*hook.BeforeCompactResult, error) {
			got.add("before", nil)
			return nil, nil
		}}
		ag, path, before := newAgent(t, true, nil, quiet, got.observer())
		_, err := ag.Compact(t.Context(), agent.CompactRequest{})
		if !errors.Is(err, registry.ErrUnknownModel) || got.names() != "before failed" {
			t.Fatalf("err %v, events %s", err, got.names())
		}
		unchangedFile(t, path, before)
	})

	t.Run("cancel", func(t *testing.T) {
		var got seen
		var ev events
		no := &hook.Hooks{Name: "no", BeforeCompact: func(context.Context, *hook.BeforeCompactEvent) (*hook.BeforeCompactResult, error) {
			return &hook.BeforeCompactResult{Cancel: true}, nil
		}}
		ag, path, before := newAgent(t, false, &ev, no, got.observer())
		n := len(srv.Requests())
		res, err := ag.Compact(t.Context(), agent.CompactRequest{})
		var ce *agent.CancelledError
		if res != nil || !errors.As(err, &ce) || ce.Hook != "no" || !errors.Is(err, agent.ErrCancelled) || !errors.Is(err, agent.ErrHookCancelled) ||
			errors.Is(err, context.Canceled) || err.Error() != `compaction cancelled by hook "no", nothing written` {
			t.Fatalf("got %v, %v", res, err)
		}
		failed := last[*hook.CompactFailedEvent](&got)
		if got.names() != "failed" || !failed.Aborted || !failed.FromExtension || failed.ErrorMessage != err.Error() {
			t.Errorf("events %s: %+v", got.names(), failed)
		}
		if aborted, _ := lastEnd(t, ev.all()); !aborted || len(srv.Requests()) != n {
			t.Errorf("last event not aborted, or %d requests", len(srv.Requests()))
		}
		unchangedFile(t, path, before)
	})

	t.Run("a failing hook is reported and the compaction goes on", func(t *testing.T) {
		var ev events
		boom := &hook.Hooks{Name: "boom", BeforeCompact: func(context.Context, *hook.BeforeCompactEvent) (*hook.BeforeCompactResult, error) {
			return nil, errors.New("boom")
		}}
		ag, _, _ := newAgent(t, false, &ev, boom)
		res, err := ag.Compact(t.Context(), agent.CompactRequest{})
		if err != nil || res.FromHook || res.Compaction.Deterministic {
			t.Fatalf("%v %+v", err, res)
		}
		reps := hookReports(&ev)
		if len(reps) != 1 || reps[0].Kind != hook.Failed || reps[0].Handler != "boom" || reps[0].Event != hook.EventBeforeCompact {
			t.Errorf("reports %v", reps)
		}
	})

	t.Run("Ctrl-C while a hook runs", func(t *testing.T) {
		var got seen
		ctx, cancel := context.WithCancel(t.Context())
		hang := &hook.Hooks{Name: "hang", BeforeCompact: func(hctx context.Context, _ *hook.BeforeCompactEvent) (*hook.BeforeCompactResult, error) {
			cancel()
			<-hctx.Done()
			return nil, hctx.Err()
		}}
		ag, path, before := newAgent(t, false, nil, hang, got.observer())
		_, err := ag.Compact(ctx, agent.CompactRequest{})
		var ce *agent.CancelledError
		if !errors.As(err, &ce) || ce.Hook != "" || !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v", err)
		}
		// session_compact_failed still told, with aborted.
		if failed := last[*hook.CompactFailedEvent](&got); got.names() != "failed" || !failed.Aborted || failed.FromExtension {
			t.Errorf("events %s: %+v", got.names(), failed)
		}
		unchangedFile(t, path, before)
	})
}

func TestNavigateWithHooks(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	// newTreeWith is newTree with hooks (and, with noModel, a summarizer
	// Prime cannot use).
	newTreeWith := func(t *testing.T, noModel bool, hs ...*hook.Hooks) (*tree, []byte) {
		t.Helper()
		tr := newTree(t, srv, nil)
		dir := agentDir(t, srv)
		if noModel {
			dir = t.TempDir()
		}
		tr.ag = agent.New(tr.s, withHooks(config(dir, testSettings(t), nil), hs...))
		before, _ := os.ReadFile(tr.path)
		return tr, before
	}
	answer := func(name string, res *hook.BeforeTreeResult, got *seen) *hook.Hooks {
		return &hook.Hooks{Name: name, BeforeTree: func(_ context.Context, ev *hook.BeforeTreeEvent) (*hook.BeforeTreeResult, error) {
			got.add("before", ev)
			return res, nil
		}}
	}

	t.Run("178 cancel", func(t *testing.T) {
		var got seen
		tr, before := newTreeWith(t, false, answer("no", &hook.BeforeTreeResult{Cancel: true}, &got), got.observer())
		for _, summarize := range []bool{false, true} {
			res, err := tr.ag.Navigate(t.Context(), agent.NavigateRequest{TargetID: tr.a1.ID, Summarize: summarize})
			var ce *agent.CancelledError
			if res != nil || !errors.As(err, &ce) || ce.Hook != "no" || !errors.Is(err, agent.ErrHookCancelled) {
				t.Fatalf("summarize %v: %v, %v", summarize, res, err)
			}
			if tr.ag.Session().LeafID() != tr.a2.ID {
				t.Error("the leaf moved")
			}
		}
		if got.names() != "before before" {
			t.Errorf("events %s: no session_tree after a cancel", got.names())
		}
		unchangedFile(t, tr.path, before)
	})

	t.Run("fires without a summary; a hook's summary is then ignored", func(t *testing.T) {
		var got seen
		tr, before := newTreeWith(t, false, answer("sum", &hook.BeforeTreeResult{Summary: &hook.BranchSummary{Summary: "unwanted"}}, &got), got.observer())
		res, err := tr.ag.Navigate(t.Context(), agent.NavigateRequest{TargetID: tr.a1.ID})
		if err != nil || res.Written() || res.FromHook || res.Summary != nil || tr.ag.Session().LeafID() != tr.a1.ID {
			t.Fatalf("%v %+v", err, res)
		}
		ev := last[*hook.BeforeTreeEvent](&got)
		p := ev.Preparation
		if p.UserWantsSummary || p.TargetID != tr.a1.ID || p.OldLeafID != tr.a2.ID || p.CommonAncestorID != tr.a1.ID || len(p.EntriesToSummarize) != 2 {
			t.Errorf("preparation %+v", p)
		}
		if after := last[*hook.TreeEvent](&got); got.names() != "before tree" || after.NewLeafID != tr.a1.ID || after.OldLeafID != tr.a2.ID || after.SummaryEntry != nil {
			t.Errorf("events %s: %+v", got.names(), after)
		}
		unchangedFile(t, tr.path, before)
	})

	t.Run("a hook's summary needs no model", func(t *testing.T) {
		var got seen
		tr, _ := newTreeWith(t, true, answer("sum", &hook.BeforeTreeResult{Summary: &hook.BranchSummary{Summary: "from the hook", Details: []byte(`[1]`)}}, &got), got.observer())
		n := len(srv.Requests())
		res, err := tr.ag.Navigate(t.Context(), agent.NavigateRequest{TargetID: tr.u2.ID, Summarize: true})
		if err != nil {
			t.Fatal(err)
		}
		p, _ := res.SummaryEntry.Payload()
		b := p.(*session.BranchSummaryEntry)
		if !res.FromHook || res.Hook != "sum" || !b.FromHook || b.Summary != "from the hook" || string(b.Details) != "[1]" || b.FromID != tr.a2.ID ||
			res.SummaryEntry.ParentID != tr.a1.ID || len(srv.Requests()) != n {
			t.Errorf("result %+v, entry %+v", res, b)
		}
		if after := last[*hook.TreeEvent](&got); !after.FromExtension || after.SummaryEntry.ID != res.SummaryEntry.ID || after.NewLeafID != res.SummaryEntry.ID {
			t.Errorf("after %+v", after)
		}
	})

	t.Run("without a before-hook a model error fails at once", func(t *testing.T) {
		var got seen
		tr, before := newTreeWith(t, true, got.observer())
		_, err := tr.ag.Navigate(t.Context(), agent.NavigateRequest{TargetID: tr.u2.ID, Summarize: true})
		if !errors.Is(err, registry.ErrUnknownModel) || got.names() != "" {
			t.Fatalf("%v, events %s", err, got.names())
		}
		unchangedFile(t, tr.path, before)
	})

	t.Run("instructions and label overrides", func(t *testing.T) {
		var got seen
		focus, label := "mind the arithmetic", " checkpoint "
		tr, before := newTreeWith(t, false, answer("override", &hook.BeforeTreeResult{CustomInstructions: &focus, Label: &label}, &got), got.observer())
		n := len(summaryRequests(srv))
		res, err := tr.ag.Navigate(t.Context(), agent.NavigateRequest{TargetID: tr.a1.ID, Summarize: true, Instructions: "theirs", Label: "mine"})
		if err != nil {
			t.Fatal(err)
		}
		if p := last[*hook.BeforeTreeEvent](&got).Preparation; p.CustomInstructions != "theirs" || p.Label != "mine" {
			t.Errorf("the hook saw %+v", p)
		}
		reqs := summaryRequests(srv)[n:]
		if len(reqs) != 1 || !strings.Contains(reqs[0].LastUserText(), focus) || strings.Contains(reqs[0].LastUserText(), "theirs") {
			t.Fatalf("the summary was not asked with the hook's instructions (%d requests)", len(reqs))
		}
		// pi's navigateTree: the summary, then a label entry for it, which
		// becomes the leaf (and stays it after a reload).
		if res.Label != "checkpoint" || res.LabelEntry == nil || res.LeafID != res.LabelEntry.ID || res.LabelEntry.ParentID != res.SummaryEntry.ID {
			t.Fatalf("result %+v", res)
		}
		if after := last[*hook.TreeEvent](&got); after.NewLeafID != res.LabelEntry.ID || after.SummaryEntry.ID != res.SummaryEntry.ID || after.FromExtension {
			t.Errorf("after %+v", after)
		}
		loaded, err := session.Load(tr.path)
		if err != nil {
			t.Fatal(err)
		}
		if loaded.LeafID() != res.LabelEntry.ID || loaded.Label(res.SummaryEntry.ID) != "checkpoint" || appendedLines(t, tr.path, before) != 2 {
			t.Errorf("reloaded: leaf %s, label %q", loaded.LeafID(), loaded.Label(res.SummaryEntry.ID))
		}
	})

	t.Run("a label without a summary records the move", func(t *testing.T) {
		tr, before := newTreeWith(t, false)
		res, err := tr.ag.Navigate(t.Context(), agent.NavigateRequest{TargetID: tr.u2.ID, Label: "retry here"})
		if err != nil {
			t.Fatal(err)
		}
		// The target is a user message: the leaf goes to its parent, and
		// the label is the target's.
		if !res.Written() || res.SummaryEntry != nil || res.LabelEntry.ParentID != tr.a1.ID || res.LeafID != res.LabelEntry.ID {
			t.Fatalf("result %+v", res)
		}
		loaded, _ := session.Load(tr.path)
		if loaded.Label(tr.u2.ID) != "retry here" || loaded.LeafID() != res.LabelEntry.ID || appendedLines(t, tr.path, before) != 1 {
			t.Errorf("reloaded: label %q, leaf %s", loaded.Label(tr.u2.ID), loaded.LeafID())
		}
	})
}

// TestCommandHookEnvironment: a command hook learns the session file, its id
// and the leaf from its environment.
func TestCommandHookEnvironment(t *testing.T) {
	path, _ := genFile(t, 12)
	dir := t.TempDir()
	out := filepath.Join(dir, "env.txt")
	script := filepath.Join(dir, "env.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat > /dev/null\n{ echo \"$PRIME_SESSION_FILE\"; echo \"$PRIME_SESSION_ID\"; echo \"$PRIME_LEAF_ID\"; } > \""+out+"\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"hooks": []any{map[string]any{"event": hook.EventBeforeCompact, "command": script}}})
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := settings.Load(t.Context(), settings.Options{AgentDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(mustGetwd(t), path)
	if err != nil {
		t.Fatal(err)
	}
	st, err = st.WithOverride("compaction.keepRecentTokens", "4000")
	if err != nil {
		t.Fatal(err)
	}
	ag, err := agent.Load(rel, agent.Config{Settings: st, AgentDir: t.TempDir(), Hooks: hook.New(st, hook.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ag.Compact(t.Context(), agent.CompactRequest{Summarizer: agent.SummarizerChoice{Offline: true}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	want := path + "\n" + ag.Session().Header().ID + "\n" + res.Plan.LeafID + "\n"
	if string(got) != want || ag.Session().Header().ID == "" {
		t.Errorf("the hook saw\n%s\nwant\n%s", got, want)
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// unchangedFile fails the test if the file at path no longer holds data.
func unchangedFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
		t.Error("the file changed")
	}
}

// appendedLines counts the lines appended to the file since it held before.
func appendedLines(t *testing.T, path string, before []byte) int {
	t.Helper()
	after, _ := os.ReadFile(path)
	if !bytes.HasPrefix(after, before) {
		t.Fatal("the file's old bytes changed")
	}
	return bytes.Count(after[len(before):], []byte("\n"))
}
