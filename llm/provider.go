package llm

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// Provider streams one assistant turn from a model.
//
// Stream must honour ctx: when it is cancelled the request stops, no
// goroutine outlives the iteration, and the stream ends with an [EventError]
// whose message has [StopReasonAborted]. A consumer that stops iterating
// early cancels the request the same way. Every stream, successful or not,
// ends with exactly one [EventDone] or [EventError] event.
type Provider interface {
	Stream(ctx context.Context, req *Request) iter.Seq[Event]
}

// Request is one call to a model.
type Request struct {
	Model        Model
	SystemPrompt string
	Messages     []Message
	Tools        []Tool
	// MaxTokens caps the output; 0 means the model's own output limit.
	MaxTokens int
	// Reasoning asks a reasoning model to think at this level; "" and
	// ThinkingOff ask for no reasoning. Ignored by models that cannot reason.
	Reasoning ThinkingLevel
	// Temperature, when set, overrides the provider's default.
	Temperature *float64
	// SessionID identifies the conversation for providers that route or
	// cache by it; empty when there is none.
	SessionID string
	// NoCache asks the provider not to mark the prompt for caching (one-off
	// requests such as summaries gain nothing from it).
	NoCache bool
	// StreamBounds bound how long the server may stay silent.
	StreamBounds
}

// StreamBounds bound how long a server may keep a stream open without
// sending the reply. A stream that exceeds one fails as a broken
// connection ([ErrConnection]), which the agent retries.
type StreamBounds struct {
	// IdleTimeout is how long the server may send nothing (before the
	// response, or mid-stream); 0 means five minutes (pi's and Codex's
	// default), a negative value no limit.
	IdleTimeout time.Duration
	// KeepAliveTimeout is how long a server may keep the stream alive with
	// keep-alives alone (SSE comments, pings) while the reply does not grow,
	// as while a local server reads a long prompt; 0 means 30 minutes, a
	// negative value no limit. It is never shorter than IdleTimeout.
	KeepAliveTimeout time.Duration
}

// Bounded returns a provider that gives every request without bounds of
// its own the bounds b.
func Bounded(p Provider, b StreamBounds) Provider { return &bounded{p, b} }

type bounded struct {
	p Provider
	b StreamBounds
}

// String and GoString describe the provider bounded, never its key.
func (p *bounded) String() string   { return fmt.Sprint(p.p) }
func (p *bounded) GoString() string { return fmt.Sprintf("%#v", p.p) }

func (p *bounded) Stream(ctx context.Context, req *Request) iter.Seq[Event] {
	if req.StreamBounds != (StreamBounds{}) {
		return p.p.Stream(ctx, req)
	}
	r := *req
	r.StreamBounds = p.b
	return p.p.Stream(ctx, &r)
}

// Tool describes a tool the model may call.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the tool's arguments object.
	Parameters jsontext.Value
}

// EventType tells what an [Event] reports.
type EventType int

// The event types of a stream, in the order they can occur.
const (
	EventStart         EventType = iota // the response began; Message has its metadata
	EventTextStart                      // a text block began at Index
	EventTextDelta                      // Delta was appended to text block Index
	EventTextEnd                        // text block Index is complete; Content holds it
	EventThinkingStart                  // a thinking block began at Index
	EventThinkingDelta                  // Delta was appended to thinking block Index
	EventThinkingEnd                    // thinking block Index is complete; Content holds it
	EventToolCallStart                  // a tool call began at Index
	EventToolCallDelta                  // Delta (raw JSON text) was appended to the call's arguments
	EventToolCallEnd                    // tool call Index is complete; Content holds the ToolCall
	EventDone                           // the turn finished; Message is final
	EventError                          // the turn failed or was aborted; Message and Err are set
)

var eventTypeNames = [...]string{
	"start", "text_start", "text_delta", "text_end",
	"thinking_start", "thinking_delta", "thinking_end",
	"toolcall_start", "toolcall_delta", "toolcall_end",
	"done", "error",
}

// String returns pi's name for the event type, e.g. "text_delta".
func (t EventType) String() string {
	if int(t) < len(eventTypeNames) {
		return eventTypeNames[t]
	}
	return fmt.Sprintf("EventType(%d)", int(t))
}

// Event is one step of a streamed assistant turn.
type Event struct {
	Type EventType
	// Index is the position of the content block in the final message.
	Index int
	// Delta is the text appended by a *Delta event.
	Delta string
	// Content is the finished block of a *End event; on EventToolCallStart,
	// the call's id and name as far as the stream has told them.
	Content Content
	// Message is the message so far on EventStart and the final message on
	// EventDone and EventError.
	Message *AssistantMessage
	// Err is set on EventError: a classified error (see the Err* values),
	// or one wrapping context.Canceled when the request was aborted.
	Err error
}

// Complete runs a request and collects its stream into the final assistant
// message. When the stream ends with an error, the message (with stop reason
// error or aborted) is returned together with the error.
func Complete(ctx context.Context, p Provider, req *Request) (*AssistantMessage, error) {
	return Collect(p.Stream(ctx, req))
}

// Collect drains a stream and returns its final message, and its error when
// it ended with [EventError]. A stream that ends without a final event (a
// broken provider) is reported as an error.
func Collect(events iter.Seq[Event]) (*AssistantMessage, error) {
	for ev := range events {
		switch ev.Type {
		case EventDone:
			if ev.Message == nil {
				return nil, errors.New("the provider ended its answer without a message")
			}
			return ev.Message, nil
		case EventError:
			err := ev.Err
			if err == nil {
				err = errors.New("the provider's answer failed")
				if ev.Message != nil && ev.Message.ErrorMessage != "" {
					err = errors.New(ev.Message.ErrorMessage)
				}
			}
			return ev.Message, err
		}
	}
	return nil, errors.New("the provider's answer broke off before its end")
}
