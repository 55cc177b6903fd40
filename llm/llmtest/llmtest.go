// Package llmtest provides loopback fake model servers for tests: real HTTP
// servers (httptest) that speak the vendors' actual streaming wire formats,
// answer from a script, and record every request.
//
// A test starts a server, scripts its answers and runs real code against
// it through a ready provider:
//
//	srv := llmtest.NewAnthropic(t)
//	srv.Reply(llmtest.Text("Summary: ..."), llmtest.Usage(1200, 300))
//	srv.Queue(llmtest.Overflow()) // the next request overflows
//	msg, err := llm.Complete(ctx, srv.Provider(), &llm.Request{Model: srv.Model(), ...})
//	got := srv.Requests()[0].System()
//
// [NewAnthropic] speaks the Messages API's event stream; [NewResponses] and
// [NewAzure] OpenAI's Responses API's semantic events; [NewGemini] and
// [NewVertex] Gemini's streamGenerateContent chunks; [NewOpenAI] speaks
// Chat Completions chunks in the manner of a chosen server [Flavor] (OpenAI
// itself, Ollama, vLLM, llama.cpp, LM Studio, OpenRouter), including their
// quirks: tool calls without "index", reasoning in "reasoning" or
// "reasoning_content", usage in the last chunk or beside the finish reason,
// keep-alive comments, and each one's wording for a context overflow. A
// server may simulate a context window and a tokenizer ([Window]): it then
// refuses and cuts as the server it imitates does.
//
// Answers come from queued replies ([Server.Reply], [Server.Queue],
// [Server.Fail], [Server.Play]) in order, then from a handler
// ([Server.Handle]) that computes a reply from the request. A request with
// nothing to answer it fails the test.
//
// [Conformance] is the suite every provider passes against its fake
// server ([Vendors] lists them): errors and their classes, retries,
// garbage, cancellation, huge arguments, the key, the window.
//
// The servers themselves live in package llmfake, which does not import
// testing (the prime binary serves them with "prime dev fake-llm"); this
// package ties them to a test's lifetime and failure reporting. Its types
// are llmfake's, under the same names.
package llmtest

import (
	"sync"
	"testing"
	"time"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmfake"
)

// Key is the API key the fake servers' providers send. Servers do not
// check it; tests may assert that it was sent, or that it leaked nowhere.
const Key = llmfake.Key

// Server is a fake model server (see llmfake.Server).
type Server = llmfake.Server

// Handler computes a reply from a request.
type Handler = llmfake.Handler

// Request is one request a fake server received.
type Request = llmfake.Request

// Reply is one scripted answer to one request: a stream of parts, or an
// HTTP error, or a verbatim SSE transcript.
type Reply = llmfake.Reply

// Part is one piece of a scripted streamed answer; build parts with
// [Text], [Thinking], [ToolCall] and the other constructors.
type Part = llmfake.Part

// ToolCallPart is a scripted tool call.
type ToolCallPart = llmfake.ToolCallPart

// UsagePart is scripted token accounting, in pi's terms.
type UsagePart = llmfake.UsagePart

// ErrorPart is a vendor error: a type (e.g. "overloaded_error") and text.
type ErrorPart = llmfake.ErrorPart

// Script is a sequence of replies, the format of a fake-server script file
// (see llmfake.Script).
type Script = llmfake.Script

// Flavor is the Chat Completions server a fake OpenAI server imitates.
type Flavor = llmfake.Flavor

// Window is a simulated context window with a tokenizer as far from
// chars/4 as asked (see llmfake.Window and Server.SetWindow).
type Window = llmfake.Window

// WindowStats counts what a server's simulated window did.
type WindowStats = llmfake.WindowStats

// The server flavours and their quirks (see llmfake.Flavor).
const (
	FlavorOpenAI     = llmfake.FlavorOpenAI
	FlavorOllama     = llmfake.FlavorOllama
	FlavorVLLM       = llmfake.FlavorVLLM
	FlavorLlamaCpp   = llmfake.FlavorLlamaCpp
	FlavorLMStudio   = llmfake.FlavorLMStudio
	FlavorOpenRouter = llmfake.FlavorOpenRouter
	FlavorIndexZero  = llmfake.FlavorIndexZero
)

// NewAnthropic starts a fake Anthropic Messages API server, closed when the
// test ends.
func NewAnthropic(tb testing.TB) *Server {
	return start(tb, llm.APIAnthropicMessages, FlavorOpenAI)
}

// NewOpenAI starts a fake Chat Completions server behaving like flavor
// (default FlavorOpenAI), closed when the test ends.
func NewOpenAI(tb testing.TB, flavor ...Flavor) *Server {
	f := FlavorOpenAI
	if len(flavor) > 0 {
		f = flavor[0]
	}
	return start(tb, llm.APIOpenAICompletions, f)
}

// NewResponses starts a fake OpenAI Responses API server, closed when the
// test ends.
func NewResponses(tb testing.TB) *Server { return start(tb, llm.APIOpenAIResponses, FlavorOpenAI) }

// NewAzure starts a fake Azure OpenAI Responses server (api-version in the
// query, encrypted reasoning only in the completed response), closed when
// the test ends.
func NewAzure(tb testing.TB) *Server { return start(tb, llm.APIAzureOpenAIResponses, FlavorOpenAI) }

// NewGemini starts a fake Gemini API server (streamGenerateContent with
// alt=sse), closed when the test ends.
func NewGemini(tb testing.TB) *Server { return start(tb, llm.APIGoogleGenerativeAI, FlavorOpenAI) }

// NewVertex starts a fake Vertex AI Gemini server, closed when the test
// ends.
func NewVertex(tb testing.TB) *Server { return start(tb, llm.APIGoogleVertex, FlavorOpenAI) }

// start starts a server that fails tb on a request it has no answer for.
func start(tb testing.TB, api string, f Flavor) *Server {
	s := llmfake.NewServer(api, f)
	s.OnUnanswered(func(_ *Request, n int) { tb.Errorf("llmtest: request %d has no scripted reply", n) })
	tb.Cleanup(s.Close)
	return s
}

// NewServer starts a fake server outside a test; see llmfake.NewServer.
// Close it when done.
func NewServer(api string, flavor Flavor) *Server { return llmfake.NewServer(api, flavor) }

// NewServerAt is NewServer listening on addr (e.g. "127.0.0.1:0").
func NewServerAt(api string, flavor Flavor, addr string) (*Server, error) {
	return llmfake.NewServerAt(api, flavor, addr)
}

// ParseFlavor reads a flavour name.
func ParseFlavor(s string) (Flavor, error) { return llmfake.ParseFlavor(s) }

// ReadScript reads a script file. Errors name the file and, for malformed
// JSON, the line and column.
func ReadScript(path string) (*Script, error) { return llmfake.ReadScript(path) }

// Text streams a text block.
func Text(s string) Part { return llmfake.Text(s) }

// Thinking streams a thinking block with its signature.
func Thinking(text, signature string) Part { return llmfake.Thinking(text, signature) }

// RedactedThinking streams an Anthropic redacted_thinking block.
func RedactedThinking(data string) Part { return llmfake.RedactedThinking(data) }

// ToolCall streams a call of tool name with arguments given as JSON text.
func ToolCall(id, name, arguments string) Part { return llmfake.ToolCall(id, name, arguments) }

// Usage sets the turn's input and output tokens.
func Usage(input, output int) Part { return llmfake.Usage(input, output) }

// CacheUsage sets the turn's tokens including cache reads and writes.
func CacheUsage(input, output, cacheRead, cacheWrite int) Part {
	return llmfake.CacheUsage(input, output, cacheRead, cacheWrite)
}

// Stop sets the stop reason; llm.StopReasonLength makes the vendor report
// its output limit.
func Stop(reason llm.StopReason) Part { return llmfake.Stop(reason) }

// MaxTokens is Stop(llm.StopReasonLength): the answer was cut by the
// output limit.
func MaxTokens() Part { return llmfake.MaxTokens() }

// ErrorEvent sends the vendor's error event in the middle of the stream,
// e.g. ErrorEvent("overloaded_error", "Overloaded").
func ErrorEvent(errType, message string) Part { return llmfake.ErrorEvent(errType, message) }

// Disconnect drops the connection at this point of the stream.
func Disconnect() Part { return llmfake.Disconnect() }

// Stream returns a reply streaming parts.
func Stream(parts ...Part) Reply { return llmfake.Stream(parts...) }

// HTTPError returns a reply failing with status and message in the
// vendor's error body (errType defaults to the vendor's type for status).
func HTTPError(status int, errType, message string) Reply {
	return llmfake.HTTPError(status, errType, message)
}

// Overflow returns a reply failing with the vendor's context-overflow
// error.
func Overflow() Reply { return llmfake.Overflow() }

// Conversation returns the transcript a Prime summary request carries
// inside its <conversation> tags (see llmfake.Request.Conversation), failing
// tb when r is not a summary request.
func Conversation(tb testing.TB, r *Request) string {
	tb.Helper()
	text, ok := r.Conversation()
	if !ok {
		tb.Fatalf("llmtest: no <conversation> in the request:\n%.300s", r.LastUserText())
	}
	return text
}

// Scripted answers a conversation and its summaries apart: summary requests
// (those carrying Prime's <conversation> transcript) go to summary, other
// requests get replies in order and, once they run out, what then answers.
// It is the handler of an agent test whose model is scripted while
// compactions may come at any point.
func Scripted(summary, then Handler, replies ...Reply) Handler {
	var mu sync.Mutex
	return func(r *Request) Reply {
		if _, ok := r.Conversation(); ok {
			return summary(r)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(replies) == 0 {
			return then(r)
		}
		next := replies[0]
		replies = replies[1:]
		return next
	}
}

// Hold makes srv keep every request waiting (its reply, text, comes after
// an hour) and returns a channel closed when the first request arrives: a
// test of cancellation waits on it to cancel while a request is in flight,
// instead of polling [Server.Requests].
func Hold(srv *Server, text string) <-chan struct{} {
	arrived := make(chan struct{})
	var once sync.Once
	srv.Handle(func(*Request) Reply {
		once.Do(func() { close(arrived) })
		return Reply{Parts: []Part{Text(text)}, Delay: time.Hour}
	})
	return arrived
}
