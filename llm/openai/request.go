package openai

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
)

// compat is [llm.OpenAICompat] with every default filled in.
type compat struct {
	store, developerRole, reasoningEffort, usageInStreaming  bool
	toolResultName, assistantAfterToolResult, thinkingAsText bool
	maxTokensField, thinkingFormat                           string
	routing                                                  jsontext.Value
}

// resolveCompat fills in the quirks of the server at base that the model
// does not state.
func resolveCompat(m llm.Model, base string) compat {
	host := ""
	if u, err := url.Parse(base); err == nil {
		host = strings.ToLower(u.Hostname())
	}
	isOpenAI := host == "api.openai.com"
	c := compat{
		store:            isOpenAI,
		developerRole:    isOpenAI,
		reasoningEffort:  true,
		usageInStreaming: true,
		maxTokensField:   "max_tokens",
		thinkingFormat:   "openai",
	}
	if isOpenAI {
		c.maxTokensField = "max_completion_tokens"
	}
	switch {
	case strings.HasSuffix(host, "mistral.ai"):
		c.toolResultName = true
	case host == "openrouter.ai":
		c.thinkingFormat = "openrouter"
	case strings.HasSuffix(host, "deepseek.com"):
		c.thinkingFormat = "deepseek"
	}
	o := m.Compat
	if o == nil {
		return c
	}
	set := func(dst *bool, src *bool) {
		if src != nil {
			*dst = *src
		}
	}
	set(&c.store, o.SupportsStore)
	set(&c.developerRole, o.SupportsDeveloperRole)
	set(&c.reasoningEffort, o.SupportsReasoningEffort)
	set(&c.usageInStreaming, o.SupportsUsageInStreaming)
	set(&c.toolResultName, o.RequiresToolResultName)
	set(&c.assistantAfterToolResult, o.RequiresAssistantAfterToolResult)
	set(&c.thinkingAsText, o.RequiresThinkingAsText)
	if o.MaxTokensField != "" {
		c.maxTokensField = o.MaxTokensField
	}
	if o.ThinkingFormat != "" {
		c.thinkingFormat = o.ThinkingFormat
	}
	c.routing = o.OpenRouterRouting
	return c
}

// wireMessage is one Chat Completions message. Content is a string, an
// array of parts, or null.
type wireMessage struct {
	Role             string         `json:"role"`
	Content          jsontext.Value `json:"content"`
	Name             string         `json:"name,omitzero"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitzero"`
	ToolCallID       string         `json:"tool_call_id,omitzero"`
	ReasoningContent string         `json:"reasoning_content,omitzero"`
	Reasoning        string         `json:"reasoning,omitzero"`
	ReasoningText    string         `json:"reasoning_text,omitzero"`
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wirePart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitzero"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url,omitzero"`
}

// encodeRequest builds the JSON body for req on a server with quirks c.
func encodeRequest(req *llm.Request, c compat) ([]byte, error) {
	m := req.Model
	msgs, err := convertMessages(req, c)
	if err != nil {
		return nil, err
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = m.MaxTokens
	}
	var b bytes.Buffer
	err = jsonwire.WriteObject(jsontext.NewEncoder(&b), func(w *jsonwire.ObjectWriter) {
		w.Str("model", m.ID)
		w.Value("messages", msgs)
		w.Bool("stream", true)
		if c.usageInStreaming {
			w.Raw("stream_options", jsontext.Value(`{"include_usage":true}`))
		}
		if c.store {
			w.Bool("store", false)
		}
		if maxTokens > 0 {
			w.Int(c.maxTokensField, int64(maxTokens))
		}
		if req.Temperature != nil {
			w.Value("temperature", *req.Temperature)
		}
		if len(req.Tools) > 0 {
			w.Value("tools", wireTools(req.Tools))
		}
		reasoning(w, req, c)
		if len(c.routing) > 0 {
			w.Raw("provider", c.routing)
		}
	})
	if err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

// reasoning writes the fields that ask a reasoning model to think. The
// level is clamped to the model's levels and sent by its mapping
// ([llm.Model.ThinkingLevelMap]); the formats are pi's: "openai"
// (reasoning_effort), "openrouter" (a "reasoning" object, off sent as the
// model's off value or "none" unless the model cannot turn reasoning off),
// "deepseek" ("thinking" enabled or disabled, plus reasoning_effort), "zai"
// and "qwen".
func reasoning(w *jsonwire.ObjectWriter, req *llm.Request, c compat) {
	m := req.Model
	if !m.Reasoning {
		return
	}
	level := req.Reasoning
	on := level != "" && level != llm.ThinkingOff
	effort := ""
	if on {
		level = m.ClampThinking(level)
		on = level != llm.ThinkingOff
		effort, _ = m.ThinkingValue(level)
	}
	offValue, offMapped := m.ThinkingValue(llm.ThinkingOff)
	switch c.thinkingFormat {
	case "zai":
		if on {
			w.Raw("thinking", jsontext.Value(`{"type":"enabled"}`))
		} else {
			w.Raw("thinking", jsontext.Value(`{"type":"disabled"}`))
		}
	case "qwen":
		w.Bool("enable_thinking", on)
	case "openrouter":
		switch {
		case on:
			w.Value("reasoning", map[string]string{"effort": effort})
		case !offMapped:
			w.Raw("reasoning", jsontext.Value(`{"effort":"none"}`))
		case offValue != "":
			w.Value("reasoning", map[string]string{"effort": offValue})
		}
	case "deepseek":
		switch {
		case on:
			w.Raw("thinking", jsontext.Value(`{"type":"enabled"}`))
		case !offMapped || offValue != "":
			w.Raw("thinking", jsontext.Value(`{"type":"disabled"}`))
		}
		if on && c.reasoningEffort && effort != "" {
			w.Str("reasoning_effort", effort)
		}
	default:
		if on && c.reasoningEffort && effort != "" {
			w.Str("reasoning_effort", effort)
		}
	}
}

// wireTool is a function tool definition.
type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string         `json:"name"`
		Description string         `json:"description,omitzero"`
		Parameters  jsontext.Value `json:"parameters"`
	} `json:"function"`
}

func wireTools(tools []llm.Tool) []wireTool {
	out := make([]wireTool, 0, len(tools))
	for _, t := range tools {
		w := wireTool{Type: "function"}
		w.Function.Name, w.Function.Description, w.Function.Parameters = t.Name, t.Description, t.Parameters
		if len(w.Function.Parameters) == 0 {
			w.Function.Parameters = jsontext.Value(`{"type":"object","properties":{}}`)
		}
		out = append(out, w)
	}
	return out
}

func jsonString(s string) jsontext.Value {
	v, _ := json.Marshal(s)
	return v
}

// convertMessages turns the request's conversation into Chat Completions
// messages.
func convertMessages(req *llm.Request, c compat) ([]wireMessage, error) {
	m := req.Model
	var out []wireMessage
	if req.SystemPrompt != "" {
		role := "system"
		if m.Reasoning && c.developerRole {
			role = "developer"
		}
		out = append(out, wireMessage{Role: role, Content: jsonString(req.SystemPrompt)})
	}
	var images []llm.Content // images from the current run of tool results
	flushImages := func() {
		if len(images) == 0 {
			return
		}
		parts := append([]llm.Content{llm.Text{Text: "Images returned by the tool calls above:"}}, images...)
		out = append(out, wireMessage{Role: "user", Content: userContent(m, parts)})
		images = nil
	}
	for _, msg := range llm.PrepareMessages(req.Messages) {
		if _, isTool := msg.(*llm.ToolResultMessage); !isTool {
			flushImages()
		}
		switch msg := msg.(type) {
		case *llm.UserMessage:
			if c.assistantAfterToolResult && len(out) > 0 && out[len(out)-1].Role == "tool" {
				out = append(out, wireMessage{Role: "assistant", Content: jsonString("Tool results received.")})
			}
			content := userContent(m, msg.Content)
			if content == nil {
				continue
			}
			out = append(out, wireMessage{Role: "user", Content: content})
		case *llm.AssistantMessage:
			if w, ok := assistantMessage(m, msg, c); ok {
				out = append(out, w)
			}
		case *llm.ToolResultMessage:
			var texts []string
			for _, b := range msg.Content {
				switch b := b.(type) {
				case llm.Text:
					texts = append(texts, b.Text)
				case llm.Image:
					if m.AcceptsImages() {
						images = append(images, b)
					} else {
						texts = append(texts, "(image omitted: this model does not accept images)")
					}
				}
			}
			w := wireMessage{Role: "tool", ToolCallID: msg.ToolCallID, Content: jsonString(strings.Join(texts, "\n"))}
			if c.toolResultName {
				w.Name = msg.ToolName
			}
			out = append(out, w)
		default:
			return nil, fmt.Errorf("cannot send a %q message to the model; convert it first", msg.Role())
		}
	}
	flushImages()
	return out, nil
}

// userContent is a plain string for text alone (what every server accepts)
// and an array of parts when there are images; nil when there is nothing.
func userContent(m llm.Model, content []llm.Content) jsontext.Value {
	var parts []wirePart
	hasImage := false
	for _, b := range content {
		switch b := b.(type) {
		case llm.Text:
			if b.Text != "" {
				parts = append(parts, wirePart{Type: "text", Text: b.Text})
			}
		case llm.Image:
			if !m.AcceptsImages() {
				parts = append(parts, wirePart{Type: "text", Text: "(image omitted: this model does not accept images)"})
				continue
			}
			hasImage = true
			p := wirePart{Type: "image_url"}
			p.ImageURL = &struct {
				URL string `json:"url"`
			}{"data:" + b.MIMEType + ";base64," + b.Data}
			parts = append(parts, p)
		}
	}
	switch {
	case len(parts) == 0:
		return nil
	case !hasImage:
		texts := make([]string, len(parts))
		for i, p := range parts {
			texts[i] = p.Text
		}
		return jsonString(strings.Join(texts, "\n"))
	}
	v, _ := json.Marshal(parts)
	return v
}

// assistantMessage converts an earlier turn; false when nothing is left.
func assistantMessage(m llm.Model, msg *llm.AssistantMessage, c compat) (wireMessage, bool) {
	same := llm.SameModel(msg, m)
	w := wireMessage{Role: "assistant"}
	var text, reasoning []string
	field := ""
	for _, b := range msg.Content {
		switch b := b.(type) {
		case llm.Text:
			if b.Text != "" {
				text = append(text, b.Text)
			}
		case llm.Thinking:
			if b.Redacted || strings.TrimSpace(b.Thinking) == "" {
				continue
			}
			switch {
			case same && !c.thinkingAsText && isReasoningField(b.Signature):
				reasoning = append(reasoning, b.Thinking)
				field = b.Signature
			case same && c.thinkingAsText:
				text = append(text, "<thinking>\n"+b.Thinking+"\n</thinking>")
			default:
				text = append(text, b.Thinking)
			}
		case llm.ToolCall:
			tc := wireToolCall{ID: b.ID, Type: "function"}
			tc.Function.Name = b.Name
			tc.Function.Arguments = b.Arguments.String()
			w.ToolCalls = append(w.ToolCalls, tc)
		}
	}
	if len(text) > 0 {
		w.Content = jsonString(strings.Join(text, "\n"))
	} else {
		w.Content = jsontext.Value("null")
	}
	r := strings.Join(reasoning, "\n")
	switch field {
	case "reasoning_content":
		w.ReasoningContent = r
	case "reasoning":
		w.Reasoning = r
	case "reasoning_text":
		w.ReasoningText = r
	}
	if len(text) == 0 && len(w.ToolCalls) == 0 {
		return w, false
	}
	return w, true
}

func isReasoningField(s string) bool {
	return s == "reasoning_content" || s == "reasoning" || s == "reasoning_text"
}
