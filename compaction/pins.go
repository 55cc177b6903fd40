package compaction

import (
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/session"
)

// Pins are texts the user wants the model to keep word for word whatever
// compactions happen: a rule, a decision, a value, or the text of a message
// pinned from the tree. They are session entries of type "custom" (pi
// keeps extension state so and never shows it to the model): a pin entry
// with customType [CustomTypePin] and data {"text", "messageId"?}, an unpin
// entry with customType [CustomTypeUnpin] and data {"pinId"}. Being entries
// of the tree, pins belong to a branch: a pin holds on the path below it
// until an unpin entry on that path removes it. The agent shows the pins of
// the path to the model in a section of the system prompt, which every
// compaction carries (its systemMessage) and pi 1.6 replays as it is; the
// ledger puts a pin the carried prompt lacks back into the summary.

// Custom types of the pin entries.
const (
	CustomTypePin   = "prime.pin"
	CustomTypeUnpin = "prime.unpin"
)

// Pin is a text pinned on a path.
type Pin struct {
	// ID is the pin entry's id, by which it is unpinned.
	ID string `json:"id"`
	// Text is the pinned text, as the user gave it (trimmed).
	Text string `json:"text"`
	// MessageID is the entry whose text was pinned; empty for a text typed
	// with /pin.
	MessageID string `json:"messageId,omitzero"`
	// Millis is when it was pinned (Unix milliseconds).
	Millis int64 `json:"timestamp"`
}

// pinData and unpinData are the entries' data.
type pinData struct {
	Text      string `json:"text"`
	MessageID string `json:"messageId,omitzero"`
	// PinID and Millis, on an entry that carries a pin over (see
	// [CarriedPinEntry]), are the pin's own id and time: it stays the
	// same pin.
	PinID  string `json:"pinId,omitzero"`
	Millis int64  `json:"timestamp,omitzero"`
}

type unpinData struct {
	PinID string `json:"pinId"`
}

// PinEntry returns the entry that pins text (trimmed), taken from the entry
// messageID when it is not empty.
func PinEntry(text, messageID string) *session.CustomEntry {
	return &session.CustomEntry{CustomType: CustomTypePin, Data: mustJSON(pinData{Text: strings.TrimSpace(text), MessageID: messageID})}
}

// CarriedPinEntry returns the entry that carries p over to another branch
// (an undone compaction's): the pin keeps its id and time there, so that
// what the user saw and typed still names it.
func CarriedPinEntry(p Pin) *session.CustomEntry {
	return &session.CustomEntry{CustomType: CustomTypePin, Data: mustJSON(pinData{
		Text: strings.TrimSpace(p.Text), MessageID: p.MessageID, PinID: p.ID, Millis: p.Millis})}
}

// UnpinEntry returns the entry that unpins the pin whose entry is pinID.
func UnpinEntry(pinID string) *session.CustomEntry {
	return &session.CustomEntry{CustomType: CustomTypeUnpin, Data: mustJSON(unpinData{PinID: pinID})}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("compaction: encoding pin data: " + err.Error()) // strings only: cannot fail
	}
	return b
}

// Pins returns the pins in force at the end of path, a root→leaf list of
// entries, oldest first: each pin entry on the path not unpinned by a later
// unpin entry on it. Entries whose data is not what Prime writes (an object
// with a non-blank "text", or "pinId") are ignored, as pi ignores extension
// state it does not know.
func Pins(path []*session.Entry) []Pin {
	var pins []Pin
	for _, e := range path {
		if e.Type == session.TypeCustom {
			pins = applyPinEntry(pins, e)
		}
	}
	return pins
}

// PinsOf is [Pins] of a path read from the session's index: only its
// custom entries are made.
func PinsOf(v session.PathView) []Pin {
	var pins []Pin
	for i := range v.Len() {
		if v.Type(i) == session.TypeCustom {
			pins = applyPinEntry(pins, v.Entry(i))
		}
	}
	return pins
}

// applyPinEntry returns pins after the custom entry e: with its pin added,
// or its pin removed, or unchanged for any other entry.
func applyPinEntry(pins []Pin, e *session.Entry) []Pin {
	p, err := e.Payload()
	if err != nil {
		return pins
	}
	c, ok := p.(*session.CustomEntry)
	if !ok {
		return pins
	}
	switch c.CustomType {
	case CustomTypePin:
		var d pinData
		if len(c.Data) == 0 || json.Unmarshal(c.Data, &d, jsonwire.ReadOptions) != nil || strings.TrimSpace(d.Text) == "" {
			return pins
		}
		pin := Pin{ID: e.ID, Text: strings.TrimSpace(d.Text), MessageID: d.MessageID, Millis: e.Millis()}
		if d.PinID != "" { // carried over: the same pin
			pin.ID = d.PinID
			if d.Millis > 0 {
				pin.Millis = d.Millis
			}
		}
		return append(pins, pin)
	case CustomTypeUnpin:
		var d unpinData
		if len(c.Data) == 0 || json.Unmarshal(c.Data, &d, jsonwire.ReadOptions) != nil {
			return pins
		}
		for i := range pins {
			if pins[i].ID == d.PinID {
				return append(pins[:i], pins[i+1:]...)
			}
		}
	}
	return pins
}

// ledgerPins returns the pins for a ledger: their texts, and whether the
// system prompt holds each word for word (nil without pins).
func ledgerPins(pins []Pin, system string) []LedgerPin {
	if len(pins) == 0 {
		return nil
	}
	sys := folded(system)
	out := make([]LedgerPin, len(pins))
	for i, p := range pins {
		out[i] = LedgerPin{Text: p.Text, InSystemPrompt: strings.Contains(sys, folded(p.Text))}
	}
	return out
}
