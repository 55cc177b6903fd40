package session

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
)

// RoleSystem is the role of a [SystemMessage].
const RoleSystem = "system"

// SystemMessage is the system prompt and tool set as the conversation
// records them (pi 1.6 keeps the prompt in the transcript). The first one
// of a session holds the whole prompt; later ones are patches: Sections
// then holds only the sections that changed (Removed for one that went
// away), and ToolsAdded and ToolsRemoved the changes to the tool set.
// [ReplaySystem] folds them into the state in force. A compaction entry
// carries that state ([CompactionEntry].SystemMessage), because the
// messages before it are no longer part of the context.
//
// System messages are context messages like any other ([BuildContext]
// returns them, and they count in [EstimateTokens]), but [ToLLM] leaves
// them out: the agent sends [Context.System]'s [SystemMessage.Prompt] as
// the request's system prompt and [Context.Tools] as its tools.
//
// Its JSON form is pi's:
//
//	{"role":"system","content":"...","sections":{"name":"text"|null,...}?,
//	 "toolsAdded":[{"name","description","parameters","constrainedSampling"?}]?,
//	 "toolsRemoved":[{"name":...}]?,"timestamp":N}
//
// A content of null reads as "". A content written as an array of blocks
// (pi accepts one) is kept as the text of its text blocks joined by "\n",
// which is what pi's replay and prompt rendering read from it; its token
// estimate stays pi's (the text blocks' lengths, plus [ImageChars] per
// image), as long as Content is not changed.
type SystemMessage struct {
	// Content is the prompt text outside the sections, usually "".
	Content string
	// Sections are the named parts of the prompt, in order.
	Sections []SystemSection
	// ToolsAdded are the tools declared (or declared again, replacing an
	// earlier declaration of the same name); ToolsRemoved names the tools
	// withdrawn. Nil means the member is absent; an empty list is written
	// as [] (and pi counts its two characters).
	ToolsAdded   []ToolDeclaration
	ToolsRemoved []string
	// Timestamp is when the message was made, in Unix milliseconds.
	Timestamp int64

	// fromBlocks is set when the content was read as an array: blocks is
	// the Content it gave and blockChars pi's character count of it.
	fromBlocks bool
	blocks     string
	blockChars int
	// noTimestamp is set when the stored message had no timestamp (pi's
	// replay then takes the next message's).
	noTimestamp bool
}

// SystemSection is one named part of the system prompt.
type SystemSection struct {
	Name string
	Text string
	// Removed marks a patch that withdraws the section (JSON null).
	Removed bool
}

// ToolDeclaration is a tool as the model is told of it: its name,
// description and the JSON Schema of its arguments, and optionally how a
// provider should constrain sampling to that schema.
type ToolDeclaration struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments object. Nil is
	// written as the empty object schema providers use.
	Parameters jsontext.Value
	// ConstrainedSampling is pi's optional provider hint, kept as it is;
	// nil when absent.
	ConstrainedSampling jsontext.Value

	// read is the declaration as it was read, for a declaration decoded
	// from a file: it keeps members Prime does not know, which pi counts
	// and replays.
	read *readDeclaration
}

// readDeclaration is a decoded declaration: its fields as decoded and its
// JSON.stringify form.
type readDeclaration struct {
	name, description       string
	parameters, constrained jsontext.Value
	text                    jsontext.Value
	// units is the length of text in UTF-16 code units.
	units int
}

// Role reports "system".
func (*SystemMessage) Role() string { return RoleSystem }

// LLM returns the tool as a provider request declares it.
func (d ToolDeclaration) LLM() llm.Tool {
	return llm.Tool{Name: d.Name, Description: d.Description, Parameters: d.Parameters}
}

// emptySchema is the schema written for a declaration without parameters.
var emptySchema = jsontext.Value(`{"type":"object","properties":{}}`)

// unchanged returns how the declaration was read, when it was read and has
// not been changed since, else nil.
func (d *ToolDeclaration) unchanged() *readDeclaration {
	if r := d.read; r != nil && r.name == d.Name && r.description == d.Description &&
		bytes.Equal(r.parameters, d.Parameters) && bytes.Equal(r.constrained, d.ConstrainedSampling) {
		return r
	}
	return nil
}

// stringified returns the declaration as JSON.stringify prints it: as it
// was read when it is unchanged, else its four members in pi's order.
func (d *ToolDeclaration) stringified() (jsontext.Value, error) {
	if r := d.unchanged(); r != nil {
		return r.text, nil
	}
	params := d.Parameters
	if len(params) == 0 {
		params = emptySchema
	}
	var b bytes.Buffer
	err := jsonwire.WriteObject(jsontext.NewEncoder(&b), func(w *jsonwire.ObjectWriter) {
		w.Str("name", d.Name)
		w.Str("description", d.Description)
		w.Raw("parameters", params)
		w.OptRaw("constrainedSampling", d.ConstrainedSampling)
	})
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", d.Name, err)
	}
	return llm.Stringify(bytes.TrimRight(b.Bytes(), "\n"))
}

// MarshalJSONTo writes the declaration in JSON.stringify's form: name,
// description, parameters and constrainedSampling when present; a
// declaration read from a file and not changed is written as it was read.
func (d ToolDeclaration) MarshalJSONTo(enc *jsontext.Encoder) error {
	v, err := d.stringified()
	if err != nil {
		return err
	}
	return llm.WriteStringified(enc, v)
}

// UnmarshalJSONFrom reads a declaration: an object whose name and
// description are strings (null reads as ""). Members Prime does not know
// are kept for writing it again.
func (d *ToolDeclaration) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	if raw.Kind() != '{' {
		return fmt.Errorf("a tool declaration is %v, want an object", raw.Kind())
	}
	text, err := llm.Stringify(raw)
	if err != nil {
		return err
	}
	return d.decodeStringified(text)
}

// decodeStringified reads the declaration's fields from its JSON.stringify
// form and remembers that form.
func (d *ToolDeclaration) decodeStringified(text jsontext.Value) error {
	*d = ToolDeclaration{}
	dec := jsonwire.NewDecoder(text)
	err := jsonwire.ReadObject(dec, func(name string) error {
		var err error
		switch name {
		case "name":
			d.Name, err = jsonwire.ReadString(dec)
		case "description":
			d.Description, err = jsonwire.ReadString(dec)
		case "parameters":
			d.Parameters, err = dec.ReadValue()
		case "constrainedSampling":
			d.ConstrainedSampling, err = dec.ReadValue()
		default:
			err = dec.SkipValue()
		}
		return err
	})
	if err != nil {
		return err
	}
	// The decoder reads text in place: the values are slices of it.
	d.read = &readDeclaration{name: d.Name, description: d.Description, parameters: d.Parameters,
		constrained: d.ConstrainedSampling, text: text, units: llm.UTF16Len(string(text))}
	return nil
}

// MarshalJSONTo writes the message in pi's key order.
func (m *SystemMessage) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("role", RoleSystem)
		w.Str("content", m.Content)
		if m.Sections != nil {
			w.Raw("sections", sectionsJSON(m.Sections))
		}
		if m.ToolsAdded != nil {
			w.Value("toolsAdded", m.ToolsAdded)
		}
		if m.ToolsRemoved != nil {
			removed := make([]struct {
				Name string `json:"name"`
			}, len(m.ToolsRemoved))
			for i, n := range m.ToolsRemoved {
				removed[i].Name = n
			}
			w.Value("toolsRemoved", removed)
		}
		if !m.noTimestamp {
			w.Int("timestamp", m.Timestamp)
		}
	})
}

// sectionsJSON renders sections as a JSON object, null for a removed one.
func sectionsJSON(sections []SystemSection) jsontext.Value {
	var b bytes.Buffer
	enc := jsontext.NewEncoder(&b)
	jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		for _, s := range sections {
			if s.Removed {
				w.Null(s.Name)
			} else {
				w.Str(s.Name, s.Text)
			}
		}
	})
	return bytes.TrimRight(b.Bytes(), "\n")
}

// UnmarshalJSONFrom reads a system message; unknown members are ignored.
// Sections are kept in the order a JavaScript object parsed from them
// holds them (see [jsonwire.ArrayIndex]; a repeated name keeps its first
// place and its last value).
func (m *SystemMessage) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*m = SystemMessage{noTimestamp: true}
	return jsonwire.ReadObject(dec, func(name string) error {
		var err error
		switch name {
		case "content":
			err = m.readContent(dec)
		case "sections":
			m.Sections, err = readSections(dec)
		case "toolsAdded":
			if dec.PeekKind() == 'n' {
				m.ToolsAdded = nil
				return dec.SkipValue()
			}
			var tools []ToolDeclaration
			if err = json.UnmarshalDecode(dec, &tools, jsonwire.ReadOptions); err == nil && tools == nil {
				tools = []ToolDeclaration{}
			}
			m.ToolsAdded = tools
		case "toolsRemoved":
			m.ToolsRemoved, err = readRemoved(dec)
		case "timestamp":
			m.noTimestamp = dec.PeekKind() == 'n'
			m.Timestamp, err = jsonwire.ReadMillis(dec)
		default:
			err = dec.SkipValue()
		}
		return err
	})
}

// readContent reads the content: a string, null ("") or an array of
// blocks.
func (m *SystemMessage) readContent(dec *jsontext.Decoder) error {
	m.fromBlocks, m.blocks, m.blockChars = false, "", 0
	switch dec.PeekKind() {
	case 'n', '"':
		var err error
		m.Content, err = jsonwire.ReadString(dec)
		return err
	case '[':
		blocks, err := llm.DecodeContentList(dec)
		if err != nil {
			return err
		}
		var texts []string
		for _, b := range blocks {
			if t, ok := b.(llm.Text); ok {
				texts = append(texts, t.Text)
			}
		}
		m.Content = strings.Join(texts, "\n")
		m.fromBlocks, m.blocks, m.blockChars = true, m.Content, contentChars(blocks)
		return nil
	}
	return fmt.Errorf("content is %v, want a string or an array", dec.PeekKind())
}

// readSections reads the sections object (null reads as none).
func readSections(dec *jsontext.Decoder) ([]SystemSection, error) {
	if dec.PeekKind() == 'n' {
		return nil, dec.SkipValue()
	}
	sections := []SystemSection{}
	err := jsonwire.ReadObject(dec, func(name string) error {
		s := SystemSection{Name: name}
		switch dec.PeekKind() {
		case 'n':
			s.Removed = true
			if err := dec.SkipValue(); err != nil {
				return err
			}
		case '"':
			var err error
			if s.Text, err = jsonwire.ReadString(dec); err != nil {
				return err
			}
		default:
			return fmt.Errorf("a section is %v, want a string or null", dec.PeekKind())
		}
		if i := slices.IndexFunc(sections, func(x SystemSection) bool { return x.Name == name }); i >= 0 {
			sections[i] = s
		} else {
			sections = append(sections, s)
		}
		return nil
	})
	return jsOrder(sections), err
}

// jsOrder puts sections named by array indexes first, in ascending order,
// as a JavaScript object holds its members.
func jsOrder(sections []SystemSection) []SystemSection {
	slices.SortStableFunc(sections, func(a, b SystemSection) int {
		ia, ka := jsonwire.ArrayIndex(a.Name)
		ib, kb := jsonwire.ArrayIndex(b.Name)
		switch {
		case ka && kb:
			return cmp.Compare(ia, ib)
		case ka:
			return -1
		case kb:
			return 1
		}
		return 0
	})
	return sections
}

// readRemoved reads toolsRemoved: an array of {"name": ...} objects (null
// reads as none).
func readRemoved(dec *jsontext.Decoder) ([]string, error) {
	if dec.PeekKind() == 'n' {
		return nil, dec.SkipValue()
	}
	var items []struct {
		Name string `json:"name"`
	}
	if err := json.UnmarshalDecode(dec, &items, jsonwire.ReadOptions); err != nil {
		return nil, err
	}
	names := make([]string, len(items))
	for i, it := range items {
		names[i] = it.Name
	}
	return names, nil
}

// Prompt renders the message as a system prompt (pi's
// getSystemMessageText): the content, then the text of every section in
// order, the non-empty ones joined by a blank line.
func (m *SystemMessage) Prompt() string {
	parts := make([]string, 0, len(m.Sections)+1)
	if m.Content != "" {
		parts = append(parts, m.Content)
	}
	for _, s := range m.Sections {
		if !s.Removed && s.Text != "" {
			parts = append(parts, s.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// systemChars is [EstimateChars] of a system message, as pi counts it: the
// content, every section's text, and the length of the ToolsAdded list as
// JSON.stringify prints it.
func systemChars(m *SystemMessage) int {
	n := 0
	if m.fromBlocks && m.blocks == m.Content {
		n = m.blockChars
	} else {
		n = utf16Len(m.Content)
	}
	for _, s := range m.Sections {
		if !s.Removed {
			n += utf16Len(s.Text)
		}
	}
	if m.ToolsAdded != nil {
		n += 2 + max(0, len(m.ToolsAdded)-1) // [ ] and the commas
		for i := range m.ToolsAdded {
			d := &m.ToolsAdded[i]
			if r := d.unchanged(); r != nil {
				n += r.units
			} else if v, err := d.stringified(); err == nil {
				n += llm.UTF16Len(string(v))
			} else {
				// Parameters that are not JSON (it cannot be written
				// either): count what it holds.
				n += utf16Len(d.Name) + utf16Len(d.Description) + len(d.Parameters)
			}
		}
	}
	return n
}

// ReplaySystem returns the system state in force after the system
// messages among msgs, in order (pi's getCurrentSystemMessage): the
// contents that are not empty joined by a blank line; the sections
// patched by name (a removed one deleted, a new one added last); the tools
// after each message's removals and then its declarations (a declaration
// replaces one of the same name in its place); the first message's
// timestamp. It returns nil when msgs has no system message.
func ReplaySystem(msgs []Message) *SystemMessage {
	var (
		contents []string
		sections []SystemSection
		tools    []ToolDeclaration
		ts       int64
		stamped  bool
		any      bool
	)
	for _, msg := range msgs {
		m, ok := msg.(*SystemMessage)
		if !ok {
			continue
		}
		any = true
		if !stamped && !m.noTimestamp {
			ts, stamped = m.Timestamp, true
		}
		if m.Content != "" {
			contents = append(contents, m.Content)
		}
		for _, s := range m.Sections {
			i := slices.IndexFunc(sections, func(x SystemSection) bool { return x.Name == s.Name })
			switch {
			case s.Removed && i >= 0:
				sections = slices.Delete(sections, i, i+1)
			case s.Removed:
			case i >= 0:
				sections[i].Text = s.Text
			default:
				sections = append(sections, SystemSection{Name: s.Name, Text: s.Text})
			}
		}
		tools = applyTools(tools, m)
	}
	// pi makes no message of system messages that have neither a
	// timestamp nor tools.
	if !any || !stamped && len(tools) == 0 {
		return nil
	}
	out := &SystemMessage{Content: strings.Join(contents, "\n\n"), Timestamp: ts}
	if len(sections) > 0 {
		out.Sections = jsOrder(sections)
	}
	if len(tools) > 0 {
		out.ToolsAdded = tools
	}
	return out
}

// applyTools applies a system message's tool changes to tools: removals,
// then declarations.
func applyTools(tools []ToolDeclaration, m *SystemMessage) []ToolDeclaration {
	for _, name := range m.ToolsRemoved {
		tools = slices.DeleteFunc(tools, func(d ToolDeclaration) bool { return d.Name == name })
	}
	for _, d := range m.ToolsAdded {
		if i := slices.IndexFunc(tools, func(x ToolDeclaration) bool { return x.Name == d.Name }); i >= 0 {
			tools[i] = d
		} else {
			tools = append(tools, d)
		}
	}
	return tools
}

// System returns the system state in force at the end of the context
// ([ReplaySystem] of its messages), or nil when it has no system message.
func (c Context) System() *SystemMessage { return ReplaySystem(c.Messages) }

// Tools returns the tools declared in force at the end of the context, in
// declaration order (pi's getCurrentTools), for a provider request.
func (c Context) Tools() []llm.Tool {
	var tools []ToolDeclaration
	for _, msg := range c.Messages {
		if m, ok := msg.(*SystemMessage); ok {
			tools = applyTools(tools, m)
		}
	}
	out := make([]llm.Tool, len(tools))
	for i, d := range tools {
		out[i] = d.LLM()
	}
	return out
}
