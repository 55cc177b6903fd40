package agent_test

import (
	"strings"
	"testing"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
)

// TestCompactionThroughEveryAPI runs the three automatic compactions
// through every wire API Prime speaks, each vendor reporting usage,
// overflow and cut-off answers in its own words: the threshold crossed
// between turns of a tool loop, an overflow (compact, then the prompt is
// retried), and an answer stopped by "length" before the output limit
// (a full context: compact, retry).
func TestCompactionThroughEveryAPI(t *testing.T) {
	for _, v := range llmtest.Vendors() {
		t.Run(v.Name, func(t *testing.T) {
			t.Run("threshold", func(t *testing.T) { vendorThreshold(t, v) })
			t.Run("overflow", func(t *testing.T) {
				vendorRecovery(t, v, llmtest.Overflow())
			})
			t.Run("length", func(t *testing.T) {
				vendorRecovery(t, v, llmtest.Stream(llmtest.Text("The answer was cut"), llmtest.Usage(40, 10), llmtest.MaxTokens()))
			})
		})
	}
}

func vendorThreshold(t *testing.T, v llmtest.Vendor) {
	srv := v.New(t)
	conversation(srv,
		llmtest.Stream(llmtest.Text("step one"), llmtest.ToolCall("c1", "upper", `{"text":"a"}`), llmtest.Usage(50, 5)),
		llmtest.Stream(llmtest.Text("step two"), llmtest.ToolCall("c2", "upper", `{"text":"b"}`), llmtest.Usage(400, 5)),
		llmtest.Stream(llmtest.Text("done"), llmtest.Usage(60, 5)),
	)
	var ev events
	// The threshold is 200,000 - 199,700 = 300 tokens.
	st := testSettings(t, "compaction.keepRecentTokens", "5", "compaction.reserveTokens", "199700")
	ag, _ := liveWith(t, srv, &ev, st, upper{})
	send(t, ag, "go, in several steps")
	starts := eventsOf[agent.CompactionStart](&ev)
	if len(starts) != 1 || starts[0].Reason != agent.ReasonThreshold {
		t.Fatalf("compactions %+v, want one at the threshold", starts)
	}
	if got := strings.Join(ev.names(), " "); !strings.Contains(got, "turn_end compaction_start compaction_end turn_start") {
		t.Errorf("no compaction between turns:\n%s", got)
	}
	msgs, _ := ag.Messages()
	if last := msgs[len(msgs)-1].(*llm.AssistantMessage); last.Text() != "done" || last.API != srv.API() {
		t.Errorf("last message %q over %s", last.Text(), last.API)
	}
}

// vendorRecovery: the third prompt fails with bad (an overflow, or an
// answer cut off by a full context); the agent compacts and asks again.
func vendorRecovery(t *testing.T, v llmtest.Vendor, bad llmtest.Reply) {
	srv := v.New(t)
	conversation(srv,
		llmtest.Stream(llmtest.Text("one"), llmtest.Usage(30, 2)),
		llmtest.Stream(llmtest.Text("two"), llmtest.Usage(40, 2)),
		bad,
		llmtest.Stream(llmtest.Text("after the compaction"), llmtest.Usage(20, 3)),
	)
	var ev events
	ag, path := liveWith(t, srv, &ev, testSettings(t, "compaction.keepRecentTokens", "5"))
	send(t, ag, "first")
	send(t, ag, "second")
	ev.reset()
	send(t, ag, "third, which does not fit")
	ends := eventsOf[agent.CompactionEnd](&ev)
	if len(ends) != 1 || ends[0].Reason != agent.ReasonOverflow || !ends[0].WillRetry || ends[0].Result == nil {
		t.Fatalf("compaction ends %+v", ends)
	}
	if k := entryKinds(t, path); !strings.HasSuffix(k, "user assistant context_edit compaction assistant") {
		t.Errorf("entries %s", k)
	}
	msgs, _ := ag.Messages()
	if last := msgs[len(msgs)-1].(*llm.AssistantMessage); last.Text() != "after the compaction" {
		t.Errorf("last message %q", last.Text())
	}
}
