package gemini

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
)

type wireRequest struct {
	Contents          []wireContent `json:"contents"`
	SystemInstruction *wireContent  `json:"systemInstruction,omitzero"`
	Tools             []wireTools   `json:"tools,omitzero"`
	GenerationConfig  *wireGenConf  `json:"generationConfig,omitzero"`
}

type wireGenConf struct {
	Temperature     *float64       `json:"temperature,omitzero"`
	MaxOutputTokens int            `json:"maxOutputTokens,omitzero"`
	ThinkingConfig  *wireThinkConf `json:"thinkingConfig,omitzero"`
}

type wireThinkConf struct {
	IncludeThoughts bool   `json:"includeThoughts,omitzero"`
	ThinkingBudget  *int   `json:"thinkingBudget,omitzero"`
	ThinkingLevel   string `json:"thinkingLevel,omitzero"`
}

type wireTools struct {
	FunctionDeclarations []wireFunction `json:"functionDeclarations"`
}

type wireFunction struct {
	Name                 string         `json:"name"`
	Description          string         `json:"description,omitzero"`
	ParametersJSONSchema jsontext.Value `json:"parametersJsonSchema,omitzero"`
}

type wireContent struct {
	Role  string     `json:"role,omitzero"`
	Parts []wirePart `json:"parts"`
}

type wireBlob struct {
	MIMEType string `json:"mimeType"`
	Data     string `json:"data"`
}

type wireCall struct {
	Name string         `json:"name"`
	Args jsontext.Value `json:"args"`
	ID   string         `json:"id,omitzero"`
}

type wireFuncResponse struct {
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
	Parts    []wirePart     `json:"parts,omitzero"`
	ID       string         `json:"id,omitzero"`
}

// wirePart is one part of a content, in either direction.
type wirePart struct {
	Thought          bool              `json:"thought,omitzero"`
	Text             *string           `json:"text,omitzero"`
	InlineData       *wireBlob         `json:"inlineData,omitzero"`
	FunctionCall     *wireCall         `json:"functionCall,omitzero"`
	FunctionResponse *wireFuncResponse `json:"functionResponse,omitzero"`
	ThoughtSignature string            `json:"thoughtSignature,omitzero"`
}

func textPart(s string) wirePart { return wirePart{Text: &s} }

// encodeRequest builds the JSON body for req.
func encodeRequest(req *llm.Request) ([]byte, error) {
	m := req.Model
	contents, err := convertMessages(m, llm.PrepareMessages(req.Messages))
	if err != nil {
		return nil, err
	}
	w := wireRequest{Contents: contents}
	if req.SystemPrompt != "" {
		w.SystemInstruction = &wireContent{Parts: []wirePart{textPart(req.SystemPrompt)}}
	}
	if len(req.Tools) > 0 {
		decls := make([]wireFunction, 0, len(req.Tools))
		for _, t := range req.Tools {
			decls = append(decls, wireFunction{Name: t.Name, Description: t.Description, ParametersJSONSchema: Schema(t.Parameters)})
		}
		w.Tools = []wireTools{{FunctionDeclarations: decls}}
	}
	gc := &wireGenConf{Temperature: req.Temperature, MaxOutputTokens: req.MaxTokens, ThinkingConfig: thinkingConfig(req)}
	if gc.MaxOutputTokens <= 0 {
		gc.MaxOutputTokens = m.MaxTokens
	}
	if gc.Temperature != nil || gc.MaxOutputTokens > 0 || gc.ThinkingConfig != nil {
		w.GenerationConfig = gc
	}
	return json.Marshal(&w)
}

// thinkingLevelModel matches the models asked to think by a level
// ("thinkingLevel") rather than a token budget: Gemini 3 Pro and Flash,
// Gemini 4 and later, the -latest aliases, Gemma 4.
var thinkingLevelModel = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`gemini-3(?:\.\d+)?-(?:pro|flash)|gemini-(?:[4-9]|[1-9]\d)|^gemini-flash-latest$|^gemini-flash-lite-latest$|gemma-?4`)
})

// usesThinkingLevel reports whether m is asked to think by a level.
func usesThinkingLevel(m llm.Model) bool {
	return thinkingLevelModel().MatchString(strings.ToLower(m.ID))
}

// thinkingConfig asks a reasoning model to think at the request's level
// (clamped to the model's levels), with thought summaries; off turns
// thinking off as far as the model allows (a budget of 0, or its lowest
// level when it cannot stop thinking).
func thinkingConfig(req *llm.Request) *wireThinkConf {
	m := req.Model
	if !m.Reasoning {
		return nil
	}
	level := llm.ThinkingOff
	if req.Reasoning != "" && req.Reasoning != llm.ThinkingOff {
		level = m.ClampThinking(req.Reasoning)
	}
	zero := 0
	if level == llm.ThinkingOff {
		if !usesThinkingLevel(m) {
			return &wireThinkConf{ThinkingBudget: &zero}
		}
		if lowest := m.ClampThinking(llm.ThinkingOff); lowest != llm.ThinkingOff {
			return &wireThinkConf{ThinkingLevel: googleLevel(m, lowest)}
		}
		return &wireThinkConf{ThinkingBudget: &zero}
	}
	if usesThinkingLevel(m) {
		return &wireThinkConf{IncludeThoughts: true, ThinkingLevel: googleLevel(m, level)}
	}
	budget := thinkingBudget(m.ID, level)
	return &wireThinkConf{IncludeThoughts: true, ThinkingBudget: &budget}
}

// googleLevel is Gemini's name for a level: the model's mapping or the
// level itself, in capitals; xhigh, which Gemini does not have, is HIGH.
func googleLevel(m llm.Model, level llm.ThinkingLevel) string {
	v, _ := m.ThinkingValue(level)
	v = strings.ToUpper(v)
	switch v {
	case "MINIMAL", "LOW", "MEDIUM", "HIGH":
		return v
	}
	return "HIGH"
}

// thinkingBudget is the token budget of a level on the 2.5 models (pi's
// table); other models get -1, "as much as the model decides".
func thinkingBudget(id string, level llm.ThinkingLevel) int {
	if level == llm.ThinkingXHigh {
		level = llm.ThinkingHigh
	}
	var t map[llm.ThinkingLevel]int
	switch {
	case strings.Contains(id, "2.5-pro"):
		t = map[llm.ThinkingLevel]int{llm.ThinkingMinimal: 128, llm.ThinkingLow: 2048, llm.ThinkingMedium: 8192, llm.ThinkingHigh: 32768}
	case strings.Contains(id, "2.5-flash-lite"):
		t = map[llm.ThinkingLevel]int{llm.ThinkingMinimal: 512, llm.ThinkingLow: 2048, llm.ThinkingMedium: 8192, llm.ThinkingHigh: 24576}
	case strings.Contains(id, "2.5-flash"):
		t = map[llm.ThinkingLevel]int{llm.ThinkingMinimal: 128, llm.ThinkingLow: 2048, llm.ThinkingMedium: 8192, llm.ThinkingHigh: 24576}
	default:
		return -1
	}
	return t[level]
}

// geminiMajor reads the N of "gemini-N...".
var geminiMajor = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^gemini(?:-live)?-(\d+)`) })

// majorVersion is the N of "gemini-N...", or 0.
func majorVersion(id string) int {
	m := geminiMajor().FindStringSubmatch(strings.ToLower(id))
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// needsCallIDs reports whether the model wants ids on function calls and
// responses (Gemini 3 and later, and the Claude and gpt-oss models Google
// serves).
func needsCallIDs(id string) bool {
	return strings.HasPrefix(id, "claude-") || strings.HasPrefix(id, "gpt-oss-") || majorVersion(id) >= 3
}

// base64Sig matches a thought signature in standard base64.
var base64Sig = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9+/]+={0,2}$`) })

// signature is sig when it may go back: from the same model, and base64
// (a signature from another API is not).
func signature(same bool, sig string) string {
	if !same || len(sig)%4 != 0 || !base64Sig().MatchString(sig) {
		return ""
	}
	return sig
}

// callID makes an id acceptable where the model needs one.
func callID(model, id string) string {
	if !needsCallIDs(model) {
		return ""
	}
	b := []byte(id)
	for i, c := range b {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b[i] = '_'
		}
	}
	return string(b[:min(len(b), 64)])
}

// imageOmitted replaces an image for a model that cannot see it.
const imageOmitted = "(image omitted: this model does not accept images)"

// convertMessages turns prepared messages into Gemini contents.
func convertMessages(m llm.Model, msgs []llm.Message) ([]wireContent, error) {
	var out []wireContent
	for _, msg := range msgs {
		switch msg := msg.(type) {
		case *llm.UserMessage:
			var parts []wirePart
			for _, c := range msg.Content {
				switch c := c.(type) {
				case llm.Text:
					parts = append(parts, textPart(c.Text))
				case llm.Image:
					if !m.AcceptsImages() {
						parts = append(parts, textPart(imageOmitted))
						continue
					}
					parts = append(parts, wirePart{InlineData: &wireBlob{MIMEType: c.MIMEType, Data: c.Data}})
				}
			}
			if len(parts) > 0 {
				out = append(out, wireContent{Role: "user", Parts: parts})
			}
		case *llm.AssistantMessage:
			if parts := modelParts(m, msg); len(parts) > 0 {
				out = append(out, wireContent{Role: "model", Parts: parts})
			}
		case *llm.ToolResultMessage:
			out = appendToolResult(m, out, msg)
		default:
			return nil, fmt.Errorf("cannot send a %q message to the model; convert it first", msg.Role())
		}
	}
	return out, nil
}

// modelParts converts an earlier turn. Signatures go back only to the
// model that made them; thinking from another model is dropped, as pi 1.6
// does.
func modelParts(m llm.Model, msg *llm.AssistantMessage) []wirePart {
	same := msg.Provider == m.Provider && msg.Model == m.ID
	var parts []wirePart
	for _, c := range msg.Content {
		switch c := c.(type) {
		case llm.Text:
			sig := signature(same, c.Signature)
			if strings.TrimSpace(c.Text) == "" && sig == "" {
				continue
			}
			p := textPart(c.Text)
			p.ThoughtSignature = sig
			parts = append(parts, p)
		case llm.Thinking:
			sig := signature(same, c.Signature)
			if !same || c.Redacted || (strings.TrimSpace(c.Thinking) == "" && sig == "") {
				continue
			}
			p := textPart(c.Thinking)
			p.Thought, p.ThoughtSignature = true, sig
			parts = append(parts, p)
		case llm.ToolCall:
			args := jsontext.Value(c.Arguments.String())
			parts = append(parts, wirePart{FunctionCall: &wireCall{Name: c.Name, Args: args, ID: callID(m.ID, c.ID)},
				ThoughtSignature: signature(same, c.ThoughtSignature)})
		}
	}
	return parts
}

// appendToolResult adds a function response, in the same user content as
// the responses just before it. Images go inside the response on Gemini 3
// and later, after it in a user content on older models.
func appendToolResult(m llm.Model, out []wireContent, msg *llm.ToolResultMessage) []wireContent {
	var texts []string
	var images []wirePart
	for _, c := range msg.Content {
		switch c := c.(type) {
		case llm.Text:
			texts = append(texts, c.Text)
		case llm.Image:
			if m.AcceptsImages() {
				images = append(images, wirePart{InlineData: &wireBlob{MIMEType: c.MIMEType, Data: c.Data}})
			}
		}
	}
	text := strings.Join(texts, "\n")
	if strings.TrimSpace(text) == "" {
		text = ""
		if len(images) > 0 {
			text = "(see attached image)"
		}
	}
	key := "output"
	if msg.IsError {
		key = "error"
	}
	inline := len(images) > 0 && (majorVersion(m.ID) == 0 || majorVersion(m.ID) >= 3)
	fr := &wireFuncResponse{Name: msg.ToolName, Response: map[string]any{key: text}, ID: callID(m.ID, msg.ToolCallID)}
	if inline {
		fr.Parts = images
	}
	part := wirePart{FunctionResponse: fr}
	if n := len(out); n > 0 && out[n-1].Role == "user" && hasFunctionResponse(out[n-1]) {
		out[n-1].Parts = append(out[n-1].Parts, part)
	} else {
		out = append(out, wireContent{Role: "user", Parts: []wirePart{part}})
	}
	if len(images) > 0 && !inline {
		out = append(out, wireContent{Role: "user", Parts: append([]wirePart{textPart("Tool result image:")}, images...)})
	}
	return out
}

func hasFunctionResponse(c wireContent) bool {
	for _, p := range c.Parts {
		if p.FunctionResponse != nil {
			return true
		}
	}
	return false
}

// Schema converts a tool's JSON Schema to what Gemini's
// parametersJsonSchema takes: "$schema" is dropped (the field is refused),
// and a string or number "const" becomes a one-value "enum" (Gemini ignores
// const but honours enum). Anything else goes as it is. A schema that is
// not a JSON object becomes an empty object schema.
func Schema(raw jsontext.Value) jsontext.Value {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v, jsonwire.ReadOptions) != nil {
		return jsontext.Value(`{"type":"object","properties":{}}`)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return jsontext.Value(`{"type":"object","properties":{}}`)
	}
	delete(obj, "$schema")
	out, err := json.Marshal(rewriteConst(obj, false), json.Deterministic(true))
	if err != nil {
		return jsontext.Value(`{"type":"object","properties":{}}`)
	}
	return out
}

// nameMaps are the keywords whose members are names, not keywords.
var nameMaps = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true}

func rewriteConst(v any, names bool) any {
	switch v := v.(type) {
	case []any:
		for i := range v {
			v[i] = rewriteConst(v[i], false)
		}
		return v
	case map[string]any:
		for k, sub := range v {
			v[k] = rewriteConst(sub, !names && nameMaps[k])
		}
		if c, ok := v["const"]; ok && !names {
			if _, has := v["enum"]; !has {
				switch c.(type) {
				case string, float64:
					delete(v, "const")
					v["enum"] = []any{c}
				}
			}
		}
		return v
	}
	return v
}
