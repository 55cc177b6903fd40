package tui

import (
	"context"
	"reflect"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/session"
)

// The first frame is one write of the transcript and a copy of the live
// area; the renderer draws nothing until the program has taken that write
// (a frame drawn before it would sit above the transcript).
func TestFirstFrameIsOneWrite(t *testing.T) {
	s, err := session.Create("", session.Options{CWD: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ag := agent.New(s, agent.Config{Getenv: func(string) string { return "" }, NoContextFiles: true})
	m := New(context.Background(), ag, Options{Version: "v1.2.3", CWD: "/home/u/proj", Home: "/home/u"})
	m.items = append(m.items, &userItem{text: "the question"})
	if _, cmd := m.Update(tea.WindowSizeMsg{Width: 60, Height: 20}); m.starting || m.View().Content != "" {
		t.Fatalf("a frame before the header is ready: starting %v, %q (%v)", m.starting, m.View().Content, cmd != nil)
	}
	m.items[0].(*headerItem).ready = true
	_, cmd := m.Update(tea.WindowSizeMsg{Width: 60, Height: 20})
	if !m.starting || m.View().Content != "" {
		t.Fatalf("the live area is drawn before the first write: %q", m.View().Content)
	}
	raw := rawOf(t, cmd)
	for _, want := range []string{"v1.2.3", "the question", "~/proj"} {
		if !strings.Contains(raw, want) {
			t.Errorf("the first write has no %q:\n%q", want, raw)
		}
	}
	if _, again := m.Update(tea.WindowSizeMsg{Width: 60, Height: 20}); rawOf(t, again) != "" {
		t.Error("a second first frame was written")
	}
	m.Update(startedMsg{})
	live := m.View().Content
	if live == "" || !strings.HasSuffix(raw[:strings.LastIndex(raw, "\r")], strings.ReplaceAll(live, "\n", "\r\n")) {
		t.Errorf("the write does not end with the live area the renderer draws:\nwrite %q\nview %q", raw, live)
	}
}

// rawOf runs cmd and the commands it batches or sequences, and returns
// what they would write raw.
func rawOf(t *testing.T, cmd tea.Cmd) string {
	t.Helper()
	if cmd == nil {
		return ""
	}
	var b strings.Builder
	var walk func(msg tea.Msg)
	walk = func(msg tea.Msg) {
		switch msg := msg.(type) {
		case tea.BatchMsg:
			for _, c := range msg {
				if c != nil {
					walk(c())
				}
			}
		case tea.RawMsg:
			b.WriteString(msg.Msg.(string))
		default:
			// A sequence (unexported type) is a slice of commands too.
			if cmds, ok := asCmds(msg); ok {
				for _, c := range cmds {
					if c != nil {
						walk(c())
					}
				}
			}
		}
	}
	walk(cmd())
	return b.String()
}

// asCmds returns the commands of a message that is a slice of them.
func asCmds(msg tea.Msg) ([]tea.Cmd, bool) {
	v := reflect.ValueOf(msg)
	if v.Kind() != reflect.Slice || v.Type().Elem() != reflect.TypeFor[tea.Cmd]() {
		return nil, false
	}
	cmds := make([]tea.Cmd, v.Len())
	for i := range cmds {
		cmds[i] = v.Index(i).Interface().(tea.Cmd)
	}
	return cmds, true
}
