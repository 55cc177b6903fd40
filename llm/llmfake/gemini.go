package llmfake

import (
	"net/http"

	"github.com/go-json-experiment/json"
	"strings"

	"github.com/prime-agent/prime/llm"
)

// The Vertex AI project and location the fake Vertex server's providers
// name in their URLs.
const (
	VertexProject  = "llmtest-project"
	VertexLocation = "us-central1"
)

// geminiPath reports whether path is a model's streamGenerateContent.
func geminiPath(api, path string) bool {
	prefix := "/v1beta/models/"
	if api == llm.APIGoogleVertex {
		prefix = "/v1/projects/" + VertexProject + "/locations/" + VertexLocation + "/publishers/google/models/"
	}
	rest, ok := strings.CutPrefix(path, prefix)
	return ok && strings.HasSuffix(rest, ":streamGenerateContent") && len(rest) > len(":streamGenerateContent")
}

// geminiModel is the model id in a Gemini request's path.
func geminiModel(path string) string {
	_, rest, _ := strings.Cut(path, "/models/")
	id, _, _ := strings.Cut(rest, ":")
	return id
}

// geminiStatus is Google's status name for an HTTP status.
func geminiStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	default:
		return "INTERNAL"
	}
}

// geminiErrorBody is Google's error body for rep.
func geminiErrorBody(rep Reply) []byte {
	status := rep.ErrorType
	if status == "" {
		status = geminiStatus(rep.Status)
	}
	return marshal(map[string]any{"error": map[string]any{"code": rep.Status, "message": rep.ErrorMessage, "status": status}})
}

var geminiFinish = map[llm.StopReason]string{
	llm.StopReasonStop:    "STOP",
	llm.StopReasonLength:  "MAX_TOKENS",
	llm.StopReasonToolUse: "STOP",
}

// writeGemini streams parts as streamGenerateContent?alt=sse does: each
// chunk a GenerateContentResponse with one candidate's new parts; thought
// summaries as parts with "thought": true (a signature on the block's last
// part); each function call whole in one part; the finish reason and the
// usage in the last chunk. Every chunk carries the usage so far, as
// Gemini's do. An error part sends {"error": ...} as a chunk.
func writeGemini(e *eventWriter, req *Request, parts []Part) {
	u := usageOf(req, parts)
	usage := func(final bool) map[string]any {
		m := map[string]any{"promptTokenCount": u.Input + u.CacheRead, "totalTokenCount": u.Input + u.CacheRead}
		if u.CacheRead > 0 {
			m["cachedContentTokenCount"] = u.CacheRead
		}
		if final {
			m["candidatesTokenCount"] = u.Output
			m["totalTokenCount"] = u.Input + u.CacheRead + u.Output
		}
		return m
	}
	chunk := func(ps []any, finish string) []byte {
		cand := map[string]any{"index": 0}
		if ps != nil {
			cand["content"] = map[string]any{"role": "model", "parts": ps}
		}
		if finish != "" {
			cand["finishReason"] = finish
		}
		return marshal(map[string]any{
			"candidates": []any{cand}, "usageMetadata": usage(finish != ""),
			"modelVersion": geminiModel(req.Path), "responseId": "llmtest-response",
		})
	}
	for _, p := range parts {
		ok := true
		switch {
		case p.Text != "" || p.Thinking != "":
			text, thought := p.Text, false
			if text == "" {
				text, thought = p.Thinking, true
			}
			pieces := split(text)
			for i, s := range pieces {
				part := map[string]any{"text": s}
				if thought {
					part["thought"] = true
				}
				if i == len(pieces)-1 && p.Signature != "" {
					part["thoughtSignature"] = p.Signature
				}
				if ok = e.event("", chunk([]any{part}, "")); !ok {
					break
				}
			}
		case p.ToolCall != nil:
			call := map[string]any{"name": p.ToolCall.Name, "args": jsonAny(p.ToolCall.args())}
			if p.ToolCall.ID != "" {
				call["id"] = p.ToolCall.ID
			}
			ok = e.event("", chunk([]any{map[string]any{"functionCall": call}}, ""))
		case p.Error != nil:
			status := p.Error.Type
			if status == "" {
				status = "INTERNAL"
			}
			e.event("", marshal(map[string]any{"error": map[string]any{"code": 500, "message": p.Error.Message, "status": status}}))
			return
		case p.Disconnect:
			e.disconnect()
		}
		if !ok {
			return
		}
	}
	e.event("", chunk(nil, geminiFinish[stopOf(parts)]))
}

// jsonAny decodes JSON text for re-encoding inside a chunk.
func jsonAny(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return map[string]any{}
	}
	return v
}
