package rpc

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/internal/jsonwire"
)

// Pins (Prime's addition to the protocol): texts the model sees word for
// word after any number of compactions. The pin's id is its entry's id; the
// members are "pinId" and "entryId", since "id" is the command's own.

// pin pins {text} or the text of the message {entryId}, and answers
// {pin}.
func (s *Server) pin(ctx context.Context, c *command) ([]byte, error) {
	text, byText := c.optStr("text")
	entry, byEntry := c.optStr("entryId")
	if c.err != nil {
		return nil, c.err
	}
	var p agent.Pin
	var err error
	switch {
	case byText && byEntry:
		return nil, errors.New(`give "text" (the text to pin) or "entryId" (the message to pin), not both`)
	case byEntry:
		p, err = s.ag.PinMessage(entry)
		if errors.Is(err, agent.ErrEntryNotFound) {
			return nil, fmt.Errorf("Entry not found: %s", entry)
		}
	case byText:
		p, err = s.ag.Pin(text)
	default:
		return nil, errors.New(`missing "text" (the text to pin) or "entryId" (the message to pin)`)
	}
	if err != nil {
		return nil, err
	}
	return pinData(p)
}

// unpin removes the pin {pinId} or the pin whose text is {text}, and
// answers {pin} with the pin removed.
func (s *Server) unpin(ctx context.Context, c *command) ([]byte, error) {
	id, byID := c.optStr("pinId")
	text, byText := c.optStr("text")
	if c.err != nil {
		return nil, c.err
	}
	if byID == byText {
		return nil, errors.New(`give "pinId" (get_pins lists them) or "text" (the pinned text), one of them`)
	}
	text = strings.TrimSpace(text)
	if byText && text == "" {
		return nil, errors.New(`nothing to unpin: "text" is empty`)
	}
	// The agent's Unpin takes an id or a text; the client said which. An
	// id goes to the agent as it is: it also knows the ids of pins an undone
	// compaction carried over.
	if byID {
		removed, err := s.ag.Unpin(id)
		if errors.Is(err, agent.ErrNoPin) {
			return nil, fmt.Errorf("%w with id %q on the current branch (get_pins lists them)", agent.ErrNoPin, id)
		}
		if err != nil {
			return nil, err
		}
		return pinData(removed)
	}
	for _, p := range s.ag.Pins() {
		if p.Text == text {
			removed, err := s.ag.Unpin(p.ID)
			if err != nil {
				return nil, err
			}
			return pinData(removed)
		}
	}
	return nil, fmt.Errorf("%w with the text %q on the current branch (get_pins lists them)", agent.ErrNoPin, text)
}

// getPins answers {pins}: the pins of the current path, oldest first.
func (s *Server) getPins(ctx context.Context, c *command) ([]byte, error) {
	pins := s.ag.Pins()
	if pins == nil {
		pins = []agent.Pin{}
	}
	return encode(func(w *jsonwire.ObjectWriter) { w.Value("pins", pins) })
}

func pinData(p agent.Pin) ([]byte, error) {
	return encode(func(w *jsonwire.ObjectWriter) { w.Value("pin", p) })
}
