package compaction

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
)

// Summaries through servers that count with their own tokenizer and keep to
// their own window (llmtest.Window): llama.cpp, which refuses a prompt as
// large as its context with n_prompt_tokens and n_ctx and fills its
// context while it writes; OpenAI and Anthropic, which refuse a prompt that
// does not fit with the requested output, their wordings giving both
// numbers.

// windowServer is a fake server with a simulated window whose handler
// writes a numbered summary of about 600 of the server's tokens, whatever
// its tokenizer, and remembers which rounds each answer summarized.
type windowServer struct {
	srv *llmtest.Server
	mu  sync.Mutex
	// rounds[k] are the round numbers of the request answer k summarized.
	rounds [][]int
}

var roundMarker = regexp.MustCompile(`\[User\]: request (\d+):`)
var answerMarker = regexp.MustCompile(`summary answer (\d+) of the span`)

func newWindowServer(t *testing.T, api string, flavor llmtest.Flavor, w llmtest.Window) *windowServer {
	ws := &windowServer{}
	if api == llm.APIAnthropicMessages {
		ws.srv = llmtest.NewAnthropic(t)
	} else {
		ws.srv = llmtest.NewOpenAI(t, flavor)
	}
	ws.srv.SetWindow(w)
	ws.srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		conversation := between(r.LastUserText(), "<conversation>\n", "\n</conversation>")
		var covered []int
		for _, m := range roundMarker.FindAllStringSubmatch(conversation, -1) {
			n, _ := strconv.Atoi(m[1])
			covered = append(covered, n)
		}
		ws.mu.Lock()
		k := len(ws.rounds)
		ws.rounds = append(ws.rounds, covered)
		ws.mu.Unlock()
		text := fmt.Sprintf("## Goal\n- summary answer %d of the span\n\n## Critical Context\n", k)
		for w.Tokens(text) < 600 {
			text += "- a fact the model kept\n"
		}
		return llmtest.Stream(llmtest.Text(text))
	})
	return ws
}

// used returns the rounds covered by the answers the summary was built
// from: the one it ends with and every one a later request updated.
func (ws *windowServer) used(t *testing.T, summary string, reqs []*llmtest.Request) map[int]bool {
	t.Helper()
	answers := map[int]bool{}
	for _, r := range reqs {
		prev := between(r.LastUserText(), "<previous-summary>\n", "\n</previous-summary>")
		for _, m := range answerMarker.FindAllStringSubmatch(prev, -1) {
			n, _ := strconv.Atoi(m[1])
			answers[n] = true
		}
	}
	for _, m := range answerMarker.FindAllStringSubmatch(summary, -1) {
		n, _ := strconv.Atoi(m[1])
		answers[n] = true
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	covered := map[int]bool{}
	for k := range answers {
		for _, n := range ws.rounds[k] {
			covered[n] = true
		}
	}
	return covered
}

// TestSummariesThroughRealWindows: compactions (history and a split turn's
// prefix) and branch summaries through llama.cpp, OpenAI and Anthropic
// servers whose tokenizers count 0.9, 1.1, 1.3, 2.3 and 4.3 times the
// chars/4 estimate, with the model's window told right and, for llama.cpp,
// told as 128,000 when the server has 8,192. Every case ends with the
// model's summary, built from answers that together cover every round; an
// overflow happens at most once per job (the first request teaches the
// server's tokenizer and window to every later one) and never when the
// estimate is on the safe side with the window told right.
func TestSummariesThroughRealWindows(t *testing.T) {
	const nCtx = 8192
	history, prefix := pastedRounds(80, 40), pastedRounds(88, 40)[80:]
	for _, srvCase := range []struct {
		name   string
		api    string
		flavor llmtest.Flavor
		told   int // the model's window as configured
	}{
		{"llamacpp", llm.APIOpenAICompletions, llmtest.FlavorLlamaCpp, nCtx},
		{"llamacpp-untold", llm.APIOpenAICompletions, llmtest.FlavorLlamaCpp, 128000},
		{"openai", llm.APIOpenAICompletions, llmtest.FlavorOpenAI, nCtx},
		{"anthropic", llm.APIAnthropicMessages, llmtest.FlavorOpenAI, nCtx},
	} {
		for _, ratio := range []float64{0.9, 1.1, 1.3, 2.3, 4.3} {
			for _, job := range []string{"compaction", "branch"} {
				name := fmt.Sprintf("%s/%.1f/%s", srvCase.name, ratio, job)
				t.Run(name, func(t *testing.T) {
					ws := newWindowServer(t, srvCase.api, srvCase.flavor, llmtest.Window{Size: nCtx, Ratio: ratio})
					model := ws.srv.Model()
					model.ContextWindow, model.MaxTokens = srvCase.told, 1024
					if srvCase.told != nCtx {
						model.MaxTokens = 16384 // what models.json gives a model it says nothing of
					}
					var log progressLog
					opts := Options{Provider: ws.srv.Provider(), Model: model, Progress: log.add}
					var summary string
					var deterministic bool
					var reason string
					want := 80
					if job == "compaction" {
						res, err := Compact(t.Context(), &Preparation{FirstKeptEntryID: "k", MessagesToSummarize: history,
							TurnPrefixMessages: prefix, IsSplitTurn: true, Settings: DefaultSettings()}, opts)
						if err != nil {
							t.Fatal(err)
						}
						summary, deterministic, reason = res.Summary, res.Deterministic, res.FallbackReason
						want = 88
					} else {
						res, err := SummarizeBranch(t.Context(), &BranchPreparation{Messages: history}, opts)
						if err != nil {
							t.Fatal(err)
						}
						summary, deterministic, reason = res.Summary, res.Deterministic, res.FallbackReason
					}
					if deterministic {
						t.Fatalf("fell back: %s", reason)
					}
					reqs := ws.srv.Requests()
					covered := ws.used(t, summary, reqs)
					for n := range want {
						if !covered[n] {
							t.Errorf("round %d is in none of the answers the summary was built from", n)
						}
					}
					st := ws.srv.WindowStats()
					overflows := st.Refused + st.Filled
					retries := 0
					for _, p := range log {
						if p.Kind == ProgressRetry {
							retries++
						}
					}
					t.Logf("%-16s ratio %.1f %-10s: %2d requests, %d overflows (%d refused, %d filled), %d truncated",
						srvCase.name, ratio, job, len(reqs), overflows, st.Refused, st.Filled, st.Truncated)
					if overflows != retries || st.Truncated != 0 {
						t.Errorf("%d overflows, %d retries, %d truncated", overflows, retries, st.Truncated)
					}
					if overflows > 1 || ratio < 1 && srvCase.told == nCtx && overflows != 0 {
						t.Errorf("%d overflows", overflows)
					}
					// At 1.1 the first request fits llama.cpp's context but
					// not with the summary: the context fills (the path
					// of llm.LengthStopOverflow, kept covered here).
					if srvCase.name == "llamacpp" && ratio == 1.1 && st.Filled != 1 {
						t.Errorf("the context did not fill: %+v", st)
					}
				})
			}
		}
	}
}

// TestGenuineOutputLimit: an answer cut at the request's output limit, with
// room left in the window, is rejected as truncated, with no smaller retry.
func TestGenuineOutputLimit(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.FlavorLlamaCpp)
	srv.SetWindow(llmtest.Window{Size: 8192, Ratio: 1.3})
	srv.Reply(llmtest.Text("## Goal\n" + strings.Repeat("- a long summary line\n", 400)))
	model := srv.Model()
	model.ContextWindow, model.MaxTokens = 8192, 512
	res, err := Compact(t.Context(), historyPrep(), Options{Provider: srv.Provider(), Model: model})
	if err != nil {
		t.Fatal(err)
	}
	checkFallback(t, res, ErrSummaryTruncated, "cut off at the output limit")
	if errors.Is(res.ModelError, ErrContextFilled) || len(srv.Requests()) != 1 || res.Usage.Output != 512 {
		t.Errorf("model error %v after %d requests, output %d", res.ModelError, len(srv.Requests()), res.Usage.Output)
	}
	if st := srv.WindowStats(); st != (llmtest.WindowStats{Truncated: 1}) {
		t.Errorf("stats %+v", st)
	}
}

// TestContextStillFills: a server whose context keeps filling before the
// summary is done (8,165 input and 27 output tokens of a 512-token limit,
// every time) gets the smaller retries, each sized from what the last
// answer showed, and then the fallback says that the context filled, not
// that the output limit was hit.
func TestContextStillFills(t *testing.T) {
	withFakes(t, func(t *testing.T, srv *llmtest.Server) {
		srv.Handle(func(*llmtest.Request) llmtest.Reply {
			return llmtest.Stream(llmtest.Text("## Goal\n- the begin"), llmtest.Usage(8165, 27), llmtest.MaxTokens())
		})
		model := srv.Model()
		model.ContextWindow, model.MaxTokens = 128000, 512
		var log progressLog
		before := len(srv.Requests())
		res, err := Compact(t.Context(), &Preparation{FirstKeptEntryID: "k", MessagesToSummarize: pastedRounds(40, 100), Settings: DefaultSettings()},
			Options{Provider: srv.Provider(), Model: model, Progress: log.add})
		if err != nil {
			t.Fatal(err)
		}
		checkFallback(t, res, ErrContextFilled, "context window filled up before the summary was finished (8165 input and 27 output tokens")
		if errors.Is(res.ModelError, ErrSummaryTruncated) || strings.Contains(res.FallbackReason, "output limit was") {
			t.Errorf("reported as the output limit: %s", res.FallbackReason)
		}
		reqs := srv.Requests()[before:]
		if len(reqs) != 1+MaxOverflowRetries {
			t.Fatalf("%d requests", len(reqs))
		}
		for i, r := range reqs {
			if size := tokensOf(r.Text()); i > 0 && size >= tokensOf(reqs[i-1].Text()) {
				t.Errorf("retry %d is not smaller (%d tokens)", i, size)
			}
			if i > 0 && (tokensOf(r.Text())+r.MaxTokens() > 8192 || !strings.Contains(r.LastUserText(), "[User]: request 0:")) {
				t.Errorf("retry %d: %d tokens and %d of output for a window of 8,192; oldest round kept: %v",
					i, tokensOf(r.Text()), r.MaxTokens(), strings.Contains(r.LastUserText(), "request 0:"))
			}
		}
		for _, p := range log {
			if p.Kind == ProgressRetry && !errors.Is(p.Err, ErrContextFilled) {
				t.Errorf("retry reported with %v", p.Err)
			}
		}
	})
}

// TestSizedOverflowRefits: a refusal that gives the sizes is retried with
// the request fitted again to what the numbers leave, keeping the oldest
// rounds and leaving the newest to a later part (the unsized ladder drops
// the oldest instead), and the later parts are sized the same way from the
// start.
func TestSizedOverflowRefits(t *testing.T) {
	ws := newWindowServer(t, llm.APIOpenAICompletions, llmtest.FlavorLlamaCpp, llmtest.Window{Size: 8192, Ratio: 2.3})
	model := ws.srv.Model()
	model.ContextWindow, model.MaxTokens = 8192, 1024
	res, err := Compact(t.Context(), &Preparation{FirstKeptEntryID: "k", MessagesToSummarize: pastedRounds(30, 100), Settings: DefaultSettings()},
		Options{Provider: ws.srv.Provider(), Model: model})
	if err != nil || res.Deterministic {
		t.Fatalf("%v: %+v", err, res)
	}
	reqs := ws.srv.Requests()
	if len(reqs) < 3 || !strings.Contains(reqs[1].LastUserText(), "[User]: request 0:") {
		t.Fatalf("%d requests; the retry does not start at the oldest round", len(reqs))
	}
	if len(between(reqs[1].LastUserText(), "<conversation>", "</conversation>")) >= len(between(reqs[0].LastUserText(), "<conversation>", "</conversation>")) {
		t.Error("the retry is not smaller")
	}
	w := llmtest.Window{Size: 8192, Ratio: 2.3}
	for i, r := range reqs[1:] {
		if size := w.PromptTokens(r) + r.MaxTokens(); size > 8192 {
			t.Errorf("request %d: %d real tokens with the output limit", i+1, size)
		}
	}
	if st := ws.srv.WindowStats(); st.Refused != 1 || st.Filled != 0 {
		t.Errorf("stats %+v", st)
	}
}
