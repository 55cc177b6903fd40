package agent_test

import (
	"testing"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/internal/pioracle"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// TestPiReadsWhatPrimeWrites checks, against pi 1.6 itself (tools/pioracle),
// that the entries Prime appends are ones pi reads as Prime means them: after
// an offline compaction and after a navigation with a branch summary, pi's
// buildSessionContext over the same file yields the same messages (count and
// roles) and the same token estimates as Prime's. It runs only when
// PRIME_PIORACLE names the oracle's wrapper:
//
//	PRIME_PIORACLE=$PWD/tools/pioracle/pioracle go test ./agent -run PiReads -v
func TestPiReadsWhatPrimeWrites(t *testing.T) {
	pioracle.Path(t)
	compactions, branches := 0, 0
	for seed := uint64(1); seed <= 6; seed++ {
		path, _ := genFile(t, seed)
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
	est := session.EstimateContextTokens(c.Messages)
	if pi.Messages != len(c.Messages) || !equalCounts(pi.Roles, roles) || pi.Estimate.Tokens != est.Tokens || pi.Estimate.UsageTokens != est.UsageTokens {
		t.Errorf("%s (%s): pi sees %d messages %v, %d tokens (%d by usage); Prime %d messages %v, %d tokens (%d by usage)",
			what, path, pi.Messages, pi.Roles, pi.Estimate.Tokens, pi.Estimate.UsageTokens, len(c.Messages), roles, est.Tokens, est.UsageTokens)
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
