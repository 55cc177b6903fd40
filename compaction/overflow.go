package compaction

import (
	"errors"

	"github.com/prime-agent/prime/llm"
)

// Overflow is what a reply says of the context's size, for the check after
// it (pi 1.6's): whether the conversation must be compacted before it goes
// on, and whether the reply is then sent again.
type Overflow int

// What a reply says of the context.
const (
	// NoOverflow: the context fitted (the threshold decides).
	NoOverflow Overflow = iota
	// SilentOverflow: the reply succeeded, but its input exceeds the
	// window (a server that accepts an overflowing request): compact;
	// nothing is sent again.
	SilentOverflow
	// ContextOverflow: the provider refused the context as too large:
	// hide the reply, compact, send it again once.
	ContextOverflow
	// CutOff: the reply was cut off because the context filled, not by
	// the output limit: recovered as ContextOverflow.
	CutOff
)

// OverflowOf says what reply, from model (the conversation's model) with
// err the provider's classified error of it (nil when it did not fail),
// says of the context. A reply from another model says nothing: the window
// it measured is not this one.
func OverflowOf(reply *llm.AssistantMessage, model *llm.Model, err error) Overflow {
	if reply == nil || model == nil || reply.Provider != model.Provider || reply.Model != model.ID {
		return NoOverflow
	}
	window := model.ContextWindow
	u := reply.Usage
	switch {
	case reply.StopReason == llm.StopReasonStop && window > 0 && u.Input+u.CacheRead > window:
		return SilentOverflow
	case reply.StopReason == llm.StopReasonError && (errors.Is(err, llm.ErrContextOverflow) || llm.IsOverflowText(reply.ErrorMessage)),
		llm.IsContextOverflow(reply, window) && reply.StopReason != llm.StopReasonStop:
		return ContextOverflow
	case llm.LengthStopOverflow(reply, model.MaxTokens, window):
		return CutOff
	}
	return NoOverflow
}
