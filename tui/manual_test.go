package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/prime-agent/prime/llm/llmtest"
)

// linesFrom returns the frame's lines from the last one holding text to the
// next empty line: one item of the transcript.
func linesFrom(frame, text string) string {
	lines := strings.Split(frame, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], text) {
			end := i
			for end < len(lines) && strings.TrimSpace(lines[end]) != "" {
				end++
			}
			return strings.Join(lines[i:end], "\n")
		}
	}
	return ""
}

// TestCompactShortConversation: with the default keepRecentTokens
// (20,000), /compact after one exchange says there is nothing before it;
// after two it compacts, keeping the second.
func TestCompactShortConversation(t *testing.T) {
	h := newHarness(t, setup{})
	h.srv.Reply(llmtest.Text("The parser lives in parse.go."), llmtest.Usage(900, 20))
	h.waitText("v0.0.0-test")
	h.send("where is the parser?")
	h.waitIdle("parse.go")
	h.send("/compact")
	frameGolden(t, "one-exchange", linesFrom(h.waitIdle("nothing to compact"), "nothing to compact"))

	h.srv.Reply(llmtest.Text("Noted: the lexer is next."), llmtest.Usage(1000, 20))
	h.send("and the lexer?")
	h.waitIdle("lexer is next")
	h.srv.Reply(llmtest.Text("## Goal\nFind the parser."), llmtest.Usage(600, 40))
	h.send("/compact")
	frameGolden(t, "two-exchanges", linesFrom(h.waitIdle("[compaction]"), "[compaction]"))
}

// TestCompactionSummaryReadable: the expanded block shows a split turn's
// summary without the scaffolding the model is given around it.
func TestCompactionSummaryReadable(t *testing.T) {
	st := newStyles()
	stored := "(No earlier history.)\n\n---\n\n**Earlier part of the current turn (the turn was split):**\n\n## Turn Request\nFix the lexer."
	got := ansi.Strip((&compactionItem{tokensBefore: 1200, summary: stored}).render(&view{width: 60, st: &st, md: &replies{}, expanded: true}))
	for _, bad := range []string{"No earlier history", "turn was split", "---"} {
		if strings.Contains(got, bad) {
			t.Errorf("the summary shows %q:\n%s", bad, got)
		}
	}
	if !strings.Contains(got, "Fix the lexer.") {
		t.Errorf("the summary is lost:\n%s", got)
	}
}
