package llmfake

import (
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
)

// responsesStream writes the Responses API's semantic events, numbering
// them as the API does.
type responsesStream struct {
	e     *eventWriter
	seq   int
	model string
	azure bool
	done  []any // the finished output items, for the terminal response
}

func (s *responsesStream) send(typ string, fields map[string]any) bool {
	fields["type"] = typ
	fields["sequence_number"] = s.seq
	s.seq++
	return s.e.event(typ, marshal(fields))
}

func (s *responsesStream) response(status string, extra map[string]any) map[string]any {
	r := map[string]any{
		"id": "resp_llmtest", "object": "response", "created_at": 1767225600, "status": status,
		"model": s.model, "output": []any{},
	}
	for k, v := range extra {
		r[k] = v
	}
	return r
}

// writeResponses streams parts as the Responses API does: response.created
// and response.in_progress; each part as an output item (added, its deltas,
// done); response.completed, or response.incomplete for an answer cut by
// the output limit, with the usage. On Azure the reasoning items' encrypted
// content comes only in the completed response, not in output_item.done.
func writeResponses(e *eventWriter, req *Request, parts []Part, azure bool) {
	s := &responsesStream{e: e, model: req.Model(), azure: azure}
	if !s.send("response.created", map[string]any{"response": s.response("in_progress", nil)}) ||
		!s.send("response.in_progress", map[string]any{"response": s.response("in_progress", nil)}) {
		return
	}
	out := 0
	for _, p := range parts {
		ok := true
		switch {
		case p.Thinking != "" || p.Redacted != "":
			ok = s.reasoning(out, p)
			out++
		case p.Text != "":
			ok = s.message(out, p.Text)
			out++
		case p.ToolCall != nil:
			ok = s.functionCall(out, p.ToolCall)
			out++
		case p.Error != nil:
			s.send("error", map[string]any{"code": p.Error.Type, "message": p.Error.Message, "param": nil})
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
		"input_tokens":          u.Input + u.CacheRead + u.CacheWrite,
		"input_tokens_details":  map[string]any{"cached_tokens": u.CacheRead},
		"output_tokens":         u.Output,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens":          u.Input + u.CacheRead + u.CacheWrite + u.Output,
	}
	if u.CacheWrite > 0 {
		usage["input_tokens_details"].(map[string]any)["cache_write_tokens"] = u.CacheWrite
	}
	if stopOf(parts) == llm.StopReasonLength {
		s.send("response.incomplete", map[string]any{"response": s.response("incomplete", map[string]any{
			"output": s.done, "usage": usage, "incomplete_details": map[string]any{"reason": "max_output_tokens"}})})
		return
	}
	s.send("response.completed", map[string]any{"response": s.response("completed", map[string]any{"output": s.done, "usage": usage})})
}

// reasoning streams a reasoning item. A signature that is a JSON object is
// the whole item (as a session stores it) and is sent as it is; any other
// signature is the item's encrypted content.
func (s *responsesStream) reasoning(n int, p Part) bool {
	id := "rs_llmtest_" + itoa(n)
	item := map[string]any{"id": id, "type": "reasoning", "summary": []any{}}
	final := map[string]any{"id": id, "type": "reasoning", "encrypted_content": p.Signature,
		"summary": []any{map[string]any{"type": "summary_text", "text": p.Thinking}}}
	if p.Redacted != "" {
		final = map[string]any{"id": id, "type": "reasoning", "encrypted_content": p.Redacted, "summary": []any{}}
	}
	var verbatim jsontext.Value
	if strings.HasPrefix(p.Signature, "{") && jsontext.Value(p.Signature).IsValid() {
		verbatim = jsontext.Value(p.Signature)
	}
	if !s.send("response.output_item.added", map[string]any{"output_index": n, "item": item}) {
		return false
	}
	if p.Thinking != "" {
		part := map[string]any{"type": "summary_text", "text": ""}
		if !s.send("response.reasoning_summary_part.added", map[string]any{"item_id": id, "output_index": n, "summary_index": 0, "part": part}) {
			return false
		}
		for _, d := range split(p.Thinking) {
			if !s.send("response.reasoning_summary_text.delta", map[string]any{"item_id": id, "output_index": n, "summary_index": 0, "delta": d}) {
				return false
			}
		}
		if !s.send("response.reasoning_summary_text.done", map[string]any{"item_id": id, "output_index": n, "summary_index": 0, "text": p.Thinking}) {
			return false
		}
		part["text"] = p.Thinking
		if !s.send("response.reasoning_summary_part.done", map[string]any{"item_id": id, "output_index": n, "summary_index": 0, "part": part}) {
			return false
		}
	}
	if verbatim != nil {
		s.done = append(s.done, verbatim)
		return s.send("response.output_item.done", map[string]any{"output_index": n, "item": verbatim})
	}
	s.done = append(s.done, final)
	if s.azure {
		shown := map[string]any{}
		for k, v := range final {
			if k != "encrypted_content" {
				shown[k] = v
			}
		}
		return s.send("response.output_item.done", map[string]any{"output_index": n, "item": shown})
	}
	return s.send("response.output_item.done", map[string]any{"output_index": n, "item": final})
}

func (s *responsesStream) message(n int, text string) bool {
	id := "msg_llmtest_" + itoa(n)
	item := map[string]any{"id": id, "type": "message", "status": "in_progress", "content": []any{}, "role": "assistant"}
	if !s.send("response.output_item.added", map[string]any{"output_index": n, "item": item}) {
		return false
	}
	part := map[string]any{"type": "output_text", "annotations": []any{}, "text": ""}
	if !s.send("response.content_part.added", map[string]any{"item_id": id, "output_index": n, "content_index": 0, "part": part}) {
		return false
	}
	for _, d := range split(text) {
		if !s.send("response.output_text.delta", map[string]any{"item_id": id, "output_index": n, "content_index": 0, "delta": d, "logprobs": []any{}}) {
			return false
		}
	}
	if !s.send("response.output_text.done", map[string]any{"item_id": id, "output_index": n, "content_index": 0, "text": text, "logprobs": []any{}}) {
		return false
	}
	part = map[string]any{"type": "output_text", "annotations": []any{}, "text": text}
	if !s.send("response.content_part.done", map[string]any{"item_id": id, "output_index": n, "content_index": 0, "part": part}) {
		return false
	}
	final := map[string]any{"id": id, "type": "message", "status": "completed", "content": []any{part}, "role": "assistant"}
	s.done = append(s.done, final)
	return s.send("response.output_item.done", map[string]any{"output_index": n, "item": final})
}

// functionCall streams a function call. A scripted id "call|item" gives
// both ids; a plain one is the call id, the item id made up.
func (s *responsesStream) functionCall(n int, tc *ToolCallPart) bool {
	callID, itemID, ok := strings.Cut(tc.ID, "|")
	if !ok {
		itemID = "fc_llmtest_" + itoa(n)
	}
	args := tc.args()
	item := map[string]any{"id": itemID, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": callID, "name": tc.Name}
	if !s.send("response.output_item.added", map[string]any{"output_index": n, "item": item}) {
		return false
	}
	for _, d := range split(args) {
		if !s.send("response.function_call_arguments.delta", map[string]any{"item_id": itemID, "output_index": n, "delta": d}) {
			return false
		}
	}
	if !s.send("response.function_call_arguments.done", map[string]any{"item_id": itemID, "output_index": n, "arguments": args}) {
		return false
	}
	final := map[string]any{"id": itemID, "type": "function_call", "status": "completed", "arguments": args, "call_id": callID, "name": tc.Name}
	s.done = append(s.done, final)
	return s.send("response.output_item.done", map[string]any{"output_index": n, "item": final})
}
