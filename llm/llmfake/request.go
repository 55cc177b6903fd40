package llmfake

import (
	"net/http"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
)

// Request is one request a fake server received.
type Request struct {
	Method string
	Path   string
	// Header holds the request headers (including the API key header the
	// provider sent).
	Header http.Header
	// Body is the raw request body.
	Body []byte
	// JSON is Body decoded (numbers as float64); nil when it is not JSON.
	JSON map[string]any

	api string
}

// Decode unmarshals the body into v.
func (r *Request) Decode(v any) error { return json.Unmarshal(r.Body, v, jsonwire.ReadOptions) }

// Model is the requested model id (for Gemini, the one in the path).
func (r *Request) Model() string {
	if r.gemini() {
		return geminiModel(r.Path)
	}
	s, _ := r.JSON["model"].(string)
	return s
}

func (r *Request) gemini() bool {
	return r.api == llm.APIGoogleGenerativeAI || r.api == llm.APIGoogleVertex
}

func (r *Request) responses() bool {
	return r.api == llm.APIOpenAIResponses || r.api == llm.APIAzureOpenAIResponses
}

// MaxTokens is the requested output cap: max_tokens,
// max_completion_tokens, max_output_tokens (Responses) or
// generationConfig.maxOutputTokens (Gemini); 0 when absent.
func (r *Request) MaxTokens() int {
	if gc, ok := r.JSON["generationConfig"].(map[string]any); ok {
		f, _ := gc["maxOutputTokens"].(float64)
		return int(f)
	}
	for _, k := range []string{"max_tokens", "max_completion_tokens", "max_output_tokens"} {
		if f, ok := r.JSON[k].(float64); ok {
			return int(f)
		}
	}
	return 0
}

// Messages is the conversation as sent, as role and content maps:
// "messages" (system messages of the OpenAI format included); the
// Responses API's "input" items (a function call as an assistant message
// whose content is its arguments, its output as a "tool" message); Gemini's
// "contents" (parts as content blocks, role "model" as "assistant").
func (r *Request) Messages() []map[string]any {
	key := "messages"
	switch {
	case r.responses():
		key = "input"
	case r.gemini():
		key = "contents"
	}
	list, _ := r.JSON[key].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, m := range list {
		if mm, ok := m.(map[string]any); ok {
			out = append(out, r.message(mm))
		}
	}
	return out
}

// message puts an item of the Responses or Gemini format in the
// role-and-content form.
func (r *Request) message(m map[string]any) map[string]any {
	switch {
	case r.gemini():
		role := m["role"]
		if role == "model" {
			role = "assistant"
		}
		var blocks []any
		parts, _ := m["parts"].([]any)
		for _, p := range parts {
			pm, _ := p.(map[string]any)
			switch {
			case pm["text"] != nil:
				blocks = append(blocks, map[string]any{"text": pm["text"]})
			case pm["functionCall"] != nil:
				blocks = append(blocks, map[string]any{"text": string(marshal(pm["functionCall"]))})
			case pm["functionResponse"] != nil:
				blocks = append(blocks, map[string]any{"text": string(marshal(pm["functionResponse"]))})
			}
		}
		return map[string]any{"role": role, "content": blocks}
	case r.responses():
		switch m["type"] {
		case "function_call":
			return map[string]any{"role": "assistant", "content": m["arguments"]}
		case "function_call_output":
			return map[string]any{"role": "tool", "content": m["output"]}
		case "reasoning":
			return map[string]any{"role": "assistant", "content": ""}
		}
	}
	return m
}

// System is the system prompt: Anthropic's "system" text blocks, or the
// OpenAI format's system or developer message.
func (r *Request) System() string {
	switch {
	case r.api == llm.APIAnthropicMessages:
		return textOf(r.JSON["system"])
	case r.gemini():
		si, _ := r.JSON["systemInstruction"].(map[string]any)
		return textOf(si["parts"])
	}
	for _, m := range r.Messages() {
		if m["role"] == "system" || m["role"] == "developer" {
			return textOf(m["content"])
		}
	}
	return ""
}

// LastUserText is the text of the last user message (for Anthropic, tool
// results count as user messages only if they carry text blocks of their
// own; their content is not included).
func (r *Request) LastUserText() string {
	msgs := r.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i]["role"] == "user" {
			return textOf(msgs[i]["content"])
		}
	}
	return ""
}

// Conversation returns the transcript a Prime summary request carries: the
// text between "<conversation>\n" at the start of the last user message and
// the first "\n</conversation>\n\n" after it. ok is false for a request
// that is not a summary request.
func (r *Request) Conversation() (text string, ok bool) {
	rest, ok := strings.CutPrefix(r.LastUserText(), "<conversation>\n")
	if !ok {
		return "", false
	}
	text, _, ok = strings.Cut(rest, "\n</conversation>\n\n")
	if !ok {
		return "", false
	}
	return text, true
}

// Text is all the text the request carries, system prompt and every
// message, joined with newlines: what a handler searches to answer
// according to what it was asked.
func (r *Request) Text() string {
	parts := []string{r.System()}
	for _, m := range r.Messages() {
		if m["role"] == "system" || m["role"] == "developer" {
			continue
		}
		parts = append(parts, textOf(m["content"]))
	}
	return strings.Join(parts, "\n")
}

// ToolNames lists the names of the tools offered.
func (r *Request) ToolNames() []string {
	list, _ := r.JSON["tools"].([]any)
	if r.gemini() && len(list) > 0 {
		t, _ := list[0].(map[string]any)
		list, _ = t["functionDeclarations"].([]any)
	}
	var out []string
	for _, t := range list {
		tm, _ := t.(map[string]any)
		if fn, ok := tm["function"].(map[string]any); ok {
			tm = fn
		}
		if n, ok := tm["name"].(string); ok {
			out = append(out, n)
		}
	}
	return out
}

// textOf extracts the text of a content value: a string, or a list of
// blocks whose "text" (and tool results' nested content) is joined.
func textOf(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var parts []string
		for _, b := range v {
			bm, ok := b.(map[string]any)
			if !ok {
				continue
			}
			if t, ok := bm["text"].(string); ok {
				parts = append(parts, t)
			} else if c, ok := bm["content"]; ok {
				if t := textOf(c); t != "" {
					parts = append(parts, t)
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}
