// Package stream assembles an assistant message from a provider's wire
// events and emits the provider-neutral [llm.Event] sequence, so both
// providers build messages, usage, costs and final events the same way.
package stream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prime-agent/prime/llm"
)

// AbortMessage is the errorMessage of a cancelled turn.
const AbortMessage = "Request was aborted"

// Builder accumulates one assistant turn. Every emitting method returns
// false once the consumer has stopped iterating; the provider then returns
// at once, and the Builder never calls yield again.
type Builder struct {
	model   llm.Model
	msg     *llm.AssistantMessage
	yield   func(llm.Event) bool
	stopped bool
	started bool
	done    bool
	open    map[int]*block
	// limit bounds the reply's bytes (0: none); full is set once a delta
	// went over it, after which nothing more is taken.
	limit, size int64
	full        bool
	// progress, when set, is told each time the reply grows.
	progress func()
}

// ReplyLimitFactor is how many times the requested output limit a reply
// may grow to before it is cut: a server that ignores max_tokens is
// stopped, a reply that merely tokenizes worse than expected is not.
const ReplyLimitFactor = 4

// bytesPerToken is what ReplyLimit counts a token as: generous for code and
// prose, enough for text whose characters take three bytes and one token.
const bytesPerToken = 4

// MaxReplyBytes is the most a reply may hold, whatever the output limit
// says (64 MiB: thousands of times a real reply).
const MaxReplyBytes = 64 << 20

// defaultOutputTokens is the output limit assumed when neither the request
// nor the model names one.
const defaultOutputTokens = 32000

// ReplyLimit is how many bytes of text, thinking and tool arguments a
// reply to req may hold: [ReplyLimitFactor] times the requested output
// limit (the model's own when the request names none), at 4 bytes a token,
// and at most [MaxReplyBytes].
func ReplyLimit(req *llm.Request) int64 {
	tokens := req.MaxTokens
	if tokens <= 0 {
		tokens = req.Model.MaxTokens
	}
	if tokens <= 0 {
		tokens = defaultOutputTokens
	}
	return min(int64(tokens)*ReplyLimitFactor*bytesPerToken, MaxReplyBytes)
}

// take counts n more bytes of reply and reports whether they fit; the
// first time they do not, the reply is full.
func (b *Builder) take(n int) bool {
	if b.full {
		return false
	}
	if b.limit > 0 && b.size+int64(n) > b.limit {
		b.full = true
		return false
	}
	b.size += int64(n)
	if b.progress != nil {
		b.progress()
	}
	return true
}

// room is how many more bytes the reply may take.
func (b *Builder) room() int {
	if b.limit <= 0 {
		return math.MaxInt
	}
	return int(max(b.limit-b.size, 0))
}

// cut shortens s to at most n bytes, at a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// block is an open content block: deltas go to a buffer, not to a string,
// so a long block costs linear time.
type block struct {
	kind     string
	text     strings.Builder
	args     bytes.Buffer
	sig      strings.Builder
	redacted bool
	id, name string
}

// New starts a turn for model at time now.
func New(model llm.Model, now time.Time, yield func(llm.Event) bool) *Builder {
	return &Builder{
		model: model,
		msg: &llm.AssistantMessage{
			Content:   []llm.Content{},
			API:       model.API,
			Provider:  model.Provider,
			Model:     model.ID,
			Timestamp: now.UnixMilli(),
		},
		yield: yield,
		open:  map[int]*block{},
	}
}

// Message returns the message being built.
func (b *Builder) Message() *llm.AssistantMessage { return b.msg }

// Stopped reports whether the consumer stopped iterating.
func (b *Builder) Stopped() bool { return b.stopped }

func (b *Builder) emit(ev llm.Event) bool {
	if b.stopped {
		return false
	}
	if b.progress != nil {
		b.progress()
	}
	if !b.yield(ev) {
		b.stopped = true
		return false
	}
	return true
}

// Start emits the start event once; later calls only report whether the
// consumer is still there.
func (b *Builder) Start() bool {
	if b.started {
		return !b.stopped
	}
	b.started = true
	snapshot := *b.msg
	snapshot.Content = nil
	return b.emit(llm.Event{Type: llm.EventStart, Message: &snapshot})
}

// SetResponseID records the provider's id for the response.
func (b *Builder) SetResponseID(id string) { b.msg.ResponseID = id }

// SetUsage replaces the usage so far (tokens only; cost is priced at the end).
func (b *Builder) SetUsage(u llm.Usage) { b.msg.Usage = u }

// Usage returns the usage so far.
func (b *Builder) Usage() llm.Usage { return b.msg.Usage }

func (b *Builder) begin(kind string, startType llm.EventType, blk *block) (int, bool) {
	if b.full || !b.Start() {
		return -1, false
	}
	idx := len(b.msg.Content)
	blk.kind = kind
	b.open[idx] = blk
	// A placeholder keeps indexes stable; End replaces it.
	switch kind {
	case llm.ContentText:
		b.msg.Content = append(b.msg.Content, llm.Text{})
	case llm.ContentThinking:
		b.msg.Content = append(b.msg.Content, llm.Thinking{})
	default:
		b.msg.Content = append(b.msg.Content, llm.ToolCall{ID: blk.id, Name: blk.name})
	}
	ev := llm.Event{Type: startType, Index: idx}
	if kind == llm.ContentToolCall {
		ev.Content = llm.ToolCall{ID: blk.id, Name: blk.name}
	}
	return idx, b.emit(ev)
}

// StartText opens a text block and returns its index.
func (b *Builder) StartText() (int, bool) {
	return b.begin(llm.ContentText, llm.EventTextStart, &block{})
}

// StartThinking opens a thinking block and returns its index.
func (b *Builder) StartThinking() (int, bool) {
	return b.begin(llm.ContentThinking, llm.EventThinkingStart, &block{})
}

// StartToolCall opens a tool-call block and returns its index.
func (b *Builder) StartToolCall(id, name string) (int, bool) {
	return b.begin(llm.ContentToolCall, llm.EventToolCallStart, &block{id: id, name: name})
}

// Append adds delta to open block idx: text, thinking or tool arguments.
// A delta that would take the reply past its limit is cut to fit, and
// Append returns false: the provider stops reading, and the turn ends with
// stop reason length.
func (b *Builder) Append(idx int, delta string) bool {
	blk := b.open[idx]
	if blk == nil || delta == "" {
		return !b.stopped && !b.full
	}
	if b.full {
		return false
	}
	if !b.take(len(delta)) {
		if delta = cut(delta, b.room()); delta != "" {
			b.size += int64(len(delta))
			b.appendTo(blk, idx, delta)
		}
		return false
	}
	return b.appendTo(blk, idx, delta)
}

func (b *Builder) appendTo(blk *block, idx int, delta string) bool {
	switch blk.kind {
	case llm.ContentText:
		blk.text.WriteString(delta)
		return b.emit(llm.Event{Type: llm.EventTextDelta, Index: idx, Delta: delta})
	case llm.ContentThinking:
		blk.text.WriteString(delta)
		return b.emit(llm.Event{Type: llm.EventThinkingDelta, Index: idx, Delta: delta})
	default:
		blk.args.WriteString(delta)
		return b.emit(llm.Event{Type: llm.EventToolCallDelta, Index: idx, Delta: delta})
	}
}

// AppendSignature adds to the signature of open block idx (a thinking
// block's signature, a text block's, or a tool call's thoughtSignature).
func (b *Builder) AppendSignature(idx int, sig string) {
	if blk := b.open[idx]; blk != nil && b.take(len(sig)) {
		blk.sig.WriteString(sig)
	}
}

// SetRedacted marks open thinking block idx as redacted, with its encrypted
// payload.
func (b *Builder) SetRedacted(idx int, data string) {
	if blk := b.open[idx]; blk != nil && b.take(len(data)) {
		blk.redacted = true
		blk.sig.Reset()
		blk.sig.WriteString(data)
		blk.text.Reset()
		blk.text.WriteString("[Reasoning redacted]")
	}
}

// SetToolCall fills in the id or name of open tool call idx, for streams
// that send them after the call began. Empty values are ignored.
func (b *Builder) SetToolCall(idx int, id, name string) {
	if blk := b.open[idx]; blk != nil {
		if id != "" {
			blk.id = id
		}
		if name != "" {
			blk.name = name
		}
	}
}

// AppendToolName adds a fragment to the name of open tool call idx, for
// servers that stream names in pieces.
func (b *Builder) AppendToolName(idx int, frag string) {
	if blk := b.open[idx]; blk != nil && b.take(len(frag)) {
		blk.name += frag
	}
}

// ToolCallName returns the name so far of open tool call idx.
func (b *Builder) ToolCallName(idx int) string {
	if blk := b.open[idx]; blk != nil {
		return blk.name
	}
	return ""
}

// ToolArgsLen returns the length so far of open tool call idx's arguments.
func (b *Builder) ToolArgsLen(idx int) int {
	if blk := b.open[idx]; blk != nil {
		return blk.args.Len()
	}
	return 0
}

// IsOpen reports whether block idx is open.
func (b *Builder) IsOpen(idx int) bool { return b.open[idx] != nil }

// End closes block idx, storing its final content and emitting its end
// event. Tool arguments that are not valid JSON (a call cut off by the
// output limit) are stored as an empty object.
func (b *Builder) End(idx int) bool {
	blk := b.open[idx]
	if blk == nil {
		return !b.stopped
	}
	delete(b.open, idx)
	c := blk.content()
	b.msg.Content[idx] = c
	typ := map[string]llm.EventType{
		llm.ContentText:     llm.EventTextEnd,
		llm.ContentThinking: llm.EventThinkingEnd,
		llm.ContentToolCall: llm.EventToolCallEnd,
	}[blk.kind]
	return b.emit(llm.Event{Type: typ, Index: idx, Content: c})
}

// SetToolArgs replaces the arguments of open tool call idx (for a call whose
// input arrived whole).
func (b *Builder) SetToolArgs(idx int, raw []byte) {
	if blk := b.open[idx]; blk != nil && blk.args.Len() == 0 && b.take(len(raw)) {
		blk.args.Write(raw)
	}
}

func (blk *block) content() llm.Content {
	switch blk.kind {
	case llm.ContentText:
		return llm.Text{Text: blk.text.String(), Signature: blk.sig.String()}
	case llm.ContentThinking:
		return llm.Thinking{Thinking: blk.text.String(), Signature: blk.sig.String(), Redacted: blk.redacted}
	default:
		args, err := llm.NewArguments(bytes.TrimSpace(blk.args.Bytes()))
		if err != nil {
			args = llm.Arguments{}
		}
		return llm.ToolCall{ID: blk.id, Name: blk.name, Arguments: args, ThoughtSignature: blk.sig.String()}
	}
}

// endAll closes every open block in index order.
func (b *Builder) endAll() bool {
	for idx := range len(b.msg.Content) {
		if b.open[idx] != nil && !b.End(idx) {
			return false
		}
	}
	return !b.stopped
}

// price completes the usage: the total when the provider gave none, and
// the cost at the model's prices.
func (b *Builder) price() {
	u := &b.msg.Usage
	if u.TotalTokens == 0 {
		u.TotalTokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
	}
	u.Cost = b.model.CostOf(*u)
}

// Finish ends the turn successfully with reason, closing open blocks, and
// emits the done event.
func (b *Builder) Finish(reason llm.StopReason) {
	if b.done {
		return
	}
	if !b.Start() || !b.endAll() {
		return
	}
	b.done = true
	if b.full {
		reason = llm.StopReasonLength
	}
	b.msg.StopReason = reason
	b.price()
	b.emit(llm.Event{Type: llm.EventDone, Message: b.msg})
}

// Fail ends the turn with err, keeping the content and usage received so
// far. When ctx was cancelled the turn is aborted: stop reason aborted and
// an error wrapping the cancellation cause instead of err.
func (b *Builder) Fail(ctx context.Context, err error) {
	if b.done || b.stopped {
		return
	}
	b.done = true
	for idx := range len(b.msg.Content) {
		if blk := b.open[idx]; blk != nil {
			b.msg.Content[idx] = blk.content()
			delete(b.open, idx)
		}
	}
	if ctx.Err() != nil || llm.IsAborted(err) {
		cause := context.Cause(ctx)
		if cause == nil {
			cause = err
		}
		b.msg.StopReason = llm.StopReasonAborted
		b.msg.ErrorMessage = AbortMessage
		err = fmt.Errorf("%s: request aborted: %w", b.model.Provider, cause)
	} else {
		b.msg.StopReason = llm.StopReasonError
		b.msg.ErrorMessage = strings.ToValidUTF8(err.Error(), "\uFFFD")
	}
	b.price()
	b.emit(llm.Event{Type: llm.EventError, Message: b.msg, Err: err})
}

// ConnectionError classifies a transport failure (a refused connection, a
// stream broken mid-way) for provider.
func ConnectionError(provider string, err error) error {
	if llm.IsAborted(err) {
		return err
	}
	var apiErr *llm.APIError
	if errors.As(err, &apiErr) {
		return err
	}
	return llm.NewConnectionError(provider, err)
}

// Replace sets the whole text (or a tool call's arguments) of open block
// idx, for streams whose closing event restates a block in full: what the
// closing event says wins over the deltas.
func (b *Builder) Replace(idx int, s string) {
	blk := b.open[idx]
	if blk == nil {
		return
	}
	if blk.kind == llm.ContentToolCall {
		blk.args.Reset()
		blk.args.WriteString(s)
		return
	}
	blk.text.Reset()
	blk.text.WriteString(s)
}

// Text returns the text so far of open block idx (its arguments for a tool
// call).
func (b *Builder) Text(idx int) string {
	blk := b.open[idx]
	switch {
	case blk == nil:
		return ""
	case blk.kind == llm.ContentToolCall:
		return blk.args.String()
	}
	return blk.text.String()
}
