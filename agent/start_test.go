package agent_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/agentjson"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
)

// blockSummaries makes srv answer conversations with echo and hold every
// summary request until release is closed; summaries hears each one.
func blockSummaries(t *testing.T, srv *llmtest.Server) (summaries chan struct{}, release chan struct{}) {
	summaries, release = make(chan struct{}, 10), make(chan struct{})
	srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		if strings.Contains(r.LastUserText(), "<conversation>") {
			summaries <- struct{}{}
			<-release
		}
		return echo(r)
	})
	return summaries, release
}

// TestStartCompact: once StartCompact returns the agent is busy with the
// compaction, so a prompt is refused; wait gives Compact's outcome.
func TestStartCompact(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	summaries, release := blockSummaries(t, srv)
	var ev events
	ag, _ := liveWith(t, srv, &ev, testSettings(t, "compaction.keepRecentTokens", "1"))
	send(t, ag, "one")
	send(t, ag, "two")
	wait, err := ag.StartCompact(t.Context(), agent.CompactRequest{Instructions: "numbers"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Prompt(t.Context(), "three", agent.PromptOptions{}); !errors.Is(err, agent.ErrCompacting) {
		t.Errorf("prompt during the compaction: %v, want ErrCompacting", err)
	}
	if st := ag.State(); !st.Busy || !st.Compacting || st.Streaming {
		t.Errorf("state during a manual compaction: %+v", st)
	}
	<-summaries
	close(release)
	res, err := wait()
	if err != nil || res.Entry == nil || res.Plan.Instructions != "numbers" {
		t.Fatalf("wait: %v, %+v", err, res)
	}
	if ag.Busy() {
		t.Error("busy after the compaction")
	}
}

// TestStartNavigate: the same for a navigation with a summary.
func TestStartNavigate(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	summaries, release := blockSummaries(t, srv)
	ag, _ := live(t, srv, nil)
	send(t, ag, "one")
	var first string
	ag.View(func(s *session.Session) {
		for _, e := range s.Entries() {
			if role, _ := e.MessageRole(); role == "user" {
				first = e.ID
				break
			}
		}
	})
	send(t, ag, "two")
	wait, err := ag.StartNavigate(t.Context(), agent.NavigateRequest{TargetID: first, Summarize: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Prompt(t.Context(), "three", agent.PromptOptions{}); !errors.Is(err, agent.ErrCompacting) {
		t.Errorf("prompt during the navigation: %v, want ErrCompacting", err)
	}
	<-summaries
	close(release)
	res, err := wait()
	if err != nil || res.SummaryEntry == nil || res.EditorText != "one" {
		t.Fatalf("wait: %v, %+v", err, res)
	}
}

// TestSettledBeforeIdle: when Abort (or Wait) returns, AgentSettled has
// been told, and a prompt sent then starts a new run whose events come
// after it.
func TestSettledBeforeIdle(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.Handle(echo)
	for i := range 20 {
		srv.Reply(llmtest.ToolCall("c1", "wait", `{}`))
		var ev events
		b := blocker{started: make(chan struct{})}
		ag, _ := live(t, srv, &ev, b)
		if _, err := ag.Prompt(t.Context(), "wait", agent.PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		<-b.started
		ag.Abort()
		if n := len(eventsOf[agent.AgentSettled](&ev)); n != 1 {
			t.Fatalf("run %d: %d AgentSettled when Abort returned", i, n)
		}
		send(t, ag, "again")
		names := ev.names()
		if first := strings.Index(strings.Join(names, " "), "agent_settled"); first > strings.LastIndex(strings.Join(names, " "), "agent_start") {
			t.Fatalf("run %d: the second run began before the first settled: %v", i, names)
		}
	}
}

// TestQueueModesKept: modes set before the model is chosen are not reset
// from the settings when the agent first reads them.
func TestQueueModesKept(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	ag, _ := live(t, srv, nil)
	ag.SetQueueModes(agent.All, "")
	ag.SetAutoCompaction(false) // reads the settings' switches and modes
	if st := ag.State(); st.SteeringMode != agent.All || st.FollowUpMode != agent.OneAtATime {
		t.Errorf("modes %s, %s", st.SteeringMode, st.FollowUpMode)
	}
}

// TestNewSessionFrom: the new session's header names its parent.
func TestNewSessionFrom(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	ag, path := live(t, srv, nil)
	send(t, ag, "one")
	if err := ag.NewSessionFrom(path); err != nil {
		t.Fatal(err)
	}
	ag.View(func(s *session.Session) {
		if s.File() == path || s.Header().ParentSession != path {
			t.Errorf("file %s, parent %q", s.File(), s.Header().ParentSession)
		}
	})
}

// TestUpdatesCarryTheReply: a streamed step carries the reply's metadata
// as it began (pi's message_update has its usage).
func TestUpdatesCarryTheReply(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.Text("hello there"), llmtest.Usage(1234, 5))
	var ev events
	ag, _ := live(t, srv, &ev)
	send(t, ag, "hi")
	updates := eventsOf[agent.MessageUpdate](&ev)
	if len(updates) == 0 {
		t.Fatal("no updates")
	}
	for _, u := range updates {
		if u.Message == nil || u.Message.Usage.Input != 1234 || u.Message.Model != srv.Model().ID || len(u.Message.Content) != 0 {
			t.Fatalf("update %+v", u)
		}
	}
	line, _, err := agentjson.MarshalEvent(updates[0])
	if err != nil || !strings.Contains(string(line), `"usage":{"input":1234,`) {
		t.Errorf("%s %v", line, err)
	}
}
