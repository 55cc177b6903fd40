package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
)

// TestReceiptText: the receipt's rows for each kind of compaction.
func TestReceiptText(t *testing.T) {
	st := newStyles()
	v := &view{width: 80, st: &st}
	recorded := func(r compaction.Receipt) agent.Receipt {
		return agent.Receipt{EntryID: "c1", Recorded: true, Receipt: r}
	}
	model := recorded(compaction.Receipt{Reason: "manual", Model: "anthropic/claude-haiku", TokensBefore: 52_340, TokensAfter: 8_120, Messages: 41, DurationMs: 12_400})
	model.Usage = &llm.Usage{Input: 40_000, CacheRead: 2_000, Output: 900, Cost: llm.Cost{Total: 0.0432}}
	model.Instructions = "focus on the parser"
	model.Ledger = &compaction.LedgerCheck{Bound: 3_000, SummaryTokens: 1_200, RepairedTokens: 1_260, Checked: 7, Kept: 5,
		Repaired: []compaction.LedgerItem{{Kind: compaction.LedgerConstraint, Text: "never push to main"}},
		Unfit:    []compaction.LedgerItem{{Kind: compaction.LedgerFile, Text: "internal/very/long/path.go"}}}
	background := recorded(compaction.Receipt{Reason: "threshold", Model: "openai/gpt-test", TokensBefore: 9_000, TokensAfter: 2_000, Messages: 1, DurationMs: 5_020,
		Background: true, WaitMs: 3, Updated: true})
	offline := recorded(compaction.Receipt{Reason: "overflow", TokensBefore: 900, TokensAfter: 300, Messages: 3, DurationMs: 2})
	offline.Deterministic, offline.DeterministicReason = true, "the summarizer failed: overloaded"
	for _, c := range []struct {
		name string
		r    agent.Receipt
		want string
	}{
		{"by a model", model, `
Context       52,340 → 8,120 tokens, 41 messages summarized
Reason        asked for (/compact)
Summary       by anthropic/claude-haiku · took 12.4s
Must-survive  7 checked · 5 kept by the summary · 1 put back · 1 without room
              (kept for the next compaction) · summary 1,200 → 1,260 tokens (at
              most 3,000)
  put back    constraint: never push to main
  no room     file: internal/very/long/path.go
Tokens        42,000 in · 900 out
Cost          $0.0432`},
		{"in the background", background, `
Context       9,000 → 2,000 tokens, 1 message summarized
Reason        the context passed the threshold
Summary       by openai/gpt-test · took 5.0s
Background    written while the conversation went on, then brought up to date ·
              the conversation waited 3ms`},
		{"by code", offline, `
Context       900 → 300 tokens, 3 messages summarized
Reason        the context overflowed the model's window
Summary       built by code: the summarizer failed: overloaded · took 2ms`},
		{"by a hook", agent.Receipt{EntryID: "c1", FromHook: true}, `
Summary       supplied by a hook`},
		{"by pi", agent.Receipt{EntryID: "c1", Usage: &llm.Usage{Input: 100, Output: 10}}, `
Tokens        100 in · 10 out
Receipt       not recorded (made by pi or an older Prime): only the tokens
              before are known`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := ansi.Strip(receiptText(v, &c.r)); got != strings.TrimPrefix(c.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", got, strings.TrimPrefix(c.want, "\n"))
			}
		})
	}
}

// TestReceiptResumed: the expanded block of a compaction in a resumed
// session shows the receipt its entry records, the constraint the
// summarizer dropped and the check put back included.
func TestReceiptResumed(t *testing.T) {
	h := newHarness(t, setup{settings: compactSettings})
	// A long first answer: the summary's bound leaves room for the
	// constraint put back.
	h.srv.Reply(llmtest.Text(strings.Repeat("The parser lives in parse.go and reads tokens. ", 12)), llmtest.Usage(900, 20))
	h.srv.Reply(llmtest.Text("Noted: the lexer is next."), llmtest.Usage(1000, 20))
	h.srv.Reply(llmtest.Text("## Goal\nFind the parser."), llmtest.Usage(300, 20))
	h.waitText("v0.0.0-test")
	h.send("where is the parser? Never push to main.")
	h.waitIdle("parse.go")
	h.send("and the lexer?")
	h.waitIdle("lexer is next")
	h.send("/compact")
	h.waitIdle("[compaction]")
	h.ag.Close()

	h2 := newHarness(t, setup{settings: compactSettings, session: h.file})
	h2.waitText("Session compacted 1 time")
	h2.key('o', tea.ModCtrl)
	f := h2.waitText("Must-survive", "put back    constraint: Never push to main.")
	frameGolden(t, "expanded", f)
}
