package agent_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
)

// slowSummary is the time the slow summarizer takes for an answer.
const slowSummary = 5 * time.Second

// summarizer is a fake Anthropic server answering summary requests as echo
// does, each answer taking about d; fail, when set, decides per request
// (1, 2, …) to answer with a server error instead.
func summarizer(t testing.TB, d time.Duration, fail func(n int) bool) *llmtest.Server {
	return summarizerTold(t, d, fail, nil)
}

// summarizerTold is summarizer closing asked, when not nil, at the first
// request.
func summarizerTold(t testing.TB, d time.Duration, fail func(n int) bool, asked chan struct{}) *llmtest.Server {
	srv := llmtest.NewAnthropic(t)
	n := 0
	srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		n++
		if n == 1 && asked != nil {
			close(asked)
		}
		if fail != nil && fail(n) {
			return llmtest.HTTPError(500, "api_error", "the summarizer broke")
		}
		reply := echo(r)
		reply.Delay = d / time.Duration(anthropicEvents(reply))
		return reply
	})
	return srv
}

// anthropicEvents counts the events the fake server streams for a reply of
// one text block: message_start, ping, the block's start, its deltas and
// stop, message_delta and message_stop (the deltas as llmfake splits a
// text: pieces of max(8, len/16) bytes).
func anthropicEvents(r llmtest.Reply) int {
	text := ""
	for _, p := range r.Parts {
		text += p.Text
	}
	size := max(8, len(text)/16)
	return 6 + (len(text)+size-1)/size
}

// bgSettings: a threshold of 4,000 tokens (the fake window is 200,000), the
// background mark at half of it, 200 tokens kept, summaries by sum.
func bgSettings(t testing.TB, sum *llmtest.Server, background bool, kv ...string) *settings.Settings {
	m := sum.Model()
	return testSettings(t, append([]string{"compaction.reserveTokens", "196000", "compaction.keepRecentTokens", "200",
		"compaction.backgroundThreshold", "50", "compaction.model", m.Provider + "/" + m.ID,
		"compaction.background", boolText(background)}, kv...)...)
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// liveWithSummarizer is liveWith where summaries come from sum.
func liveWithSummarizer(t testing.TB, conv, sum *llmtest.Server, ev *events, st *settings.Settings) (*agent.Agent, string) {
	ag, path, _ := liveWithTransport(t, conv, sum, ev, st)
	return ag, path
}

// liveWithTransport is liveWithSummarizer, its requests on a transport of
// its own (for a test that closes its idle connections).
func liveWithTransport(t testing.TB, conv, sum *llmtest.Server, ev *events, st *settings.Settings) (*agent.Agent, string, *http.Transport) {
	dir := agentDir(t, conv, sum)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s, err := session.Create(path, session.Options{CWD: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config(dir, st, ev)
	cfg.Model = conv.Model().Provider + "/" + conv.Model().ID
	cfg.NoContextFiles = true
	tr := &http.Transport{}
	cfg.HTTPClient = &http.Client{Transport: tr}
	ag := agent.New(s, cfg)
	t.Cleanup(func() { ag.Close(); tr.CloseIdleConnections() })
	return ag, path, tr
}

// bgScript is a conversation of three prompts: the second answer takes the
// context past the background mark (2,500 tokens), the third past the
// threshold (4,500). The second prompt is long: a compaction keeps from it
// (the 200 tokens kept reach back to it), whether planned after the second
// answer or after the third, and summarizes the first exchange in one
// request. big3 makes the third answer large: planned after it, the cut
// moves to it.
func bgScript(t testing.TB, conv *llmtest.Server, big3 bool) []string {
	third := "ok"
	if big3 {
		third = strings.Repeat("the third answer is long. ", 360)
	}
	conversation(conv,
		llmtest.Stream(llmtest.Text("first answer"), llmtest.Usage(1000, 10)),
		llmtest.Stream(llmtest.Text("the planner explained"), llmtest.Usage(2500, 500)),
		llmtest.Stream(llmtest.Text(third), llmtest.Usage(4500, 5)),
	)
	return []string{"first question about the planner",
		"second: explain the planner in detail; here is what I know of it. " + strings.Repeat("It plans passes over stations. ", 40),
		"third: thanks"}
}

// blockingRun plays bgScript with background compaction off and returns
// the session file.
func blockingRun(t *testing.T, big3 bool) string {
	conv, sum := llmtest.NewOpenAI(t), summarizer(t, 0, nil)
	ag, path := liveWithSummarizer(t, conv, sum, nil, bgSettings(t, sum, false))
	for _, p := range bgScript(t, conv, big3) {
		send(t, ag, p)
	}
	return path
}

// waitReady polls until the background summary is written.
func waitReady(t testing.TB, ag *agent.Agent) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !ag.BackgroundSummary().Ready {
		if time.Now().After(deadline) {
			t.Fatalf("no background summary after a minute: %+v", ag.BackgroundSummary())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// compactionOf returns the only compaction entry of the file at path and
// the file's entries.
func compactionOf(t testing.TB, path string) (*session.Entry, []*session.Entry) {
	t.Helper()
	s, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var found []*session.Entry
	for _, e := range s.Entries() {
		if e.Type == session.TypeCompaction {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d compactions in the file, want 1", len(found))
	}
	return found[0], s.Entries()
}

// kinds lists the kinds of the BackgroundCompaction events.
func backgroundKinds(ev *events) []agent.BackgroundKind {
	var out []agent.BackgroundKind
	for _, e := range eventsOf[agent.BackgroundCompaction](ev) {
		out = append(out, e.Kind)
	}
	return out
}

// sameCompaction compares two compaction entries of two files written from
// the same conversation: the same place (parent and first kept entry, by
// their position in the file), tokensBefore, file lists and ledger.
func sameCompaction(t *testing.T, what string, a *session.Entry, ae []*session.Entry, b *session.Entry, be []*session.Entry) {
	t.Helper()
	pos := func(es []*session.Entry, id string) int {
		return slices.IndexFunc(es, func(e *session.Entry) bool { return e.ID == id })
	}
	pa, _ := a.Payload()
	pb, _ := b.Payload()
	ca, cb := pa.(*session.CompactionEntry), pb.(*session.CompactionEntry)
	da, _ := compaction.ParseDetails(ca.Details)
	db, _ := compaction.ParseDetails(cb.Details)
	if pos(ae, a.ParentID) != pos(be, b.ParentID) || pos(ae, ca.FirstKeptEntryID) != pos(be, cb.FirstKeptEntryID) {
		t.Errorf("%s: the compaction follows entry %d and keeps from %d; blocking: %d and %d", what,
			pos(ae, a.ParentID), pos(ae, ca.FirstKeptEntryID), pos(be, b.ParentID), pos(be, cb.FirstKeptEntryID))
	}
	if ca.TokensBefore != cb.TokensBefore || !slices.Equal(da.ReadFiles, db.ReadFiles) || !slices.Equal(da.ModifiedFiles, db.ModifiedFiles) {
		t.Errorf("%s: tokensBefore %d, files %v %v; blocking: %d, %v %v", what, ca.TokensBefore, da.ReadFiles, da.ModifiedFiles, cb.TokensBefore, db.ReadFiles, db.ModifiedFiles)
	}
	if !strings.HasPrefix(ca.Summary, "## Goal") || !strings.HasPrefix(cb.Summary, "## Goal") {
		t.Errorf("%s: not summaries in the format:\n%s\n\n%s", what, ca.Summary, cb.Summary)
	}
}

// TestBackgroundSummaryUsedAtOnce: past the mark the summary is written in
// the background by a summarizer that takes 5 s; at the threshold it is
// appended at once, with no request to the summarizer while the user waits.
// The file holds what a blocking compaction writes at the same point.
func TestBackgroundSummaryUsedAtOnce(t *testing.T) {
	conv, sum := llmtest.NewOpenAI(t), summarizer(t, slowSummary, nil)
	var ev events
	ag, path := liveWithSummarizer(t, conv, sum, &ev, bgSettings(t, sum, true))
	prompts := bgScript(t, conv, false)
	send(t, ag, prompts[0])
	send(t, ag, prompts[1])
	if st := ag.BackgroundSummary(); !st.Writing && !st.Ready {
		t.Fatalf("no background summary past the mark: %v", backgroundKinds(&ev))
	}
	waitReady(t, ag)
	requests := len(sum.Requests())
	send(t, ag, prompts[2])
	if n := len(sum.Requests()) - requests; n != 0 {
		t.Errorf("%d summary requests at the threshold, want none", n)
	}
	if got := backgroundKinds(&ev); !slices.Equal(got, []agent.BackgroundKind{agent.BackgroundStarted, agent.BackgroundReady, agent.BackgroundUsed}) {
		t.Errorf("background events %v", got)
	}
	ends := eventsOf[agent.CompactionEnd](&ev)
	if len(ends) != 1 || ends[0].Result == nil || ends[0].Reason != agent.ReasonThreshold {
		t.Fatalf("compaction ends %+v", ends)
	}
	r := ends[0].Result.Receipt
	if r == nil || !r.Recorded || !r.Background || r.Updated || r.PlannedAt == "" {
		t.Fatalf("receipt %+v", r)
	}
	t.Logf("the background summary took %d ms; at the threshold the user waited %d ms", r.DurationMs, r.WaitMs)
	if r.DurationMs < (slowSummary - time.Second).Milliseconds() {
		t.Errorf("the background summary took %d ms: the summarizer was not slow", r.DurationMs)
	}
	if r.WaitMs >= slowSummary.Milliseconds() {
		t.Errorf("the user waited %d ms at the threshold, as long as the summarizer takes", r.WaitMs)
	}

	// The same conversation with background compaction off.
	got, gotAll := compactionOf(t, path)
	want, wantAll := compactionOf(t, blockingRun(t, false))
	sameCompaction(t, "appended at once", got, gotAll, want, wantAll)
	pg, _ := got.Payload()
	pw, _ := want.Payload()
	if pg.(*session.CompactionEntry).Summary != pw.(*session.CompactionEntry).Summary {
		t.Errorf("summaries differ:\n%s\n\nblocking:\n%s", pg.(*session.CompactionEntry).Summary, pw.(*session.CompactionEntry).Summary)
	}
}

// TestBackgroundSummaryUpdated: when the summary appended as it is would
// not bring the context below the mark, one update request covers what was
// said since its cut; the entry keeps what a blocking compaction keeps.
func TestBackgroundSummaryUpdated(t *testing.T) {
	conv, sum := llmtest.NewOpenAI(t), summarizer(t, 0, nil)
	var ev events
	ag, path := liveWithSummarizer(t, conv, sum, &ev, bgSettings(t, sum, true))
	prompts := bgScript(t, conv, true)
	send(t, ag, prompts[0])
	send(t, ag, prompts[1])
	waitReady(t, ag)
	requests := len(sum.Requests())
	send(t, ag, prompts[2])
	reqs := sum.Requests()[requests:]
	if len(reqs) == 0 || !strings.Contains(reqs[0].LastUserText(), "<previous-summary>") {
		t.Fatalf("%d requests at the threshold, the first not an update", len(reqs))
	}
	if got := backgroundKinds(&ev); !slices.Equal(got, []agent.BackgroundKind{agent.BackgroundStarted, agent.BackgroundReady, agent.BackgroundUpdated}) {
		t.Errorf("background events %v", got)
	}
	r, err := ag.Receipt("")
	if err != nil || !r.Background || !r.Updated {
		t.Fatalf("receipt %+v, %v", r, err)
	}

	got, gotAll := compactionOf(t, path)
	want, wantAll := compactionOf(t, blockingRun(t, true))
	sameCompaction(t, "brought up to date", got, gotAll, want, wantAll)
}

// TestBackgroundSummaryFailed: a background summary the model could not
// write is reported and never used (the next check past the mark tries
// again; here that fails too); the compaction at the threshold asks the
// model again, and the file holds one compaction, by the model.
func TestBackgroundSummaryFailed(t *testing.T) {
	conv, sum := llmtest.NewOpenAI(t), summarizer(t, 0, func(n int) bool { return n <= 2 })
	var ev events
	ag, path := liveWithSummarizer(t, conv, sum, &ev, bgSettings(t, sum, true))
	prompts := bgScript(t, conv, false)
	for _, p := range prompts {
		send(t, ag, p)
		if p == prompts[1] {
			deadline := time.Now().Add(time.Minute)
			for ag.BackgroundSummary().Writing && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	if got := backgroundKinds(&ev); !slices.Contains(got, agent.BackgroundFailed) || slices.Contains(got, agent.BackgroundUsed) {
		t.Errorf("background events %v", got)
	}
	c, _ := compactionOf(t, path)
	r, err := agent.ReceiptOf(c)
	if err != nil || r.Background || r.Deterministic || r.Model == "" {
		t.Errorf("receipt %+v, %v", r, err)
	}
}

// TestBackgroundSummaryCancelled: Abort (Escape) and Close stop a summary
// being written; nothing is written to the file, and no goroutine is left.
func TestBackgroundSummaryCancelled(t *testing.T) {
	for _, stop := range []string{"abort", "close"} {
		t.Run(stop, func(t *testing.T) {
			leaks := llmtest.CheckGoroutines(t)
			asked := make(chan struct{})
			conv, sum := llmtest.NewOpenAI(t), summarizerTold(t, slowSummary, nil, asked)
			var ev events
			ag, path, tr := liveWithTransport(t, conv, sum, &ev, bgSettings(t, sum, true))
			prompts := bgScript(t, conv, false)
			send(t, ag, prompts[0])
			send(t, ag, prompts[1])
			select {
			case <-asked:
			case <-time.After(time.Minute):
				t.Fatal("no background summary asked for after a minute")
			}
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if stop == "abort" {
				ag.Abort()
			} else {
				ag.Close()
			}
			if st := ag.BackgroundSummary(); st.Writing || st.Ready {
				t.Errorf("still there after %s: %+v", stop, st)
			}
			if got := backgroundKinds(&ev); !slices.Equal(got, []agent.BackgroundKind{agent.BackgroundStarted, agent.BackgroundCancelled}) {
				t.Errorf("background events %v", got)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(after) != string(before) {
				t.Errorf("the file changed after the %s", stop)
			}
			ag.Close()
			tr.CloseIdleConnections()
			leaks()
		})
	}
}

// TestBackgroundSummaryOvertaken: a summary that no longer fits the path
// (the user compacted since) is dropped when next seen, and reported.
func TestBackgroundSummaryOvertaken(t *testing.T) {
	conv, sum := llmtest.NewOpenAI(t), summarizer(t, 0, nil)
	var ev events
	ag, path := liveWithSummarizer(t, conv, sum, &ev, bgSettings(t, sum, true, "compaction.keepRecentTokens", "1"))
	prompts := bgScript(t, conv, false)
	send(t, ag, prompts[0])
	send(t, ag, prompts[1])
	waitReady(t, ag)
	if _, err := ag.Compact(t.Context(), agent.CompactRequest{}); err != nil {
		t.Fatal(err)
	}
	send(t, ag, prompts[2])
	got := backgroundKinds(&ev)
	if i := slices.Index(got, agent.BackgroundOvertaken); i < 0 || slices.Contains(got, agent.BackgroundUsed) {
		t.Errorf("background events %v", got)
	}
	for _, e := range eventsOf[agent.BackgroundCompaction](&ev) {
		if e.Kind == agent.BackgroundOvertaken && e.Why != "the conversation was compacted since" {
			t.Errorf("overtaken because %q", e.Why)
		}
	}
	s, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range s.Entries() {
		if e.Type == session.TypeCompaction {
			if r, _ := agent.ReceiptOf(e); r.Background {
				t.Errorf("an overtaken background summary was written: %+v", r)
			}
		}
	}
}

// TestBackgroundOff: compaction.background false makes no background
// request.
func TestBackgroundOff(t *testing.T) {
	conv, sum := llmtest.NewOpenAI(t), summarizer(t, 0, nil)
	var ev events
	ag, _ := liveWithSummarizer(t, conv, sum, &ev, bgSettings(t, sum, false))
	prompts := bgScript(t, conv, false)
	send(t, ag, prompts[0])
	send(t, ag, prompts[1])
	if st := ag.BackgroundSummary(); st.Writing || st.Ready || len(sum.Requests()) != 0 || len(backgroundKinds(&ev)) != 0 {
		t.Errorf("background work with compaction.background false: %+v, %d requests", st, len(sum.Requests()))
	}
}

// BenchmarkThresholdWait reports how long the conversation waits when it
// crosses the compaction threshold, with a summarizer taking 5 s: with the
// summary written in the background (ready by then) and without. An
// operation is the whole three-prompt conversation, so ns/op is what one
// takes (at least the summarizer's 5 s, hence b.N stays small at any
// benchtime); wait-ms is the part of it spent waiting at the threshold.
//
//	go test ./agent -run XXX -bench ThresholdWait
func BenchmarkThresholdWait(b *testing.B) {
	for _, background := range []bool{true, false} {
		name := "blocking"
		if background {
			name = "background"
		}
		b.Run(name, func(b *testing.B) {
			var total time.Duration
			n := 0
			for b.Loop() {
				total += thresholdWait(b, background)
				n++
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(n), "wait-ms")
		})
	}
}

// thresholdWait plays bgScript and returns the time the third prompt's run
// spent in the compaction at the threshold.
func thresholdWait(b *testing.B, background bool) time.Duration {
	conv, sum := llmtest.NewOpenAI(b), summarizer(b, slowSummary, nil)
	var ev events
	var mu sync.Mutex
	var began, ended time.Time
	ev.setOn(func(e agent.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch e.(type) {
		case agent.CompactionStart:
			began = time.Now()
		case agent.CompactionEnd:
			ended = time.Now()
		}
	})
	dir := agentDir(b, conv, sum)
	s, err := session.Create(filepath.Join(b.TempDir(), "s.jsonl"), session.Options{CWD: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	cfg := config(dir, bgSettings(b, sum, background), &ev)
	cfg.Model = conv.Model().Provider + "/" + conv.Model().ID
	cfg.NoContextFiles = true
	ag := agent.New(s, cfg)
	defer ag.Close()
	prompts := bgScript(b, conv, false)
	for i, p := range prompts {
		if i == 2 && background {
			waitReady(b, ag)
		}
		if _, err := ag.Prompt(context.Background(), p, agent.PromptOptions{}); err != nil {
			b.Fatal(err)
		}
		if err := ag.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return ended.Sub(began)
}
