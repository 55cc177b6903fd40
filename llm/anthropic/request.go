package anthropic

import (
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
)

// The request body, in the order Anthropic documents its fields.
type wireRequest struct {
	Model        string          `json:"model"`
	MaxTokens    int             `json:"max_tokens"`
	Stream       bool            `json:"stream"`
	System       []wireBlock     `json:"system,omitzero"`
	Messages     []wireMessage   `json:"messages"`
	Tools        []wireTool      `json:"tools,omitzero"`
	Thinking     *wireThinking   `json:"thinking,omitzero"`
	OutputConfig *wireOutputConf `json:"output_config,omitzero"`
	Temperature  *float64        `json:"temperature,omitzero"`
}

type wireThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitzero"`
}

type wireOutputConf struct {
	Effort string `json:"effort,omitzero"`
}

type wireTool struct {
	Name         string         `json:"name"`
	Description  string         `json:"description,omitzero"`
	InputSchema  jsontext.Value `json:"input_schema"`
	CacheControl *cacheControl  `json:"cache_control,omitzero"`
}

type wireMessage struct {
	Role    string      `json:"role"`
	Content []wireBlock `json:"content"`
}

type cacheControl struct {
	Type string `json:"type"`
}

type wireSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

// wireBlock is the union of the content blocks Prime sends.
type wireBlock struct {
	Type         string         `json:"type"`
	Text         *string        `json:"text,omitzero"`
	Thinking     *string        `json:"thinking,omitzero"`
	Signature    *string        `json:"signature,omitzero"`
	Data         string         `json:"data,omitzero"`
	Source       *wireSource    `json:"source,omitzero"`
	ID           string         `json:"id,omitzero"`
	Name         string         `json:"name,omitzero"`
	Input        *llm.Arguments `json:"input,omitzero"`
	ToolUseID    string         `json:"tool_use_id,omitzero"`
	Content      []wireBlock    `json:"content,omitzero"`
	IsError      bool           `json:"is_error,omitzero"`
	CacheControl *cacheControl  `json:"cache_control,omitzero"`
}

func textBlock(s string) wireBlock { return wireBlock{Type: "text", Text: &s} }

// encodeRequest builds the JSON body for req.
func encodeRequest(req *llm.Request) ([]byte, error) {
	m := req.Model
	w := wireRequest{Model: m.ID, Stream: true, Temperature: req.Temperature}
	w.MaxTokens = req.MaxTokens
	if w.MaxTokens <= 0 {
		w.MaxTokens = m.MaxTokens
	}
	if w.MaxTokens <= 0 {
		w.MaxTokens = 4096
	}
	if req.SystemPrompt != "" {
		w.System = []wireBlock{textBlock(req.SystemPrompt)}
	}
	for _, t := range req.Tools {
		schema := t.Parameters
		if len(schema) == 0 {
			schema = jsontext.Value(`{"type":"object","properties":{}}`)
		}
		w.Tools = append(w.Tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	msgs, err := convertMessages(m, llm.PrepareMessages(req.Messages))
	if err != nil {
		return nil, err
	}
	w.Messages = msgs
	applyThinking(&w, req)
	if !req.NoCache {
		markCache(&w)
	}
	return json.Marshal(&w)
}

// markCache sets prompt-caching breakpoints where pi 1.6 sets them: on the
// system prompt, on the last tool definition, and on the last block of the
// conversation when the conversation ends with a user message (the newest
// prompt or tool results), so each request reads the cache the previous
// one wrote.
func markCache(w *wireRequest) {
	mark := &cacheControl{Type: "ephemeral"}
	if n := len(w.System); n > 0 {
		w.System[n-1].CacheControl = mark
	}
	if n := len(w.Tools); n > 0 {
		w.Tools[n-1].CacheControl = mark
	}
	if n := len(w.Messages); n > 0 && w.Messages[n-1].Role == "user" {
		if c := w.Messages[n-1].Content; len(c) > 0 {
			c[len(c)-1].CacheControl = mark
		}
	}
}

// applyThinking asks a reasoning model to think at req.Reasoning.
func applyThinking(w *wireRequest, req *llm.Request) {
	m := req.Model
	level := req.Reasoning
	off := level == "" || level == llm.ThinkingOff
	if !m.Reasoning {
		return
	}
	switch m.ThinkingStyle {
	case llm.ThinkingAdaptive, llm.ThinkingAlwaysOn:
		if off {
			if m.ThinkingStyle == llm.ThinkingAdaptive && level == llm.ThinkingOff {
				w.Thinking = &wireThinking{Type: "disabled"}
			}
			return
		}
		w.Thinking = &wireThinking{Type: "adaptive"}
		w.OutputConfig = &wireOutputConf{Effort: effort(level, m.SupportsXHigh)}
		w.Temperature = nil
	default:
		if off {
			return
		}
		budget := thinkingBudgets[level]
		if budget == 0 {
			budget = thinkingBudgets[llm.ThinkingMedium]
		}
		if m.MaxTokens > 0 {
			// Room for the answer on top of the budget, within the model's limit.
			w.MaxTokens = min(w.MaxTokens+budget, max(m.MaxTokens, w.MaxTokens))
		} else {
			w.MaxTokens += budget
		}
		if budget >= w.MaxTokens {
			budget = w.MaxTokens - 1024
		}
		if budget < 1024 {
			return // no room to think: Anthropic's minimum budget is 1024
		}
		w.Thinking = &wireThinking{Type: "enabled", BudgetTokens: budget}
		w.Temperature = nil
	}
}

// effort maps a thinking level to an adaptive-thinking effort.
func effort(level llm.ThinkingLevel, xhigh bool) string {
	switch level {
	case llm.ThinkingMinimal, llm.ThinkingLow:
		return "low"
	case llm.ThinkingMedium:
		return "medium"
	case llm.ThinkingXHigh:
		if xhigh {
			return "max"
		}
		return "high"
	default:
		return "high"
	}
}

// convertMessages turns prepared messages into Anthropic's alternating
// user/assistant list; consecutive tool results share one user message.
func convertMessages(model llm.Model, msgs []llm.Message) ([]wireMessage, error) {
	var out []wireMessage
	appendTo := func(role string, blocks ...wireBlock) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, wireMessage{Role: role, Content: blocks})
	}
	for _, msg := range msgs {
		switch m := msg.(type) {
		case *llm.UserMessage:
			appendTo("user", userBlocks(model, m.Content)...)
		case *llm.AssistantMessage:
			appendTo("assistant", assistantBlocks(model, m)...)
		case *llm.ToolResultMessage:
			content := userBlocks(model, m.Content)
			appendTo("user", wireBlock{Type: "tool_result", ToolUseID: toolID(m.ToolCallID), Content: content, IsError: m.IsError})
		default:
			return nil, fmt.Errorf("cannot send a %q message to the model; convert it first", msg.Role())
		}
	}
	return out, nil
}

// userBlocks converts text and images; images become a note for models
// that cannot see them, and empty text is dropped (the API rejects it).
func userBlocks(model llm.Model, content []llm.Content) []wireBlock {
	var out []wireBlock
	for _, c := range content {
		switch c := c.(type) {
		case llm.Text:
			if strings.TrimSpace(c.Text) != "" {
				out = append(out, textBlock(c.Text))
			}
		case llm.Image:
			if !model.AcceptsImages() {
				out = append(out, textBlock("(image omitted: this model does not accept images)"))
				continue
			}
			out = append(out, wireBlock{Type: "image", Source: &wireSource{Type: "base64", MediaType: c.MIMEType, Data: c.Data}})
		}
	}
	return out
}

// assistantBlocks converts an earlier turn. Thinking goes back with its
// signature only to the model that signed it; otherwise it becomes text.
func assistantBlocks(model llm.Model, m *llm.AssistantMessage) []wireBlock {
	same := llm.SameModel(m, model)
	var out []wireBlock
	for _, c := range m.Content {
		switch c := c.(type) {
		case llm.Text:
			if strings.TrimSpace(c.Text) != "" {
				out = append(out, textBlock(c.Text))
			}
		case llm.Thinking:
			switch {
			case c.Redacted && same:
				out = append(out, wireBlock{Type: "redacted_thinking", Data: c.Signature})
			case c.Redacted:
				// Encrypted for another model: nothing to pass on.
			case same && c.Signature != "":
				thinking, sig := c.Thinking, c.Signature
				out = append(out, wireBlock{Type: "thinking", Thinking: &thinking, Signature: &sig})
			case strings.TrimSpace(c.Thinking) != "":
				out = append(out, textBlock(c.Thinking))
			}
		case llm.ToolCall:
			args := c.Arguments
			out = append(out, wireBlock{Type: "tool_use", ID: toolID(c.ID), Name: c.Name, Input: &args})
		}
	}
	return out
}

// toolID makes a tool-call id acceptable to Anthropic (^[a-zA-Z0-9_-]{1,64}$);
// ids from other providers may carry other characters. The mapping is
// deterministic, so a call and its result still match.
func toolID(id string) string {
	ok := len(id) > 0 && len(id) <= 64
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		ok = c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	if ok {
		return id
	}
	b := []byte(id)
	for i, c := range b {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "toolu_empty"
	}
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}
