package compaction

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/session"
)

// TestPins: pins replay along the path: each pin entry holds until an
// unpin entry names it; entries whose data is not Prime's are ignored; a
// preparation's ledger carries the pins and whether the system prompt
// shows each.
func TestPins(t *testing.T) {
	b := newBuilder(t)
	b.parse("u1 a1")
	b.add("p1", PinEntry("  first pin \n", ""))
	b.add("p2", PinEntry("second pin", "a1"))
	b.add("x1", &session.CustomEntry{CustomType: CustomTypePin, Data: jsontext.Value(`{"text": 7}`)})
	b.add("x2", &session.CustomEntry{CustomType: CustomTypePin, Data: jsontext.Value(`"not an object"`)})
	b.add("x3", &session.CustomEntry{CustomType: CustomTypePin, Data: jsontext.Value(`{"text": "   "}`)})
	b.add("x4", &session.CustomEntry{CustomType: CustomTypeUnpin, Data: jsontext.Value(`{"pinId": "nope"}`)})
	b.add("x5", &session.CustomEntry{CustomType: "someone.else", Data: jsontext.Value(`{"text": "not a pin"}`)})
	pins := Pins(b.path)
	if len(pins) != 2 || pins[0].ID != "p1" || pins[0].Text != "first pin" || pins[1].MessageID != "a1" || pins[1].Millis == 0 {
		t.Fatalf("pins %+v", pins)
	}
	b.add("un", UnpinEntry("p1"))
	if pins := Pins(b.path); len(pins) != 1 || pins[0].ID != "p2" {
		t.Fatalf("after unpinning p1: %+v", pins)
	}
	b.parse("S9:40 u2:400 a2:400 u3:400 a3:400")
	prep := mustPrepare(t, b.path, keep(100))
	if got := prep.Ledger.Pins; len(got) != 1 || got[0].Text != "second pin" || got[0].InSystemPrompt {
		t.Errorf("ledger pins %+v", got)
	}
	if got := ledgerPins(Pins(b.path), "<pins>\n<pin>\nsecond   pin\n</pin>\n</pins>"); !got[0].InSystemPrompt {
		t.Errorf("a pin the system prompt shows (white space aside): %+v", got)
	}
}

// FuzzPins: whatever the entries' data, Pins never fails and every pin it
// returns has text.
func FuzzPins(f *testing.F) {
	f.Add(`{"text": "a"}`, `{"pinId": "p"}`)
	f.Add(`{"text": "\u0000", "messageId": 5}`, `[]`)
	f.Add(`null`, `{"pinId": null}`)
	f.Fuzz(func(t *testing.T, pin, unpin string) {
		b := newBuilder(t)
		b.parse("u1")
		for i, d := range []struct{ typ, data string }{{CustomTypePin, pin}, {CustomTypeUnpin, unpin}, {CustomTypePin, pin}} {
			line, err := session.EncodeEntry("e"+strings.Repeat("x", i), b.path[len(b.path)-1].ID, "2026-01-01T00:00:00.000Z",
				&session.CustomEntry{CustomType: d.typ, Data: jsontext.Value(d.data)})
			if err != nil {
				return // data that is not JSON cannot be written
			}
			e, err := session.NewEntry(line)
			if err != nil {
				return
			}
			b.path = append(b.path, e)
		}
		for _, p := range Pins(b.path) {
			if strings.TrimSpace(p.Text) == "" || p.ID == "" {
				t.Fatalf("pin %+v", p)
			}
		}
	})
}
