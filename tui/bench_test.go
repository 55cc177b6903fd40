package tui

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
)

// benchModel is a model over an agent on an empty session in memory.
func benchModel(b *testing.B) *Model {
	b.Helper()
	s, err := session.Create("", session.Options{CWD: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	ag := agent.New(s, agent.Config{Getenv: func(string) string { return "" }, NoContextFiles: true})
	m := New(context.Background(), ag, Options{CWD: b.TempDir()})
	m.items[0].(*headerItem).ready = true
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 40}) // the first frame
	m.Update(startedMsg{})
	if !m.started {
		b.Fatal("no first frame")
	}
	return m
}

// BenchmarkStreamDelta is one streamed delta of a long markdown reply:
// the event applied and the live area drawn, as the program does 60 times
// a second at most.
func BenchmarkStreamDelta(b *testing.B) {
	m := benchModel(b)
	m.Update(eventsMsg{agent.MessageStart{Message: &llm.AssistantMessage{}}, agent.MessageUpdate{Event: llm.Event{Type: llm.EventTextStart}}})
	para := "Some **markdown** text with `code` and a [link](http://x).\n\n"
	for range 100 {
		m.Update(eventsMsg{agent.MessageUpdate{Event: llm.Event{Type: llm.EventTextDelta, Delta: para}}})
	}
	b.ResetTimer()
	for i := range b.N {
		m.Update(eventsMsg{agent.MessageUpdate{Event: llm.Event{Type: llm.EventTextDelta, Delta: "word" + itoa(i) + " "}}})
		if i%10 == 0 {
			m.frame++ // the ticks: ten deltas a frame
		}
		m.View()
	}
}

// repaintModel is a model over a transcript of 200 exchanges (400 items).
func repaintModel(b *testing.B) *Model {
	m := benchModel(b)
	for i := range 200 {
		m.items = append(m.items, &userItem{text: "question " + itoa(i)},
			&assistantItem{done: true, blocks: []block{{text: "Answer " + itoa(i) + ": " + strings.Repeat("a reply with **bold** words. ", 10)}}})
	}
	return m
}

// BenchmarkRepaintFirst is BenchmarkRepaint with nothing remembered (the
// first repaint of replies never drawn).
func BenchmarkRepaintFirst(b *testing.B) {
	m := repaintModel(b)
	b.ResetTimer()
	for range b.N {
		m.md = replies{}
		m.repaint, m.printing, m.pending = true, false, nil
		m.flush()
	}
}

// BenchmarkRepaint draws a transcript of 200 exchanges again at a new
// width (a resize: the replies' trees are kept, their lines are not).
func BenchmarkRepaint(b *testing.B) {
	m := repaintModel(b)
	m.flush() // the replies are parsed once
	b.ResetTimer()
	for i := range b.N {
		m.width = 100 + i%2 // nothing drawn at this width is remembered
		m.md.cache = nil
		m.repaint, m.printing, m.pending = true, false, nil
		m.flush()
	}
}

// BenchmarkResume opens a generated session of 2,000 and of 100,000
// entries and prints its transcript (the context since its latest
// compaction) and draws the first frame, as starting with --session or -c
// does (no persistent index: the session is read whole).
func BenchmarkResume(b *testing.B) {
	for _, n := range []int{2_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "s.jsonl")
			if err := os.WriteFile(path, sessiongen.Bytes(sessiongen.Options{Entries: n, Seed: 1}), 0o600); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				ag, err := agent.Load(path, agent.Config{Getenv: func(string) string { return "" }, NoContextFiles: true})
				if err != nil {
					b.Fatal(err)
				}
				m := New(context.Background(), ag, Options{CWD: b.TempDir()})
				m.items[0].(*headerItem).ready = true
				m.Update(tea.WindowSizeMsg{Width: 120, Height: 40}) // the first frame (startFrame)
				if !m.starting {
					b.Fatal("no first frame")
				}
				ag.Close()
			}
		})
	}
}

// On a long session the footer's first sums are made off the UI: New does
// not wait for them, and the command Init starts fills them in.
func TestLongSessionStatsOffTheUI(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, sessiongen.Bytes(sessiongen.Options{Entries: asyncStatsEntries, Seed: 4}), 0o600); err != nil {
		t.Fatal(err)
	}
	ag, err := agent.Load(path, agent.Config{Getenv: func(string) string { return "" }, NoContextFiles: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ag.Close()
	m := New(context.Background(), ag, Options{CWD: t.TempDir()})
	if !m.statsPending || m.footer.stats != (agent.Stats{}) {
		t.Fatalf("New added up the session itself: pending %v, %+v", m.statsPending, m.footer.stats)
	}
	cmd := m.statsCmd()
	if cmd == nil {
		t.Fatal("no command adds up the session")
	}
	m.Update(cmd())
	want := ag.Stats()
	if m.statsPending || m.footer.stats != want || want.AssistantMessages == 0 {
		t.Errorf("footer sums %+v, want %+v", m.footer.stats, want)
	}
	// Switched to (here: back to) a long session, the footer drops the
	// last session's sums and shows only the latest sums made.
	first := m.onEvent(agent.SessionChanged{File: path})
	if first == nil || !m.statsPending || m.footer.stats != (agent.Stats{}) {
		t.Fatalf("after a switch: command %v, pending %v, %+v", first != nil, m.statsPending, m.footer.stats)
	}
	second := m.onEvent(agent.SessionChanged{File: path})
	m.Update(first())
	if !m.statsPending {
		t.Error("sums made before the last switch were taken")
	}
	m.Update(second())
	if m.statsPending || m.footer.stats != want {
		t.Errorf("after the switch: pending %v, %+v", m.statsPending, m.footer.stats)
	}
}
