package responses

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
)

// minOutputTokens is the smallest max_output_tokens the API accepts.
const minOutputTokens = 16

// promptCacheKeyMax bounds prompt_cache_key, as OpenAI does.
const promptCacheKeyMax = 64

// encodeRequest builds the JSON body for req. model is the name sent in
// "model" (an Azure deployment may differ from the model id).
func encodeRequest(req *llm.Request, model string) ([]byte, error) {
	m := req.Model
	input, err := convertMessages(req)
	if err != nil {
		return nil, err
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = m.MaxTokens
	}
	var b bytes.Buffer
	err = jsonwire.WriteObject(jsontext.NewEncoder(&b), func(w *jsonwire.ObjectWriter) {
		w.Str("model", model)
		w.Value("input", input)
		w.Bool("stream", true)
		if key := req.SessionID; key != "" && !req.NoCache {
			if r := []rune(key); len(r) > promptCacheKeyMax {
				key = string(r[:promptCacheKeyMax])
			}
			w.Str("prompt_cache_key", key)
		}
		w.Bool("store", false)
		if maxTokens > 0 {
			w.Int("max_output_tokens", int64(max(maxTokens, minOutputTokens)))
		}
		if req.Temperature != nil {
			w.Value("temperature", *req.Temperature)
		}
		if len(req.Tools) > 0 {
			w.Value("tools", wireTools(m, req.Tools))
		}
		reasoning(w, req)
	})
	if err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

// reasoning writes "reasoning" (and "include", so the encrypted reasoning
// comes back to be replayed) for a reasoning model. The level is clamped
// to the model's levels ([llm.Model.ClampThinking]) and sent by its
// mapping; off is sent as the model's mapping for off, "none" by default,
// or not at all when the model cannot turn reasoning off.
func reasoning(w *jsonwire.ObjectWriter, req *llm.Request) {
	m := req.Model
	if !m.Reasoning {
		return
	}
	level := llm.ThinkingOff
	if req.Reasoning != "" && req.Reasoning != llm.ThinkingOff {
		level = m.ClampThinking(req.Reasoning)
	}
	if level == llm.ThinkingOff {
		effort, mapped := m.ThinkingValue(llm.ThinkingOff)
		if !mapped {
			effort = "none"
		}
		if effort != "" {
			w.Value("reasoning", wireReasoning{Effort: effort})
		}
		if m.Provider == llm.ProviderXAI {
			// xAI's models reason whatever is asked; their reasoning goes
			// back like any other.
			w.Value("include", []string{"reasoning.encrypted_content"})
		}
		return
	}
	effort, _ := m.ThinkingValue(level)
	w.Value("reasoning", wireReasoning{Effort: effort, Summary: "auto"})
	w.Value("include", []string{"reasoning.encrypted_content"})
}

type wireReasoning struct {
	Effort  string `json:"effort"`
	Summary string `json:"summary,omitzero"`
}

type wireTool struct {
	Type        string         `json:"type"`
	Name        string         `json:"name"`
	Description string         `json:"description,omitzero"`
	Parameters  jsontext.Value `json:"parameters"`
	Strict      *bool          `json:"strict,omitzero"`
}

// wireTools converts the tools; "strict": false goes with each where the
// model's server takes it: Azure, and servers whose compat says so
// ([llm.OpenAICompat.SupportsStrictMode]), as pi sends it.
func wireTools(m llm.Model, tools []llm.Tool) []wireTool {
	var strict *bool
	if c := m.Compat; m.API == llm.APIAzureOpenAIResponses || c != nil && c.SupportsStrictMode != nil && *c.SupportsStrictMode {
		strict = new(bool)
	}
	out := make([]wireTool, 0, len(tools))
	for _, t := range tools {
		params := t.Parameters
		if len(params) == 0 {
			params = jsontext.Value(`{"type":"object","properties":{}}`)
		}
		out = append(out, wireTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: params, Strict: strict})
	}
	return out
}

// wirePart is an input or output content part.
type wirePart struct {
	Type        string    `json:"type"`
	Text        *string   `json:"text,omitzero"`
	Detail      string    `json:"detail,omitzero"`
	ImageURL    string    `json:"image_url,omitzero"`
	Annotations *[]string `json:"annotations,omitzero"`
}

// wireItem is one input item: a message (role and content), an output
// message, a function call or its output. A replayed reasoning item is
// sent as the raw JSON it arrived as.
type wireItem struct {
	Type      string         `json:"type,omitzero"`
	Role      string         `json:"role,omitzero"`
	Content   jsontext.Value `json:"content,omitzero"`
	Status    string         `json:"status,omitzero"`
	ID        string         `json:"id,omitzero"`
	Phase     string         `json:"phase,omitzero"`
	CallID    string         `json:"call_id,omitzero"`
	Name      string         `json:"name,omitzero"`
	Arguments *string        `json:"arguments,omitzero"`
	Output    jsontext.Value `json:"output,omitzero"`
	raw       jsontext.Value
}

// MarshalJSONTo writes a replayed item verbatim, any other item by its
// fields.
func (it wireItem) MarshalJSONTo(enc *jsontext.Encoder) error {
	if it.raw != nil {
		return enc.WriteValue(it.raw)
	}
	type plain wireItem
	return json.MarshalEncode(enc, plain(it))
}

func marshalValue(v any) jsontext.Value {
	b, _ := json.Marshal(v)
	return b
}

// imageOmitted replaces an image for a model that cannot see it.
const imageOmitted = "(image omitted: this model does not accept images)"

// convertMessages turns the request into Responses input items: the system
// prompt as a developer (reasoning models) or system message, then the
// conversation.
func convertMessages(req *llm.Request) ([]wireItem, error) {
	m := req.Model
	var out []wireItem
	if req.SystemPrompt != "" {
		role := "system"
		if m.Reasoning && (m.Compat == nil || m.Compat.SupportsDeveloperRole == nil || *m.Compat.SupportsDeveloperRole) {
			role = "developer"
		}
		out = append(out, wireItem{Role: role, Content: marshalValue(req.SystemPrompt)})
	}
	for i, msg := range llm.PrepareMessages(req.Messages) {
		switch msg := msg.(type) {
		case *llm.UserMessage:
			if parts := inputParts(m, msg.Content); len(parts) > 0 {
				out = append(out, wireItem{Role: "user", Content: marshalValue(parts)})
			}
		case *llm.AssistantMessage:
			out = append(out, assistantItems(m, msg, i)...)
		case *llm.ToolResultMessage:
			out = append(out, wireItem{Type: "function_call_output", CallID: callID(msg.ToolCallID), Output: toolOutput(m, msg.Content)})
		default:
			return nil, fmt.Errorf("cannot send a %q message to the model; convert it first", msg.Role())
		}
	}
	return out, nil
}

// inputParts converts a user message's text and images.
func inputParts(m llm.Model, content []llm.Content) []wirePart {
	var parts []wirePart
	for _, c := range content {
		switch c := c.(type) {
		case llm.Text:
			t := c.Text
			parts = append(parts, wirePart{Type: "input_text", Text: &t})
		case llm.Image:
			if !m.AcceptsImages() {
				t := imageOmitted
				parts = append(parts, wirePart{Type: "input_text", Text: &t})
				continue
			}
			parts = append(parts, wirePart{Type: "input_image", Detail: "auto", ImageURL: "data:" + c.MIMEType + ";base64," + c.Data})
		}
	}
	return parts
}

// toolOutput is a tool result's output: its text, or input parts when it
// carries images the model can see.
func toolOutput(m llm.Model, content []llm.Content) jsontext.Value {
	var texts []string
	var images []llm.Image
	for _, c := range content {
		switch c := c.(type) {
		case llm.Text:
			texts = append(texts, c.Text)
		case llm.Image:
			images = append(images, c)
		}
	}
	text := strings.Join(texts, "\n")
	hasText := strings.TrimSpace(text) != ""
	if len(images) == 0 || !m.AcceptsImages() {
		switch {
		case hasText:
		case len(images) > 0:
			text = "(see attached image)"
		default:
			text = "(no tool output)"
		}
		return marshalValue(text)
	}
	var parts []wirePart
	if hasText {
		parts = append(parts, wirePart{Type: "input_text", Text: &text})
	}
	for _, img := range images {
		parts = append(parts, wirePart{Type: "input_image", Detail: "auto", ImageURL: "data:" + img.MIMEType + ";base64," + img.Data})
	}
	return marshalValue(parts)
}

// textSignature is what a text block's signature holds: the output
// message's id and phase ({"v":1,"id":...}, pi's form), or a bare id.
type textSignature struct {
	V     int    `json:"v"`
	ID    string `json:"id"`
	Phase string `json:"phase,omitzero"`
}

func parseTextSignature(sig string) textSignature {
	if strings.HasPrefix(sig, "{") {
		var s textSignature
		if json.Unmarshal([]byte(sig), &s) == nil && s.V == 1 && s.ID != "" {
			if s.Phase != "commentary" && s.Phase != "final_answer" {
				s.Phase = ""
			}
			return s
		}
	}
	return textSignature{ID: sig}
}

// assistantItems converts an earlier turn. Reasoning items and message ids
// go back only to the model that made them; thinking from another model is
// dropped (its signature means nothing here, and readable thinking sent as
// text would read as part of the answer), as pi 1.6 does.
func assistantItems(m llm.Model, msg *llm.AssistantMessage, n int) []wireItem {
	same := llm.SameModel(msg, m)
	var out []wireItem
	texts := 0
	for _, c := range msg.Content {
		switch c := c.(type) {
		case llm.Thinking:
			if !same || c.Redacted || !strings.HasPrefix(c.Signature, "{") {
				continue
			}
			raw := jsontext.Value(c.Signature)
			if !raw.IsValid() {
				continue
			}
			out = append(out, wireItem{raw: raw})
		case llm.Text:
			var sig textSignature
			if same {
				sig = parseTextSignature(c.Signature)
			}
			id := sig.ID
			switch {
			case id == "" && texts == 0:
				id = fmt.Sprintf("msg_pi_%d", n)
			case id == "":
				id = fmt.Sprintf("msg_pi_%d_%d", n, texts)
			case len(id) > 64:
				id = "msg_" + shortHash(id)
			}
			texts++
			empty := []string{}
			text := c.Text
			out = append(out, wireItem{Type: "message", Role: "assistant",
				Content: marshalValue([]wirePart{{Type: "output_text", Text: &text, Annotations: &empty}}),
				Status:  "completed", ID: id, Phase: sig.Phase})
		case llm.ToolCall:
			call, item, _ := strings.Cut(c.ID, "|")
			if !same || !strings.HasPrefix(item, "fc_") {
				item = "" // an item id pairs with its own model's reasoning only
			}
			args := c.Arguments.String()
			out = append(out, wireItem{Type: "function_call", ID: item, CallID: callID(call), Name: c.Name, Arguments: &args})
		}
	}
	return out
}

// callID is the call part of a stored tool-call id ("call|item", the form
// the Responses API's calls are stored in), made acceptable to the API:
// characters outside [A-Za-z0-9_-] become '_', at most 64 of them, no
// trailing '_'. Ids from other providers pass through the same way, so a
// call and its result still match.
func callID(id string) string {
	id, _, _ = strings.Cut(id, "|")
	b := []byte(id)
	for i, c := range b {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	return strings.TrimRight(string(b), "_")
}

// shortHash is a short stable digest for ids too long to send.
func shortHash(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return fmt.Sprintf("%016x", h.Sum64())
}
