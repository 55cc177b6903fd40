package tui

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
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
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	m.started = true
	m.items[0].(*headerItem).ready = true
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

// BenchmarkRepaint draws a transcript of 200 exchanges again (Ctrl-O,
// a resize).
func BenchmarkRepaint(b *testing.B) {
	m := benchModel(b)
	for i := range 200 {
		m.items = append(m.items, &userItem{text: "question " + itoa(i)},
			&assistantItem{done: true, blocks: []block{{text: "Answer " + itoa(i) + ": " + strings.Repeat("a reply with **bold** words. ", 10)}}})
	}
	b.ResetTimer()
	for range b.N {
		m.md = markdown{} // nothing remembered: the first repaint at a width
		m.repaint, m.printing, m.pending = true, false, nil
		m.flush()
	}
}
