// Package openai streams assistant turns from OpenAI's Chat Completions API
// (POST {baseURL}/chat/completions with "stream": true) and from the servers
// that imitate it: Ollama, vLLM, llama.cpp, LM Studio, OpenRouter.
//
// Those servers differ in small ways, and the provider meets each of them
// where it is ([llm.OpenAICompat], detected from the base URL when a model
// does not say):
//   - the output cap is "max_completion_tokens" for api.openai.com and
//     "max_tokens" (which every compatible server accepts) elsewhere;
//   - usage is requested with "stream_options": {"include_usage": true}
//     unless the server refuses it, and taken from whichever chunk carries
//     it (OpenAI sends it alone in the last chunk; some servers send it in
//     every chunk or beside the finish reason);
//   - reasoning arrives in "reasoning_content" (DeepSeek, vLLM, llama.cpp),
//     "reasoning" (Ollama, OpenRouter) or "reasoning_text"; the field's name
//     is kept as the thinking block's signature (as pi does) and the
//     reasoning is sent back to the same model in that field;
//   - tool-call deltas are accumulated tolerantly: a delta is matched to its
//     call by id when it has one, else by index, else to the latest call, so
//     streams that omit "index" (Ollama), omit "id" on later deltas, reuse
//     index 0 for parallel calls, or send the id only after the first delta
//     all come out as separate, complete calls; a call with no id at all
//     gets "call_<n>".
//
// Images go as data URLs in "image_url" parts; a tool result's images
// follow it in a user message, since tool messages carry only text.
package openai

import (
	"bytes"
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

// DefaultBaseURL is OpenAI's API endpoint.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config configures a [Provider].
type Config struct {
	// APIKey is sent as a bearer token; empty sends no Authorization
	// header (local servers need none).
	APIKey llm.Secret
	// BaseURL is used for models that name none; default DefaultBaseURL.
	BaseURL string
	// HTTPOptions are how requests are sent.
	llm.HTTPOptions
}

// Provider streams turns from a Chat Completions endpoint. It is safe for
// concurrent use.
type Provider struct {
	cfg Config
}

// New returns a provider.
func New(cfg Config) *Provider { return &Provider{cfg: cfg} }

// String describes the provider without its key.
func (p *Provider) String() string { return "openai-completions provider " + p.cfg.BaseURL }

// GoString describes the provider without its key, for %#v.
func (p *Provider) GoString() string { return p.String() }

func (p *Provider) baseURL(m llm.Model) string {
	base := cmp.Or(m.BaseURL, p.cfg.BaseURL, DefaultBaseURL)
	return strings.TrimSuffix(base, "/")
}

// Stream implements [llm.Provider].
func (p *Provider) Stream(ctx context.Context, req *llm.Request) iter.Seq[llm.Event] {
	base := p.baseURL(req.Model)
	h := http.Header{}
	if p.cfg.APIKey.IsSet() {
		h.Set("Authorization", "Bearer "+p.cfg.APIKey.Reveal())
	}
	return stream.Run(ctx, req, stream.Call{
		HTTPOptions: p.cfg.HTTPOptions,
		URL:         base + "/chat/completions", Header: h,
		Encode: func() ([]byte, error) {
			body, err := encodeRequest(req, resolveCompat(req.Model, base))
			if err != nil {
				return nil, err
			}
			return req.Model.SamplingBody(body, req.Reasoning)
		},
		ParseError: ParseError,
		Read:       read,
	})
}

// ParseError reads an OpenAI-style error body (see [parseError]); the
// Responses API answers its errors in the same shapes.
func ParseError(raw []byte) stream.ErrorReport {
	r, _ := parseError(raw)
	return r
}

// parseError reads an error body in any of the shapes compatible servers
// use: {"error": {"message", "type", "code"}}, {"error": "text"},
// {"message": "text"}, or plain text. code is a numeric "code" when given
// (llama.cpp puts the HTTP status there). The sizes of an overflow come
// from llama.cpp's n_prompt_tokens and n_ctx fields, else from the text
// (see [overflowSizes]).
func parseError(raw []byte) (r stream.ErrorReport, code int) {
	r, code = parseErrorBody(raw)
	prompt, window := stream.Sizes(r.Message, overflowSizes())
	if r.PromptTokens == 0 {
		r.PromptTokens = prompt
	}
	if r.ContextTokens == 0 {
		r.ContextTokens = window
	}
	return r, code
}

// overflowSizes find the request's size ("prompt") and the window
// ("window") in the overflow texts of OpenAI-compatible servers.
var overflowSizes = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		// llama.cpp: "request (20494 tokens) exceeds the available context
		// size (8192 tokens)".
		regexp.MustCompile(`(?i)request \((?P<prompt>\d+) tokens\) exceeds the available context size \((?P<window>\d+) tokens\)`),
		// OpenAI, vLLM, OpenRouter, DeepSeek: "maximum context length is
		// 128000 tokens".
		regexp.MustCompile(`(?i)maximum context length is (?P<window>\d+) tokens`),
		// OpenAI: "However, your messages resulted in 130000 tokens".
		regexp.MustCompile(`(?i)resulted in (?P<prompt>\d+) tokens`),
		// OpenAI, vLLM: "you requested 40000 tokens (39000 in the messages,
		// 1000 in the completion)"; older OpenAI: "(3200 in your prompt; 1000
		// for the completion)"; OpenRouter: "(240000 of text input, 10000 in
		// the output)".
		regexp.MustCompile(`(?i)\((?P<prompt>\d+) (?:in the messages|in your prompt|of text input)`),
		// vLLM: "your request has 32000 input tokens".
		regexp.MustCompile(`(?i)request has (?P<prompt>\d+) input tokens`),
	}
})

// parseErrorBody reads the shape of an error body; see [parseError].
func parseErrorBody(raw []byte) (r stream.ErrorReport, code int) {
	var w struct {
		Error   jsontext.Value `json:"error"`
		Message string         `json:"message"`
	}
	if json.Unmarshal(raw, &w, jsonwire.ReadOptions) != nil {
		return stream.ErrorReport{Message: strings.TrimSpace(string(raw))}, 0
	}
	switch w.Error.Kind() {
	case '{':
		var e struct {
			Message string         `json:"message"`
			Type    string         `json:"type"`
			Code    jsontext.Value `json:"code"`
			// llama.cpp's sizes of a request that does not fit.
			NPromptTokens int `json:"n_prompt_tokens"`
			NCtx          int `json:"n_ctx"`
		}
		if json.Unmarshal(w.Error, &e, jsonwire.ReadOptions) == nil {
			r = stream.ErrorReport{Type: e.Type, Message: e.Message, PromptTokens: e.NPromptTokens, ContextTokens: e.NCtx}
			switch e.Code.Kind() {
			case '"':
				var s string
				json.Unmarshal(e.Code, &s)
				if s != "" {
					r.Type = s
				}
			case '0':
				json.Unmarshal(e.Code, &code)
			}
			return r, code
		}
	case '"':
		var s string
		json.Unmarshal(w.Error, &s)
		return stream.ErrorReport{Message: s}, 0
	}
	if w.Message != "" {
		return stream.ErrorReport{Message: w.Message}, 0
	}
	return stream.ErrorReport{Message: strings.TrimSpace(string(raw))}, 0
}

// wireUsage is a chunk's usage object.
type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	PromptCacheHitTokens int `json:"prompt_cache_hit_tokens"` // DeepSeek
}

func (w *wireUsage) usage() llm.Usage {
	cached := w.PromptCacheHitTokens
	if w.PromptTokensDetails != nil && w.PromptTokensDetails.CachedTokens > 0 {
		cached = w.PromptTokensDetails.CachedTokens
	}
	cached = min(cached, w.PromptTokens)
	u := llm.Usage{Input: w.PromptTokens - cached, CacheRead: cached, Output: w.CompletionTokens}
	u.TotalTokens = u.Input + u.Output + u.CacheRead
	return u
}

type wireToolDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string         `json:"name"`
		Arguments jsontext.Value `json:"arguments"`
	} `json:"function"`
}

type wireChunk struct {
	ID      string `json:"id"`
	Choices []struct {
		Delta struct {
			Content          jsontext.Value  `json:"content"`
			ReasoningContent jsontext.Value  `json:"reasoning_content"`
			Reasoning        jsontext.Value  `json:"reasoning"`
			ReasoningText    jsontext.Value  `json:"reasoning_text"`
			ToolCalls        []wireToolDelta `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage     `json:"usage"`
	Error jsontext.Value `json:"error"`
}

// str returns v when it is a JSON string, else "".
func str(v jsontext.Value) string {
	if v.Kind() != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s, jsonwire.ReadOptions) != nil {
		return ""
	}
	return s
}

// call is one tool call being accumulated.
type call struct {
	idx       int  // content index
	synthetic bool // the id was made up; a real one may still arrive
}

// reader turns chunks into events on the builder.
type reader struct {
	b        *stream.Builder
	cur      int    // open text or thinking block, or -1
	curKind  string // its kind
	calls    []*call
	byID     map[string]*call
	byIndex  map[int]*call
	finish   string
	finished bool
}

// read consumes the stream. It returns nil when the turn finished (b has
// emitted done) or the consumer stopped.
func read(ctx context.Context, b *stream.Builder, body io.Reader) error {
	provider := b.Message().Provider
	r := &reader{b: b, cur: -1, byID: map[string]*call{}, byIndex: map[int]*call{}}
	sr := sse.NewReader(body)
	for {
		ev, err := sr.Next()
		if err == io.EOF && r.finished {
			return r.done() // no [DONE], but the turn was complete
		}
		if err != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			if err == io.EOF {
				err = errors.New("stream ended before a finish_reason")
			}
			return stream.ConnectionError(provider, err)
		}
		if ev.IsDone() {
			return r.done()
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 {
			continue
		}
		var c wireChunk
		if err := json.Unmarshal(ev.Data, &c, jsonwire.ReadOptions); err != nil {
			return &llm.APIError{Provider: provider, Message: fmt.Sprintf("undecodable chunk: %v", err), Kind: llm.ErrBadResponse}
		}
		if len(c.Error) > 0 && c.Error.Kind() != 'n' {
			r, code := parseError(ev.Data)
			status := 0
			if code >= 400 && code < 600 {
				status = code
			}
			return r.APIError(provider, status, 0)
		}
		if !b.Start() {
			return nil
		}
		if c.ID != "" && b.Message().ResponseID == "" {
			b.SetResponseID(c.ID)
		}
		if c.Usage != nil {
			b.SetUsage(c.Usage.usage())
		}
		for _, ch := range c.Choices {
			d := ch.Delta
			for _, f := range []struct {
				name string
				v    jsontext.Value
			}{{"reasoning_content", d.ReasoningContent}, {"reasoning", d.Reasoning}, {"reasoning_text", d.ReasoningText}} {
				if s := str(f.v); s != "" {
					if !r.thinking(f.name, s) {
						return nil
					}
					break
				}
			}
			if s := str(d.Content); s != "" && !r.text(s) {
				return nil
			}
			for _, td := range d.ToolCalls {
				if !r.toolCall(td) {
					return nil
				}
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				r.finish = *ch.FinishReason
				r.finished = true
			}
		}
	}
}

// closeCurrent ends the open text or thinking block.
func (r *reader) closeCurrent() bool {
	if r.cur < 0 {
		return true
	}
	idx := r.cur
	r.cur = -1
	return r.b.End(idx)
}

func (r *reader) text(s string) bool {
	if r.curKind != llm.ContentText || r.cur < 0 {
		if !r.closeCurrent() {
			return false
		}
		idx, ok := r.b.StartText()
		if !ok {
			return false
		}
		r.cur, r.curKind = idx, llm.ContentText
	}
	return r.b.Append(r.cur, s)
}

func (r *reader) thinking(field, s string) bool {
	if r.curKind != llm.ContentThinking || r.cur < 0 {
		if !r.closeCurrent() {
			return false
		}
		idx, ok := r.b.StartThinking()
		if !ok {
			return false
		}
		r.b.AppendSignature(idx, field)
		r.cur, r.curKind = idx, llm.ContentThinking
	}
	return r.b.Append(r.cur, s)
}

// toolCall applies one tool-call delta (see the package doc for the rules).
func (r *reader) toolCall(d wireToolDelta) bool {
	c := r.match(d)
	if c == nil {
		if !r.closeCurrent() {
			return false
		}
		id, synthetic := d.ID, false
		if id == "" {
			id, synthetic = fmt.Sprintf("call_%d", len(r.calls)), true
		}
		idx, ok := r.b.StartToolCall(id, d.Function.Name)
		if !ok {
			return false
		}
		c = &call{idx: idx, synthetic: synthetic}
		r.calls = append(r.calls, c)
		if !synthetic {
			r.byID[id] = c
		}
		d.Function.Name = ""
	}
	if d.Index != nil {
		r.byIndex[*d.Index] = c
	}
	if name := d.Function.Name; name != "" && name != r.b.ToolCallName(c.idx) {
		r.b.AppendToolName(c.idx, name)
	}
	args := str(d.Function.Arguments)
	if k := d.Function.Arguments.Kind(); k == '{' || k == '[' {
		// A server that sends the arguments as an object, not as text.
		args = string(d.Function.Arguments)
	}
	return r.b.Append(c.idx, args)
}

// match finds the call a delta continues, or nil for a new call.
func (r *reader) match(d wireToolDelta) *call {
	if d.ID != "" {
		if c := r.byID[d.ID]; c != nil {
			return c
		}
		if d.Index != nil {
			if c := r.byIndex[*d.Index]; c != nil && c.synthetic {
				// The id arrives after the call began.
				c.synthetic = false
				r.byID[d.ID] = c
				r.b.SetToolCall(c.idx, d.ID, "")
				return c
			}
		}
		return nil
	}
	if d.Index != nil {
		return r.byIndex[*d.Index]
	}
	if n := len(r.calls); n > 0 {
		return r.calls[n-1]
	}
	return nil
}

// done finishes the turn by its finish reason.
func (r *reader) done() error {
	provider := r.b.Message().Provider
	reason := llm.StopReasonStop
	switch r.finish {
	case "length", "max_tokens":
		reason = llm.StopReasonLength
	case "tool_calls", "function_call":
		reason = llm.StopReasonToolUse
	case "content_filter":
		return &llm.APIError{Provider: provider, Type: "content_filter", Message: "the answer was withheld by the provider's content filter", Kind: llm.ErrRequest}
	case "model_context_window_exceeded":
		return llm.NewAPIError(provider, 0, r.finish, "finish_reason: model_context_window_exceeded", 0)
	case "error":
		return &llm.APIError{Provider: provider, Type: "error", Message: "the server ended the answer with finish_reason error", Kind: llm.ErrServer}
	}
	if reason == llm.StopReasonStop && len(r.calls) > 0 {
		// Some servers end a turn of tool calls with "stop".
		reason = llm.StopReasonToolUse
	}
	r.b.Finish(reason)
	return nil
}
