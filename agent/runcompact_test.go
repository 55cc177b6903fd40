package agent_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/hook"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
)

// TestManualCompactionScenarios re-creates pi's manual compaction cases with
// the real conversation: two prompts, a manual compaction, another prompt;
// on a session file and on one kept in memory.
func TestManualCompactionScenarios(t *testing.T) {
	for _, memory := range []bool{false, true} {
		t.Run(fmt.Sprintf("memory=%v", memory), func(t *testing.T) {
			srv := llmtest.NewAnthropic(t)
			srv.Handle(echo)
			var ev events
			st := testSettings(t, "compaction.keepRecentTokens", "1")
			ag, path := liveWith(t, srv, &ev, st)
			if memory {
				s, _ := session.Create("", session.Options{CWD: t.TempDir()})
				cfg := config(agentDir(t, srv), st, &ev)
				cfg.Model, cfg.NoContextFiles = srv.Model().Provider+"/"+srv.Model().ID, true
				ag = agent.New(s, cfg)
				defer ag.Close()
			}
			send(t, ag, "first question")
			send(t, ag, "second question")
			ev.reset()
			res, err := ag.Compact(t.Context(), agent.CompactRequest{})
			if err != nil {
				t.Fatal(err)
			}
			// 49: a summary, tokensBefore, and the context starts with it.
			msgs, _ := ag.Messages()
			if res.Compaction.Summary == "" || res.TokensBefore <= 0 {
				t.Errorf("49: %+v", res)
			}
			first := 0
			if _, ok := msgs[0].(*session.SystemMessage); ok {
				first = 1
			}
			if _, ok := msgs[first].(*session.CompactionSummaryMessage); !ok {
				t.Errorf("49: the context starts with %T", msgs[first])
			}
			// 53: a manual compaction's events say so.
			for _, e := range eventsOf[agent.CompactionStart](&ev) {
				if e.Reason != agent.ReasonManual {
					t.Errorf("53: reason %s", e.Reason)
				}
			}
			// 50: another prompt works.
			send(t, ag, "third question")
			if text, _ := ag.LastAssistantText(); !strings.Contains(text, "third question") {
				t.Errorf("50: reply %q", text)
			}
			// 51, 52: exactly one compaction entry, with a kept entry.
			n := 0
			ag.View(func(s *session.Session) { n = countType(s, session.TypeCompaction) })
			if n != 1 {
				t.Errorf("51/52: %d compactions", n)
			}
			if !memory {
				s, err := session.Load(path)
				if err != nil || countType(s, session.TypeCompaction) != 1 {
					t.Errorf("51: file: %v", err)
				}
			}
		})
	}
}

// TestQueuedAfterAutoCompaction: a message queued while a
// threshold compaction runs after the run is delivered once it is done.
func TestQueuedAfterAutoCompaction(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	conversation(srv,
		llmtest.Stream(llmtest.Text("one"), llmtest.Usage(100, 2)),
		llmtest.Stream(llmtest.Text("big"), llmtest.Usage(500, 2)),
		llmtest.Stream(llmtest.Text("answered the queued one"), llmtest.Usage(50, 2)),
	)
	var ev events
	// The threshold is 200,000 - 199,700 = 300 tokens. Keeping 1 token
	// leaves a span to summarize: the system message before "first" is
	// never summarized (pi 1.6), so keeping 5 would keep all the rest.
	st := testSettings(t, "compaction.keepRecentTokens", "1", "compaction.reserveTokens", "199700")
	ag, _ := liveWith(t, srv, &ev, st)
	send(t, ag, "first")
	queued := false
	ev.setOn(func(e agent.Event) {
		if _, ok := e.(agent.CompactionStart); ok && !queued {
			queued = true
			ag.FollowUp(context.Background(), "queued during the compaction")
		}
	})
	send(t, ag, "second")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	ag.Wait(ctx)
	if !queued {
		t.Fatal("no compaction after the run")
	}
	if text, _ := ag.LastAssistantText(); text != "answered the queued one" {
		t.Errorf("last reply %q", text)
	}
	if n := len(eventsOf[agent.AgentSettled](&ev)); n != 2 {
		t.Errorf("%d settles", n)
	}
}

// liveHooked is liveWith with in-process hooks.
func liveHooked(t *testing.T, srv *llmtest.Server, ev *events, st *settings.Settings, h *hook.Hooks) *agent.Agent {
	t.Helper()
	s, err := session.Create(filepath.Join(t.TempDir(), "s.jsonl"), session.Options{CWD: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config(agentDir(t, srv), st, ev)
	cfg.Model, cfg.NoContextFiles = srv.Model().Provider+"/"+srv.Model().ID, true
	cfg.Hooks = hook.New(nil, hook.Options{Hooks: h})
	ag := agent.New(s, cfg)
	t.Cleanup(func() { ag.Close() })
	return ag
}

// TestAutoCompactionHooks: the hooks hear why an automatic compaction runs
// and whether the failed reply is sent again; a hook's cancel is a
// CompactionEnd the conversation survives.
func TestAutoCompactionHooks(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	conversation(srv,
		llmtest.Stream(llmtest.Text("one"), llmtest.Usage(30, 2)),
		llmtest.Overflow(),
		llmtest.Stream(llmtest.Text("recovered"), llmtest.Usage(20, 3)),
	)
	var mu sync.Mutex
	var seen []string
	h := &hook.Hooks{BeforeCompact: func(ctx context.Context, ev *hook.BeforeCompactEvent) (*hook.BeforeCompactResult, error) {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s willRetry=%v", ev.Reason, ev.WillRetry))
		mu.Unlock()
		return nil, nil
	}}
	var ev events
	ag := liveHooked(t, srv, &ev, testSettings(t, "compaction.keepRecentTokens", "1"), h)
	send(t, ag, "first")
	send(t, ag, "second, which overflows")
	if strings.Join(seen, ";") != "overflow willRetry=true" {
		t.Errorf("hooks saw %v", seen)
	}
	if text, _ := ag.LastAssistantText(); text != "recovered" {
		t.Errorf("reply %q", text)
	}
}

func TestCompactionFailureDoesNotStopTheRun(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	conversation(srv,
		llmtest.Stream(llmtest.Text("step"), llmtest.ToolCall("c1", "upper", `{"text":"a"}`), llmtest.Usage(400, 5)),
		llmtest.Stream(llmtest.Text("finished anyway"), llmtest.Usage(60, 5)),
	)
	cancel := &hook.Hooks{BeforeCompact: func(ctx context.Context, ev *hook.BeforeCompactEvent) (*hook.BeforeCompactResult, error) {
		return &hook.BeforeCompactResult{Cancel: true}, nil
	}}
	var ev events
	st := testSettings(t, "compaction.keepRecentTokens", "1", "compaction.reserveTokens", "199700")
	ag := liveHooked(t, srv, &ev, st, cancel)
	send(t, ag, "go")
	ends := eventsOf[agent.CompactionEnd](&ev)
	if len(ends) == 0 || !ends[0].Aborted || ends[0].Result != nil {
		t.Fatalf("compaction ends %+v", ends)
	}
	if text, _ := ag.LastAssistantText(); text != "finished anyway" {
		t.Errorf("reply %q", text)
	}
}

func TestAutoCompactionDisabled(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	conversation(srv,
		llmtest.Stream(llmtest.Text("one"), llmtest.Usage(100, 2)),
		llmtest.Stream(llmtest.Text("big"), llmtest.Usage(500, 2)),
	)
	var ev events
	st := testSettings(t, "compaction.enabled", "false", "compaction.keepRecentTokens", "1", "compaction.reserveTokens", "199700")
	ag, _ := liveWith(t, srv, &ev, st)
	send(t, ag, "first")
	send(t, ag, "second")
	if n := len(eventsOf[agent.CompactionStart](&ev)); n != 0 {
		t.Errorf("%d automatic compactions with compaction.enabled false", n)
	}
	// /compact still works.
	if _, err := ag.Compact(t.Context(), agent.CompactRequest{}); err != nil {
		t.Errorf("manual compaction: %v", err)
	}
}
