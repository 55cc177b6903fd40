// Package responses streams assistant turns from OpenAI's Responses API
// (POST {baseURL}/responses with "stream": true), as OpenAI serves it
// ("openai-responses") and as Azure OpenAI does ("azure-openai-responses":
// an api-key header, an api-version query parameter, a deployment name as
// the model).
//
// Requests are stateless ("store": false): the whole conversation goes in
// "input" every time, and a reasoning model is asked for its reasoning
// encrypted ("include": ["reasoning.encrypted_content"]) so it can be sent
// back on the next turn. The effort comes from the thinking level, clamped
// to the model's levels ([llm.Model.ClampThinking]).
//
// What a session stores is what pi 1.6 stores, so pi and Prime continue
// each other's sessions:
//   - a reasoning item becomes a thinking block whose text is the item's
//     summary (or its reasoning text) and whose signature is the whole item
//     as JSON, sent back verbatim to the same model;
//   - a text block's signature is {"v":1,"id":<message id>} (with the
//     message's phase when it has one), so the message goes back with its id;
//   - a tool call's id is "<call_id>|<item id>"; the call goes back with
//     both and its result with the call id.
//
// Stop reasons: status "completed" is stop (toolUse when the turn called
// tools); "incomplete" for max_output_tokens is length, for any other
// reason (a content filter) an error; "failed", an error event, and a
// stream that ends before its terminal event are errors. An overflow
// (code context_length_exceeded) is classified as [llm.ErrContextOverflow].
// Usage: input_tokens less the cached (and cache-written) ones is the
// input, the cached ones cacheRead, output_tokens (reasoning included) the
// output.
package responses

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/internal/stream"
	"github.com/prime-agent/prime/llm/openai"
)

var _ llm.Provider = (*Provider)(nil)

// DefaultBaseURL is OpenAI's API endpoint.
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultAzureAPIVersion is the api-version sent to Azure when none is
// configured: Azure's v1 API.
const DefaultAzureAPIVersion = "v1"

// Config configures a [Provider].
type Config struct {
	// APIKey is sent as a bearer token (OpenAI) or in the api-key header
	// (Azure).
	APIKey llm.Secret
	// BaseURL is used for models that name none; default DefaultBaseURL.
	BaseURL string
	// Azure selects Azure OpenAI's form of the API.
	Azure bool
	// APIVersion is Azure's api-version; default DefaultAzureAPIVersion.
	APIVersion string
	// Deployments maps model ids to Azure deployment names; a model
	// without one is sent under its id.
	Deployments map[string]string
	// HTTPOptions are how requests are sent.
	llm.HTTPOptions
}

// Provider streams turns from a Responses endpoint. It is safe for
// concurrent use.
type Provider struct {
	cfg Config
}

// New returns a provider.
func New(cfg Config) *Provider { return &Provider{cfg: cfg} }

// String describes the provider without its key.
func (p *Provider) String() string { return "openai-responses provider " + p.cfg.BaseURL }

// GoString describes the provider without its key, for %#v.
func (p *Provider) GoString() string { return p.String() }

// endpoint is the URL posted to for model m.
func (p *Provider) endpoint(m llm.Model) string {
	base := cmp.Or(m.BaseURL, p.cfg.BaseURL, DefaultBaseURL)
	base = strings.TrimSuffix(base, "/")
	if !p.cfg.Azure {
		return base + "/responses"
	}
	base = strings.TrimSuffix(base, "/responses")
	if u, err := url.Parse(base); err == nil && (u.Path == "" || u.Path == "/openai") {
		base = strings.TrimSuffix(base, "/openai") + "/openai/v1"
	}
	version := p.cfg.APIVersion
	if version == "" {
		version = DefaultAzureAPIVersion
	}
	return base + "/responses?api-version=" + url.QueryEscape(version)
}

// Stream implements [llm.Provider].
func (p *Provider) Stream(ctx context.Context, req *llm.Request) iter.Seq[llm.Event] {
	h := http.Header{}
	model := req.Model.ID
	if p.cfg.APIKey.IsSet() {
		if p.cfg.Azure {
			h.Set("api-key", p.cfg.APIKey.Reveal())
		} else {
			h.Set("Authorization", "Bearer "+p.cfg.APIKey.Reveal())
		}
	}
	if d := p.cfg.Deployments[model]; p.cfg.Azure && d != "" {
		model = d
	}
	return stream.Run(ctx, req, stream.Call{
		HTTPOptions: p.cfg.HTTPOptions,
		URL:         p.endpoint(req.Model), Header: h,
		Encode: func() ([]byte, error) {
			body, err := encodeRequest(req, model)
			if err != nil {
				return nil, err
			}
			return req.Model.SamplingBody(body, req.Reasoning)
		},
		ParseError: openai.ParseError,
		Read:       read,
	})
}

// errIncomplete reports a stream that ended before its terminal event.
var errIncomplete = errors.New("stream ended before response.completed")

// read consumes the stream. It returns nil when the turn finished (b has
// emitted done) or the consumer stopped.
func read(ctx context.Context, b *stream.Builder, body io.Reader) error {
	r := newReader(b)
	err := r.run(body)
	if err != nil && ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

// usage reads the Responses usage object.
func (u *wireUsage) usage() llm.Usage {
	cached, written := 0, 0
	if d := u.InputTokensDetails; d != nil {
		cached, written = d.CachedTokens, d.CacheWriteTokens
	}
	return llm.Usage{
		Input:       max(0, u.InputTokens-cached-written),
		Output:      u.OutputTokens,
		CacheRead:   cached,
		CacheWrite:  written,
		TotalTokens: u.TotalTokens,
	}
}

// stopReason maps a terminal status to a stop reason, or an error for a
// turn that did not end well.
func stopReason(provider, status, reason string) (llm.StopReason, error) {
	switch status {
	case "", "completed", "in_progress", "queued":
		return llm.StopReasonStop, nil
	case "incomplete":
		if reason == "max_output_tokens" {
			return llm.StopReasonLength, nil
		}
		msg := "Response incomplete without a provider reason"
		if reason != "" {
			msg = "Response incomplete: " + reason
		}
		return "", &llm.APIError{Provider: provider, Type: reason, Message: msg, Kind: llm.ErrRequest}
	default:
		return "", &llm.APIError{Provider: provider, Type: status, Message: fmt.Sprintf("the response ended with status %s", status), Kind: llm.ErrServer}
	}
}
