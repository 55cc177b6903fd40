package llmtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/retry"
)

// Vendor is one wire API under the conformance suite: how to start its
// fake server and what differs between vendors in what the suite checks.
type Vendor struct {
	// Name names the vendor in subtest names.
	Name string
	// New starts the vendor's fake server for a test.
	New func(testing.TB) *Server
	// KeyHeader is the request header that carries the key, KeyPrefix what
	// precedes the key in it ("Bearer ").
	KeyHeader, KeyPrefix string
	// SizedOverflow reports whether the vendor's overflow error names the
	// prompt's size and the window (Gemini's, Anthropic's and OpenAI Chat
	// Completions' do; the Responses API's does not).
	SizedOverflow bool
	// Truncated is a raw stream in the vendor's format that ends, without
	// an error, before the turn's end.
	Truncated string
}

// Vendors are the wire APIs Prime speaks, each with its fake server.
func Vendors() []Vendor {
	return []Vendor{
		{Name: "anthropic", New: NewAnthropic, KeyHeader: "x-api-key", SizedOverflow: true,
			Truncated: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n" +
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"},
		{Name: "openai-completions", New: func(tb testing.TB) *Server { return NewOpenAI(tb) }, KeyHeader: "Authorization", KeyPrefix: "Bearer ",
			SizedOverflow: true, Truncated: `data: {"choices":[{"delta":{"content":"half an answer"}}]}` + "\n\n"},
		{Name: "openai-responses", New: NewResponses, KeyHeader: "Authorization", KeyPrefix: "Bearer ",
			Truncated: "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\",\"output\":[]}}\n\n" +
				"event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"content\":[]}}\n\n" +
				"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"half an answer\"}\n\n"},
		{Name: "azure-openai-responses", New: NewAzure, KeyHeader: "api-key",
			Truncated: "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\",\"output\":[]}}\n\n"},
		{Name: "google-generative-ai", New: NewGemini, KeyHeader: "x-goog-api-key", SizedOverflow: true,
			Truncated: `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"half an answer"}]},"index":0}]}` + "\n\n"},
		{Name: "google-vertex", New: NewVertex, KeyHeader: "Authorization", KeyPrefix: "Bearer ", SizedOverflow: true,
			Truncated: `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"half an answer"}]},"index":0}]}` + "\n\n"},
	}
}

// ask is a one-message request to srv's model.
func ask(srv *Server, text string) *llm.Request {
	return &llm.Request{Model: srv.Model(), SystemPrompt: "You are a test.",
		Messages: []llm.Message{&llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}, Timestamp: 1}}}
}

// Conformance runs the suite every provider passes against v's fake
// server: the scripted stream, errors and their classes, retries, garbage
// bodies, cancellation without leaks, a huge tool argument, the key kept
// out of everything, and the window (overflow with its sizes, the length
// stop, a silent overflow).
func Conformance(t *testing.T, v Vendor) {
	for _, c := range []struct {
		name string
		run  func(*testing.T, Vendor)
	}{
		{"scripted", conformScripted}, {"errors", conformErrors}, {"retries", conformRetries},
		{"garbage", conformGarbage}, {"cancel", conformCancel}, {"huge tool argument", conformHugeArgument},
		{"key", conformKey}, {"redirect", conformRedirect}, {"window", conformWindow},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, v) })
	}
}

// conformScripted: thinking, text, two tool calls and cache usage come out
// as the message a session stores, priced at the model's rates.
func conformScripted(t *testing.T, v Vendor) {
	srv := v.New(t)
	srv.Reply(Thinking("Check both files.", "c2lnbmF0dXJl"), Text("Reading a and b."),
		ToolCall("call_1", "read", `{"path":"a.go"}`), ToolCall("call_2", "read", `{"path":"b.go"}`),
		CacheUsage(120, 30, 1000, 0))
	var types []string
	var final *llm.AssistantMessage
	for ev := range srv.Provider().Stream(t.Context(), ask(srv, "go")) {
		types = append(types, ev.Type.String())
		if ev.Type == llm.EventDone {
			final = ev.Message
		}
	}
	if final == nil || types[0] != "start" || types[len(types)-1] != "done" {
		t.Fatalf("events %v", types)
	}
	var got []string
	for _, c := range final.Content {
		switch c := c.(type) {
		case llm.Thinking:
			got = append(got, "thinking:"+c.Thinking)
		case llm.Text:
			got = append(got, "text:"+c.Text)
		case llm.ToolCall:
			got = append(got, "call:"+c.Name+c.Arguments.String())
		}
	}
	want := `[thinking:Check both files. text:Reading a and b. call:read{"path":"a.go"} call:read{"path":"b.go"}]`
	if fmt.Sprint(got) != want {
		t.Errorf("content %v\nwant %s", got, want)
	}
	if final.StopReason != llm.StopReasonToolUse || final.API != srv.API() {
		t.Errorf("stop %q, api %q", final.StopReason, final.API)
	}
	u := final.Usage
	if u.Input != 120 || u.Output != 30 || u.CacheRead != 1000 || u.TotalTokens != 1150 {
		t.Errorf("usage %+v", u)
	}
	if want := srv.Model().CostOf(u); u.Cost != want {
		t.Errorf("cost %+v, want %+v", u.Cost, want)
	}
	if b, err := json.Marshal(final); err != nil {
		t.Error(err)
	} else if _, err := llm.DecodeMessage(b); err != nil {
		t.Errorf("stored message does not decode: %v", err)
	}
}

// conformErrors: every class of failure comes back classified, in the
// vendor's format, with what arrived before it kept.
func conformErrors(t *testing.T, v Vendor) {
	for _, tc := range []struct {
		name  string
		reply Reply
		kind  error
	}{
		{"overflow", Overflow(), llm.ErrContextOverflow},
		{"auth", HTTPError(401, "", "invalid key"), llm.ErrAuth},
		{"rate limit", Reply{Status: 429, ErrorMessage: "slow down", RetryAfter: 7 * time.Second}, llm.ErrRateLimited},
		{"server", HTTPError(500, "", "internal error"), llm.ErrServer},
		{"bad request", HTTPError(400, "", "the request is malformed"), llm.ErrRequest},
		{"error event mid-stream", Stream(Text("partial answer"), ErrorEvent("server_error", "The server had an error")), llm.ErrServer},
		{"disconnect mid-stream", Stream(Text("partial answer"), Disconnect()), llm.ErrConnection},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := v.New(t)
			srv.Queue(tc.reply)
			msg, err := llm.Complete(t.Context(), srv.Provider(), ask(srv, "go"))
			if !errors.Is(err, tc.kind) {
				t.Fatalf("err = %v, want %v", err, tc.kind)
			}
			if msg == nil || msg.StopReason != llm.StopReasonError || msg.ErrorMessage == "" {
				t.Fatalf("message %+v", msg)
			}
			if overflow := llm.IsContextOverflow(msg, srv.Model().ContextWindow); overflow != (tc.kind == llm.ErrContextOverflow) {
				t.Errorf("IsContextOverflow = %v for %q", overflow, msg.ErrorMessage)
			}
			if tc.reply.RetryAfter > 0 && llm.RetryAfterOf(err) != tc.reply.RetryAfter {
				t.Errorf("retry after %v, want %v", llm.RetryAfterOf(err), tc.reply.RetryAfter)
			}
			if len(tc.reply.Parts) > 0 && msg.Text() != "partial answer" {
				t.Errorf("partial content lost: %q", msg.Text())
			}
		})
	}
}

// conformRetries: transient failures before the stream are retried; an
// overflow never is.
func conformRetries(t *testing.T, v Vendor) {
	srv := v.New(t)
	srv.Queue(HTTPError(503, "", "unavailable"), HTTPError(500, "", "oops"))
	srv.Reply(Text("finally"))
	policy := &retry.Policy{MaxRetries: 3, BaseDelay: time.Millisecond, MaxDelay: time.Second}
	msg, err := llm.Complete(t.Context(), srv.ProviderWith(policy), ask(srv, "go"))
	if err != nil || msg.Text() != "finally" || len(srv.Requests()) != 3 {
		t.Fatalf("%v after %d requests: %+v", err, len(srv.Requests()), msg)
	}
	srv.Overflow()
	srv.Reply(Text("must not be reached"))
	if _, err := llm.Complete(t.Context(), srv.ProviderWith(policy), ask(srv, "go")); !errors.Is(err, llm.ErrContextOverflow) || len(srv.Requests()) != 4 {
		t.Errorf("err %v after %d requests", err, len(srv.Requests()))
	}
	if srv.Pending() != 1 {
		t.Errorf("%d replies left, want the one never reached", srv.Pending())
	}
}

// conformGarbage: a 200 answer that is not the promised stream ends the
// turn as a failure, never as a successful (empty) answer.
func conformGarbage(t *testing.T, v Vendor) {
	for _, raw := range []string{"<html><body>502 Bad Gateway</body></html>", "data: {not json}\n\n", v.Truncated} {
		srv := v.New(t)
		srv.Queue(Reply{Raw: raw})
		msg, err := llm.Complete(t.Context(), srv.Provider(), ask(srv, "go"))
		if err == nil || msg == nil || msg.StopReason != llm.StopReasonError || msg.ErrorMessage == "" || llm.IsAborted(err) {
			t.Errorf("%.60q: message %+v, err %v; want a failed turn", raw, msg, err)
		}
	}
}

// conformCancel: cancelling mid-stream aborts the turn keeping what
// arrived; a consumer that stops early and a request cancelled before it
// is sent leave nothing running.
func conformCancel(t *testing.T, v Vendor) {
	srv := v.New(t)
	check := CheckGoroutines(t)
	srv.Queue(Reply{Parts: []Part{Text(strings.Repeat("word ", 200))}, Delay: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var last llm.Event
	deltas := 0
	for ev := range srv.Provider().Stream(ctx, ask(srv, "go")) {
		if ev.Type == llm.EventTextDelta {
			if deltas++; deltas == 2 {
				cancel()
			}
		}
		last = ev
	}
	if last.Type != llm.EventError || last.Message.StopReason != llm.StopReasonAborted || !llm.IsAborted(last.Err) || errors.Is(last.Err, llm.ErrConnection) {
		t.Fatalf("last event %v, stop %q, err %v", last.Type, last.Message.StopReason, last.Err)
	}
	if !strings.HasPrefix(last.Message.Text(), "word word") {
		t.Errorf("partial text lost: %q", last.Message.Text())
	}
	srv.Queue(Reply{Parts: []Part{Text(strings.Repeat("word ", 200))}, Delay: 10 * time.Millisecond})
	n := 0
	for range srv.Provider().Stream(t.Context(), ask(srv, "go")) {
		if n++; n == 3 {
			break
		}
	}
	before := len(srv.Requests())
	ctx, cancel = context.WithCancel(t.Context())
	cancel()
	msg, err := llm.Complete(ctx, srv.Provider(), ask(srv, "go"))
	if !errors.Is(err, context.Canceled) || msg.StopReason != llm.StopReasonAborted || len(srv.Requests()) != before {
		t.Errorf("cancelled before the request: %v, %q, %d requests", err, msg.StopReason, len(srv.Requests())-before)
	}
	srv.Client().CloseIdleConnections()
	check()
}

// conformHugeArgument streams a 10 MB tool argument.
func conformHugeArgument(t *testing.T, v Vendor) {
	srv := v.New(t)
	content := strings.Repeat("0123456789abcdef", 10<<20/16)
	args, _ := json.Marshal(map[string]string{"path": "big.txt", "content": content})
	srv.Reply(ToolCall("call_big", "write", string(args)))
	req := ask(srv, "go")
	req.MaxTokens = 1 << 20 // within the reply limit: a model allowed a million output tokens
	msg, err := llm.Complete(t.Context(), srv.Provider(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := msg.ToolCalls()[0].Arguments.StringArg("content"); !ok || got != content {
		t.Fatalf("content of %d bytes, want %d", len(got), len(content))
	}
}

// conformKey: the key reaches the wire in the vendor's header and nowhere
// else: not the stored message, not the error, not the provider printed.
func conformKey(t *testing.T, v Vendor) {
	srv := v.New(t)
	srv.Fail(401, "invalid key")
	p := srv.Provider()
	msg, err := llm.Complete(t.Context(), p, ask(srv, "go"))
	stored, _ := json.Marshal(msg)
	for _, s := range []string{string(stored), err.Error(), fmt.Sprintf("%v %+v %#v %s", p, p, p, p)} {
		if strings.Contains(s, Key) {
			t.Errorf("key leaked into %q", s)
		}
	}
	if got := srv.LastRequest().Header.Get(v.KeyHeader); got != v.KeyPrefix+Key {
		t.Errorf("%s = %q", v.KeyHeader, got)
	}
}

// conformRedirect: a server that redirects the request to another server
// (307 keeps the method and the body) does not get the key and the
// conversation sent there: the request fails at once, not retried, and
// the error names both servers. A redirect on the same server is followed.
func conformRedirect(t *testing.T, v Vendor) {
	srv, other := v.New(t), v.New(t)
	elsewhere := strings.Replace(other.URL(), "127.0.0.1", "localhost", 1)
	srv.Queue(Reply{Redirect: elsewhere})
	other.Reply(Text("stolen"))
	_, err := llm.Complete(t.Context(), srv.ProviderWith(&retry.Policy{MaxRetries: 3, BaseDelay: time.Millisecond}), ask(srv, "my code"))
	if err == nil || !strings.Contains(err.Error(), "redirected") || !strings.Contains(err.Error(), elsewhere) {
		t.Errorf("err = %v, want the redirect refused and named", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests to the first server, want 1 (a refused redirect is not retried)", n)
	}
	for _, r := range other.Requests() {
		t.Errorf("the other server got %s %s with %s = %q", r.Method, r.Path, v.KeyHeader, r.Header.Get(v.KeyHeader))
	}

	srv.Queue(Reply{Redirect: srv.URL()}, Stream(Text("same server")))
	msg, err := llm.Complete(t.Context(), srv.Provider(), ask(srv, "again"))
	if err != nil || llm.TextOf(msg.Content) != "same server" {
		t.Errorf("a redirect on the same server: %v, %v", msg, err)
	}
}

// conformWindow: a request too large for the window is an overflow with
// the sizes the vendor gives; an answer longer than max tokens stops with
// length at the limit (the output limit, not a full context); usage beyond
// the window from a server that took the request anyway is an overflow.
func conformWindow(t *testing.T, v Vendor) {
	srv := v.New(t)
	w := Window{Size: 2000, Ratio: 1.3}
	srv.SetWindow(w)
	req := ask(srv, strings.Repeat("word ", 2400))
	req.MaxTokens = 100
	_, err := llm.Complete(t.Context(), srv.Provider(), req)
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || !errors.Is(err, llm.ErrContextOverflow) {
		t.Fatalf("err = %v, want an overflow", err)
	}
	want := [2]int{}
	if v.SizedOverflow {
		want = [2]int{w.PromptTokens(srv.LastRequest()), 2000}
	}
	if got := [2]int{apiErr.PromptTokens, apiErr.ContextTokens}; got != want {
		t.Errorf("sizes %v, want %v (%s)", got, want, apiErr.Message)
	}

	srv.SetWindow(Window{Size: 100000})
	srv.Reply(Text(strings.Repeat("summary ", 400)))
	msg, err := llm.Complete(t.Context(), srv.Provider(), req)
	if err != nil || msg.StopReason != llm.StopReasonLength || msg.Usage.Output != 100 || llm.LengthStopOverflow(msg, 100, 100000) {
		t.Errorf("cut answer: %v, stop %q, usage %+v", err, msg.StopReason, msg.Usage)
	}
	if st := srv.WindowStats(); st.Truncated != 1 {
		t.Errorf("stats %+v", st)
	}

	srv.SetWindow(Window{})
	srv.Reply(Text("ok"), Usage(250000, 10))
	msg, err = llm.Complete(t.Context(), srv.Provider(), ask(srv, "go"))
	if err != nil || !llm.IsContextOverflow(msg, 200000) || llm.IsContextOverflow(msg, 300000) {
		t.Errorf("silent overflow: %v, usage %+v", err, msg.Usage)
	}
}
