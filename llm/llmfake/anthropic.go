package llmfake

import (
	"net/http"

	"github.com/prime-agent/prime/llm"
)

// anthropicErrorType is the error type Anthropic sends with status.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	default:
		return "api_error"
	}
}

var anthropicStops = map[llm.StopReason]string{
	llm.StopReasonStop:    "end_turn",
	llm.StopReasonLength:  "max_tokens",
	llm.StopReasonToolUse: "tool_use",
}

// writeAnthropic streams parts as the Messages API does: message_start, a
// ping, each block as content_block_start / deltas / content_block_stop
// (a thinking block's signature in its own signature_delta), message_delta
// with the stop reason and output usage, message_stop.
func writeAnthropic(e *eventWriter, req *Request, parts []Part) {
	u := usageOf(req, parts)
	model := req.Model()
	start := map[string]any{
		"type": "message_start",
		"message": map[string]any{
			"id": "msg_llmtest", "type": "message", "role": "assistant", "model": model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]any{
				"input_tokens": u.Input, "cache_creation_input_tokens": u.CacheWrite,
				"cache_read_input_tokens": u.CacheRead, "output_tokens": 1,
			},
		},
	}
	if !e.event("message_start", marshal(start)) || !e.event("ping", []byte(`{"type": "ping"}`)) {
		return
	}
	index := 0
	block := func(cb map[string]any, deltas []map[string]any) bool {
		if !e.event("content_block_start", marshal(map[string]any{"type": "content_block_start", "index": index, "content_block": cb})) {
			return false
		}
		for _, d := range deltas {
			if !e.event("content_block_delta", marshal(map[string]any{"type": "content_block_delta", "index": index, "delta": d})) {
				return false
			}
		}
		ok := e.event("content_block_stop", marshal(map[string]any{"type": "content_block_stop", "index": index}))
		index++
		return ok
	}
	for _, p := range parts {
		ok := true
		switch {
		case p.Text != "":
			var ds []map[string]any
			for _, s := range split(p.Text) {
				ds = append(ds, map[string]any{"type": "text_delta", "text": s})
			}
			ok = block(map[string]any{"type": "text", "text": ""}, ds)
		case p.Thinking != "":
			var ds []map[string]any
			for _, s := range split(p.Thinking) {
				ds = append(ds, map[string]any{"type": "thinking_delta", "thinking": s})
			}
			ds = append(ds, map[string]any{"type": "signature_delta", "signature": p.Signature})
			ok = block(map[string]any{"type": "thinking", "thinking": "", "signature": ""}, ds)
		case p.Redacted != "":
			ok = block(map[string]any{"type": "redacted_thinking", "data": p.Redacted}, nil)
		case p.ToolCall != nil:
			var ds []map[string]any
			for _, s := range split(p.ToolCall.args()) {
				ds = append(ds, map[string]any{"type": "input_json_delta", "partial_json": s})
			}
			ok = block(map[string]any{"type": "tool_use", "id": p.ToolCall.ID, "name": p.ToolCall.Name, "input": map[string]any{}}, ds)
		case p.Error != nil:
			typ := p.Error.Type
			if typ == "" {
				typ = "api_error"
			}
			e.event("error", marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": p.Error.Message}}))
			return
		case p.Disconnect:
			e.disconnect()
		}
		if !ok {
			return
		}
	}
	delta := map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": anthropicStops[stopOf(parts)], "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": u.Output},
	}
	if e.event("message_delta", marshal(delta)) {
		e.event("message_stop", []byte(`{"type":"message_stop"}`))
	}
}
