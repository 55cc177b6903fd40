// Package gemini streams assistant turns from Google's Gemini models: the
// Gemini API with an API key ("google-generative-ai":
// POST {baseURL}/models/{id}:streamGenerateContent?alt=sse, key in
// x-goog-api-key) and Vertex AI with an OAuth access token
// ("google-vertex": POST https://{location}-aiplatform.googleapis.com/v1/
// projects/{project}/locations/{location}/publishers/google/models/{id}
// :streamGenerateContent?alt=sse, token as a bearer).
//
// Requests carry the system prompt as systemInstruction, tools as function
// declarations (their JSON Schema passed as parametersJsonSchema, adjusted
// by [Schema]), tool calls and results as functionCall and
// functionResponse parts, images as inlineData, and a thinkingConfig from
// the thinking level: a thinkingLevel on Gemini 3 and later, a token budget
// on 2.5, thought summaries included.
//
// What a session stores is what pi 1.6 stores: thought summaries become
// thinking blocks, and a part's thoughtSignature is kept on the block it
// came with (a thinking block's signature, a text block's signature, a tool
// call's thoughtSignature) and sent back on the same part to the same model.
// A function call without an id (Gemini 2.5) gets "<name>_<ms>_<n>".
//
// Stop reasons: STOP is stop (toolUse when the turn called tools),
// MAX_TOKENS and CONTINUATION are length, SAFETY, RECITATION, BLOCKLIST,
// MALFORMED_FUNCTION_CALL and the other finish reasons are errors naming
// the reason. Usage: promptTokenCount less cachedContentTokenCount is the
// input, cachedContentTokenCount cacheRead, candidatesTokenCount plus
// thoughtsTokenCount the output. An overflow ("The input token count (N)
// exceeds the maximum number of tokens allowed (M)") is classified as
// [llm.ErrContextOverflow] with both sizes.
package gemini

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
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

// DefaultBaseURL is the Gemini API's endpoint.
const DefaultBaseURL = "https://generativelanguage.googleapis.com/v1beta"

// Config configures a [Provider].
type Config struct {
	// APIKey is the Gemini API key, or Vertex AI's OAuth access token.
	APIKey llm.Secret
	// BaseURL is used for models that name none; default DefaultBaseURL
	// (Gemini API) or the location's Vertex AI host.
	BaseURL string
	// Vertex selects Vertex AI: Project and Location name the model's
	// place, the key is sent as a bearer token.
	Vertex            bool
	Project, Location string
	// HTTPOptions are how requests are sent.
	llm.HTTPOptions
}

// Provider streams turns from Gemini. It is safe for concurrent use.
type Provider struct {
	cfg Config
}

// New returns a provider.
func New(cfg Config) *Provider { return &Provider{cfg: cfg} }

// String describes the provider without its key.
func (p *Provider) String() string { return "gemini provider " + p.cfg.BaseURL }

// GoString describes the provider without its key, for %#v.
func (p *Provider) GoString() string { return p.String() }

// endpoint is the URL posted to for model m.
func (p *Provider) endpoint(m llm.Model) string {
	base := m.BaseURL
	if base == "" || strings.Contains(base, "{location}") {
		base = p.cfg.BaseURL
	}
	model := url.PathEscape(m.ID)
	if !p.cfg.Vertex {
		if base == "" {
			base = DefaultBaseURL
		}
		return strings.TrimSuffix(base, "/") + "/models/" + model + ":streamGenerateContent?alt=sse"
	}
	loc := p.cfg.Location
	if loc == "" {
		loc = "global"
	}
	if base == "" {
		base = "https://" + loc + "-aiplatform.googleapis.com"
		if loc == "global" {
			base = "https://aiplatform.googleapis.com"
		}
	}
	base = strings.TrimSuffix(base, "/")
	if strings.Contains(base, "/projects/") {
		// A base URL that names its project and location already.
		return base + "/publishers/google/models/" + model + ":streamGenerateContent?alt=sse"
	}
	if !strings.HasSuffix(base, "/v1") && !strings.HasSuffix(base, "/v1beta1") {
		base += "/v1"
	}
	return base + "/projects/" + url.PathEscape(p.cfg.Project) + "/locations/" + url.PathEscape(loc) +
		"/publishers/google/models/" + model + ":streamGenerateContent?alt=sse"
}

// Stream implements [llm.Provider].
func (p *Provider) Stream(ctx context.Context, req *llm.Request) iter.Seq[llm.Event] {
	h := http.Header{}
	if p.cfg.APIKey.IsSet() {
		if p.cfg.Vertex {
			h.Set("Authorization", "Bearer "+p.cfg.APIKey.Reveal())
		} else {
			h.Set("x-goog-api-key", p.cfg.APIKey.Reveal())
		}
	}
	return stream.Run(ctx, req, stream.Call{
		HTTPOptions: p.cfg.HTTPOptions,
		URL:         p.endpoint(req.Model), Header: h,
		Encode:     func() ([]byte, error) { return encodeRequest(req) },
		ParseError: ParseError,
		Read:       read,
	})
}

// overflowSizes find the sizes in Gemini's overflow text.
var overflowSizes = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`(?i)input token count \(?(?P<prompt>\d+)\)? exceeds the maximum number of tokens allowed \(?(?P<window>\d+)`),
	}
})

// ParseError reads Google's error body, {"error": {"code", "message",
// "status"}} (or a list holding one, as some endpoints answer), or plain
// text.
func ParseError(raw []byte) stream.ErrorReport {
	body := bytes.TrimSpace(raw)
	if len(body) > 0 && body[0] == '[' {
		var list []jsontext.Value
		if json.Unmarshal(body, &list, jsonwire.ReadOptions) == nil && len(list) > 0 {
			body = list[0]
		}
	}
	var w struct {
		Error *struct {
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	r := stream.ErrorReport{Message: strings.TrimSpace(string(raw))}
	if json.Unmarshal(body, &w, jsonwire.ReadOptions) == nil && w.Error != nil {
		r = stream.ErrorReport{Type: w.Error.Status, Message: w.Error.Message}
	}
	r.PromptTokens, r.ContextTokens = stream.Sizes(r.Message, overflowSizes())
	return r
}

type wireUsage struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
	TotalTokenCount         int `json:"totalTokenCount"`
}

type wireChunk struct {
	Candidates []struct {
		Content *struct {
			Parts []wirePart `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata  *wireUsage `json:"usageMetadata"`
	ResponseID     string     `json:"responseId"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	Error jsontext.Value `json:"error"`
}

// reader turns chunks into blocks.
type reader struct {
	b       *stream.Builder
	cur     int    // open text or thinking block, or -1
	curKind string // its kind
	sig     string // the open block's signature so far
	calls   int
	finish  string
	ids     map[string]bool
}

// read consumes the stream. It returns nil when the turn finished (b has
// emitted done) or the consumer stopped.
func read(ctx context.Context, b *stream.Builder, body io.Reader) error {
	r := &reader{b: b, cur: -1, ids: map[string]bool{}}
	provider := b.Message().Provider
	sr := sse.NewReader(body)
	for {
		ev, err := sr.Next()
		if err == io.EOF {
			return r.done()
		}
		if err != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return stream.ConnectionError(provider, err)
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 {
			continue
		}
		var c wireChunk
		if err := json.Unmarshal(ev.Data, &c, jsonwire.ReadOptions); err != nil {
			return &llm.APIError{Provider: provider, Message: fmt.Sprintf("undecodable chunk: %v", err), Kind: llm.ErrBadResponse}
		}
		if len(c.Error) > 0 && c.Error.Kind() == '{' {
			return ParseError(ev.Data).APIError(provider, 0, 0)
		}
		if !b.Start() {
			return nil
		}
		if c.ResponseID != "" && b.Message().ResponseID == "" {
			b.SetResponseID(c.ResponseID)
		}
		if !r.chunk(&c) {
			return nil
		}
	}
}

func (r *reader) chunk(c *wireChunk) bool {
	if c.PromptFeedback != nil && c.PromptFeedback.BlockReason != "" && len(c.Candidates) == 0 {
		r.finish = c.PromptFeedback.BlockReason
	}
	if len(c.Candidates) > 0 {
		cand := c.Candidates[0]
		if cand.Content != nil {
			for _, p := range cand.Content.Parts {
				if !r.part(p) {
					return false
				}
			}
		}
		if cand.FinishReason != "" {
			r.finish = cand.FinishReason
		}
	}
	if u := c.UsageMetadata; u != nil {
		r.b.SetUsage(llm.Usage{
			Input:       u.PromptTokenCount - u.CachedContentTokenCount,
			Output:      u.CandidatesTokenCount + u.ThoughtsTokenCount,
			CacheRead:   u.CachedContentTokenCount,
			TotalTokens: u.TotalTokenCount,
		})
	}
	return true
}

// closeCurrent ends the open text or thinking block with its signature.
func (r *reader) closeCurrent() bool {
	if r.cur < 0 {
		return true
	}
	idx := r.cur
	r.cur = -1
	r.b.AppendSignature(idx, r.sig)
	r.sig = ""
	return r.b.End(idx)
}

func (r *reader) part(p wirePart) bool {
	if p.Text != nil {
		kind := llm.ContentText
		if p.Thought {
			kind = llm.ContentThinking
		}
		if r.cur < 0 || r.curKind != kind {
			if !r.closeCurrent() {
				return false
			}
			var ok bool
			if kind == llm.ContentThinking {
				r.cur, ok = r.b.StartThinking()
			} else {
				r.cur, ok = r.b.StartText()
			}
			if !ok {
				return false
			}
			r.curKind = kind
		}
		if p.ThoughtSignature != "" {
			r.sig = p.ThoughtSignature // the latest one a block's parts carry
		}
		if !r.b.Append(r.cur, *p.Text) {
			return false
		}
	}
	if fc := p.FunctionCall; fc != nil {
		if !r.closeCurrent() {
			return false
		}
		r.calls++
		id := fc.ID
		if id == "" || r.ids[id] {
			id = fmt.Sprintf("%s_%d_%d", fc.Name, r.b.Message().Timestamp, r.calls)
		}
		r.ids[id] = true
		idx, ok := r.b.StartToolCall(id, fc.Name)
		if !ok {
			return false
		}
		args := "{}"
		if fc.Args.Kind() == '{' {
			args = string(fc.Args)
		}
		r.b.AppendSignature(idx, p.ThoughtSignature)
		if !r.b.Append(idx, args) || !r.b.End(idx) {
			return false
		}
	}
	return true
}

// errNoFinish reports a stream that ended without a finish reason.
var errNoFinish = errors.New("stream ended without a finish reason")

// done finishes the turn by its finish reason.
func (r *reader) done() error {
	provider := r.b.Message().Provider
	if !r.closeCurrent() {
		return nil
	}
	var reason llm.StopReason
	switch r.finish {
	case "":
		return stream.ConnectionError(provider, errNoFinish)
	case "STOP":
		reason = llm.StopReasonStop
		if r.calls > 0 {
			reason = llm.StopReasonToolUse
		}
	case "MAX_TOKENS", "CONTINUATION":
		reason = llm.StopReasonLength
	default:
		return &llm.APIError{Provider: provider, Type: r.finish, Message: "Provider stopped with: " + r.finish, Kind: llm.ErrRequest}
	}
	r.b.Finish(reason)
	return nil
}
