package llmfake

import (
	"fmt"
	"os"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
)

// Part is one piece of a scripted streamed answer. Exactly one field is set;
// build parts with [Text], [Thinking], [ToolCall] and the other
// constructors. The JSON form (used by script files) has the same fields.
type Part struct {
	// Text streams a text block.
	Text string `json:"text,omitzero"`
	// Thinking streams a thinking block signed with Signature.
	Thinking  string `json:"thinking,omitzero"`
	Signature string `json:"signature,omitzero"`
	// Redacted streams a redacted thinking block with this payload
	// (Anthropic) .
	Redacted string `json:"redacted,omitzero"`
	// ToolCall streams a tool call.
	ToolCall *ToolCallPart `json:"toolCall,omitzero"`
	// Usage sets the turn's token counts (cost is the provider's business).
	Usage *UsagePart `json:"usage,omitzero"`
	// Stop sets the stop reason: "stop", "length" or "toolUse". Default:
	// toolUse when the answer calls a tool, stop otherwise.
	Stop llm.StopReason `json:"stop,omitzero"`
	// Error sends the vendor's mid-stream error event and ends the stream.
	Error *ErrorPart `json:"error,omitzero"`
	// Disconnect drops the connection without finishing the stream.
	Disconnect bool `json:"disconnect,omitzero"`
}

// ToolCallPart is a scripted tool call.
type ToolCallPart struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the JSON text of the arguments object.
	Arguments jsontext.Value `json:"arguments"`
}

// UsagePart is scripted token accounting, in pi's terms: Input excludes
// cache reads (the fake server adds them back where the vendor's wire
// format counts them in the prompt).
type UsagePart struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead,omitzero"`
	CacheWrite int `json:"cacheWrite,omitzero"`
}

// ErrorPart is a vendor error: a type (e.g. "overloaded_error") and text.
type ErrorPart struct {
	Type    string `json:"type,omitzero"`
	Message string `json:"message"`
}

// Text streams a text block.
func Text(s string) Part { return Part{Text: s} }

// Thinking streams a thinking block with its signature (the signature
// arrives in its own signature_delta on Anthropic's wire; on OpenAI's it
// names the reasoning field and is ignored).
func Thinking(text, signature string) Part { return Part{Thinking: text, Signature: signature} }

// RedactedThinking streams an Anthropic redacted_thinking block.
func RedactedThinking(data string) Part { return Part{Redacted: data} }

// ToolCall streams a call of tool name with arguments given as JSON text.
func ToolCall(id, name, arguments string) Part {
	return Part{ToolCall: &ToolCallPart{ID: id, Name: name, Arguments: jsontext.Value(arguments)}}
}

// Usage sets the turn's input and output tokens.
func Usage(input, output int) Part { return Part{Usage: &UsagePart{Input: input, Output: output}} }

// CacheUsage sets the turn's tokens including cache reads and writes.
func CacheUsage(input, output, cacheRead, cacheWrite int) Part {
	return Part{Usage: &UsagePart{Input: input, Output: output, CacheRead: cacheRead, CacheWrite: cacheWrite}}
}

// Stop sets the stop reason; llm.StopReasonLength makes the vendor report
// its output limit (Anthropic's stop_reason max_tokens, OpenAI's
// finish_reason length).
func Stop(reason llm.StopReason) Part { return Part{Stop: reason} }

// MaxTokens is Stop(llm.StopReasonLength): the answer was cut by the
// output limit.
func MaxTokens() Part { return Stop(llm.StopReasonLength) }

// ErrorEvent sends the vendor's error event in the middle of the stream,
// e.g. ErrorEvent("overloaded_error", "Overloaded").
func ErrorEvent(errType, message string) Part {
	return Part{Error: &ErrorPart{Type: errType, Message: message}}
}

// Disconnect drops the connection at this point of the stream.
func Disconnect() Part { return Part{Disconnect: true} }

// Reply is one scripted answer to one request: a stream of parts, or an
// HTTP error, or a verbatim SSE transcript.
type Reply struct {
	// Parts is the streamed answer.
	Parts []Part `json:"parts,omitzero"`
	// Status, when set, answers with this HTTP error status instead of a
	// stream, with ErrorType and ErrorMessage in the vendor's error body.
	Status       int    `json:"status,omitzero"`
	ErrorType    string `json:"errorType,omitzero"`
	ErrorMessage string `json:"errorMessage,omitzero"`
	// PromptTokens and ContextTokens, when set, go into the llama.cpp
	// flavour's error body as n_prompt_tokens and n_ctx (the sizes of a
	// request that does not fit); other formats have no such fields.
	PromptTokens  int `json:"promptTokens,omitzero"`
	ContextTokens int `json:"contextTokens,omitzero"`
	// RetryAfter is sent as the Retry-After header (whole seconds).
	RetryAfter time.Duration `json:"-"`
	// Overflow answers with the vendor's context-overflow error (the
	// server flavour's own wording and status; its numbers are the
	// request's size and a window just too small for it, or the simulated
	// window's).
	Overflow bool `json:"overflow,omitzero"`
	// Delay is slept before each event: a slow stream.
	Delay time.Duration `json:"-"`
	// Raw is sent verbatim as the SSE body (a recorded transcript).
	Raw string `json:"raw,omitzero"`
	// Redirect, when set, answers 307 Temporary Redirect to this base URL
	// with the request's path: a server that sends the client elsewhere.
	Redirect string `json:"-"`
	// ContentType, when set, is the 200 answer's Content-Type instead of
	// text/event-stream: a gateway's text/html page sent as Raw.
	ContentType string `json:"-"`
}

// replyJSON is Reply's JSON form, with durations in seconds.
type replyJSON struct {
	Parts         []Part  `json:"parts,omitzero"`
	Status        int     `json:"status,omitzero"`
	ErrorType     string  `json:"errorType,omitzero"`
	ErrorMessage  string  `json:"errorMessage,omitzero"`
	PromptTokens  int     `json:"promptTokens,omitzero"`
	ContextTokens int     `json:"contextTokens,omitzero"`
	RetryAfter    float64 `json:"retryAfter,omitzero"`
	Overflow      bool    `json:"overflow,omitzero"`
	Delay         float64 `json:"delay,omitzero"`
	Raw           string  `json:"raw,omitzero"`
}

// UnmarshalJSONFrom reads a reply; retryAfter and delay are in seconds.
func (r *Reply) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var w replyJSON
	if err := json.UnmarshalDecode(dec, &w); err != nil {
		return err
	}
	*r = Reply{Parts: w.Parts, Status: w.Status, ErrorType: w.ErrorType, ErrorMessage: w.ErrorMessage,
		PromptTokens: w.PromptTokens, ContextTokens: w.ContextTokens, RetryAfter: seconds(w.RetryAfter), Overflow: w.Overflow, Delay: seconds(w.Delay), Raw: w.Raw}
	return nil
}

// MarshalJSONTo writes a reply; retryAfter and delay are in seconds.
func (r Reply) MarshalJSONTo(enc *jsontext.Encoder) error {
	return json.MarshalEncode(enc, replyJSON{Parts: r.Parts, Status: r.Status, ErrorType: r.ErrorType,
		ErrorMessage: r.ErrorMessage, PromptTokens: r.PromptTokens, ContextTokens: r.ContextTokens, RetryAfter: r.RetryAfter.Seconds(), Overflow: r.Overflow,
		Delay: r.Delay.Seconds(), Raw: r.Raw})
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Stream returns a reply streaming parts.
func Stream(parts ...Part) Reply { return Reply{Parts: parts} }

// HTTPError returns a reply failing with status and message in the
// vendor's error body (errType defaults to the vendor's type for status).
func HTTPError(status int, errType, message string) Reply {
	return Reply{Status: status, ErrorType: errType, ErrorMessage: message}
}

// Overflow returns a reply failing with the vendor's context-overflow error
// (see [Reply].Overflow).
func Overflow() Reply { return Reply{Overflow: true} }

// Script is a sequence of replies, the format of a fake-server script file:
//
//	{"replies": [{"parts": [{"text": "Hello"}, {"usage": {"input": 10, "output": 2}}]},
//	             {"status": 429, "errorMessage": "slow down", "retryAfter": 1},
//	             {"overflow": true}],
//	 "loop": false}
//
// Durations (retryAfter, delay) are in seconds. With loop set the replies
// start over when they run out; otherwise further requests get an error.
type Script struct {
	Replies []Reply `json:"replies"`
	Loop    bool    `json:"loop,omitzero"`
}

// ReadScript reads a script file. Errors name the file and, for malformed
// JSON, the line and column.
func ReadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Script
	if err := json.Unmarshal(data, &s, jsonwire.ReadOptions, json.RejectUnknownMembers(true)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, jsonwire.Located(data, err))
	}
	return &s, nil
}
