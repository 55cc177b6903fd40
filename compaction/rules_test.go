package compaction

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// corpusItem is one line of testdata/rules-corpus.txt.
type corpusItem struct {
	id, label, source, text string
}

// lifts returns the id of the rule a lift takes back, or "".
func (it corpusItem) lifts() string {
	if id, ok := strings.CutPrefix(it.label, "lift:"); ok {
		return id
	}
	return ""
}

// readCorpus reads a rule corpus from testdata.
func readCorpus(t *testing.T, name string) []corpusItem {
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var out []corpusItem
	for n, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			t.Fatalf("%s:%d: %d fields, want 4", name, n+1, len(f))
		}
		out = append(out, corpusItem{f[0], f[1], f[2], f[3]})
	}
	return out
}

// corpusMessages is an item as the messages that carry it: a user's
// message, or a tool's output, or an assistant's text, after a request.
func corpusMessages(it corpusItem) []session.Message {
	ask := &llm.UserMessage{Content: []llm.Content{llm.Text{Text: "Carry on with the work on the planner, please."}}}
	switch it.source {
	case "tool":
		return []session.Message{ask,
			&llm.AssistantMessage{Content: []llm.Content{call("c1", "bash", `{"command":"make check"}`)}},
			&llm.ToolResultMessage{ToolCallID: "c1", ToolName: "bash", Content: []llm.Content{llm.Text{Text: it.text}}}}
	case "assistant":
		return []session.Message{ask, &llm.AssistantMessage{Content: []llm.Content{llm.Text{Text: it.text}}}}
	}
	return []session.Message{&llm.UserMessage{Content: []llm.Content{llm.Text{Text: it.text}}}}
}

// corpusLedger is the ledger of one item alone (/compact instructions
// through the instructions).
func corpusLedger(it corpusItem) *Ledger {
	if it.source == "instructions" {
		return LedgerOf(corpusMessages(corpusItem{source: "user", text: "Carry on with the work on the planner, please."})).withInstructions(it.text)
	}
	return LedgerOf(corpusMessages(it))
}

// TestRuleDetection measures the ledger's reading of the user's rules on
// the corpora: recall over the rules, precision over everything it kept as
// a rule, and whether each lift took its rule out. Non-rules must not be
// kept as rules; what another wrote must not be kept at all. The corpus
// came before the detector; the held-out one after, unchanged since: its
// floor is lower, and its numbers are the honest ones.
func TestRuleDetection(t *testing.T) {
	for _, tc := range []struct {
		name              string
		recall, precision float64
	}{
		{"rules-corpus.txt", 0.9, 0.9},
		{"rules-heldout.txt", 0.8, 0.85},
	} {
		t.Run(tc.name, func(t *testing.T) { ruleDetection(t, tc.name, tc.recall, tc.precision) })
	}
}

func ruleDetection(t *testing.T, name string, wantRecall, wantPrecision float64) {
	items := readCorpus(t, name)
	byID := map[string]corpusItem{}
	for _, it := range items {
		byID[it.id] = it
	}
	var tp, fn, fp, lifts, liftsOK int
	var missed, wrong []string
	for _, it := range items {
		if id := it.lifts(); id != "" {
			lifts++
			rule := byID[id]
			msgs := append(corpusMessages(rule), corpusMessages(it)...)
			led := LedgerOf(msgs)
			if !slices.Contains(led.Constraints, rule.text) && !slices.Contains(led.Constraints, it.text) && slices.Contains(led.Lifted, rule.text) {
				liftsOK++
			} else {
				wrong = append(wrong, fmt.Sprintf("%s did not lift %s: constraints %q", it.id, id, led.Constraints))
			}
			continue
		}
		led := corpusLedger(it)
		kept := slices.Contains(led.Constraints, folded(it.text))
		switch {
		case it.label == "rule" && kept:
			tp++
		case it.label == "rule":
			fn++
			missed = append(missed, it.id+" "+it.text)
		case kept:
			fp++
			wrong = append(wrong, it.id+" "+it.label+" kept as a rule: "+it.text)
		}
		if it.label == "quote" && (len(led.Constraints) > 0 || slices.ContainsFunc(led.Said, func(s string) bool { return strings.Contains(s, it.text) })) {
			t.Errorf("%s: another's words are in the ledger: %+v", it.id, led)
		}
		if it.label == "rule" && !kept && !slices.Contains(led.Said, folded(it.text)) && led.Request != it.text {
			t.Errorf("%s: the rule is neither a constraint nor said nor the request: %+v", it.id, led)
		}
	}
	precision := float64(tp) / float64(max(tp+fp, 1))
	recall := float64(tp) / float64(max(tp+fn, 1))
	t.Logf("rules %d: recall %.1f%% (%d missed), precision %.1f%% (%d non-rules kept as rules); lifts %d/%d",
		tp+fn, 100*recall, fn, 100*precision, fp, liftsOK, lifts)
	for _, m := range missed {
		t.Logf("missed: %s", m)
	}
	for _, w := range wrong {
		t.Logf("wrong: %s", w)
	}
	if recall < wantRecall || precision < wantPrecision || liftsOK < lifts {
		t.Errorf("recall %.1f%%, precision %.1f%%, lifts %d/%d: want at least %.0f%%, %.0f%% and every lift",
			100*recall, 100*precision, liftsOK, lifts, 100*wantRecall, 100*wantPrecision)
	}
}

// FuzzUserWords: whatever the user writes, reading it never fails, gives
// the same answer twice, keeps every rule word for word (white space
// folded) as a sentence of the text, and keeps the ledger within budget.
func FuzzUserWords(f *testing.F) {
	for _, s := range []string{
		"the staging database is off-limits. we're sticking with v1 for now",
		"Could you make sure the benchmarks keep compiling? Fix the test.",
		"you can touch the generated code now",
		"Look:\n```\nnever do this\n```\nThanks.", "“quoted” — dash; semi: colon (aside) `code is locked`.", "", "no", "?",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		msgs := []session.Message{&llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}}}
		a, b := LedgerOf(msgs), LedgerOf(msgs)
		if !slices.Equal(a.Constraints, b.Constraints) || !slices.Equal(a.Said, b.Said) {
			t.Fatalf("two readings differ: %+v, %+v", a, b)
		}
		whole := folded(text)
		for _, r := range a.Constraints {
			if !strings.Contains(whole, r) && !strings.HasSuffix(r, "…") {
				t.Fatalf("rule %q is not in the text %q", r, text)
			}
		}
		n := a.Tokens()
		if a.Request != "" {
			n -= tokensOf(repairRequest + quoteBlock(a.Request))
		}
		if n > LedgerBudget {
			t.Fatalf("the rules and words take %d tokens", n)
		}
	})
}
