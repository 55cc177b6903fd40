// Package anthropic streams assistant turns from Anthropic's Messages API
// (POST /v1/messages with "stream": true).
//
// Requests carry the system prompt, tools, tool calls and results, images,
// and prompt-caching marks (on the system prompt and the last user message,
// unless [llm.Request.NoCache]). Reasoning is asked for by the model's
// [llm.Model.ThinkingStyle]: a token budget per thinking level
// ("thinking": {"type": "enabled", "budget_tokens": N}), or adaptive
// thinking steered by an effort ("thinking": {"type": "adaptive"},
// "output_config": {"effort": ...}).
//
// Thinking round-trips exactly: every thinking block keeps its own
// signature (which may arrive in its own signature_delta), redacted
// thinking is stored with its encrypted payload and sent back verbatim, and
// both are sent back only to the model that produced them; reasoning from
// another model is sent as plain text. Usage includes cache reads and
// writes; stop reasons map to pi's (end_turn → stop, max_tokens → length,
// tool_use → toolUse, refusal → error); an error event in the middle of a
// stream ends the turn with a classified error and keeps what arrived.
package anthropic

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/internal/sse"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/internal/stream"
)

var _ llm.Provider = (*Provider)(nil)

// DefaultBaseURL is Anthropic's API endpoint.
const DefaultBaseURL = "https://api.anthropic.com"

// APIVersion is the anthropic-version header Prime speaks.
const APIVersion = "2023-06-01"

// Config configures a [Provider].
type Config struct {
	// APIKey is sent in the x-api-key header.
	APIKey llm.Secret
	// BaseURL is used for models that name none; default DefaultBaseURL.
	BaseURL string
	// HTTPOptions are how requests are sent.
	llm.HTTPOptions
}

// Provider streams turns from the Messages API. It is safe for concurrent
// use.
type Provider struct {
	cfg Config
}

// New returns a provider.
func New(cfg Config) *Provider { return &Provider{cfg: cfg} }

// String describes the provider without its key.
func (p *Provider) String() string { return "anthropic provider " + p.cfg.BaseURL }

// GoString describes the provider without its key, for %#v.
func (p *Provider) GoString() string { return p.String() }

// ThinkingBudgets are the token budgets of the thinking levels for models
// with budgeted thinking.
var thinkingBudgets = map[llm.ThinkingLevel]int{
	llm.ThinkingMinimal: 1024,
	llm.ThinkingLow:     2048,
	llm.ThinkingMedium:  8192,
	llm.ThinkingHigh:    16384,
	llm.ThinkingXHigh:   32768,
}

// Stream implements [llm.Provider].
func (p *Provider) Stream(ctx context.Context, req *llm.Request) iter.Seq[llm.Event] {
	base := cmp.Or(req.Model.BaseURL, p.cfg.BaseURL, DefaultBaseURL)
	url := strings.TrimSuffix(base, "/")
	if !strings.HasSuffix(url, "/v1") {
		url += "/v1"
	}
	h := http.Header{}
	h.Set("anthropic-version", APIVersion)
	if p.cfg.APIKey.IsSet() {
		h.Set("x-api-key", p.cfg.APIKey.Reveal())
	}
	return stream.Run(ctx, req, stream.Call{
		HTTPOptions: p.cfg.HTTPOptions,
		URL:         url + "/messages", Header: h,
		Encode:     func() ([]byte, error) { return encodeRequest(req) },
		ParseError: parseError,
		Read:       read,
	})
}

// parseError reads an error response: {"type": "error", "error": {"type",
// "message"}}, or any other text as the message; the sizes of an overflow
// come from its text (see [overflowSizes]).
func parseError(raw []byte) stream.ErrorReport {
	var e errorBody
	if json.Unmarshal(raw, &e, jsonwire.ReadOptions) == nil && e.Error.Message != "" {
		return report(e.Error.Type, e.Error.Message)
	}
	return report("", strings.TrimSpace(string(raw)))
}

// report is the error report of a type and message, with the sizes the
// message gives.
func report(typ, msg string) stream.ErrorReport {
	prompt, window := stream.Sizes(msg, overflowSizes())
	return stream.ErrorReport{Type: typ, Message: msg, PromptTokens: prompt, ContextTokens: window}
}

// overflowSizes find the request's size ("prompt") and the window
// ("window") in Anthropic's overflow texts.
var overflowSizes = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		// "prompt is too long: 213462 tokens > 200000 maximum".
		regexp.MustCompile(`prompt is too long: (?P<prompt>\d+) tokens > (?P<window>\d+) maximum`),
		// "input length and `max_tokens` exceed context limit: 198000 + 21333
		// > 200000, decrease input length or `max_tokens` and try again".
		regexp.MustCompile("input length and `?max_tokens`? exceed context limit: (?P<prompt>\\d+) \\+ \\d+ > (?P<window>\\d+)"),
	}
})

// errorBody is the body of an error response and of an error event.
type errorBody struct {
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// wireUsage is the usage object of message_start and message_delta. Fields
// are pointers because message_delta repeats only some of them, and a
// missing field must not reset the count.
type wireUsage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
}

func (w *wireUsage) apply(u *llm.Usage) {
	if w == nil {
		return
	}
	set := func(dst *int, src *int) {
		if src != nil {
			*dst = *src
		}
	}
	set(&u.Input, w.InputTokens)
	set(&u.Output, w.OutputTokens)
	set(&u.CacheWrite, w.CacheCreationInputTokens)
	set(&u.CacheRead, w.CacheReadInputTokens)
	u.TotalTokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
}

// streamBlock is a content_block_start's block.
type streamBlock struct {
	Type      string         `json:"type"`
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Input     jsontext.Value `json:"input"`
	Text      string         `json:"text"`
	Thinking  string         `json:"thinking"`
	Signature string         `json:"signature"`
	Data      string         `json:"data"`
}

// streamDelta is a content_block_delta's or a message_delta's delta.
type streamDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	PartialJSON string `json:"partial_json"`
	StopReason  string `json:"stop_reason"`
}

// wireEvent is the union of the stream's event payloads.
type wireEvent struct {
	Type    string `json:"type"`
	Message *struct {
		ID    string     `json:"id"`
		Usage *wireUsage `json:"usage"`
	} `json:"message"`
	Index        int          `json:"index"`
	ContentBlock *streamBlock `json:"content_block"`
	Delta        *streamDelta `json:"delta"`
	Usage        *wireUsage   `json:"usage"`
	Error        *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// read turns the event stream into events on b. It returns nil when the
// turn finished (b has emitted done) or the consumer stopped.
func read(ctx context.Context, b *stream.Builder, body io.Reader) error {
	provider := b.Message().Provider
	r := sse.NewReader(body)
	blocks := map[int]int{} // wire index → message content index
	stop := llm.StopReasonStop
	refused := false
	for {
		ev, err := r.Next()
		if err != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			if err == io.EOF {
				err = errors.New("stream ended before message_stop")
			}
			return stream.ConnectionError(provider, err)
		}
		if len(ev.Data) == 0 || ev.Type == "ping" {
			continue
		}
		var w wireEvent
		if err := json.Unmarshal(ev.Data, &w, jsonwire.ReadOptions); err != nil {
			return &llm.APIError{Provider: provider, Message: fmt.Sprintf("undecodable %s event: %v", ev.Type, err), Kind: llm.ErrBadResponse}
		}
		if w.Type == "" {
			w.Type = ev.Type
		}
		switch w.Type {
		case "message_start":
			if w.Message != nil {
				b.SetResponseID(w.Message.ID)
				u := b.Usage()
				w.Message.Usage.apply(&u)
				b.SetUsage(u)
			}
			if !b.Start() {
				return nil
			}
		case "content_block_start":
			if w.ContentBlock == nil {
				continue
			}
			idx, placed, ok := startBlock(b, w.ContentBlock)
			if !placed {
				continue
			}
			if !ok {
				return nil
			}
			blocks[w.Index] = idx
		case "content_block_delta":
			idx, known := blocks[w.Index]
			if !known || w.Delta == nil {
				continue
			}
			if !appendDelta(b, idx, w.Delta) {
				return nil
			}
		case "content_block_stop":
			if idx, known := blocks[w.Index]; known {
				delete(blocks, w.Index)
				if !b.End(idx) {
					return nil
				}
			}
		case "message_delta":
			if w.Delta != nil && w.Delta.StopReason != "" {
				stop, refused = stopReason(w.Delta.StopReason)
			}
			u := b.Usage()
			w.Usage.apply(&u)
			b.SetUsage(u)
		case "message_stop":
			if refused {
				return &llm.APIError{Provider: provider, Type: "refusal", Message: "the model declined to answer (stop_reason refusal)", Kind: llm.ErrRequest}
			}
			b.Finish(stop)
			return nil
		case "error":
			r := stream.ErrorReport{Message: string(ev.Data)}
			if w.Error != nil {
				r = report(w.Error.Type, w.Error.Message)
			}
			return r.APIError(provider, 0, 0)
		}
	}
}

// startBlock begins the block a content_block_start opens and returns its
// index in the message. placed is false for a block that has no place in a
// pi message (server tool blocks, future types), whose deltas are skipped
// too; ok is false when the consumer stopped.
func startBlock(b *stream.Builder, cb *streamBlock) (idx int, placed, ok bool) {
	switch cb.Type {
	case "text":
		idx, ok = b.StartText()
		if ok && cb.Text != "" {
			ok = b.Append(idx, cb.Text)
		}
	case "thinking":
		idx, ok = b.StartThinking()
		b.AppendSignature(idx, cb.Signature)
		if ok && cb.Thinking != "" {
			ok = b.Append(idx, cb.Thinking)
		}
	case "redacted_thinking":
		idx, ok = b.StartThinking()
		b.SetRedacted(idx, cb.Data)
	case "tool_use":
		idx, ok = b.StartToolCall(cb.ID, cb.Name)
		if ok && len(cb.Input) > 0 && string(cb.Input) != "{}" {
			b.SetToolArgs(idx, cb.Input)
		}
	default:
		return 0, false, true
	}
	return idx, true, ok
}

// appendDelta adds a content_block_delta to block idx; it is false when
// the consumer stopped.
func appendDelta(b *stream.Builder, idx int, d *streamDelta) bool {
	switch d.Type {
	case "text_delta":
		return b.Append(idx, d.Text)
	case "thinking_delta":
		return b.Append(idx, d.Thinking)
	case "signature_delta":
		b.AppendSignature(idx, d.Signature)
	case "input_json_delta":
		return b.Append(idx, d.PartialJSON)
	}
	return true
}

// stopReason maps Anthropic's stop_reason to pi's, and reports a refusal.
func stopReason(s string) (llm.StopReason, bool) {
	switch s {
	case "max_tokens", "model_context_window_exceeded":
		return llm.StopReasonLength, false
	case "tool_use":
		return llm.StopReasonToolUse, false
	case "refusal":
		return llm.StopReasonError, true
	default: // end_turn, stop_sequence, pause_turn
		return llm.StopReasonStop, false
	}
}
