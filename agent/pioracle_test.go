package agent_test

import (
	"slices"
	"testing"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/internal/pioracle"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
)

// TestPiReadsWhatPrimeWrites checks, against pi 1.6 itself (internal/pioracle/harness),
// that the entries Prime appends are ones pi reads as Prime means them: after
// an offline compaction (which carries the system state of pi 1.6 sessions)
// and after a navigation with a branch summary, pi's context over the same
// file yields the same messages (role, estimate and source entry of each),
// the same token estimates (both) and the same replayed system state as
// Prime's. Half the sessions are written as pi 1.6 writes them. It runs only
// when PRIME_PIORACLE names the oracle's wrapper:
//
//	PRIME_PIORACLE=$PWD/internal/pioracle/harness/pioracle go test ./agent -run PiReads -v
func TestPiReadsWhatPrimeWrites(t *testing.T) {
	pioracle.Path(t)
	compactions, branches := 0, 0
	for seed := uint64(1); seed <= 6; seed++ {
		path := genFileOf(t, sessiongen.Options{Entries: 1500, Seed: seed, ContextWindow: 40_000, KeepRecentTokens: 6_000, ReserveTokens: 4_000, Pi16: seed > 3})
		ag, err := agent.Load(path, config(t.TempDir(), testSettings(t, "compaction.keepRecentTokens", "4000"), nil))
		if err != nil {
			t.Fatal(err)
		}
		res, err := ag.Compact(t.Context(), agent.CompactRequest{Summarizer: agent.SummarizerChoice{Offline: true}})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		ag.Close()
		pi := piContext(t, path, "")
		comparePiContext(t, "after compaction", path, "", pi)
		compactions++
		if pi.Projected.Tokens != res.TokensAfter {
			t.Errorf("seed %d: pi estimates %d tokens after the compaction, Prime %d", seed, pi.Projected.Tokens, res.TokensAfter)
		}

		// Navigate back to the first user message after the kept boundary
		// and summarize the branch left: pi must see the summary where Prime
		// put it.
		s, err := session.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		target := ""
		for _, e := range s.LeafPath() {
			if role, err := e.MessageRole(); err == nil && role == llm.RoleUser {
				target = e.ID
			}
		}
		if target == "" {
			continue
		}
		ag, err = agent.Load(path, config(t.TempDir(), testSettings(t), nil))
		if err != nil {
			t.Fatal(err)
		}
		nav, err := ag.Navigate(t.Context(), agent.NavigateRequest{TargetID: target, Summarize: true,
			Summarizer: agent.SummarizerChoice{Offline: true}})
		ag.Close()
		if err != nil {
			t.Fatalf("seed %d: navigate: %v", seed, err)
		}
		if nav.SummaryEntry == nil {
			continue
		}
		comparePiContext(t, "after a branch summary", path, nav.LeafID, piContext(t, path, nav.LeafID))
		branches++
	}
	t.Logf("compared %d compactions and %d branch summaries with pi", compactions, branches)
	if compactions == 0 || branches == 0 {
		t.Errorf("compared %d compactions and %d branch summaries: the comparison did not run", compactions, branches)
	}
}

// piContextAnswer is the part of the oracle's context answer compared here.
type piContextAnswer struct {
	Error     string         `json:"error"`
	Messages  int            `json:"messages"`
	Roles     map[string]int `json:"roles"`
	Estimate  piEstimate     `json:"estimate"`
	Projected piEstimate     `json:"projectedEstimate"`
	Items     []piItem       `json:"items"`
	System    *struct {
		Prompt string   `json:"prompt"`
		Tools  []string `json:"tools"`
		Tokens int      `json:"tokens"`
	} `json:"system"`
}

// piItem is one message of a context: its role, estimate, and the entry it
// came from (file order).
type piItem struct {
	Role   string `json:"role"`
	Tokens int    `json:"tokens"`
	Index  int    `json:"index"`
}

type piEstimate struct {
	Tokens      int `json:"tokens"`
	UsageTokens int `json:"usageTokens"`
}

func piContext(t *testing.T, path, leaf string) piContextAnswer {
	t.Helper()
	args := []string{"context", path, "--pi", "1.6"}
	if leaf != "" {
		args = append(args, "--leaf", leaf)
	}
	var a piContextAnswer
	pioracle.Ask(t, &a, args...)
	return a
}

// comparePiContext compares pi's context at leaf with Prime's.
func comparePiContext(t *testing.T, what, path, leaf string, pi piContextAnswer) {
	t.Helper()
	s, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Context(leaf)
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string]int{}
	for _, m := range c.Messages {
		roles[m.Role()]++
	}
	est, next := session.EstimateContextTokens(c.Messages), c.EstimateNext()
	if pi.Messages != len(c.Messages) || !equalCounts(pi.Roles, roles) || pi.Estimate.Tokens != est.Tokens || pi.Estimate.UsageTokens != est.UsageTokens ||
		pi.Projected.Tokens != next.Tokens || pi.Projected.UsageTokens != next.UsageTokens {
		t.Errorf("%s (%s): pi sees %d messages %v, %d tokens (%d by usage), next %d; Prime %d messages %v, %d tokens (%d by usage), next %d",
			what, path, pi.Messages, pi.Roles, pi.Estimate.Tokens, pi.Estimate.UsageTokens, pi.Projected.Tokens,
			len(c.Messages), roles, est.Tokens, est.UsageTokens, next.Tokens)
	}
	index := map[*session.Entry]int{}
	for i, e := range s.Entries() {
		index[e] = i
	}
	items := make([]piItem, len(c.Messages))
	for i, m := range c.Messages {
		items[i] = piItem{m.Role(), session.EstimateTokens(m), index[c.Entries[i]]}
	}
	if !slices.Equal(items, pi.Items) {
		t.Errorf("%s (%s): messages differ\npi    %v\nPrime %v", what, path, pi.Items, items)
	}
	sys := c.System()
	switch {
	case (sys == nil) != (pi.System == nil):
		t.Errorf("%s (%s): pi's system state %+v, Prime's %+v", what, path, pi.System, sys)
	case sys != nil:
		var tools []string
		for _, tool := range c.Tools() {
			tools = append(tools, tool.Name)
		}
		if sys.Prompt() != pi.System.Prompt || session.EstimateTokens(sys) != pi.System.Tokens || !slices.Equal(tools, pi.System.Tools) {
			t.Errorf("%s (%s): system state differs: pi %d tokens, tools %v; Prime %d, %v", what, path, pi.System.Tokens, pi.System.Tools,
				session.EstimateTokens(sys), tools)
		}
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
