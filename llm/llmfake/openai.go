package llmfake

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/prime-agent/prime/llm"
)

// Flavor is the Chat Completions server a fake OpenAI server imitates.
type Flavor int

// The server flavours and their quirks.
const (
	// FlavorOpenAI is OpenAI itself: tool-call deltas carry "index", the id
	// and name only in a call's first delta; usage comes alone in a last
	// chunk with no choices, only when stream_options asked for it.
	FlavorOpenAI Flavor = iota
	// FlavorOllama sends each tool call whole in one delta without "index",
	// reasoning in "reasoning", and usage beside the finish reason.
	FlavorOllama
	// FlavorVLLM sends reasoning in "reasoning_content"; usage last.
	FlavorVLLM
	// FlavorLlamaCpp is llama.cpp's llama-server: keep-alive comments (":"
	// lines) while it reads the prompt, reasoning in "reasoning_content",
	// usage beside the finish reason, errors as {"error": {"code", "message",
	// "type"}} with n_prompt_tokens and n_ctx for a prompt that does not
	// fit. With a simulated [Window] it also fills its context: it takes
	// any prompt below the window whatever max_tokens says, and stops with
	// "length" when prompt and answer fill it.
	FlavorLlamaCpp
	// FlavorLMStudio sends reasoning in "reasoning"; usage last.
	FlavorLMStudio
	// FlavorOpenRouter sends keep-alive comments, reasoning in "reasoning",
	// and usage last.
	FlavorOpenRouter
	// FlavorIndexZero reuses index 0 for every parallel tool call (each
	// with its own id in its first delta), as some servers do.
	FlavorIndexZero
)

var flavorNames = [...]string{"openai", "ollama", "vllm", "llamacpp", "lmstudio", "openrouter", "indexzero"}

// String names the flavour ("ollama", ...).
func (f Flavor) String() string {
	if int(f) < len(flavorNames) {
		return flavorNames[f]
	}
	return fmt.Sprintf("Flavor(%d)", int(f))
}

// ParseFlavor reads a flavour name.
func ParseFlavor(s string) (Flavor, error) {
	for i, n := range flavorNames {
		if n == s {
			return Flavor(i), nil
		}
	}
	return 0, fmt.Errorf("unknown server flavour %q (want one of %v)", s, flavorNames)
}

func (f Flavor) reasoningField() string {
	switch f {
	case FlavorOllama, FlavorLMStudio, FlavorOpenRouter:
		return "reasoning"
	default:
		return "reasoning_content"
	}
}

func (f Flavor) usageWithFinish() bool { return f == FlavorOllama || f == FlavorLlamaCpp }

// errorBody is the flavour's error body for rep.
func (f Flavor) errorBody(rep Reply) []byte {
	typ := rep.ErrorType
	switch f {
	case FlavorLlamaCpp:
		e := map[string]any{"code": rep.Status, "message": rep.ErrorMessage, "type": typ}
		if rep.PromptTokens > 0 || rep.ContextTokens > 0 {
			e["n_prompt_tokens"], e["n_ctx"] = rep.PromptTokens, rep.ContextTokens
		}
		return marshal(map[string]any{"error": e})
	case FlavorVLLM:
		return marshal(map[string]any{"object": "error", "message": rep.ErrorMessage, "type": typ, "param": nil, "code": rep.Status})
	}
	e := map[string]any{"message": rep.ErrorMessage, "type": typ, "param": nil, "code": nil}
	if typ == "context_length_exceeded" {
		e["type"], e["code"] = "invalid_request_error", typ
	}
	if typ == "" {
		e["type"] = map[int]string{400: "invalid_request_error", 401: "invalid_request_error", 429: "rate_limit_exceeded"}[rep.Status]
		if e["type"] == "" {
			e["type"] = "server_error"
		}
	}
	return marshal(map[string]any{"error": e})
}

var openAIFinish = map[llm.StopReason]string{
	llm.StopReasonStop:    "stop",
	llm.StopReasonLength:  "length",
	llm.StopReasonToolUse: "tool_calls",
}

// writeOpenAI streams parts as Chat Completions chunks in the manner of f.
func writeOpenAI(e *eventWriter, req *Request, parts []Part, f Flavor) {
	model := req.Model()
	chunk := func(delta map[string]any, finish any, usage any) []byte {
		c := map[string]any{
			"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": 1767225600, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}
		if usage != nil {
			c["usage"] = usage
		}
		return marshal(c)
	}
	switch f {
	case FlavorOpenRouter:
		e.comment("OPENROUTER PROCESSING")
	case FlavorLlamaCpp:
		e.comment("")
		e.comment("")
	}
	if !e.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil)) {
		return
	}
	calls := 0
	for _, p := range parts {
		ok := true
		switch {
		case p.Text != "":
			for _, s := range split(p.Text) {
				if ok = e.event("", chunk(map[string]any{"content": s}, nil, nil)); !ok {
					break
				}
			}
		case p.Thinking != "":
			for _, s := range split(p.Thinking) {
				if ok = e.event("", chunk(map[string]any{f.reasoningField(): s}, nil, nil)); !ok {
					break
				}
			}
		case p.ToolCall != nil:
			ok = writeOpenAIToolCall(e, chunk, p.ToolCall, calls, f)
			calls++
		case p.Error != nil:
			e.event("", marshal(map[string]any{"error": map[string]any{"message": p.Error.Message, "type": p.Error.Type, "code": nil}}))
			return
		case p.Disconnect:
			e.disconnect()
		}
		if !ok {
			return
		}
	}
	u := usageOf(req, parts)
	usage := map[string]any{
		"prompt_tokens": u.Input + u.CacheRead, "completion_tokens": u.Output,
		"total_tokens":          u.Input + u.CacheRead + u.Output,
		"prompt_tokens_details": map[string]any{"cached_tokens": u.CacheRead},
	}
	wantUsage := false
	if so, ok := req.JSON["stream_options"].(map[string]any); ok {
		wantUsage, _ = so["include_usage"].(bool)
	}
	finish := openAIFinish[stopOf(parts)]
	if f.usageWithFinish() {
		if !e.event("", chunk(map[string]any{}, finish, usage)) {
			return
		}
	} else {
		if !e.event("", chunk(map[string]any{}, finish, nil)) {
			return
		}
		if wantUsage {
			last := map[string]any{
				"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": 1767225600, "model": model,
				"choices": []any{}, "usage": usage,
			}
			if !e.event("", marshal(last)) {
				return
			}
		}
	}
	e.event("", []byte("[DONE]"))
}

// writeOpenAIToolCall streams call number n.
func writeOpenAIToolCall(e *eventWriter, chunk func(map[string]any, any, any) []byte, tc *ToolCallPart, n int, f Flavor) bool {
	args := tc.args()
	if f == FlavorOllama {
		// Whole, in one delta, without an index.
		d := map[string]any{"tool_calls": []any{map[string]any{
			"id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": args},
		}}}
		return e.event("", chunk(d, nil, nil))
	}
	index := n
	if f == FlavorIndexZero {
		index = 0
	}
	first := map[string]any{"tool_calls": []any{map[string]any{
		"index": index, "id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": ""},
	}}}
	if !e.event("", chunk(first, nil, nil)) {
		return false
	}
	for _, s := range split(args) {
		d := map[string]any{"tool_calls": []any{map[string]any{"index": index, "function": map[string]any{"arguments": s}}}}
		if !e.event("", chunk(d, nil, nil)) {
			return false
		}
	}
	return true
}

// streams reports whether a Chat Completions request asks for a stream.
// Without "stream": true an OpenAI-compatible server answers with one
// chat.completion object, and so does the fake ([writeOpenAICompletion]).
func streams(req *Request) bool {
	b, _ := req.JSON["stream"].(bool)
	return b
}

// writeOpenAICompletion answers a request that does not stream with parts as
// one chat.completion object: the texts joined, the reasoning in the
// flavour's field, the tool calls, the finish reason and the usage. An error
// part answers with an HTTP 500 in the flavour's error body instead, and a
// disconnect drops the connection before anything is written. rep.Delay is
// slept once.
func (s *Server) writeOpenAICompletion(w http.ResponseWriter, hr *http.Request, req *Request, rep Reply) {
	if rep.Delay > 0 {
		t := time.NewTimer(rep.Delay)
		select {
		case <-hr.Context().Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	var text, thinking strings.Builder
	var calls []any
	for _, p := range rep.Parts {
		switch {
		case p.Text != "":
			text.WriteString(p.Text)
		case p.Thinking != "":
			thinking.WriteString(p.Thinking)
		case p.ToolCall != nil:
			calls = append(calls, map[string]any{"id": p.ToolCall.ID, "type": "function",
				"function": map[string]any{"name": p.ToolCall.Name, "arguments": p.ToolCall.args()}})
		case p.Error != nil:
			s.writeError(w, Reply{Status: http.StatusInternalServerError, ErrorType: p.Error.Type, ErrorMessage: p.Error.Message})
			return
		case p.Disconnect:
			panic(http.ErrAbortHandler)
		}
	}
	message := map[string]any{"role": "assistant", "content": text.String()}
	if text.Len() == 0 && len(calls) > 0 {
		message["content"] = nil
	}
	if thinking.Len() > 0 {
		message[s.flavor.reasoningField()] = thinking.String()
	}
	if len(calls) > 0 {
		message["tool_calls"] = calls
	}
	u := usageOf(req, rep.Parts)
	body := marshal(map[string]any{
		"id": "chatcmpl-llmtest", "object": "chat.completion", "created": 1767225600, "model": req.Model(),
		"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": openAIFinish[stopOf(rep.Parts)]}},
		"usage": map[string]any{
			"prompt_tokens": u.Input + u.CacheRead, "completion_tokens": u.Output, "total_tokens": u.Input + u.CacheRead + u.Output,
			"prompt_tokens_details": map[string]any{"cached_tokens": u.CacheRead},
		},
	})
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}
