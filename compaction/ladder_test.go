package compaction

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// bigSpan makes n user rounds, each a request, a tool call and a result of
// resultChars, and an answer.
func bigSpan(n, resultChars int) []session.Message {
	var msgs []session.Message
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		msgs = append(msgs,
			userMsg(llm.Text{Text: fmt.Sprintf("request %d: please fix the build", i)}),
			assistantMsg(llm.Thinking{Thinking: strings.Repeat("think ", 50)}, call(id, "bash", `{"command":"make"}`)),
			resultMsg(id, "bash", strings.Repeat("o", resultChars), false),
			assistantMsg(llm.Text{Text: fmt.Sprintf("answer %d", i)}),
		)
	}
	return msgs
}

func requestTokens(r *llm.Request) int {
	return tokensOf(r.SystemPrompt) + tokensOf(llm.TextOf(r.Messages[0].(*llm.UserMessage).Content))
}

// TestRequestsFitTheWindow is the never-stuck property without a provider:
// whatever the span's size (up to many times the summarizer's window), the
// span is split into requests that each fit the model's context window
// with the output reserve, and together they cover every round in order.
func TestRequestsFitTheWindow(t *testing.T) {
	model := llm.Model{ID: "small", Provider: "local", API: llm.APIOpenAICompletions, ContextWindow: 8000, MaxTokens: 2000}
	for _, tc := range []struct{ rounds, result int }{{1, 10}, {3, 100}, {40, 3000}, {200, 6000}, {1, 200000}} {
		t.Run(fmt.Sprintf("%dx%d", tc.rounds, tc.result), func(t *testing.T) {
			s := newSummarizer(Options{Model: model}, DefaultReserveTokens)
			rs := rounds(bigSpan(tc.rounds, tc.result))
			running := ""
			covered := 0
			for part := 1; covered < len(rs); part++ {
				in := promptInput{kind: kindHistory, previous: running}
				budget := s.inputBudget(in)
				n, bodies := s.fit(rs[covered:], budget)
				if n < 1 {
					t.Fatalf("part %d covers no round", part)
				}
				req := s.attempt(in, rs[covered:covered+n], bodies, budget, 0)
				if got := requestTokens(req) + req.MaxTokens; got > model.ContextWindow {
					t.Fatalf("part %d: request %d tokens + output %d > window %d", part, requestTokens(req), req.MaxTokens, model.ContextWindow)
				}
				covered += n
				running = strings.Repeat("s", 4*1500) // a running summary of about 1500 tokens
				if part > 500 {
					t.Fatal("does not converge")
				}
			}
		})
	}
}

// TestOverflowRetries pins what each retry sends: the oldest round dropped
// per retry while another remains, tool bodies 3 → 1 → 0, and a tighter
// head-and-tail bound.
func TestOverflowRetries(t *testing.T) {
	model := llm.Model{ID: "m", ContextWindow: 100000, MaxTokens: 1000}
	s := newSummarizer(Options{Model: model}, DefaultReserveTokens)
	rs := rounds(bigSpan(4, 50))
	in := promptInput{kind: kindHistory}
	budget := s.inputBudget(in)
	text := func(attempt int) string {
		return llm.TextOf(s.attempt(in, rs, DefaultToolBodies, budget, attempt).Messages[0].(*llm.UserMessage).Content)
	}
	for attempt, want := range []struct {
		firstRound string
		bodies     int
	}{{"request 0", 3}, {"request 1", 1}, {"request 2", 0}} {
		got := text(attempt)
		if !strings.Contains(got, "[User]: "+want.firstRound+":") {
			t.Errorf("attempt %d does not start at %s", attempt, want.firstRound)
		}
		if attempt > 0 && strings.Contains(got, fmt.Sprintf("request %d:", attempt-1)) {
			t.Errorf("attempt %d still has the dropped round", attempt)
		}
		if c := strings.Count(got, strings.Repeat("o", 50)); c != want.bodies {
			t.Errorf("attempt %d keeps %d tool bodies, want %d", attempt, c, want.bodies)
		}
	}
	// One round is never dropped.
	one := rs[:1]
	for attempt := range 3 {
		got := llm.TextOf(s.attempt(in, one, 3, budget, attempt).Messages[0].(*llm.UserMessage).Content)
		if !strings.Contains(got, "request 0") {
			t.Errorf("attempt %d dropped the only round", attempt)
		}
	}
	// An oversized single round is bounded head and tail, tighter per retry.
	// (Tool bodies are bounded anyway; a pasted log in a user message is not.)
	huge := rounds(append([]session.Message{userMsg(llm.Text{Text: "request 0: " + strings.Repeat("log ", 250000)})}, bigSpan(1, 10)[1:]...))
	small := llm.Model{ID: "m", ContextWindow: 20000, MaxTokens: 1000}
	s = newSummarizer(Options{Model: small}, DefaultReserveTokens)
	budget = s.inputBudget(in)
	prev := 1 << 30
	for attempt := range 3 {
		got := llm.TextOf(s.attempt(in, huge, 3, budget, attempt).Messages[0].(*llm.UserMessage).Content)
		size := tokensOf(got)
		if size >= prev {
			t.Errorf("attempt %d is not smaller (%d ≥ %d)", attempt, size, prev)
		}
		prev = size
		if !strings.Contains(got, "[User]: request 0") || !strings.Contains(got, "characters left out") {
			t.Errorf("attempt %d: head or marker missing", attempt)
		}
		if attempt == 0 && !strings.Contains(got, "answer 0") {
			t.Error("tail missing")
		}
	}
}

// TestInputBudget: the window less the output reserve, the system prompt
// and the rest of the message (previous summary, instructions).
func TestInputBudget(t *testing.T) {
	m := llm.Model{ContextWindow: 50000, MaxTokens: 4000}
	s := newSummarizer(Options{Model: m}, DefaultReserveTokens)
	base := s.inputBudget(promptInput{kind: kindHistory})
	want := 50000 - 4000 - tokensOf(systemPrompt) - tokensOf(promptText(promptInput{kind: kindHistory}))
	if base != want {
		t.Errorf("budget = %d, want %d", base, want)
	}
	withPrev := s.inputBudget(promptInput{kind: kindHistory, previous: strings.Repeat("p", 4000)})
	if base-withPrev < 1000 {
		t.Errorf("a 1000-token previous summary shrinks the budget by %d", base-withPrev)
	}
	unknown := newSummarizer(Options{}, 0).inputBudget(promptInput{kind: kindHistory})
	if unknown <= 100000 || unknown >= DefaultContextWindow {
		t.Errorf("unknown window budget = %d", unknown)
	}
}

// TestPreviousSummaryNeverDropped: when the previous summary leaves no room
// for the conversation, the model is not asked (the provider here is nil
// and would panic if called) and the failure carries the previous summary
// forward whole, for the deterministic summarizer.
func TestPreviousSummaryNeverDropped(t *testing.T) {
	model := llm.Model{ID: "tiny", ContextWindow: 3000, MaxTokens: 500}
	s := newSummarizer(Options{Model: model}, DefaultReserveTokens)
	previous := "## Goal\n- " + strings.Repeat("keep me ", 1500)
	msgs := bigSpan(2, 10)
	_, err := s.summarizeSpan(t.Context(), kindHistory, msgs, previous, false)
	f, ok := err.(*spanFailure)
	if !ok {
		t.Fatalf("err = %v, want a span failure", err)
	}
	if f.running != previous || len(f.remaining) != len(msgs) || !strings.Contains(f.reason, "no room") {
		t.Errorf("failure = %q, %d remaining", f.reason, len(f.remaining))
	}
	if s.calls != 0 {
		t.Error("the model was asked")
	}
	text := deterministicSummary(f.remaining, f.running, "", f.reason, s.deterministicLimit(), nil)
	if !strings.Contains(text, "keep me keep me") || !strings.Contains(text, "request 1: please fix the build") {
		t.Errorf("fallback lost the previous summary or the span:\n%.500s", text)
	}
}

// TestCalibratedBudget: what the server counted sizes the budget. A
// tokenizer sparser than chars/4 leaves it alone; a denser one divides the
// window less the reserve by the highest ratio seen plus the margin; a
// window smaller than the model's replaces it (a larger one is ignored)
// and caps the output limit at a quarter of it.
func TestCalibratedBudget(t *testing.T) {
	m := llm.Model{ContextWindow: 50000, MaxTokens: 4000}
	s := newSummarizer(Options{Model: m}, DefaultReserveTokens)
	in := promptInput{kind: kindHistory}
	overhead := tokensOf(systemPrompt) + tokensOf(promptText(in))
	req := s.request(promptInput{kind: kindHistory, transcript: strings.Repeat("x", 40000)})
	est := requestTokens(req)
	at2 := func(room int) int { return int(float64(room) / (2 * (1 + calibrationMargin))) } // a ratio of 2 measured
	for _, step := range []struct {
		name           string
		prompt, window int
		budget, max    int
	}{
		{"nothing measured", 0, 0, 50000 - 4000 - overhead, 4000},
		{"sparser tokenizer", est * 9 / 10, 0, 50000 - 4000 - overhead, 4000},
		{"denser tokenizer", est * 2, 0, at2(46000) - overhead, 4000},
		{"a lower ratio later", est * 3 / 2, 0, at2(46000) - overhead, 4000},
		{"a larger window", 0, 60000, at2(46000) - overhead, 4000},
		{"a smaller window", 0, 8000, at2(6000) - overhead, 2000},
		{"larger than the one learnt", 0, 9000, at2(6000) - overhead, 2000},
	} {
		s.observe(req, step.prompt, step.window)
		if got := s.inputBudget(in); got != step.budget {
			t.Errorf("%s: budget %d, want %d", step.name, got, step.budget)
		}
		if got := s.request(in).MaxTokens; got != step.max {
			t.Errorf("%s: max tokens %d, want %d", step.name, got, step.max)
		}
	}
}
