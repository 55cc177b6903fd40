package compaction

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/llm/retry"
	"github.com/prime-agent/prime/session"
)

// The summarizer against real providers over loopback HTTP: the fake
// Anthropic and OpenAI-compatible servers of llm/llmtest speak the vendors'
// streaming wire formats and record every request body.

// withFakes runs f against a fake server of each wire format.
func withFakes(t *testing.T, f func(t *testing.T, srv *llmtest.Server)) {
	for _, api := range []string{"anthropic", "openai"} {
		t.Run(api, func(t *testing.T) {
			if api == "anthropic" {
				f(t, llmtest.NewAnthropic(t))
			} else {
				f(t, llmtest.NewOpenAI(t))
			}
		})
	}
}

// sequential wraps a provider to detect requests that overlap: Max is the
// most streams ever open at once.
type sequential struct {
	p           llm.Provider
	active, max atomic.Int32
}

func (s *sequential) Stream(ctx context.Context, req *llm.Request) iter.Seq[llm.Event] {
	return func(yield func(llm.Event) bool) {
		n := s.active.Add(1)
		defer s.active.Add(-1)
		for m := s.max.Load(); n > m && !s.max.CompareAndSwap(m, n); m = s.max.Load() {
		}
		for ev := range s.p.Stream(ctx, req) {
			if !yield(ev) {
				return
			}
		}
	}
}

// historyPrep is a preparation that summarizes Appendix A.4's span as
// history, in one request.
func historyPrep() *Preparation {
	return &Preparation{FirstKeptEntryID: "kept", MessagesToSummarize: a4Span(), TurnPrefixMessages: []session.Message{},
		TokensBefore: 1234, Settings: DefaultSettings(), Ledger: noLedger()}
}

// noLedger is an empty ledger: the tests of the requests and of how their
// answers are assembled see the summaries as the model wrote them (the
// ledger's repairs are tested in ledger_test.go).
func noLedger() *Ledger { return &Ledger{} }

// progressLog collects progress reports.
type progressLog []Progress

func (l *progressLog) add(p Progress) { *l = append(*l, p) }

func (l progressLog) kinds() []ProgressKind {
	var out []ProgressKind
	for _, p := range l {
		if len(out) == 0 || out[len(out)-1] != p.Kind {
			out = append(out, p.Kind)
		}
	}
	return out
}

func (l progressLog) text() string {
	var b strings.Builder
	for _, p := range l {
		if p.Kind == ProgressText {
			b.WriteString(p.Delta)
		}
	}
	return b.String()
}

// TestModelOneCall: one request streams the summary; Progress sees the
// request start and every text delta; the usage lands in the result; the
// request is the history request built from the preparation.
func TestModelOneCall(t *testing.T) {
	withFakes(t, func(t *testing.T, srv *llmtest.Server) {
		const answer = "## Goal\n- Fix the edit of a.ts\n\n## Constraints & Preferences\n- (none)\n\n## Next Steps\n1. Run the tests"
		srv.Reply(llmtest.Text(answer), llmtest.Usage(1200, 300))
		var log progressLog
		model := srv.Model()
		res, err := Compact(t.Context(), historyPrep(), Options{Provider: srv.Provider(), Model: model, ThinkingLevel: llm.ThinkingMedium, Progress: log.add})
		if err != nil {
			t.Fatal(err)
		}
		if res.Summary != answer || res.Deterministic || res.ModelError != nil || res.FirstKeptEntryID != "kept" || res.TokensBefore != 1234 {
			t.Errorf("result %+v", res)
		}
		if res.Usage == nil || res.Usage.Input != 1200 || res.Usage.Output != 300 {
			t.Errorf("usage %+v", res.Usage)
		}
		if got := log.kinds(); !slices.Equal(got, []ProgressKind{ProgressRequest, ProgressText}) {
			t.Errorf("progress kinds %v", got)
		}
		if first := log[0]; first.Phase != PhaseHistory || first.Part != 1 || first.Attempt != 0 {
			t.Errorf("first progress %+v", first)
		}
		if n := len(log) - 1; n < 2 || log.text() != answer {
			t.Errorf("%d text deltas make %q", n, log.text())
		}
		reqs := srv.Requests()
		if len(reqs) != 1 {
			t.Fatalf("%d requests", len(reqs))
		}
		want := promptText(promptInput{kind: kindHistory,
			transcript: renderTranscript(a4Span(), TranscriptOptions{Reasoning: !isClaudeFamily(model), ToolBodies: DefaultToolBodies})})
		if reqs[0].System() != systemPrompt || reqs[0].LastUserText() != want {
			t.Errorf("request sent:\n%s\n---\n%s", reqs[0].System(), reqs[0].LastUserText())
		}
		conversation := 0
		for _, m := range reqs[0].Messages() {
			if m["role"] != "system" && m["role"] != "developer" {
				conversation++
			}
		}
		if conversation != 1 {
			t.Errorf("the request holds %d messages besides the system prompt, want 1", conversation)
		}
	})
}

// TestModelRejectedAnswers: an answer cut off at the output limit, an empty
// one and one that ends in an error are never stored; the deterministic
// summary takes over and says why, in the result and in the details. The
// failed answers' usage still counts. An empty answer, and one that failed
// after it had begun, are asked for once more first.
func TestSummaryRepeatedOnce(t *testing.T) {
	good := llmtest.Stream(llmtest.Text("## Goal\nsummarized on the second try"), llmtest.Usage(900, 20))
	for _, tc := range []struct {
		name  string
		first llmtest.Reply
	}{
		{"server_error after content", llmtest.Stream(llmtest.Text("## Goal\nhal"), llmtest.ErrorEvent("server_error", "llama.cpp: slot failed"))},
		{"dropped after content", llmtest.Stream(llmtest.Text("## Goal"), llmtest.Disconnect())},
		{"empty", llmtest.Stream(llmtest.Usage(900, 0))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withFakes(t, func(t *testing.T, srv *llmtest.Server) {
				srv.Queue(tc.first)
				srv.Queue(good)
				var log progressLog
				res, err := Compact(t.Context(), historyPrep(), Options{Provider: srv.Provider(), Model: srv.Model(), Progress: log.add})
				if err != nil {
					t.Fatal(err)
				}
				if res.Deterministic || !strings.Contains(res.Summary, "summarized on the second try") || len(srv.Requests()) != 2 {
					t.Errorf("deterministic %v, %d requests, summary %.200q", res.Deterministic, len(srv.Requests()), res.Summary)
				}
				if !slices.Contains(log.kinds(), ProgressRepeat) {
					t.Errorf("progress %v", log.kinds())
				}
			})
		})
	}
}

// TestModelRejectedAnswers: the summarizer's failures that are not worth a
// retry, and those that failed again on the second try.
func TestModelRejectedAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reply  llmtest.Reply
		err    error
		reason string
	}{
		{"cut off", llmtest.Stream(llmtest.Text("## Goal\n- half a sum"), llmtest.Usage(900, 13107), llmtest.MaxTokens()), ErrSummaryTruncated, "cut off at the output limit"},
		{"empty", llmtest.Stream(llmtest.Usage(900, 0)), ErrEmptySummary, "no text"},
		{"blank", llmtest.Stream(llmtest.Text(" \n\n "), llmtest.Usage(900, 3)), ErrEmptySummary, "no text"},
		{"error event", llmtest.Stream(llmtest.Text("## Goal"), llmtest.ErrorEvent("overloaded_error", "Overloaded")), llm.ErrOverloaded, "Overloaded"},
		{"dropped connection", llmtest.Stream(llmtest.Text("## Goal"), llmtest.Disconnect()), llm.ErrConnection, "summarizer model failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withFakes(t, func(t *testing.T, srv *llmtest.Server) {
				srv.Queue(tc.reply)
				repeated := tc.name != "cut off" // failed mid-answer or empty: sent once more
				if repeated {
					srv.Queue(tc.reply)
				}
				var log progressLog
				res, err := Compact(t.Context(), historyPrep(), Options{Provider: srv.Provider(), Model: srv.Model(), Progress: log.add})
				if err != nil {
					t.Fatal(err)
				}
				checkFallback(t, res, tc.err, tc.reason)
				if got := log.kinds(); got[len(got)-1] != ProgressFallback {
					t.Errorf("progress %v does not end in a fallback", got)
				}
				if want := map[bool]int{true: 2, false: 1}[repeated]; len(srv.Requests()) != want ||
					slices.Contains(log.kinds(), ProgressRepeat) != repeated {
					t.Errorf("%d requests, progress %v; want %d", len(srv.Requests()), log.kinds(), want)
				}
				if tc.name == "cut off" && (res.Usage == nil || res.Usage.Output != 13107) {
					t.Errorf("the cut-off answer's usage is lost: %+v", res.Usage)
				}
			})
		})
	}
}

// checkFallback checks a result the deterministic summarizer wrote after
// the model failed with want.
func checkFallback(t *testing.T, res *Result, want error, reason string) {
	t.Helper()
	if !res.Deterministic || !errors.Is(res.ModelError, want) || !strings.Contains(res.FallbackReason, reason) {
		t.Errorf("deterministic %v, model error %v, reason %q; want %v, %q", res.Deterministic, res.ModelError, res.FallbackReason, want, reason)
	}
	d, ok := ParseDetails(res.Details)
	if !ok || d.Summarizer != SummarizerDeterministic || d.DeterministicReason != res.FallbackReason {
		t.Errorf("details %s", res.Details)
	}
	if !strings.Contains(res.Summary, deterministicMarker+" ("+res.FallbackReason+")") {
		t.Errorf("summary does not say code built it:\n%s", res.Summary)
	}
	checkFormat(t, res.Summary)
}

// TestModelProviderErrors: a classified failure left after the provider's
// own retries falls back; refused credentials (401, 403) do not: the
// compaction fails with llm.ErrAuth and writes nothing, the user has a key
// to fix.
func TestModelProviderErrors(t *testing.T) {
	withFakes(t, func(t *testing.T, srv *llmtest.Server) {
		t.Run("5xx after retries", func(t *testing.T) {
			srv.Queue(llmtest.HTTPError(500, "", "boom"), llmtest.HTTPError(503, "", "down"), llmtest.HTTPError(502, "", "bad gateway"))
			before := len(srv.Requests())
			p := srv.ProviderWith(&retry.Policy{MaxRetries: 2, BaseDelay: time.Millisecond})
			res, err := Compact(t.Context(), historyPrep(), Options{Provider: p, Model: srv.Model()})
			if err != nil {
				t.Fatal(err)
			}
			checkFallback(t, res, llm.ErrServer, "bad gateway")
			if n := len(srv.Requests()) - before; n != 3 {
				t.Errorf("%d requests, want the first and 2 retries", n)
			}
		})
		t.Run("rate limited", func(t *testing.T) {
			srv.Fail(429, "slow down")
			res, err := Compact(t.Context(), historyPrep(), Options{Provider: srv.Provider(), Model: srv.Model()})
			if err != nil {
				t.Fatal(err)
			}
			checkFallback(t, res, llm.ErrRateLimited, "slow down")
		})
		for _, status := range []int{401, 403} {
			t.Run(fmt.Sprint(status), func(t *testing.T) {
				srv.Fail(status, "invalid x-api-key")
				res, err := Compact(t.Context(), historyPrep(), Options{Provider: srv.Provider(), Model: srv.Model()})
				if res != nil || !errors.Is(err, llm.ErrAuth) || !strings.Contains(err.Error(), "API key") {
					t.Errorf("Compact = %v, %v; want an authentication error", res, err)
				}
				srv.Fail(status, "invalid x-api-key")
				b, err := SummarizeBranch(t.Context(), &BranchPreparation{Messages: a4Span()}, Options{Provider: srv.Provider(), Model: srv.Model()})
				if b != nil || !errors.Is(err, llm.ErrAuth) {
					t.Errorf("SummarizeBranch = %v, %v; want an authentication error", b, err)
				}
			})
		}
	})
}

// TestModelCancelled: cancelling while the summary streams, or between the
// two requests of a split turn, gives no result, no fallback, an error
// wrapping context.Canceled, and leaves no goroutine behind.
func TestModelCancelled(t *testing.T) {
	withFakes(t, func(t *testing.T, srv *llmtest.Server) {
		check := llmtest.CheckGoroutines(t)
		for _, tc := range []struct {
			name   string
			prep   *Preparation
			cancel func(p Progress) bool
		}{
			{"mid-stream", historyPrep(), func(p Progress) bool { return p.Kind == ProgressText }},
			{"between split-turn requests", mustPrepare(t, sessionSpan(t).path, keep(100)), func(p Progress) bool {
				return p.Kind == ProgressRequest && p.Phase == PhaseTurnPrefix
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				srv.Handle(func(*llmtest.Request) llmtest.Reply {
					slow := llmtest.Stream(llmtest.Text(strings.Repeat("## Goal\n- a long summary ", 40)), llmtest.Usage(10, 10))
					slow.Delay = 5 * time.Millisecond
					return slow
				})
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				var log progressLog
				res, err := Compact(ctx, tc.prep, Options{Provider: srv.Provider(), Model: srv.Model(), Progress: func(p Progress) {
					log.add(p)
					if tc.cancel(p) {
						cancel()
					}
				}})
				if res != nil || !errors.Is(err, context.Canceled) {
					t.Fatalf("Compact = %v, %v; want no result and context.Canceled", res, err)
				}
				if slices.Contains(log.kinds(), ProgressFallback) {
					t.Error("fell back after a cancellation")
				}
			})
		}
		srv.Client().CloseIdleConnections()
		check()
	})
}

// unsizedOverflow is an overflow answer that says nothing of the sizes
// involved (as LM Studio's, or OpenAI's newest wording): the summarizer
// learns nothing from it and steps down the ladder.
func unsizedOverflow() llmtest.Reply { return llmtest.HTTPError(400, "", "prompt is too long") }

// TestModelOverflowLadder: a summarizer that keeps answering "context
// overflow" without saying by how much gets at most two smaller retries,
// each actually smaller and shaped as the spec says (the oldest round
// dropped per retry, tool bodies 3 → 1 → 0), then the deterministic
// summary; an overflow followed by an answer uses the answer.
func TestModelOverflowLadder(t *testing.T) {
	withFakes(t, func(t *testing.T, srv *llmtest.Server) {
		span := bigSpan(4, 50)
		prep := &Preparation{FirstKeptEntryID: "k", MessagesToSummarize: span, Settings: DefaultSettings(), Ledger: noLedger()}
		t.Run("overflow three times", func(t *testing.T) {
			srv.Queue(unsizedOverflow(), unsizedOverflow(), unsizedOverflow())
			before := len(srv.Requests())
			var log progressLog
			res, err := Compact(t.Context(), prep, Options{Provider: srv.Provider(), Model: srv.Model(), Progress: log.add})
			if err != nil {
				t.Fatal(err)
			}
			checkFallback(t, res, llm.ErrContextOverflow, "smaller retries")
			reqs := srv.Requests()[before:]
			if len(reqs) != 3 {
				t.Fatalf("%d requests, want 3", len(reqs))
			}
			body := strings.Repeat("o", 50)
			for i, want := range []struct {
				first, dropped string
				bodies         int
			}{{"request 0:", "", 3}, {"request 1:", "request 0:", 1}, {"request 2:", "request 1:", 0}} {
				text := reqs[i].LastUserText()
				if !strings.Contains(text, "[User]: "+want.first) || want.dropped != "" && strings.Contains(text, want.dropped) {
					t.Errorf("request %d does not start at %q", i, want.first)
				}
				if n := strings.Count(text, body); n != want.bodies {
					t.Errorf("request %d keeps %d tool bodies, want %d", i, n, want.bodies)
				}
				if i > 0 && len(text) >= len(reqs[i-1].LastUserText()) {
					t.Errorf("retry %d is not smaller (%d ≥ %d bytes)", i, len(text), len(reqs[i-1].LastUserText()))
				}
			}
			var retries []int
			for _, p := range log {
				if p.Kind == ProgressRetry {
					retries = append(retries, p.Attempt)
					if !errors.Is(p.Err, llm.ErrContextOverflow) {
						t.Errorf("retry reported with %v", p.Err)
					}
				}
			}
			if !slices.Equal(retries, []int{1, 2}) {
				t.Errorf("retries reported: %v", retries)
			}
		})
		t.Run("overflow then an answer", func(t *testing.T) {
			srv.Queue(unsizedOverflow(), llmtest.Stream(llmtest.Text("## Goal\n- from retry 1"), llmtest.Usage(5, 5)))
			res, err := Compact(t.Context(), prep, Options{Provider: srv.Provider(), Model: srv.Model()})
			if err != nil || res.Deterministic || res.Summary != "## Goal\n- from retry 1" {
				t.Fatalf("result %+v, %v", res, err)
			}
		})
		t.Run("one oversized round is bounded tighter per retry", func(t *testing.T) {
			huge := append([]session.Message{userMsg(llm.Text{Text: "request 0: " + strings.Repeat("log line ", 30000)})}, bigSpan(1, 10)[1:]...)
			model := srv.Model()
			model.ContextWindow = 20000
			opts := Options{Provider: srv.Provider(), Model: model}
			budget := newSummarizer(opts, DefaultReserveTokens).inputBudget(promptInput{kind: kindHistory})
			srv.Queue(unsizedOverflow(), unsizedOverflow(), unsizedOverflow())
			before := len(srv.Requests())
			if _, err := Compact(t.Context(), &Preparation{FirstKeptEntryID: "k", MessagesToSummarize: huge, Settings: DefaultSettings()}, opts); err != nil {
				t.Fatal(err)
			}
			for i, r := range srv.Requests()[before:] {
				conversation := between(r.LastUserText(), "<conversation>\n", "\n</conversation>")
				if limit := budget * (4 - i) / 4; tokensOf(conversation) > limit {
					t.Errorf("attempt %d: %d tokens of conversation, over %d", i, tokensOf(conversation), limit)
				}
				if !strings.Contains(conversation, "[User]: request 0") || !strings.Contains(conversation, "characters left out") {
					t.Errorf("attempt %d lost the head or the marker", i)
				}
			}
		})
	})
}

func between(s, open, close string) string {
	_, s, _ = strings.Cut(s, open)
	s, _, _ = strings.Cut(s, close)
	return s
}

// pastedRounds makes n user rounds, each with a pasted text of the given
// number of lines (250 make about 1,000 tokens), so that a span is many
// times a small summarizer's window even without tool bodies.
func pastedRounds(n, lines int) []session.Message {
	var msgs []session.Message
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		msgs = append(msgs,
			userMsg(llm.Text{Text: fmt.Sprintf("request %d: look at this log\n%s", i, strings.Repeat(fmt.Sprintf("line of round %d\n", i), lines))}),
			assistantMsg(llm.Text{Text: "Looking."}, call(id, "read", fmt.Sprintf(`{"path":"f%d.go"}`, i))),
			resultMsg(id, "read", "package main", false),
			assistantMsg(llm.Text{Text: fmt.Sprintf("answer %d", i)}),
		)
	}
	return msgs
}

// TestModelFoldsOversizedSpan: a span many times the summarizer's window is
// summarized over several requests, one after the other, each fitting the
// window and updating the summary so far; a failure midway leaves code to
// finish from the summary so far.
func TestModelFoldsOversizedSpan(t *testing.T) {
	withFakes(t, func(t *testing.T, srv *llmtest.Server) {
		model := srv.Model()
		model.ContextWindow, model.MaxTokens = 6000, 1000
		span := pastedRounds(12, 250)
		prep := &Preparation{FirstKeptEntryID: "k", MessagesToSummarize: span, Settings: DefaultSettings(), Ledger: noLedger()}
		t.Run("folded", func(t *testing.T) {
			before := len(srv.Requests())
			parts := 0
			srv.Handle(func(r *llmtest.Request) llmtest.Reply {
				parts++
				reply := llmtest.Stream(llmtest.Text(fmt.Sprintf("## Goal\n- summary part %d", parts)), llmtest.Usage(1000, 20))
				reply.Delay = time.Millisecond
				return reply
			})
			p := &sequential{p: srv.Provider()}
			res, err := Compact(t.Context(), prep, Options{Provider: p, Model: model})
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()[before:]
			if len(reqs) < 3 || res.Deterministic || res.Summary != fmt.Sprintf("## Goal\n- summary part %d", len(reqs)) {
				t.Fatalf("%d requests, summary %q", len(reqs), res.Summary)
			}
			if p.max.Load() != 1 {
				t.Errorf("%d requests ran at once", p.max.Load())
			}
			if res.Usage == nil || res.Usage.Input != 1000*len(reqs) {
				t.Errorf("usage %+v over %d requests", res.Usage, len(reqs))
			}
			next := 0 // the next round expected
			for i, r := range reqs {
				text := r.LastUserText()
				if size := tokensOf(r.System()) + tokensOf(text) + r.MaxTokens(); size > model.ContextWindow {
					t.Errorf("request %d: %d tokens with the output reserve, window %d", i, size, model.ContextWindow)
				}
				if i > 0 && !strings.Contains(text, fmt.Sprintf("<previous-summary>\n## Goal\n- summary part %d\n</previous-summary>", i)) {
					t.Errorf("request %d does not update the summary so far", i)
				}
				for strings.Contains(text, fmt.Sprintf("[User]: request %d:", next)) {
					next++
				}
			}
			if next != 12 {
				t.Errorf("the requests cover rounds 0 to %d in order, want 0 to 11", next-1)
			}
		})
		t.Run("failure midway", func(t *testing.T) {
			srv.Handle(nil)
			srv.Queue(llmtest.Stream(llmtest.Text("## Goal\n- summary of the first rounds"), llmtest.Usage(1000, 20)), llmtest.HTTPError(500, "", "broke"))
			res, err := Compact(t.Context(), prep, Options{Provider: srv.Provider(), Model: model})
			if err != nil {
				t.Fatal(err)
			}
			checkFallback(t, res, llm.ErrServer, "broke")
			if !strings.Contains(res.Summary, "- summary of the first rounds") || !strings.Contains(res.Summary, "request 11: look at this log") {
				t.Errorf("the fallback lost the summary so far or the rest:\n%s", res.Summary)
			}
			if strings.Contains(res.Summary, "request 0: look") {
				t.Errorf("the fallback summarized again what the model already did")
			}
			if res.Usage == nil || res.Usage.Input != 1000 {
				t.Errorf("usage %+v", res.Usage)
			}
		})
	})
}

// TestModelSplitTurn: a split turn is two requests, history then turn
// prefix, one after the other; the summaries are merged with the separator
// and the file lists follow once. With no history the previous summary
// stands in for it. A failure in the prefix step keeps the history summary.
func TestModelSplitTurn(t *testing.T) {
	withFakes(t, func(t *testing.T, srv *llmtest.Server) {
		t.Run("history then prefix", func(t *testing.T) {
			prep := mustPrepare(t, sessionSpan(t).path, keep(100))
			prep.Ledger = noLedger()
			if !prep.IsSplitTurn || len(prep.MessagesToSummarize) == 0 {
				t.Fatal("not a split turn with history")
			}
			srv.Reply(llmtest.Text("## Goal\n- history"), llmtest.Usage(100, 10))
			srv.Reply(llmtest.Text("## Turn Request\n- what is left"), llmtest.Usage(50, 5))
			before := len(srv.Requests())
			p := &sequential{p: srv.Provider()}
			var log progressLog
			res, err := Compact(t.Context(), prep, Options{Provider: p, Model: srv.Model(), Progress: log.add})
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()[before:]
			if len(reqs) != 2 || !strings.Contains(reqs[0].LastUserText(), initialTask) || !strings.Contains(reqs[1].LastUserText(), turnPrefixTask) {
				t.Fatalf("%d requests, not history then turn prefix", len(reqs))
			}
			if strings.Contains(reqs[0].LastUserText(), "What is left?") || !strings.Contains(reqs[1].LastUserText(), "[User]: What is left?") {
				t.Error("the turn's first part is not (only) in the prefix request")
			}
			if p.max.Load() != 1 {
				t.Error("the two requests overlapped")
			}
			want := "## Goal\n- history" + splitTurnSeparator + "## Turn Request\n- what is left" + FormatFileLists(prep.FileOps.Lists())
			if res.Summary != want {
				t.Errorf("summary:\n%s\nwant:\n%s", res.Summary, want)
			}
			if res.Usage == nil || res.Usage.Input != 150 || res.Usage.Output != 15 {
				t.Errorf("usage %+v", res.Usage)
			}
			var phases []Phase
			for _, e := range log {
				if e.Kind == ProgressRequest {
					phases = append(phases, e.Phase)
				}
			}
			if !slices.Equal(phases, []Phase{PhaseHistory, PhaseTurnPrefix}) {
				t.Errorf("request phases %v", phases)
			}
		})
		t.Run("no history keeps the previous summary", func(t *testing.T) {
			b := newBuilder(t).parse("u1:40 a1:40 u2:40 a2:40")
			b.compaction("C1", "u2", "## Goal\n- Earlier goal\n\n<read-files>\nold.go\n</read-files>", `{"readFiles":["old.go"],"modifiedFiles":[]}`, false)
			b.parse("a3:40 a4:400")
			prep := mustPrepare(t, b.path, keep(100))
			if !prep.IsSplitTurn || len(prep.MessagesToSummarize) != 0 {
				t.Fatalf("split %v with %d history messages", prep.IsSplitTurn, len(prep.MessagesToSummarize))
			}
			srv.Reply(llmtest.Text("## Turn Request\n- u2"), llmtest.Usage(50, 5))
			before := len(srv.Requests())
			res, err := Compact(t.Context(), prep, Options{Provider: srv.Provider(), Model: srv.Model()})
			if err != nil {
				t.Fatal(err)
			}
			if n := len(srv.Requests()) - before; n != 1 {
				t.Errorf("%d requests, want the turn prefix only", n)
			}
			want := "## Goal\n- Earlier goal" + splitTurnSeparator + "## Turn Request\n- u2\n\n<read-files>\nold.go\n</read-files>"
			if res.Summary != want {
				t.Errorf("summary:\n%s\nwant:\n%s", res.Summary, want)
			}
		})
		t.Run("fallback in the prefix step", func(t *testing.T) {
			prep := mustPrepare(t, sessionSpan(t).path, keep(100))
			srv.Reply(llmtest.Text("## Goal\n- history from the model"), llmtest.Usage(100, 10))
			srv.Fail(500, "prefix broke")
			res, err := Compact(t.Context(), prep, Options{Provider: srv.Provider(), Model: srv.Model()})
			if err != nil {
				t.Fatal(err)
			}
			checkFallback(t, res, llm.ErrServer, "prefix broke")
			if !strings.Contains(res.Summary, "- history from the model") || !strings.Contains(res.Summary, "What is left?") {
				t.Errorf("fallback summary lost the history summary or the prefix:\n%s", res.Summary)
			}
		})
	})
}

// TestModelBranchSummary: a branch summary with a model: the branch request
// (with the user's instructions, or with them as the whole task under
// ReplaceInstructions), the preamble, the answer and the file lists.
func TestModelBranchSummary(t *testing.T) {
	withFakes(t, func(t *testing.T, srv *llmtest.Server) {
		b := branchTree(t)
		br := CollectBranch(pathTo(b, "uD"), pathTo(b, "uF"))
		prep, err := PrepareBranch(br.Entries, BranchBudget(srv.Model(), 0))
		if err != nil {
			t.Fatal(err)
		}
		for _, replace := range []bool{false, true} {
			t.Run(fmt.Sprintf("replace=%v", replace), func(t *testing.T) {
				srv.Reply(llmtest.Text("## Goal\n- tried reading b.go"), llmtest.Usage(70, 7))
				before := len(srv.Requests())
				res, err := SummarizeBranch(t.Context(), prep, Options{Provider: srv.Provider(), Model: srv.Model(),
					CustomInstructions: "List the files only.", ReplaceInstructions: replace})
				if err != nil {
					t.Fatal(err)
				}
				if want := branchPreamble + "## Goal\n- tried reading b.go\n\n<read-files>\nb.go\n</read-files>"; res.Summary != want || res.Deterministic {
					t.Errorf("summary:\n%s", res.Summary)
				}
				if e := res.Entry(br.OldLeafID); e.FromID != "uD" || e.Usage == nil || e.Usage.Input != 70 {
					t.Errorf("entry %+v", e)
				}
				text := srv.Requests()[before].LastUserText()
				if replace {
					if !strings.HasSuffix(text, "</conversation>\n\nList the files only.") || strings.Contains(text, "## Goal") {
						t.Errorf("replaced task:\n%s", text)
					}
				} else if !strings.Contains(text, branchTask) || !strings.HasSuffix(text, "<user-instructions>\nList the files only.\n</user-instructions>") {
					t.Errorf("branch task with instructions:\n%s", text)
				}
			})
		}
	})
}

// TestModelWireOptions pins what reaches the wire: the output limit
// min(⌊0.8 × reserveTokens⌋, the model's limit) on every request of a split
// turn (pi-reference §9.4 #35: reserve 500,000 on a model with a 128,000
// limit requests 128,000 twice, usages summed), the session's thinking
// level only for a reasoning model and a level other than off (#28–34),
// and no prompt caching.
func TestModelWireOptions(t *testing.T) {
	withFakes(t, func(t *testing.T, srv *llmtest.Server) {
		split := mustPrepare(t, sessionSpan(t).path, keep(100))
		for _, tc := range []struct {
			name      string
			reserve   int
			maxTokens int
			reasoning bool
			level     llm.ThinkingLevel
			wantMax   int
			thinks    bool
		}{
			{"#35 model limit caps a huge reserve", 500000, 128000, false, "", 128000, false},
			{"80% of the reserve", 16384, 32000, false, llm.ThinkingHigh, 13107, false},
			{"#30 thinking level medium", 16384, 32000, true, llm.ThinkingMedium, 13107, true},
			{"#33 thinking off", 16384, 32000, true, llm.ThinkingOff, 13107, false},
			{"#34 model without reasoning", 16384, 32000, false, llm.ThinkingMedium, 13107, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				model := srv.Model()
				model.MaxTokens, model.Reasoning = tc.maxTokens, tc.reasoning
				prep := *split
				prep.Settings.ReserveTokens = tc.reserve
				srv.Reply(llmtest.Text("## Goal\n- h"), llmtest.Usage(1000, 100))
				srv.Reply(llmtest.Text("## Turn Request\n- p"), llmtest.Usage(500, 50))
				before := len(srv.Requests())
				res, err := Compact(t.Context(), &prep, Options{Provider: srv.Provider(), Model: model, ThinkingLevel: tc.level})
				if err != nil {
					t.Fatal(err)
				}
				if res.Deterministic || res.Usage == nil || res.Usage.Input != 1500 || res.Usage.Output != 150 {
					t.Fatalf("deterministic %v (%s), usage %+v; want the two answers' usage summed", res.Deterministic, res.FallbackReason, res.Usage)
				}
				reqs := srv.Requests()[before:]
				if len(reqs) != 2 {
					t.Fatalf("%d requests", len(reqs))
				}
				for i, r := range reqs {
					thinking, effort := r.JSON["thinking"], r.JSON["reasoning_effort"]
					if thinks := thinking != nil || effort != nil; thinks != tc.thinks {
						t.Errorf("request %d: thinking %v, reasoning_effort %v; want reasoning %v", i, thinking, effort, tc.thinks)
					}
					if tc.thinks && srv.API() == llm.APIOpenAICompletions && effort != string(tc.level) {
						t.Errorf("request %d: reasoning_effort %v, want %s", i, effort, tc.level)
					}
					want := tc.wantMax
					if tc.thinks && srv.API() == llm.APIAnthropicMessages {
						// Anthropic's thinking budget comes on top of the answer.
						budget := int(thinking.(map[string]any)["budget_tokens"].(float64))
						want = min(tc.wantMax+budget, max(tc.maxTokens, tc.wantMax))
					}
					if r.MaxTokens() != want {
						t.Errorf("request %d: max tokens %d, want %d", i, r.MaxTokens(), want)
					}
					if strings.Contains(string(r.Body), "cache_control") {
						t.Errorf("request %d asks for prompt caching", i)
					}
				}
			})
		}
	})
}

// TestModelRequestsMatchGoldens: what Compact and SummarizeBranch send over
// the wire is, word for word, the system prompt and user message of the
// golden request files (testdata/request-*.golden), so the goldens show
// what a summarizer really receives.
func TestModelRequestsMatchGoldens(t *testing.T) {
	const instructions = "focus on the auth refactor, remember the exact migration command"
	anthropic, openai := llmtest.NewAnthropic(t), llmtest.NewOpenAI(t)
	onServer := func(m llm.Model, srv *llmtest.Server) llm.Model {
		m.BaseURL = srv.Model().BaseURL
		return m
	}
	span := a4Span()
	for _, tc := range []struct {
		golden string
		claude bool
		run    func(ctx context.Context, opts Options) error
	}{
		{"initial", false, compactWith(&Preparation{MessagesToSummarize: span}, "")},
		{"initial-instructions", false, compactWith(&Preparation{MessagesToSummarize: span}, instructions)},
		{"initial-claude", true, compactWith(&Preparation{MessagesToSummarize: span}, "")},
		{"update", false, compactWith(&Preparation{MessagesToSummarize: span, PreviousSummary: "## Goal\nShip it"}, "")},
		{"update-instructions", false, compactWith(&Preparation{MessagesToSummarize: span, PreviousSummary: "## Goal\nShip it"}, instructions)},
		{"update-deterministic", false, compactWith(&Preparation{MessagesToSummarize: span, PreviousSummary: "## Goal\n- User request: ship it",
			PreviousSummarizer: SummarizerDeterministic}, "")},
		{"turn-prefix", false, compactWith(&Preparation{IsSplitTurn: true, TurnPrefixMessages: span}, "")},
		{"turn-prefix-instructions", false, compactWith(&Preparation{IsSplitTurn: true, TurnPrefixMessages: span}, instructions)},
		{"branch", false, branchWith("", false)},
		{"branch-instructions", false, branchWith(instructions, false)},
		{"branch-claude", true, branchWith("", false)},
		{"branch-replace", false, branchWith("Only list the commands that were run.", true)},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			srv, model := openai, onServer(gptModel, openai)
			if tc.claude {
				srv, model = anthropic, onServer(claudeModel, anthropic)
			}
			srv.Reply(llmtest.Text("## Goal\n- ok"), llmtest.Usage(1, 1))
			before := len(srv.Requests())
			if err := tc.run(t.Context(), Options{Provider: srv.Provider(), Model: model}); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()[before:]
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			data, err := os.ReadFile(filepath.Join("testdata", "request-"+tc.golden+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			_, rest, _ := strings.Cut(string(data), "=== system\n")
			system, user, ok := strings.Cut(rest, "\n=== user\n")
			if !ok {
				t.Fatal("golden file without a user section")
			}
			if got := reqs[0].System(); got != system {
				t.Errorf("system prompt sent differs from the golden:\n%s", got)
			}
			if got := reqs[0].LastUserText(); got+"\n" != user {
				t.Errorf("user message sent differs from the golden:\n%s\n--- golden:\n%s", got, user)
			}
		})
	}
}

func compactWith(prep *Preparation, instructions string) func(context.Context, Options) error {
	return func(ctx context.Context, opts Options) error {
		p := *prep
		p.FirstKeptEntryID, p.Settings = "k", DefaultSettings()
		opts.CustomInstructions = instructions
		_, err := Compact(ctx, &p, opts)
		return err
	}
}

func branchWith(instructions string, replace bool) func(context.Context, Options) error {
	return func(ctx context.Context, opts Options) error {
		opts.CustomInstructions, opts.ReplaceInstructions = instructions, replace
		_, err := SummarizeBranch(ctx, &BranchPreparation{Messages: a4Span()}, opts)
		return err
	}
}
