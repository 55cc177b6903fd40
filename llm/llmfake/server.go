// Package llmfake provides loopback fake model servers: real HTTP servers
// that speak the vendors' actual streaming wire formats, answer from a
// script, and record every request. Package llmtest wraps them for tests;
// "prime dev fake-llm" serves one from the prime binary, which is why this
// package does not import testing.
//
// A server is started, scripted, and used through a ready provider:
//
//	srv := llmfake.NewServer(llm.APIAnthropicMessages, llmfake.FlavorOpenAI)
//	defer srv.Close()
//	srv.Reply(llmfake.Text("Summary: ..."), llmfake.Usage(1200, 300))
//	srv.Queue(llmfake.Overflow()) // the next request overflows
//	msg, err := llm.Complete(ctx, srv.Provider(), &llm.Request{Model: srv.Model(), ...})
//	got := srv.Requests()[0].System()
//
// The Anthropic server speaks the Messages API's event stream; the
// Responses server OpenAI's Responses API's semantic events (Azure's form:
// its path and api-version, the encrypted reasoning only in the completed
// response); the Gemini server streamGenerateContent?alt=sse chunks (and
// Vertex AI's path); the OpenAI server speaks Chat Completions chunks in the manner of a chosen server
// [Flavor] (OpenAI itself, Ollama, vLLM, llama.cpp, LM Studio, OpenRouter),
// including their quirks: tool calls without "index", reasoning in
// "reasoning" or "reasoning_content", usage in the last chunk or beside the
// finish reason, keep-alive comments, and each one's wording for a context
// overflow. A Chat Completions request without "stream": true
// (a script's, say) gets the same answer as one chat.completion object.
//
// A server may also simulate a context window ([Server.SetWindow], see
// [Window]): it then counts tokens with a tokenizer as far from chars/4 as
// asked, refuses what does not fit as its vendor does (llama.cpp with its
// n_prompt_tokens and n_ctx), and cuts answers where the output limit or,
// for llama.cpp, the full context stops them.
//
// Answers come from queued replies ([Server.Reply], [Server.Queue],
// [Server.Fail], [Server.Play]) in order, then from a handler
// ([Server.Handle]) that computes a reply from the request. A request with
// nothing to answer it gets an HTTP 500 and is reported to the function
// set with [Server.OnUnanswered].
package llmfake

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/anthropic"
	"github.com/prime-agent/prime/llm/gemini"
	"github.com/prime-agent/prime/llm/openai"
	"github.com/prime-agent/prime/llm/responses"
	"github.com/prime-agent/prime/llm/retry"
)

// Key is the API key the fake servers' providers send. Servers do not
// check it; tests may assert that it was sent, or that it leaked nowhere.
const Key = "llmtest-secret-key-0123456789"

// Handler computes a reply from a request.
type Handler func(r *Request) Reply

// Server is a fake model server.
type Server struct {
	api    string // one of the llm.API* wire APIs
	flavor Flavor
	srv    *httptest.Server

	mu       sync.Mutex
	queue    []Reply
	script   *Script
	next     int
	handler  Handler
	requests []*Request
	now      func() time.Time
	window   Window
	stats    WindowStats
	modelID  string
	// unanswered is told about a request nothing answered.
	unanswered func(r *Request, n int)
}

// NewServer starts a fake server for api (one of the llm.API* wire APIs)
// on a loopback port; flavor chooses the OpenAI-compatible server imitated
// (used for Chat Completions only). Close it when done.
func NewServer(api string, flavor Flavor) *Server {
	s := &Server{api: api, flavor: flavor}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// NewServerAt is NewServer listening on addr (e.g. "127.0.0.1:0").
func NewServerAt(api string, flavor Flavor, addr string) (*Server, error) {
	s := &Server{api: api, flavor: flavor}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	if addr != "" {
		l, err := listen(addr)
		if err != nil {
			return nil, err
		}
		s.srv.Listener.Close()
		s.srv.Listener = l
	}
	s.srv.Start()
	return s, nil
}

// Close shuts the server down, breaking open streams.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// URL is the server's base URL, e.g. "http://127.0.0.1:41234". OpenAI
// flavours serve under URL+"/v1".
func (s *Server) URL() string { return s.srv.URL }

// API is the wire API the server speaks.
func (s *Server) API() string { return s.api }

// SetNow fixes the clock of the providers [Server.Provider] returns, for
// golden comparisons of the messages they build.
func (s *Server) SetNow(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// SetModelID names the fake model id instead of its default (for a test
// of behaviour that depends on the model, such as Gemini 3's call ids).
func (s *Server) SetModelID(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.modelID = id
}

// Model describes the fake model: provider "anthropic", "openai", "azure",
// "google" or "google-vertex" (or the flavour's name), a reasoning model that
// takes text and images, with a 200,000-token window,
// 32,000-token output limit and prices (per million: 3 in, 15 out, 0.3
// cache read, 3.75 cache write), its base URL pointing at the server.
func (s *Server) Model() llm.Model {
	m := llm.Model{
		Reasoning:     true,
		Input:         []string{"text", "image"},
		Cost:          llm.ModelCost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		ContextWindow: 200000,
		MaxTokens:     32000,
		API:           s.api,
	}
	switch s.api {
	case llm.APIAnthropicMessages:
		m.ID, m.Name, m.Provider, m.BaseURL = "claude-test", "Claude (fake)", "anthropic", s.URL()
	case llm.APIOpenAIResponses:
		m.ID, m.Name, m.Provider, m.BaseURL = "gpt-test", "GPT (fake)", "openai", s.URL()+"/v1"
	case llm.APIAzureOpenAIResponses:
		m.ID, m.Name, m.Provider, m.BaseURL = "gpt-test", "GPT on Azure (fake)", "azure", s.URL()+"/openai/v1"
	case llm.APIGoogleGenerativeAI:
		m.ID, m.Name, m.Provider, m.BaseURL = "gemini-test", "Gemini (fake)", "google", s.URL()+"/v1beta"
	case llm.APIGoogleVertex:
		m.ID, m.Name, m.Provider, m.BaseURL = "gemini-test", "Gemini on Vertex (fake)", "google-vertex",
			s.URL()+"/v1/projects/"+VertexProject+"/locations/"+VertexLocation
	default:
		m.ID, m.Name, m.Provider, m.BaseURL = "gpt-test", "GPT (fake)", "openai", s.URL()+"/v1"
		if s.flavor != FlavorOpenAI {
			m.Provider = s.flavor.String()
		}
	}
	s.mu.Lock()
	if s.modelID != "" {
		m.ID = s.modelID
	}
	s.mu.Unlock()
	return m
}

// Provider returns a provider for the server's API that sends [Key] and
// does not retry (a test of retries passes its own policy to ProviderWith).
func (s *Server) Provider() llm.Provider { return s.ProviderWith(&retry.Policy{}) }

// ProviderWith returns a provider with the given retry policy.
func (s *Server) ProviderWith(policy *retry.Policy) llm.Provider {
	s.mu.Lock()
	now := s.now
	s.mu.Unlock()
	client := s.srv.Client()
	switch s.api {
	case llm.APIAnthropicMessages:
		return anthropic.New(anthropic.Config{APIKey: Key, HTTPOptions: llm.HTTPOptions{HTTPClient: client, Retry: policy, Now: now}})
	case llm.APIOpenAIResponses, llm.APIAzureOpenAIResponses:
		return responses.New(responses.Config{APIKey: Key, HTTPOptions: llm.HTTPOptions{HTTPClient: client, Retry: policy, Now: now},
			Azure: s.api == llm.APIAzureOpenAIResponses})
	case llm.APIGoogleGenerativeAI, llm.APIGoogleVertex:
		return gemini.New(gemini.Config{APIKey: Key, HTTPOptions: llm.HTTPOptions{HTTPClient: client, Retry: policy, Now: now},
			Vertex: s.api == llm.APIGoogleVertex, Project: VertexProject, Location: VertexLocation})
	}
	return openai.New(openai.Config{APIKey: Key, HTTPOptions: llm.HTTPOptions{HTTPClient: client, Retry: policy, Now: now}})
}

// Client is the server's HTTP client (its transport can be closed to check
// for leaks).
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Reply queues a streamed answer made of parts.
func (s *Server) Reply(parts ...Part) { s.Queue(Stream(parts...)) }

// Queue queues replies, answered in order.
func (s *Server) Queue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Fail queues an HTTP error in the vendor's error format.
func (s *Server) Fail(status int, message string) { s.Queue(HTTPError(status, "", message)) }

// Overflow queues the vendor's context-overflow error.
func (s *Server) Overflow() { s.Queue(Overflow()) }

// Play answers from script once the queue is empty.
func (s *Server) Play(script *Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script, s.next = script, 0
}

// Handle computes replies once the queue and script are exhausted.
func (s *Server) Handle(h Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = h
}

// OnUnanswered sets a function told about every request that nothing
// answers (no queued reply, script entry or handler); n counts the requests
// received so far. The request itself gets an HTTP 500 in the vendor's
// error format.
func (s *Server) OnUnanswered(f func(r *Request, n int)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unanswered = f
}

// Pending returns the number of queued replies not yet used.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// LastRequest returns the latest request, or nil.
func (s *Server) LastRequest() *Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return nil
	}
	return s.requests[len(s.requests)-1]
}

// nextReply picks the answer to r.
func (s *Server) nextReply(r *Request) (Reply, bool) {
	s.mu.Lock()
	if len(s.queue) > 0 {
		rep := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return rep, true
	}
	if sc := s.script; sc != nil && len(sc.Replies) > 0 {
		if s.next >= len(sc.Replies) && sc.Loop {
			s.next = 0
		}
		if s.next < len(sc.Replies) {
			rep := sc.Replies[s.next]
			s.next++
			s.mu.Unlock()
			return rep, true
		}
	}
	h := s.handler
	s.mu.Unlock()
	if h != nil {
		return h(r), true
	}
	return Reply{}, false
}

func (s *Server) serve(w http.ResponseWriter, hr *http.Request) {
	raw, _ := io.ReadAll(hr.Body)
	req := &Request{Method: hr.Method, Path: hr.URL.Path, Header: hr.Header.Clone(), Body: raw, api: s.api}
	if json.Unmarshal(raw, &req.JSON, jsonwire.ReadOptions) != nil {
		req.JSON = nil
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()

	if hr.Method != http.MethodPost || !s.endpoint(hr) {
		http.Error(w, "llmfake: no such endpoint "+hr.Method+" "+hr.URL.Path, http.StatusNotFound)
		return
	}
	s.mu.Lock()
	window := s.window
	s.mu.Unlock()
	if rep, refused := s.refusal(req, window); refused {
		s.writeError(w, rep)
		return
	}
	rep, ok := s.nextReply(req)
	if !ok {
		s.mu.Lock()
		report, n := s.unanswered, len(s.requests)
		s.mu.Unlock()
		if report != nil {
			report(req, n)
		}
		s.writeError(w, Reply{Status: http.StatusInternalServerError, ErrorType: "api_error", ErrorMessage: "llmfake: no scripted reply"})
		return
	}
	switch {
	case rep.Redirect != "":
		http.Redirect(w, hr, rep.Redirect+hr.URL.RequestURI(), http.StatusTemporaryRedirect)
	case rep.Overflow:
		s.writeError(w, s.overflowReply(req))
	case rep.Status != 0:
		s.writeError(w, rep)
	default:
		if rep.Raw == "" {
			rep.Parts = s.fit(req, window, rep.Parts)
		}
		s.writeStream(w, hr, req, rep)
	}
}

// writeError answers with an HTTP error in the vendor's body format.
func (s *Server) writeError(w http.ResponseWriter, rep Reply) {
	if rep.RetryAfter > 0 {
		w.Header().Set("Retry-After", itoa(int(rep.RetryAfter/time.Second)))
	}
	w.Header().Set("Content-Type", "application/json")
	var body []byte
	switch s.api {
	case llm.APIAnthropicMessages:
		typ := rep.ErrorType
		if typ == "" {
			typ = anthropicErrorType(rep.Status)
		}
		body = marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": rep.ErrorMessage}})
	case llm.APIOpenAIResponses, llm.APIAzureOpenAIResponses:
		body = FlavorOpenAI.errorBody(rep)
	case llm.APIGoogleGenerativeAI, llm.APIGoogleVertex:
		body = geminiErrorBody(rep)
	default:
		body = s.flavor.errorBody(rep)
	}
	w.WriteHeader(rep.Status)
	w.Write(body)
}

// eventWriter writes SSE events, flushing each, with an optional delay.
type eventWriter struct {
	w     http.ResponseWriter
	ctx   interface{ Done() <-chan struct{} }
	delay time.Duration
	buf   bytes.Buffer
}

func (e *eventWriter) event(name string, data []byte) bool {
	if e.delay > 0 {
		t := time.NewTimer(e.delay)
		select {
		case <-e.ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
	e.buf.Reset()
	if name != "" {
		e.buf.WriteString("event: " + name + "\n")
	}
	e.buf.WriteString("data: ")
	e.buf.Write(data)
	e.buf.WriteString("\n\n")
	if _, err := e.w.Write(e.buf.Bytes()); err != nil {
		return false
	}
	e.w.(http.Flusher).Flush()
	return true
}

// comment writes an SSE comment line (":" and text), what servers send to
// keep a connection alive while they work.
func (e *eventWriter) comment(text string) {
	line := ":"
	if text != "" {
		line += " " + text
	}
	io.WriteString(e.w, line+"\n\n")
	e.w.(http.Flusher).Flush()
}

// disconnect drops the connection mid-response: the client sees the body
// end without the stream's end (an unexpected EOF).
func (e *eventWriter) disconnect() {
	e.w.(http.Flusher).Flush()
	panic(http.ErrAbortHandler)
}

func (s *Server) writeStream(w http.ResponseWriter, hr *http.Request, req *Request, rep Reply) {
	if s.api == llm.APIOpenAICompletions && rep.Raw == "" && !streams(req) {
		s.writeOpenAICompletion(w, hr, req, rep)
		return
	}
	ctype := "text/event-stream"
	if rep.ContentType != "" {
		ctype = rep.ContentType
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	ew := &eventWriter{w: w, ctx: hr.Context(), delay: rep.Delay}
	if rep.Raw != "" {
		io.WriteString(w, rep.Raw)
		return
	}
	switch s.api {
	case llm.APIAnthropicMessages:
		writeAnthropic(ew, req, rep.Parts)
	case llm.APIOpenAIResponses, llm.APIAzureOpenAIResponses:
		writeResponses(ew, req, rep.Parts, s.api == llm.APIAzureOpenAIResponses)
	case llm.APIGoogleGenerativeAI, llm.APIGoogleVertex:
		writeGemini(ew, req, rep.Parts)
	default:
		writeOpenAI(ew, req, rep.Parts, s.flavor)
	}
}

// endpoint reports whether hr is posted where the server's API takes
// requests: Anthropic's /v1/messages, /v1/chat/completions, /v1/responses
// (Azure: /openai/v1/responses with an api-version), Gemini's
// /v1beta/models/{id}:streamGenerateContent?alt=sse (Vertex: under
// /v1/projects/{project}/locations/{location}/publishers/google).
func (s *Server) endpoint(hr *http.Request) bool {
	path := hr.URL.Path
	switch s.api {
	case llm.APIAnthropicMessages:
		return path == "/v1/messages"
	case llm.APIOpenAIResponses:
		return path == "/v1/responses"
	case llm.APIAzureOpenAIResponses:
		return path == "/openai/v1/responses" && hr.URL.Query().Get("api-version") != ""
	case llm.APIGoogleGenerativeAI, llm.APIGoogleVertex:
		return geminiPath(s.api, path) && hr.URL.Query().Get("alt") == "sse"
	}
	return path == "/v1/chat/completions"
}

func listen(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }

func marshal(v any) []byte {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		panic(err)
	}
	return b
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// stopOf returns the scripted stop reason, defaulting by content.
func stopOf(parts []Part) llm.StopReason {
	reason := llm.StopReasonStop
	for _, p := range parts {
		if p.ToolCall != nil {
			reason = llm.StopReasonToolUse
		}
	}
	for _, p := range parts {
		if p.Stop != "" {
			reason = p.Stop
		}
	}
	return reason
}

// usageOf returns the scripted usage, or else an honest estimate of the
// exchange: the chars/4 count of what req sent (see [Window.PromptTokens])
// in, and of the answer's parts out, as pi estimates tokens; at least one
// of each, as a real server never reports fewer.
func usageOf(req *Request, parts []Part) UsagePart {
	for _, p := range parts {
		if p.Usage != nil {
			return *p.Usage
		}
	}
	var w Window
	out := 0
	for _, p := range parts {
		out += w.partTokens(p)
	}
	return UsagePart{Input: max(w.PromptTokens(req), 1), Output: max(out, 1)}
}

// split cuts s into several deltas at rune boundaries, as a real stream
// does; big values come in a bounded number of pieces.
func split(s string) []string {
	if s == "" {
		return nil
	}
	size := max(8, len(s)/16)
	var out []string
	for len(s) > size {
		i := size
		for i < len(s) && s[i]&0xC0 == 0x80 {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return append(out, s)
}

// args returns a tool call's arguments as compact JSON text.
func (t *ToolCallPart) args() string {
	if len(t.Arguments) == 0 {
		return "{}"
	}
	v := jsontext.Value(bytes.Clone(t.Arguments))
	if v.Compact() != nil {
		return string(t.Arguments)
	}
	return string(v)
}
