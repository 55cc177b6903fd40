package stream

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"net/http"
	"regexp"
	"strconv"
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
	// ParseError reads an error response body into the vendor's error
	// type, message and reported sizes.
	ParseError func(raw []byte) ErrorReport
	// Read consumes the event stream of a successful response, emitting on
	// b; it returns nil once b has finished or the consumer stopped.
	Read func(ctx context.Context, b *Builder, body io.Reader) error
	// IdleTimeout bounds how long the server may send nothing: waiting for
	// the response headers, or between two reads of the stream. 0 means
	// DefaultIdleTimeout; a negative value means no bound.
	IdleTimeout time.Duration
}

// DefaultIdleTimeout is how long a server may stay silent before the turn
// fails as a broken connection. It is generous because a local server may
// spend minutes reading a long prompt before its first byte, and a remote
// one sends keep-alive pings while it thinks.
const DefaultIdleTimeout = 5 * time.Minute

// idleError is the cause of a request cancelled by the idle timeout.
type idleError struct{ d time.Duration }

func (e *idleError) Error() string {
	return fmt.Sprintf("the server sent nothing for %v", e.d)
}

// watchdog cancels a request when the server stays silent too long.
type watchdog struct {
	t *time.Timer
	d time.Duration
}

// newWatchdog starts a watchdog that calls cancel with an *idleError after
// d without a touch; d <= 0 gives one that never fires.
func newWatchdog(d time.Duration, cancel context.CancelCauseFunc) *watchdog {
	if d <= 0 {
		return &watchdog{}
	}
	return &watchdog{t: time.AfterFunc(d, func() { cancel(&idleError{d}) }), d: d}
}

// touch restarts the countdown: the server was heard from.
func (w *watchdog) touch() {
	if w.t != nil {
		w.t.Reset(w.d)
	}
}

func (w *watchdog) stop() {
	if w.t != nil {
		w.t.Stop()
	}
}

// watchedReader touches the watchdog whenever bytes arrive.
type watchedReader struct {
	r io.Reader
	w *watchdog
}

func (r *watchedReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.w.touch()
	}
	return n, err
}

// Run streams one turn: encode, post (retrying transient failures before
// the stream starts), read. Cancelling ctx or stopping the iteration
// cancels the request; nothing outlives the iteration.
//
// A server that sends nothing for the call's idle timeout (see
// [Call.IdleTimeout]) fails the turn as a broken connection
// ([llm.ErrConnection]), not as an abort, so callers treat it as the
// provider's failure.
func Run(ctx context.Context, req *llm.Request, c Call) iter.Seq[llm.Event] {
	return func(yield func(llm.Event) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		// rctx is the request's own context: the watchdog cancels it
		// without cancelling ctx, so a silent server reads as a failure,
		// not as the caller's abort.
		rctx, rcancel := context.WithCancelCause(ctx)
		defer rcancel(nil)
		idle := c.IdleTimeout
		if idle == 0 {
			idle = DefaultIdleTimeout
		}
		now := c.Now
		if now == nil {
			now = time.Now
		}
		b := New(req.Model, now(), yield)
		fail := func(err error) {
			if ie, ok := context.Cause(rctx).(*idleError); ok && ctx.Err() == nil {
				err = &llm.APIError{Provider: req.Model.Provider, Message: ie.Error(), Kind: llm.ErrConnection}
			}
			b.Fail(ctx, err)
		}
		body, err := c.Encode()
		if err != nil {
			b.Fail(ctx, fmt.Errorf("%s: %w", req.Model.Provider, err))
			return
		}
		policy := retry.DefaultPolicy()
		if c.Retry != nil {
			policy = *c.Retry
		}
		dog := newWatchdog(idle, rcancel)
		defer dog.stop()
		var resp *http.Response
		err = retry.Do(rctx, policy, llm.RetryDecision, func(ctx context.Context) error {
			dog.touch()
			var err error
			resp, err = c.post(ctx, req.Model, body)
			return err
		})
		if err != nil {
			fail(err)
			return
		}
		defer resp.Body.Close()
		dog.touch()
		if err := c.Read(rctx, b, &watchedReader{r: resp.Body, w: dog}); err != nil {
			fail(err)
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
	return nil, c.ParseError(raw).APIError(model.Provider, resp.StatusCode, llm.ParseRetryAfter(resp.Header, time.Now()))
}

// ErrorReport is what a provider reads from an error response or an error
// event.
type ErrorReport struct {
	// Type is the vendor's error type or code, Message its text.
	Type, Message string
	// PromptTokens and ContextTokens are the sizes the server reported for
	// a request that did not fit (see [llm.APIError]); 0 when not given.
	PromptTokens, ContextTokens int
}

// APIError classifies the report with [llm.NewAPIError] and keeps its
// sizes. status is the HTTP status, 0 for an event inside a stream.
func (r ErrorReport) APIError(provider string, status int, retryAfter time.Duration) *llm.APIError {
	e := llm.NewAPIError(provider, status, r.Type, r.Message, retryAfter)
	e.PromptTokens, e.ContextTokens = max(r.PromptTokens, 0), max(r.ContextTokens, 0)
	return e
}

// Sizes reads the request's size and the context window out of an overflow
// text. Each pattern may name a group "prompt" and a group "window" holding
// the numbers; for each, the first pattern (in order) that yields one wins.
// A number not found, or too large for an int, is 0.
func Sizes(text string, patterns []*regexp.Regexp) (prompt, window int) {
	for _, re := range patterns {
		m := re.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		for i, name := range re.SubexpNames() {
			n, err := strconv.Atoi(m[i])
			if err != nil || n < 0 {
				continue
			}
			switch {
			case name == "prompt" && prompt == 0:
				prompt = n
			case name == "window" && window == 0:
				window = n
			}
		}
	}
	return prompt, window
}
