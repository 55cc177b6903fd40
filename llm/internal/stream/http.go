package stream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/retry"
)

// Call is what a provider needs to stream one turn over HTTP: where to
// post, how to encode the request, how to read errors and the stream.
type Call struct {
	// HTTPOptions are the provider's: the configured headers are added
	// over Header, the model's own over both.
	llm.HTTPOptions
	URL string
	// Header holds the provider's own headers (auth, version).
	Header http.Header
	// Encode builds the request body.
	Encode func() ([]byte, error)
	// ParseError reads an error response body into the vendor's error
	// type, message and reported sizes.
	ParseError func(raw []byte) ErrorReport
	// Read consumes the event stream of a successful response, emitting on
	// b; it returns nil once b has finished or the consumer stopped.
	Read func(ctx context.Context, b *Builder, body io.Reader) error
}

// DefaultIdleTimeout is how long a server may stay silent before the turn
// fails as a broken connection: pi's httpIdleTimeoutMs and Codex's
// stream_idle_timeout_ms, five minutes.
const DefaultIdleTimeout = 5 * time.Minute

// DefaultKeepAliveTimeout is how long a server may keep a stream open with
// keep-alives alone (SSE comments, pings, events that carry nothing of the
// reply) before the turn fails: long enough for a local server to read a
// long prompt, short of forever.
const DefaultKeepAliveTimeout = 30 * time.Minute

// silenceError is the cause of a request cancelled by the watchdog.
type silenceError struct {
	d         time.Duration
	keepAlive bool // only keep-alives came for d
}

func (e *silenceError) Error() string {
	if e.keepAlive {
		return fmt.Sprintf("the server sent only keep-alives and no reply for %v", e.d)
	}
	return fmt.Sprintf("the server sent nothing for %v", e.d)
}

// watchdog cancels a request when the server stays silent for idle, or
// sends only keep-alives (bytes that add nothing to the reply) for
// keepAlive. Touches are atomic stores; the timer re-arms itself lazily,
// so a fast stream costs no timer resets.
type watchdog struct {
	t               *time.Timer
	base            time.Time
	idle, keepAlive time.Duration
	heard, progress atomic.Int64 // nanoseconds since base
	stopped         atomic.Bool
	cancel          context.CancelCauseFunc
}

// newWatchdog starts a watchdog; idle <= 0 gives one that never fires,
// keepAlive <= 0 bounds keep-alives by nothing.
func newWatchdog(idle, keepAlive time.Duration, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{base: time.Now(), idle: idle, keepAlive: keepAlive, cancel: cancel}
	if idle > 0 {
		w.t = time.AfterFunc(idle, w.check)
	}
	return w
}

// check fires the watchdog if a deadline has passed, else re-arms it for
// the nearest one.
func (w *watchdog) check() {
	if w.stopped.Load() {
		return
	}
	now := int64(time.Since(w.base))
	wait := time.Duration(w.heard.Load() + int64(w.idle) - now)
	if wait <= 0 {
		w.cancel(&silenceError{d: w.idle})
		return
	}
	if w.keepAlive > 0 {
		kw := time.Duration(w.progress.Load() + int64(w.keepAlive) - now)
		if kw <= 0 {
			w.cancel(&silenceError{d: w.keepAlive, keepAlive: true})
			return
		}
		wait = min(wait, kw)
	}
	w.t.Reset(wait)
}

// touch records that the server was heard from.
func (w *watchdog) touch() { w.heard.Store(int64(time.Since(w.base))) }

// advance records that the reply grew: the server is heard and working.
func (w *watchdog) advance() {
	now := int64(time.Since(w.base))
	w.heard.Store(now)
	w.progress.Store(now)
}

func (w *watchdog) stop() {
	w.stopped.Store(true)
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
// [Call.IdleTimeout]), or only keep-alives for the request's keep-alive
// bound, fails the turn as a broken connection ([llm.ErrConnection], which
// callers retry), not as an abort, so callers treat it as the provider's
// failure. A reply that grows past [ReplyLimit] is cut there: what came is
// kept and the turn ends with stop reason length.
func Run(ctx context.Context, req *llm.Request, c Call) iter.Seq[llm.Event] {
	return func(yield func(llm.Event) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		// rctx is the request's own context: the watchdog cancels it
		// without cancelling ctx, so a silent server reads as a failure,
		// not as the caller's abort.
		rctx, rcancel := context.WithCancelCause(ctx)
		defer rcancel(nil)
		idle, keepAlive := c.timeouts(req)
		now := c.Now
		if now == nil {
			now = time.Now
		}
		b := New(req.Model, now(), yield)
		b.limit = ReplyLimit(req)
		fail := func(err error) {
			if ie, ok := context.Cause(rctx).(*silenceError); ok && ctx.Err() == nil {
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
		dog := newWatchdog(idle, keepAlive, rcancel)
		defer dog.stop()
		b.progress = dog.advance
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
		err = c.Read(rctx, b, &watchedReader{r: resp.Body, w: dog})
		if b.full {
			// Cut at the reply limit: keep what came, as a reply that
			// reached its output limit.
			b.Finish(llm.StopReasonLength)
			return
		}
		if err != nil {
			fail(err)
		}
	}
}

// timeouts returns the idle and keep-alive bounds of a request: the
// call's, else the request's, else the defaults; negative means none.
func (c *Call) timeouts(req *llm.Request) (idle, keepAlive time.Duration) {
	idle, keepAlive = c.IdleTimeout, req.KeepAliveTimeout
	if idle == 0 {
		idle = req.IdleTimeout
	}
	if idle == 0 {
		idle = DefaultIdleTimeout
	}
	if keepAlive == 0 {
		keepAlive = DefaultKeepAliveTimeout
	}
	if keepAlive > 0 {
		keepAlive = max(keepAlive, idle)
	}
	return idle, keepAlive
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
	for k, v := range c.Headers {
		hreq.Header.Set(k, v)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	for k, v := range model.Headers {
		hreq.Header.Set(k, v)
	}
	client := c.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := sameOrigin(client).Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		if re := (*foreignRedirectError)(nil); errors.As(err, &re) {
			return nil, &llm.APIError{Provider: model.Provider, StatusCode: re.status, Kind: llm.ErrRequest, Message: re.Error()}
		}
		return nil, ConnectionError(model.Provider, err)
	}
	if resp.StatusCode == http.StatusOK {
		if err := checkStreamType(model.Provider, resp); err != nil {
			resp.Body.Close()
			return nil, err
		}
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return nil, c.ParseError(raw).APIError(model.Provider, resp.StatusCode, llm.ParseRetryAfter(resp.Header, time.Now()))
}

// foreignRedirectError is a redirect to another server, refused: the
// request carries the API key (in x-api-key, api-key or x-goog-api-key,
// which Go's client does not drop on a redirect as it drops
// Authorization) and the whole conversation.
type foreignRedirectError struct {
	from, to string
	status   int
}

func (e *foreignRedirectError) Error() string {
	return fmt.Sprintf("the server at %s redirected the request to %s; Prime does not send the key and the conversation "+
		"to another server: if the new address is right, set the provider's baseUrl to it", e.from, e.to)
}

// sameOrigin returns c following redirects only on the server it was asked
// (the same host and port; from http to https on the same host), at most
// ten, as Go's default policy.
func sameOrigin(c *http.Client) *http.Client {
	cc := *c
	next := c.CheckRedirect
	cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		first := via[0].URL
		same := req.URL.Host == first.Host && req.URL.Scheme == first.Scheme ||
			first.Scheme == "http" && req.URL.Scheme == "https" && req.URL.Hostname() == first.Hostname()
		if !same {
			status := 0
			if req.Response != nil {
				status = req.Response.StatusCode
			}
			return &foreignRedirectError{from: first.Scheme + "://" + first.Host, to: req.URL.Scheme + "://" + req.URL.Host, status: status}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &cc
}

// pageStart is how much of an unexpected page an error quotes.
const pageStart = 200

// checkStreamType refuses a 200 answer that is a web page, not the event
// stream asked for: what a gateway, a proxy or a captive portal sends in
// the model server's place. Sending the request again would get the same
// page, so it is not retryable; the error names the content type and
// quotes the start of the page, so the user sees which server answered.
func checkStreamType(provider string, resp *http.Response) error {
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mt != "text/html" && mt != "application/xhtml+xml" {
		return nil // an event stream, JSON, or a server that does not say
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4*pageStart))
	start := strings.Join(strings.Fields(strings.ToValidUTF8(string(raw), "\uFFFD")), " ")
	if r := []rune(start); len(r) > pageStart {
		start = string(r[:pageStart]) + "…"
	}
	return &llm.APIError{Provider: provider, StatusCode: resp.StatusCode, Kind: llm.ErrRequest,
		Message: fmt.Sprintf("the server answered with a %s page, not an event stream (a gateway or proxy in the way?): %s", mt, start)}
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
