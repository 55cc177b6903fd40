package agent_test

import (
	"strings"
	"testing"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
)

// The kept sums cover the whole file, as a recount does, through a tree
// move (the abandoned branch still counted), a compaction (its entry's
// usage counted, nothing dropped) and the turns after them.
func TestStatsKeptThroughMoveAndCompaction(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	for i := range 5 {
		srv.Reply(llmtest.Text(strings.Repeat("a long reply ", 300)), llmtest.Usage(10*(i+1), i+1))
	}
	ag, path := liveWith(t, srv, nil, testSettings(t, "compaction.keepRecentTokens", "1"))
	recount := func(step string, want func(agent.Stats) bool) {
		t.Helper()
		got := ag.Stats()
		fresh, err := agent.Load(path, config(t.TempDir(), testSettings(t), nil))
		if err != nil {
			t.Fatal(err)
		}
		defer fresh.Close()
		if full := fresh.Stats(); got != full || !want(got) {
			t.Errorf("%s: kept %+v, recount %+v", step, got, full)
		}
	}
	send(t, ag, "first")
	send(t, ag, "second")
	recount("two turns", func(st agent.Stats) bool { return st.AssistantMessages == 2 && st.Tokens.Input == 30 })

	var firstReply string
	for _, e := range ag.Session().Entries() {
		if r, _ := e.MessageRole(); e.Type == session.TypeMessage && r == "assistant" {
			firstReply = e.ID
			break
		}
	}
	if _, err := ag.Navigate(t.Context(), agent.NavigateRequest{TargetID: firstReply}); err != nil {
		t.Fatal(err)
	}
	send(t, ag, "second, again")
	recount("a turn on another branch", func(st agent.Stats) bool {
		return st.AssistantMessages == 3 && st.UserMessages == 3 && st.Tokens.Input == 60 && st.Last.Input == 30
	})

	if _, err := ag.Compact(t.Context(), agent.CompactRequest{Summarizer: agent.SummarizerChoice{Offline: true}}); err != nil {
		t.Fatal(err)
	}
	recount("a compaction", func(st agent.Stats) bool { return st.AssistantMessages == 3 })
	send(t, ag, "after the compaction")
	recount("a turn after the compaction", func(st agent.Stats) bool {
		return st.AssistantMessages == 4 && st.UserMessages == 4 && st.Tokens.Input == 100
	})
}

// A session loaded read-only is opened again for writing at its first
// append: the sums carry over and still equal a recount.
func TestStatsKeptWhenOpenedForWriting(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.Text("one"), llmtest.Usage(30, 2))
	srv.Reply(llmtest.Text("two"), llmtest.Usage(40, 3))
	first, path := live(t, srv, nil)
	send(t, first, "first")
	first.Close()

	cfg := config(agentDir(t, srv), testSettings(t), nil)
	cfg.Model = srv.Model().Provider + "/" + srv.Model().ID
	cfg.NoContextFiles = true
	ag, err := agent.Load(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ag.Close()
	if st := ag.Stats(); st.AssistantMessages != 1 || st.Tokens.Input != 30 {
		t.Fatalf("loaded: %+v", st)
	}
	send(t, ag, "second")
	got := ag.Stats()
	fresh, err := agent.Load(path, config(t.TempDir(), testSettings(t), nil))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if want := fresh.Stats(); got != want || got.AssistantMessages != 2 || got.Tokens.Input != 70 {
		t.Errorf("kept %+v, recount %+v", got, want)
	}
}
