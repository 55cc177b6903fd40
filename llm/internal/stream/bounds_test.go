package stream_test

import (
	"errors"
	"fmt"
	goio "io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prime-agent/prime/internal/procmem"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/anthropic"
	"github.com/prime-agent/prime/llm/internal/stream"
	"github.com/prime-agent/prime/llm/openai"
	"github.com/prime-agent/prime/llm/retry"
)

// wire is one vendor's stream format, written by hand so a test server can
// misbehave in it: the opening events, one text delta, and a keep-alive
// that carries nothing of the reply.
type wire struct {
	name      string
	api       string
	path      string
	provider  func(url string, c *http.Client) llm.Provider
	open      string
	delta     func(text string) string
	keepAlive string
}

var wires = []wire{
	{
		name: "anthropic", api: llm.APIAnthropicMessages, path: "/v1/messages",
		provider: func(url string, c *http.Client) llm.Provider {
			return anthropic.New(anthropic.Config{APIKey: "k", BaseURL: url, HTTPOptions: llm.HTTPOptions{HTTPClient: c, Retry: &retry.Policy{}}})
		},
		open: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":5}}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
		delta: func(text string) string {
			return fmt.Sprintf("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%q}}\n\n", text)
		},
		keepAlive: "event: ping\ndata: {\"type\":\"ping\"}\n\n",
	},
	{
		name: "openai", api: llm.APIOpenAICompletions, path: "/v1/chat/completions",
		provider: func(url string, c *http.Client) llm.Provider {
			return openai.New(openai.Config{APIKey: "k", BaseURL: url + "/v1", HTTPOptions: llm.HTTPOptions{HTTPClient: c, Retry: &retry.Policy{}}})
		},
		open: "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n",
		delta: func(text string) string {
			return fmt.Sprintf("data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", text)
		},
		keepAlive: ": OPENROUTER PROCESSING\n\n",
	},
}

// misbehave serves w's stream as script writes it, until script returns
// (write reports false, and gone is closed, once the client went away).
func misbehave(t *testing.T, w wire, script func(write func(string) bool, gone <-chan struct{})) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != w.path {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "text/event-stream")
		rw.WriteHeader(http.StatusOK)
		f := rw.(http.Flusher)
		f.Flush()
		script(func(s string) bool {
			if _, err := io(rw, s); err != nil || r.Context().Err() != nil {
				return false
			}
			f.Flush()
			return true
		}, r.Context().Done())
	}))
	t.Cleanup(srv.Close)
	return srv
}

func io(rw http.ResponseWriter, s string) (int, error) { return rw.Write([]byte(s)) }

func request(w wire, srv *httptest.Server, bounds llm.StreamBounds) *llm.Request {
	return &llm.Request{
		Model:        llm.Model{ID: "m", Provider: w.name, API: w.api, BaseURL: "", MaxTokens: 32000},
		Messages:     []llm.Message{&llm.UserMessage{Content: []llm.Content{llm.Text{Text: "hi"}}}},
		StreamBounds: bounds,
	}
}

// inMemory serves w's stream as script writes it through a pipe, with no
// network, so the test can run in a synctest bubble: the script's sleeps
// and the watchdog's timers then run on the bubble's clock, and a gap of
// 30 ms is 30 ms however loaded the machine is. The bytes are the vendor's
// wire format as over a socket; the script ends the body when it returns,
// and write reports false (and gone is closed) once the client went away.
// The test waits at its end for every script to return.
func inMemory(t *testing.T, w wire, script func(write func(string) bool, gone <-chan struct{})) *http.Client {
	return &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path != w.path {
			return &http.Response{StatusCode: http.StatusNotFound, Body: http.NoBody, Request: r}, nil
		}
		pr, pw := goio.Pipe()
		ended := make(chan struct{})
		t.Cleanup(func() { <-ended })
		go func() {
			defer close(ended)
			script(func(s string) bool {
				_, err := pw.Write([]byte(s))
				return err == nil && r.Context().Err() == nil
			}, r.Context().Done())
			pw.Close()
		}()
		go func() {
			select {
			case <-r.Context().Done():
				pw.CloseWithError(r.Context().Err())
			case <-ended:
			}
		}()
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: pr, Request: r}, nil
	})}
}

// roundTrip is an [http.RoundTripper] made of a function.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestSilentAndKeepAliveOnly: a server that sends headers and then nothing
// fails at the idle timeout; one that sends only keep-alives (SSE comments,
// pings) outlives the idle timeout but fails at the keep-alive bound; both
// fail as a broken connection, which the agent retries, not as an abort;
// keep-alives between real deltas do not count against a growing reply.
//
// It runs in a synctest bubble (see inMemory), so the bounds and the
// servers' gaps are exact: on real time a loaded machine stretched the
// 30 ms gaps past the bounds.
func TestSilentAndKeepAliveOnly(t *testing.T) {
	const url = "http://stream.test"
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				silent := inMemory(t, w, func(_ func(string) bool, gone <-chan struct{}) { <-gone })
				bounds := llm.StreamBounds{IdleTimeout: 400 * time.Millisecond, KeepAliveTimeout: 1200 * time.Millisecond}
				msg, err := llm.Complete(t.Context(), w.provider(url, silent), request(w, nil, bounds))
				if !errors.Is(err, llm.ErrConnection) || llm.IsAborted(err) || !llm.Retryable(err) ||
					!strings.Contains(err.Error(), "sent nothing for 400ms") {
					t.Fatalf("silent server: err = %v, want a retryable connection error naming the silence", err)
				}
				if msg.StopReason != llm.StopReasonError {
					t.Errorf("silent server: stop reason %q", msg.StopReason)
				}

				comments := inMemory(t, w, func(write func(string) bool, _ <-chan struct{}) {
					if !write(w.open) {
						return
					}
					for write(w.keepAlive) {
						time.Sleep(30 * time.Millisecond)
					}
				})
				start := time.Now()
				msg, err = llm.Complete(t.Context(), w.provider(url, comments), request(w, nil, bounds))
				if !errors.Is(err, llm.ErrConnection) || !llm.Retryable(err) ||
					!strings.Contains(err.Error(), "only keep-alives and no reply for 1.2s") {
					t.Fatalf("keep-alive server: err = %v, want a retryable connection error naming the keep-alives", err)
				}
				if took := time.Since(start); took < 1200*time.Millisecond {
					t.Errorf("keep-alive server cut after %v, before the keep-alive bound", took)
				}
				if msg.StopReason != llm.StopReasonError {
					t.Errorf("keep-alive server: stop reason %q", msg.StopReason)
				}

				// Slow but growing: a delta, then keep-alives for longer than the
				// idle timeout, many times over, past the keep-alive bound in all.
				// The deltas come more than an idle timeout apart, and the whole
				// reply outlasts the keep-alive bound.
				slow := inMemory(t, w, func(write func(string) bool, _ <-chan struct{}) {
					write(w.open)
					for range 4 {
						write(w.delta("a"))
						for range 15 {
							write(w.keepAlive)
							time.Sleep(30 * time.Millisecond)
						}
					}
					write(w.delta("b"))
				})
				_, err = llm.Complete(t.Context(), w.provider(url, slow), request(w, nil, bounds))
				// The server never finishes the turn; what matters is that it was
				// not cut for silence while the reply kept growing.
				if err == nil || strings.Contains(err.Error(), "sent nothing") || strings.Contains(err.Error(), "keep-alives") {
					t.Fatalf("slow server: err = %v, want the end of the stream, not a timeout", err)
				}
			})
		})
	}
}

// TestReplyLimit: a server that ignores max_tokens and streams without end
// is cut at ReplyLimit; what came is kept and the reply ends as one that
// reached its output limit (stop reason length, no error).
func TestReplyLimit(t *testing.T) {
	chunk := strings.Repeat("0123456789abcdef", 4096) // 64 KiB
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv := misbehave(t, w, func(write func(string) bool, _ <-chan struct{}) {
				if !write(w.open) {
					return
				}
				for write(w.delta(chunk)) {
				}
			})
			req := request(w, srv, llm.StreamBounds{})
			req.MaxTokens = 10000
			limit := stream.ReplyLimit(req)
			if limit != 10000*stream.ReplyLimitFactor*4 {
				t.Fatalf("ReplyLimit = %d", limit)
			}
			msg, err := llm.Complete(t.Context(), w.provider(srv.URL, srv.Client()), req)
			if err != nil {
				t.Fatal(err)
			}
			if msg.StopReason != llm.StopReasonLength || int64(len(msg.Text())) != limit || !strings.HasPrefix(msg.Text(), chunk) {
				t.Fatalf("stop %q, %d bytes kept; want length and %d", msg.StopReason, len(msg.Text()), limit)
			}
		})
	}
}

// TestReplyHardCap: with an output limit too large to mean anything, a
// flood of 400 MB is cut at MaxReplyBytes, and memory stays far below what
// holding it all took (3.4 GB before the cap).
func TestReplyHardCap(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 64 MiB")
	}
	w := wires[1]
	chunk := strings.Repeat("x", 256<<10)
	srv := misbehave(t, w, func(write func(string) bool, _ <-chan struct{}) {
		write(w.open)
		for sent := 0; sent < 400<<20 && write(w.delta(chunk)); sent += len(chunk) {
		}
	})
	req := request(w, srv, llm.StreamBounds{})
	req.MaxTokens = 1 << 30
	var msg *llm.AssistantMessage
	var err error
	grew := procmem.PeakGrowthMB(func() {
		msg, err = llm.Complete(t.Context(), w.provider(srv.URL, srv.Client()), req)
	})
	if err != nil {
		t.Fatal(err)
	}
	if msg.StopReason != llm.StopReasonLength || len(msg.Text()) != stream.MaxReplyBytes {
		t.Fatalf("stop %q, %d bytes; want length at %d", msg.StopReason, len(msg.Text()), stream.MaxReplyBytes)
	}
	t.Logf("peak RSS growth %.0f MB for a reply cut at %d MiB", grew, stream.MaxReplyBytes>>20)
	if grew > 600 {
		t.Errorf("peak RSS grew %.0f MB", grew)
	}
}
