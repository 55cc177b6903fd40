package compaction

import (
	"strings"
	"testing"

	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// TestBreakdown: every kind is measured (the parts add up to the chars/4
// estimate of the messages, give or take the rounding of each part), the
// marks sit where the settings put them, and the preview of a compaction
// is what Prepare decides.
func TestBreakdown(t *testing.T) {
	b := newBuilder(t)
	b.parse("S0:4000 u1:800 a1:400!read=a.go r1:2000 u2:400 s2:600 a2:300 b3")
	b.add("u4", &session.MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: "look"}, llm.Image{MIMEType: "image/png", Data: "aGk="}}}})
	b.assistant("a4", []llm.Content{llm.Thinking{Thinking: strings.Repeat("t", 400)}, llm.Text{Text: strings.Repeat("x", 800)}}, llm.Usage{})
	s := Settings{Enabled: true, ReserveTokens: 1000, KeepRecentTokens: 300}
	bd, err := Breakdown(b.path, s, 8000, 50)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := session.BuildContext(b.path)
	if err != nil {
		t.Fatal(err)
	}
	chars := 0
	for _, m := range ctx.Messages {
		chars += session.EstimateChars(m)
	}
	if d := bd.Total - (chars+3)/4; d < 0 || d > len(bd.Parts) {
		t.Errorf("parts add up to %d tokens, the messages hold %d characters", bd.Total, chars)
	}
	for _, k := range []ContextKind{KindSystem, KindSummaries, KindUser, KindAssistant, KindThinking, KindToolCalls, KindToolResults, KindImages, KindOther} {
		if bd.Tokens(k) == 0 {
			t.Errorf("no %s measured", KindName(k))
		}
	}
	if bd.Tokens(KindImages) != session.ImageChars/4 || bd.Tokens(KindThinking) != 100 {
		t.Errorf("images %d, thinking %d", bd.Tokens(KindImages), bd.Tokens(KindThinking))
	}
	if bd.Window != 8000 || bd.Threshold != 7000 || bd.BackgroundMark != 3500 || bd.Estimate != ctx.EstimateNext().Tokens {
		t.Errorf("window %d, threshold %d, mark %d, estimate %d", bd.Window, bd.Threshold, bd.BackgroundMark, bd.Estimate)
	}
	prep := mustPrepare(t, b.path, s)
	if c := bd.Compaction; c == nil || c.FirstKeptEntryID != prep.FirstKeptEntryID || c.SummarizeMessages != len(prep.MessagesToSummarize)+len(prep.TurnPrefixMessages) || c.KeepMessages == 0 {
		t.Errorf("preview %+v", bd.Compaction)
	}
	bar := bd.Bar(80)
	if len(bar) != 80 || bar[70] != '|' || bar[35] != ':' || !strings.ContainsAny(bar, "PUAO") || !strings.HasSuffix(bar, ".") {
		t.Errorf("bar %q", bar)
	}
	golden.Check(t, "breakdown.golden", bar+"\n"+bd.Legend()+"\n")

	// Nothing to compact: said why; an unknown window: no marks.
	bd, err = Breakdown(b.path, Settings{Enabled: true, KeepRecentTokens: 1 << 20}, 0, 80)
	if err != nil {
		t.Fatal(err)
	}
	if bd.Compaction != nil || bd.NotCompactable == "" || bd.Threshold != 0 || bd.BackgroundMark != 0 {
		t.Errorf("breakdown %+v", bd)
	}
	if bar := bd.Bar(10); len(bar) != 10 || strings.ContainsAny(bar, "|:.") {
		t.Errorf("a bar scaled to the context: %q", bar)
	}
	if bd.Bar(0) != "" {
		t.Error("a bar of no width")
	}
}
