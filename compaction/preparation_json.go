package compaction

import (
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/session"
)

// preparationWire is a Preparation with its messages as raw JSON.
type preparationWire struct {
	FirstKeptEntryID    string           `json:"firstKeptEntryId"`
	MessagesToSummarize []jsontext.Value `json:"messagesToSummarize"`
	TurnPrefixMessages  []jsontext.Value `json:"turnPrefixMessages"`
	IsSplitTurn         bool             `json:"isSplitTurn"`
	TokensBefore        int              `json:"tokensBefore"`
	PreviousSummary     string           `json:"previousSummary,omitzero"`
	FileOps             FileOps          `json:"fileOps"`
	Settings            Settings         `json:"settings"`
	PreviousSummarizer  string           `json:"previousSummarizer,omitzero"`
	Ledger              *Ledger          `json:"ledger,omitzero"`
}

// MarshalJSONTo writes the preparation under pi's field names; messages are
// written as a session stores them, and empty arrays as [].
func (p *Preparation) MarshalJSONTo(enc *jsontext.Encoder) error {
	w := preparationWire{
		FirstKeptEntryID:   p.FirstKeptEntryID,
		IsSplitTurn:        p.IsSplitTurn,
		TokensBefore:       p.TokensBefore,
		PreviousSummary:    p.PreviousSummary,
		FileOps:            normalizedFileOps(p.FileOps),
		Settings:           p.Settings,
		PreviousSummarizer: p.PreviousSummarizer,
		Ledger:             p.Ledger,
	}
	var err error
	if w.MessagesToSummarize, err = encodeMessages(p.MessagesToSummarize); err != nil {
		return err
	}
	if w.TurnPrefixMessages, err = encodeMessages(p.TurnPrefixMessages); err != nil {
		return err
	}
	return json.MarshalEncode(enc, &w)
}

// UnmarshalJSONFrom reads a preparation, decoding each message by its role
// as the session does (unknown roles survive as [session.UnknownMessage]).
// This is how a hook's replacement arrays come back.
func (p *Preparation) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var w preparationWire
	if err := json.UnmarshalDecode(dec, &w, jsonwire.ReadOptions); err != nil {
		return err
	}
	history, err := decodeMessages("messagesToSummarize", w.MessagesToSummarize)
	if err != nil {
		return err
	}
	prefix, err := decodeMessages("turnPrefixMessages", w.TurnPrefixMessages)
	if err != nil {
		return err
	}
	*p = Preparation{
		FirstKeptEntryID:    w.FirstKeptEntryID,
		MessagesToSummarize: history,
		TurnPrefixMessages:  prefix,
		IsSplitTurn:         w.IsSplitTurn,
		TokensBefore:        w.TokensBefore,
		PreviousSummary:     w.PreviousSummary,
		FileOps:             normalizedFileOps(w.FileOps),
		Settings:            w.Settings,
		PreviousSummarizer:  w.PreviousSummarizer,
		Ledger:              w.Ledger,
	}
	return nil
}

func encodeMessages(msgs []session.Message) ([]jsontext.Value, error) {
	out := make([]jsontext.Value, 0, len(msgs))
	for i, m := range msgs {
		b, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("message %d (%s): %w", i, m.Role(), err)
		}
		out = append(out, b)
	}
	return out, nil
}

func decodeMessages(field string, raw []jsontext.Value) ([]session.Message, error) {
	out := make([]session.Message, 0, len(raw))
	for i, r := range raw {
		m, err := session.DecodeMessage(r)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", field, i, err)
		}
		out = append(out, m)
	}
	return out, nil
}

func normalizedFileOps(f FileOps) FileOps {
	var t fileTracker
	t.add(&f)
	return t.ops()
}
