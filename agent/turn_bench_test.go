package agent

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
	"github.com/prime-agent/prime/settings"
)

// instant is a model that answers at once, in process: what is left of a
// turn's time is the agent's own work.
type instant struct{ model llm.Model }

func (p instant) Stream(ctx context.Context, req *llm.Request) iter.Seq[llm.Event] {
	return func(yield func(llm.Event) bool) {
		m := &llm.AssistantMessage{API: p.model.API, Provider: p.model.Provider, Model: p.model.ID, Timestamp: 1}
		if !yield(llm.Event{Type: llm.EventStart, Message: m}) {
			return
		}
		final := *m
		final.Content = []llm.Content{llm.Text{Text: "ok"}}
		final.StopReason = llm.StopReasonStop
		final.Usage = llm.Usage{Input: 1000, Output: 2, TotalTokens: 1002}
		yield(llm.Event{Type: llm.EventDone, Message: &final})
	}
}

// benchAgent opens a copy of a generated session of n entries and gives it
// an instant model; automatic compaction is off (it is not a turn's
// overhead).
func benchAgent(b *testing.B, n int) *Agent {
	b.Helper()
	data := sessiongen.Bytes(sessiongen.Options{Entries: n, Seed: 1})
	path := filepath.Join(b.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	s, err := session.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	return instantAgent(b, s)
}

// instantAgent is an agent on s talking to the instant model, with
// automatic compaction off; it is closed when the test ends.
func instantAgent(tb testing.TB, s *session.Session) *Agent {
	tb.Helper()
	m := llm.Model{ID: "instant", Provider: "bench", API: llm.APIOpenAICompletions, ContextWindow: 200000, MaxTokens: 8000}
	a := New(s, Config{Settings: settings.Defaults(), AgentDir: tb.TempDir(), Getenv: func(string) string { return "" }, CWD: tb.TempDir()})
	a.opened = true
	spec, err := a.promptSpec()
	if err != nil {
		tb.Fatal(err)
	}
	a.conv.model, a.conv.provider, a.conv.thinking, a.conv.prompt = &m, instant{m}, llm.ThinkingOff, spec
	a.initFlagsLocked()
	a.conv.autoCompact = false
	tb.Cleanup(func() { a.Close() })
	return a
}

// BenchmarkTurnOverhead is one prompt answered at once: building the
// request from the session, storing the user message and the reply, the
// checks around the run. It must not grow with the session.
func BenchmarkTurnOverhead(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			a := benchAgent(b, n)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Prompt(ctx, "next step", PromptOptions{}); err != nil {
					b.Fatal(err)
				}
				if err := a.Wait(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestThousandTurnMemory reports the live heap after a 1,000-turn run on a
// fresh session (go test -run ThousandTurn -v); it fails only if the heap
// grows far beyond what the session's own entries account for.
func TestThousandTurnMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a thousand turns")
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s, err := session.Create(path, session.Options{CWD: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	a := instantAgent(t, s)
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	ctx := context.Background()
	before := heap()
	for i := range 1000 {
		if _, err := a.Prompt(ctx, fmt.Sprintf("step %d", i), PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		a.Wait(ctx)
	}
	after := heap()
	fi, _ := os.Stat(path)
	t.Logf("1,000 turns: %d entries, file %.1f MB, live heap grew by %.1f MB", s.Len(), float64(fi.Size())/1e6, float64(after-before)/1e6)
	if grown := int64(after) - int64(before); grown > 20*fi.Size()+16<<20 {
		t.Errorf("the heap grew by %d bytes for a %d-byte session", grown, fi.Size())
	}
}

// TestResumedSessionMemory runs 300 turns on a resumed 10,000-entry session
// (13 MB) and checks that the agent holds the session's index and the
// conversation it sends, not the file: the live heap stays far below the
// file's size (go test -run Resumed -v reports the figures).
func TestResumedSessionMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("300 turns")
	}
	data := sessiongen.Bytes(sessiongen.Options{Entries: 10_000, Seed: 1})
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	runtime.KeepAlive(data)
	data = nil
	before := heap()
	s, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	a := instantAgent(t, s)
	ctx := context.Background()
	opened := heap()
	for i := range 300 {
		if _, err := a.Prompt(ctx, fmt.Sprintf("step %d", i), PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		a.Wait(ctx)
	}
	after := heap()
	fi, _ := os.Stat(path)
	t.Logf("file %.1f MB, %d entries; live heap: %.1f MB once opened, %.1f MB after 300 turns",
		float64(fi.Size())/1e6, s.Len(), float64(opened-before)/1e6, float64(after-before)/1e6)
	if grown := int64(after) - int64(before); grown > fi.Size()/2 {
		t.Errorf("the agent holds %d bytes for a %d-byte session", grown, fi.Size())
	}
}
