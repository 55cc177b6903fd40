package stream

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"net/http"
	"time"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/retry"
)

// Call is what a provider needs to stream one turn over HTTP: where to
// post, how to encode the request, how to read errors and the stream.
type Call struct {
	Client *http.Client     // nil means http.DefaultClient
	Retry  *retry.Policy    // nil means retry.DefaultPolicy
	Now    func() time.Time // nil means time.Now
	URL    string
	// Header holds the provider's headers (auth, version, configured ones);
	// the model's own headers are added over them.
	Header http.Header
	// Encode builds the request body.
	Encode func() ([]byte, error)
	// ParseError reads an error response body into the vendor's error type
	// and message.
	ParseError func(raw []byte) (errType, message string)
	// Read consumes the event stream of a successful response, emitting on
	// b; it returns nil once b has finished or the consumer stopped.
	Read func(ctx context.Context, b *Builder, body io.Reader) error
}

// Run streams one turn: encode, post (retrying transient failures before
// the stream starts), read. Cancelling ctx or stopping the iteration
// cancels the request; nothing outlives the iteration.
func Run(ctx context.Context, req *llm.Request, c Call) iter.Seq[llm.Event] {
	return func(yield func(llm.Event) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		now := c.Now
		if now == nil {
			now = time.Now
		}
		b := New(req.Model, now(), yield)
		body, err := c.Encode()
		if err != nil {
			b.Fail(ctx, fmt.Errorf("%s: %w", req.Model.Provider, err))
			return
		}
		policy := retry.DefaultPolicy()
		if c.Retry != nil {
			policy = *c.Retry
		}
		var resp *http.Response
		err = retry.Do(ctx, policy, llm.RetryDecision, func(ctx context.Context) error {
			var err error
			resp, err = c.post(ctx, req.Model, body)
			return err
		})
		if err != nil {
			b.Fail(ctx, err)
			return
		}
		defer resp.Body.Close()
		if err := c.Read(ctx, b, resp.Body); err != nil {
			b.Fail(ctx, err)
		}
	}
}

// post sends the request and returns a 200 response, or a classified error.
func (c *Call) post(ctx context.Context, model llm.Model, body []byte) (*http.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", model.Provider, err)
	}
	hreq.Header = c.Header.Clone()
	if hreq.Header == nil {
		hreq.Header = http.Header{}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	for k, v := range model.Headers {
		hreq.Header.Set(k, v)
	}
	client := c.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, ConnectionError(model.Provider, err)
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	typ, msg := c.ParseError(raw)
	return nil, llm.NewAPIError(model.Provider, resp.StatusCode, typ, msg, llm.ParseRetryAfter(resp.Header, time.Now()))
}
