package agent

import (
	"errors"
	"fmt"
	"strings"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// Pins keep texts in front of the model word for word whatever compactions
// happen (/pin TEXT, a message pinned from the tree, RPC's pin). A pin is a
// custom entry of the session (compaction.PinEntry; an unpin is another,
// compaction.UnpinEntry), so it belongs to the branch it was made on and
// pi reads the file (it ignores extension state). The model sees the pins
// of the path in the "pins" section of the system prompt: the agent's system
// patch brings the section up to date before each request, and right away
// when a pin changes while the agent is idle. A compaction carries the
// system state, and pi 1.6 replays it as it is, so the section survives any
// number of compactions; should the state a compaction carries lack a pin
// (pinned during a run, the compaction came first), the ledger puts it into
// the summary.

// Errors of the pins.
var (
	// ErrNoPin means Unpin was given an id or a text no pin of the path
	// has.
	ErrNoPin = errors.New("no such pin")
	// ErrPinsFull means a pin would take the pins past MaxPinTokens.
	ErrPinsFull = errors.New("the pins would take more than their room in the context")
)

// MaxPinTokens bounds the pins of a path together (chars/4): they are in
// every request.
const MaxPinTokens = 4000

// PinsChanged reports the pins of the path after a pin or an unpin.
type PinsChanged struct{ Pins []compaction.Pin }

// EventType names the event.
func (PinsChanged) EventType() string { return "pins_changed" }

// Section texts (Prime's words).
const (
	sectionPins = "pins"
	pinsIntro   = "The user pinned these notes. They hold word for word for the rest of the session, until the user unpins them; no summary replaces them."
)

// Pin pins text on the current path: it is shown to the model from the next
// request on, word for word, after any number of compactions, until
// unpinned. The text is trimmed; an empty one is an error, and so is one
// that would take the pins past MaxPinTokens (ErrPinsFull).
func (a *Agent) Pin(text string) (compaction.Pin, error) {
	return a.pin(text, "")
}

// PinMessage pins the text of a message entry (a user or assistant message,
// a custom message or a summary): the tree selector's "pin".
func (a *Agent) PinMessage(entryID string) (compaction.Pin, error) {
	a.mu.Lock()
	e := a.s.Entry(entryID)
	a.mu.Unlock()
	if e == nil {
		return compaction.Pin{}, fmt.Errorf("entry %q: %w", entryID, session.ErrNotFound)
	}
	m, err := session.ContextMessage(e)
	if err != nil {
		return compaction.Pin{}, err
	}
	text := messageText(m)
	if strings.TrimSpace(text) == "" {
		return compaction.Pin{}, fmt.Errorf("entry %s has no text to pin", entryID)
	}
	return a.pin(text, entryID)
}

// messageText is the text a message shows the model, for pinning.
func messageText(m session.Message) string {
	switch m := m.(type) {
	case *llm.UserMessage:
		return llm.TextOf(m.Content)
	case *llm.AssistantMessage:
		return m.Text()
	case *llm.ToolResultMessage:
		return llm.TextOf(m.Content)
	case *session.CustomMessage:
		return llm.TextOf(m.Content)
	case *session.BranchSummaryMessage:
		return m.Summary
	case *session.CompactionSummaryMessage:
		return m.Summary
	case *session.BashExecution:
		return "$ " + m.Command + "\n" + m.Output
	}
	return ""
}

func (a *Agent) pin(text, messageID string) (compaction.Pin, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return compaction.Pin{}, errors.New("nothing to pin: the text is empty")
	}
	a.mu.Lock()
	pins := compaction.PinsOf(a.s.LeafView())
	total := llm.UTF16Len(text)
	for _, p := range pins {
		total += llm.UTF16Len(p.Text)
	}
	if total/4 > MaxPinTokens {
		a.mu.Unlock()
		return compaction.Pin{}, fmt.Errorf("%w (%d tokens of %d): unpin something first", ErrPinsFull, total/4, MaxPinTokens)
	}
	e, err := a.appendLocked(compaction.PinEntry(text, messageID))
	if err != nil {
		a.mu.Unlock()
		return compaction.Pin{}, err
	}
	pin := compaction.Pin{ID: e.ID, Text: text, MessageID: messageID, Millis: e.Millis()}
	a.mu.Unlock()
	a.emit(EntryAppended{Entry: e})
	a.pinsChanged()
	return pin, nil
}

// Unpin removes the pin whose id is ref, else the pin whose text is ref
// (trimmed); ErrNoPin when the path has neither. The id of a pin that an
// undone compaction carried over (see [Agent.Uncompact]) still names it.
func (a *Agent) Unpin(ref string) (compaction.Pin, error) {
	ref = strings.TrimSpace(ref)
	a.mu.Lock()
	var found *compaction.Pin
	pins := compaction.PinsOf(a.s.LeafView())
	for i := range pins {
		if pins[i].ID == ref {
			found = &pins[i]
			break
		}
	}
	text := ref
	if e := a.s.Entry(ref); found == nil && e != nil {
		// A pin entry off the path: one an undone compaction left on its
		// side branch, whose pin was carried over with a new id.
		if p := compaction.Pins([]*session.Entry{e}); len(p) == 1 {
			text = p[0].Text
		}
	}
	for i := range pins {
		if found == nil && pins[i].Text == text {
			found = &pins[i]
		}
	}
	if found == nil {
		a.mu.Unlock()
		return compaction.Pin{}, fmt.Errorf("%w: %q", ErrNoPin, ref)
	}
	e, err := a.appendLocked(compaction.UnpinEntry(found.ID))
	a.mu.Unlock()
	if err != nil {
		return compaction.Pin{}, err
	}
	a.emit(EntryAppended{Entry: e})
	a.pinsChanged()
	return *found, nil
}

// Pins returns the pins of the current path, oldest first.
func (a *Agent) Pins() []compaction.Pin {
	a.mu.Lock()
	defer a.mu.Unlock()
	return compaction.PinsOf(a.s.LeafView())
}

// pinsChanged tells the front ends, and brings the system prompt up to date
// at once when the agent is idle (during a run the next request does it).
func (a *Agent) pinsChanged() {
	a.mu.Lock()
	var patched *session.Entry
	var err error
	if !a.conv.phase.busy() {
		if patch := a.systemPatchLocked(); patch != nil {
			patched, err = a.appendLocked(&session.MessageEntry{Message: patch})
		}
	}
	pins := compaction.PinsOf(a.s.LeafView())
	a.mu.Unlock()
	if patched != nil {
		a.emit(EntryAppended{Entry: patched})
	}
	if err != nil {
		a.notice(NoticeError, fmt.Sprintf("could not show the pins to the model yet (the next request will): %v", err))
	}
	a.emit(PinsChanged{Pins: pins})
}

// pinSections returns the system prompt's section for pins: none without
// pins (the patch then removes the section).
func pinSections(pins []compaction.Pin) []session.SystemSection {
	if len(pins) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("<" + sectionPins + ">\n" + pinsIntro)
	for _, p := range pins {
		b.WriteString("\n\n<pin id=\"" + p.ID + "\">\n" + p.Text + "\n</pin>")
	}
	b.WriteString("\n</" + sectionPins + ">")
	return []session.SystemSection{{Name: sectionPins, Text: b.String()}}
}
