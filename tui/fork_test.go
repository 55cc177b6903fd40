package tui

import (
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// TestForkListsEveryUserMessage: /fork offers every user message of the
// file, newest first, those of other branches too (pi 1.6's fork
// selector, and RPC's get_fork_messages); forking from one on another
// branch starts from the conversation before it.
func TestForkListsEveryUserMessage(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.jsonl")
	s, err := session.Create(file, session.Options{CWD: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	add := func(name string, m llm.Message) {
		e, err := s.Append(&session.MessageEntry{Message: m})
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = e.ID
	}
	user := func(text string) *llm.UserMessage {
		return &llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}, Timestamp: 1}
	}
	reply := func(text string) *llm.AssistantMessage {
		return &llm.AssistantMessage{Content: []llm.Content{llm.Text{Text: text}}, StopReason: llm.StopReasonStop, Timestamp: 1}
	}
	add("u1", user("alpha question"))
	add("a1", reply("alpha answer"))
	add("u2", user("beta question on the left"))
	add("a2", reply("beta answer"))
	if err := s.SetLeaf(ids["a1"]); err != nil {
		t.Fatal(err)
	}
	add("u3", user("gamma question on the right"))
	add("a3", reply("gamma answer"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	h := newHarness(t, setup{session: file})
	h.waitText("gamma answer")
	h.send("/fork")
	f := h.waitText("Fork from which message?", "gamma question on the right", "beta question on the left", "alpha question")
	f = linesFrom(f, "Fork from which message?")
	g, b, a := strings.Index(f, "gamma question"), strings.Index(f, "beta question"), strings.Index(f, "alpha question")
	if g > b || b > a {
		t.Errorf("not newest first:\n%s", f)
	}
	// Down to the left branch's question, off the current path.
	h.key(tea.KeyDown)
	h.enter()
	f = h.waitText("Forked to new session")
	if editorLine(f) != "beta question on the left" {
		t.Errorf("the editor holds %q after /fork:\n%s", editorLine(f), f)
	}
	var got []string
	for _, it := range h.ag.Transcript().Items {
		switch m := it.Message.(type) {
		case *llm.UserMessage:
			got = append(got, llm.TextOf(m.Content))
		case *llm.AssistantMessage:
			got = append(got, m.Text())
		}
	}
	if strings.Join(got, "|") != "alpha question|alpha answer" {
		t.Errorf("the forked session holds %q", got)
	}
}
