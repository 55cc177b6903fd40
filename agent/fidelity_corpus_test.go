package agent_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// The fidelity of compaction on the rule corpus of issue 28
// (compaction/testdata/rules-corpus.txt): rules as people say them, most
// without never/always/don't/must, injected into a generated session with
// the corpus's non-rules (one-off tasks, questions, remarks, rules quoted
// by tools and by the assistant) and its lifts (each after the rule it
// takes back), and two rules given as /compact instructions. After five
// compactions by each summarizer, the final context must hold at least
// 95 % of the rules word for word and every modified path, the ledger no
// lifted rule, no non-rule as a rule and nothing another wrote; every
// compaction shrinks the context. A second play of twenty compactions
// shows that the ledger stays within its budget.

// corpusItem is one line of the corpus.
type corpusItem struct{ id, label, source, text string }

// readCorpus reads the rule corpus.
func readCorpus(t *testing.T) []corpusItem {
	data, err := os.ReadFile("../compaction/testdata/rules-corpus.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []corpusItem
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Split(line, "\t"); len(f) == 4 && !strings.HasPrefix(line, "#") {
			out = append(out, corpusItem{f[0], f[1], f[2], f[3]})
		}
	}
	return out
}

// corpusPlay is the corpus injected into a generated session.
type corpusPlay struct {
	fidelityPlay
	lifted, nonRules, quotes []string
}

// newCorpusPlay injects the corpus into the session of seed: the rules
// spread as in the keyword test (two thirds in the first fifth), each lift
// a third of the session after its rule, the other user items over the
// whole session, the quotes into tool results and assistant texts; the
// instructions go with the first and third compactions.
func newCorpusPlay(t *testing.T, seed uint64, entries, rounds int) corpusPlay {
	items := readCorpus(t)
	msgs, users := fidelitySession(t, seed, entries)
	pl := corpusPlay{fidelityPlay: fidelityPlay{msgs: msgs, rounds: rounds, instructions: map[int]string{}}}
	var rules, others []corpusItem
	ruleAt := map[string]int{} // a rule's id → its position among the users
	for _, it := range items {
		switch {
		case it.label == "rule" && it.source == "instructions":
			pl.instructions[len(pl.instructions)*2] = it.text
			pl.rules = append(pl.rules, it.text)
		case it.label == "rule":
			rules = append(rules, it)
		case it.label == "quote":
			pl.quotes = append(pl.quotes, it.text)
		case !strings.HasPrefix(it.label, "lift:"):
			others = append(others, it)
		}
	}
	early, nEarly := len(users)/5, len(rules)*2/3
	for i, r := range rules {
		at := i * early / nEarly
		if i >= nEarly {
			at = early + (i-nEarly)*(len(users)*4/5-early)/(len(rules)-nEarly)
		}
		ruleAt[r.id] = at
		appendUserText(msgs, users[at], r.text)
	}
	byID := map[string]string{}
	for _, r := range rules {
		byID[r.id] = r.text
	}
	for _, it := range items {
		if id, ok := strings.CutPrefix(it.label, "lift:"); ok {
			appendUserText(msgs, users[min(ruleAt[id]+len(users)/3, len(users)*4/5)], it.text)
			pl.lifted = append(pl.lifted, byID[id])
		}
	}
	for _, r := range rules {
		if !slices.Contains(pl.lifted, r.text) {
			pl.rules = append(pl.rules, r.text)
		}
	}
	for i, it := range others {
		appendUserText(msgs, users[(i*len(users)/len(others)+len(users)/11)%len(users)], it.text)
		pl.nonRules = append(pl.nonRules, it.text)
	}
	injectQuotes(msgs, items)
	return pl
}

// injectQuotes appends the corpus's quotes to tool results and assistant
// texts spread over the session.
func injectQuotes(msgs []session.Payload, items []corpusItem) {
	var results, replies []int
	for i, p := range msgs {
		if me, ok := p.(*session.MessageEntry); ok {
			switch me.Message.(type) {
			case *llm.ToolResultMessage:
				results = append(results, i)
			case *llm.AssistantMessage:
				replies = append(replies, i)
			}
		}
	}
	n := 0
	for _, it := range items {
		if it.label != "quote" {
			continue
		}
		n++
		switch it.source {
		case "tool":
			at := results[n*len(results)/11]
			r := *(msgs[at].(*session.MessageEntry).Message.(*llm.ToolResultMessage))
			r.Content = append(slices.Clone(r.Content), llm.Text{Text: "\n" + it.text})
			msgs[at] = &session.MessageEntry{Message: &r}
		case "assistant":
			at := replies[n*len(replies)/11]
			a := *(msgs[at].(*session.MessageEntry).Message.(*llm.AssistantMessage))
			a.Content = append([]llm.Content{llm.Text{Text: it.text}}, a.Content...)
			msgs[at] = &session.MessageEntry{Message: &a}
		}
	}
}

func TestCompactionFidelityCorpus(t *testing.T) {
	var b strings.Builder
	b.WriteString("\n| summarizer | seed | modified paths kept | corpus rules kept (verbatim) | lifted rules left in the ledger | non-rules kept as rules | compactions that shrank the context | ledger tokens after 5 |\n|---|---|---|---|---|---|---|---|\n")
	for _, sum := range fidelitySummarizers {
		for _, seed := range []uint64{11, 12} {
			pl := newCorpusPlay(t, seed, 1600, 5)
			end := pl.run(t, sum, seed)
			row := end.row
			where := fmt.Sprintf("%s, seed %d", sum.name, seed)
			if row.pathsKept != row.paths {
				t.Errorf("%s: %d of %d modified paths in the final context", where, row.pathsKept, row.paths)
			}
			if row.rulesKept*100 < row.rules*95 || row.rules < len(pl.rules)*9/10 {
				t.Errorf("%s: %d of %d rules (of %d) in the final context", where, row.rulesKept, row.rules, len(pl.rules))
			}
			if row.shrank != row.compactions || row.compactions != 5 {
				t.Errorf("%s: %d of %d compactions shrank the context", where, row.shrank, row.compactions)
			}
			lifted, wrong := ledgerAudit(t, where, end, pl)
			fmt.Fprintf(&b, "| %s | %d | %d/%d | %d/%d | %d/%d | %d/%d | %d/%d | %d |\n", sum.name, seed, row.pathsKept, row.paths,
				row.rulesKept, row.rules, lifted, len(pl.lifted), wrong, len(pl.nonRules), row.shrank, row.compactions, end.ledgers[len(end.ledgers)-1])
		}
	}
	t.Log(b.String())
}

// ledgerAudit checks the final ledger: no lifted rule, no quote of
// another; it returns the lifted rules and the non-rules left in it as
// rules (a few of the latter are tolerated: they cost room, not rules).
func ledgerAudit(t *testing.T, where string, end fidelityEnd, pl corpusPlay) (lifted, wrong int) {
	if end.ledger == nil {
		t.Errorf("%s: the last compaction has no ledger", where)
		return 0, 0
	}
	for _, r := range pl.lifted {
		if slices.Contains(end.ledger.Constraints, r) {
			lifted++
			t.Errorf("%s: the lifted rule %q is still in the ledger", where, r)
		}
	}
	for _, r := range pl.nonRules {
		if slices.ContainsFunc(end.ledger.Constraints, func(c string) bool { return strings.Contains(c, r) }) {
			wrong++
		}
	}
	if wrong*10 > len(pl.nonRules) {
		t.Errorf("%s: %d of %d non-rules kept as rules", where, wrong, len(pl.nonRules))
	}
	all := strings.Join(append(slices.Clone(end.ledger.Constraints), end.ledger.Said...), "\n")
	for _, q := range pl.quotes {
		if strings.Contains(all, q) {
			t.Errorf("%s: %q, which a tool or the assistant wrote, is in the ledger", where, q)
		}
	}
	return lifted, wrong
}

// TestLedgerStaysBounded: over twenty compactions by each summarizer, the
// ledger stays within its budget (with the request and the failure) and
// the context shrinks each time.
func TestLedgerStaysBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("twenty compactions per summarizer")
	}
	var b strings.Builder
	b.WriteString("\n| summarizer | ledger tokens after 5 | after 20 | compactions that shrank the context | corpus rules kept |\n|---|---|---|---|---|\n")
	for _, sum := range fidelitySummarizers {
		pl := newCorpusPlay(t, 13, 4000, 20)
		end := pl.run(t, sum, 13)
		row := end.row
		if row.shrank != row.compactions || row.compactions != 20 {
			t.Errorf("%s: %d of %d compactions shrank the context", sum.name, row.shrank, row.compactions)
		}
		for i, n := range end.ledgers {
			if n > ledgerBound {
				t.Errorf("%s: the ledger of compaction %d takes %d tokens", sum.name, i+1, n)
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d/%d | %d/%d |\n", sum.name, end.ledgers[4], end.ledgers[19], row.shrank, row.compactions, row.rulesKept, row.rules)
	}
	t.Log(b.String())
}

// ledgerBound is the most a ledger may take: its budget, a request (1,000
// UTF-16 units) and a failure line.
const ledgerBound = 3000 + 300 + 120
