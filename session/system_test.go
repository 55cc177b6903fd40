package session_test

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// decodeSystem decodes raw as a stored message that must be a system
// message.
func decodeSystem(t *testing.T, raw string) *session.SystemMessage {
	t.Helper()
	m, err := session.DecodeMessage([]byte(raw))
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	s, ok := m.(*session.SystemMessage)
	if !ok {
		t.Fatalf("%s: decoded as %T", raw, m)
	}
	return s
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const readTool = `{"name":"read","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}`

func TestSystemMessageDecode(t *testing.T) {
	m := decodeSystem(t, `{"role":"system","content":"","sections":{"preamble":"You are Prime.","tools":"- read","10":"ten","2":"two","tools":"- read, - bash","gone":null},`+
		`"timestamp":1764770400000,"toolsAdded":[`+readTool+`,{"description":"d","name":"x","parameters":{ "type" : "object" },"extra":[1]}],"toolsRemoved":[{"name":"bash"}],"unknown":true}`)
	wantSections := []session.SystemSection{{Name: "2", Text: "two"}, {Name: "10", Text: "ten"}, {Name: "preamble", Text: "You are Prime."},
		{Name: "tools", Text: "- read, - bash"}, {Name: "gone", Removed: true}}
	if diff := cmp.Diff(wantSections, m.Sections); diff != "" {
		t.Errorf("sections in JavaScript's order, last value of a repeated name (-want +got):\n%s", diff)
	}
	if m.Timestamp != 1764770400000 || len(m.ToolsAdded) != 2 || m.ToolsAdded[1].Name != "x" || m.ToolsAdded[1].Description != "d" ||
		string(m.ToolsAdded[1].Parameters) != `{"type":"object"}` || !slicesEqual(m.ToolsRemoved, []string{"bash"}) {
		t.Errorf("decoded %+v", m)
	}
	if got, want := m.Prompt(), "two\n\nten\n\nYou are Prime.\n\n- read, - bash"; got != want {
		t.Errorf("Prompt = %q, want %q", got, want)
	}
	// The declaration with members Prime does not know is written as read
	// (in JSON.stringify's form), and counts them.
	enc := marshal(t, m)
	if !strings.Contains(enc, `{"description":"d","name":"x","parameters":{"type":"object"},"extra":[1]}`) {
		t.Errorf("encoded %s", enc)
	}
	// pi: content 0 + sections 3+3+14+14 + JSON.stringify(toolsAdded).
	tools := `[` + readTool + `,{"description":"d","name":"x","parameters":{"type":"object"},"extra":[1]}]`
	if got, want := session.EstimateChars(m), 34+len(tools); got != want {
		t.Errorf("EstimateChars = %d, want %d", got, want)
	}

	// A changed declaration is written from its fields.
	c := *m
	c.ToolsAdded = append([]session.ToolDeclaration(nil), m.ToolsAdded...)
	c.ToolsAdded[1].Description = "changed"
	if enc := marshal(t, &c); !strings.Contains(enc, `{"name":"x","description":"changed","parameters":{"type":"object"}}`) {
		t.Errorf("changed declaration encoded %s", enc)
	}
}

func TestSystemMessageShapes(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		content   string
		chars     int
		untimed   bool
		tools     bool // ToolsAdded not nil
	}{
		{"null content", `{"role":"system","content":null,"timestamp":1}`, "", 0, false, false},
		{"no content", `{"role":"system","timestamp":1}`, "", 0, false, false},
		{"content blocks", `{"role":"system","content":[{"type":"text","text":"a"},{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"text","text":"bc"}],"timestamp":1}`,
			"a\nbc", 3 + session.ImageChars, false, false},
		{"empty tool list counts []", `{"role":"system","content":"x","toolsAdded":[],"timestamp":1}`, "x", 3, false, true},
		{"null lists", `{"role":"system","content":"x","sections":null,"toolsAdded":null,"toolsRemoved":null,"timestamp":null}`, "x", 1, true, false},
		{"no timestamp", `{"role":"system","content":"éé"}`, "éé", 2, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := decodeSystem(t, tc.raw)
			if m.Content != tc.content || session.EstimateChars(m) != tc.chars || (m.ToolsAdded != nil) != tc.tools {
				t.Errorf("content %q, %d chars, tools %v; want %q, %d, %v", m.Content, session.EstimateChars(m), m.ToolsAdded, tc.content, tc.chars, tc.tools)
			}
			if got := session.ReplaySystem([]session.Message{m}) == nil; got != (tc.untimed && !tc.tools) {
				t.Errorf("replay nil = %v", got)
			}
			// Encoded and decoded again, the message says the same, except
			// that blocks become their text.
			again := decodeSystem(t, marshal(t, m))
			if again.Content != m.Content || again.Prompt() != m.Prompt() {
				t.Errorf("round trip: %+v", again)
			}
			if strings.Contains(marshal(t, m), "timestamp") == tc.untimed {
				t.Errorf("timestamp written: %s", marshal(t, m))
			}
		})
	}
	// A changed content counts as the text it is.
	m := decodeSystem(t, `{"role":"system","content":[{"type":"image","data":"AA==","mimeType":"image/png"}],"timestamp":1}`)
	m.Content = "abcd"
	if got := session.EstimateTokens(m); got != 1 {
		t.Errorf("changed content: %d tokens", got)
	}
}

func TestSystemMessageBadInput(t *testing.T) {
	for _, raw := range []string{
		`{"role":"system","content":7}`,
		`{"role":"system","content":{}}`,
		`{"role":"system","sections":{"a":1}}`,
		`{"role":"system","sections":["a"]}`,
		`{"role":"system","toolsAdded":{}}`,
		`{"role":"system","toolsAdded":["read"]}`,
		`{"role":"system","toolsAdded":[{"name":3}]}`,
		`{"role":"system","toolsRemoved":["read"]}`,
		`{"role":"system","timestamp":{}}`,
	} {
		if m, err := session.DecodeMessage([]byte(raw)); err == nil {
			t.Errorf("%s: decoded %+v", raw, m)
		} else if !strings.Contains(err.Error(), "system message") {
			t.Errorf("%s: error %q does not name the role", raw, err)
		}
	}
	// A declaration whose parameters are not JSON cannot be written.
	m := &session.SystemMessage{ToolsAdded: []session.ToolDeclaration{{Name: "x", Parameters: jsontext.Value(`{nope`)}}}
	if _, err := json.Marshal(m); err == nil {
		t.Error("a declaration with broken parameters was encoded")
	}
}

// TestSystemMessageWritten: a message the agent makes is written in pi's
// form, its parameters in JSON.stringify's form (none: the empty object
// schema), and estimated as pi estimates what it reads back.
func TestSystemMessageWritten(t *testing.T) {
	m := &session.SystemMessage{
		Sections: []session.SystemSection{{Name: "preamble", Text: "You are Prime."}, {Name: "old", Removed: true}},
		ToolsAdded: []session.ToolDeclaration{
			{Name: "read", Description: "Read a file.", Parameters: jsontext.Value(`{ "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"] }`)},
			{Name: "now", Description: "The time.", ConstrainedSampling: jsontext.Value(`true`)},
		},
		ToolsRemoved: []string{"bash"},
		Timestamp:    1764770400000,
	}
	want := `{"role":"system","content":"","sections":{"preamble":"You are Prime.","old":null},"toolsAdded":[` + readTool +
		`,{"name":"now","description":"The time.","parameters":{"type":"object","properties":{}},"constrainedSampling":true}],"toolsRemoved":[{"name":"bash"}],"timestamp":1764770400000}`
	if got := marshal(t, m); got != want {
		t.Errorf("encoded\n%s\nwant\n%s", got, want)
	}
	start := strings.Index(want, `"toolsAdded":`) + len(`"toolsAdded":`)
	tools := want[start:strings.Index(want, `,"toolsRemoved"`)]
	if got, want := session.EstimateChars(m), len("You are Prime.")+len(tools); got != want {
		t.Errorf("EstimateChars = %d, want %d", got, want)
	}
	if got := session.EstimateChars(decodeSystem(t, marshal(t, m))); got != session.EstimateChars(m) {
		t.Errorf("read back: %d chars", got)
	}
	if tool := m.ToolsAdded[0].LLM(); tool.Name != "read" || tool.Description != "Read a file." || !strings.Contains(string(tool.Parameters), "path") {
		t.Errorf("LLM() = %+v", tool)
	}
}

func TestReplaySystem(t *testing.T) {
	decl := func(name, desc string) session.ToolDeclaration {
		return session.ToolDeclaration{Name: name, Description: desc, Parameters: jsontext.Value(`{"type":"object"}`)}
	}
	first := &session.SystemMessage{Sections: []session.SystemSection{{Name: "preamble", Text: "P"}, {Name: "tools", Text: "T"}, {Name: "cwd", Text: "/a"}},
		ToolsAdded: []session.ToolDeclaration{decl("read", "r"), decl("bash", "b"), decl("edit", "e")}, Timestamp: 10}
	patch := &session.SystemMessage{Content: "extra", Sections: []session.SystemSection{{Name: "tools", Removed: true}, {Name: "cwd", Text: "/b"}, {Name: "skills", Text: "S"}},
		ToolsAdded: []session.ToolDeclaration{decl("read", "r2"), decl("grep", "g")}, ToolsRemoved: []string{"bash", "read"}, Timestamp: 20}
	again := &session.SystemMessage{Sections: []session.SystemSection{{Name: "tools", Text: "T2"}}, Timestamp: 30}
	msgs := []session.Message{first, userMsg("q"), patch, userMsg("r"), again}
	got := session.ReplaySystem(msgs)
	if got == nil || got.Content != "extra" || got.Timestamp != 10 {
		t.Fatalf("replay = %+v", got)
	}
	if diff := cmp.Diff([]session.SystemSection{{Name: "preamble", Text: "P"}, {Name: "cwd", Text: "/b"}, {Name: "skills", Text: "S"}, {Name: "tools", Text: "T2"}}, got.Sections); diff != "" {
		t.Errorf("sections: a removed one comes back last (-want +got):\n%s", diff)
	}
	var names []string
	for _, d := range got.ToolsAdded {
		names = append(names, d.Name+":"+d.Description)
	}
	// read was removed and declared again in one message: removals first,
	// so it comes back, at the end.
	if want := []string{"edit:e", "read:r2", "grep:g"}; !slicesEqual(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	ctx := session.Context{Messages: msgs}
	var tools []string
	for _, tool := range ctx.Tools() {
		tools = append(tools, tool.Name)
	}
	if want := []string{"edit", "read", "grep"}; !slicesEqual(tools, want) || ctx.System().Prompt() != "extra\n\nP\n\n/b\n\nS\n\nT2" {
		t.Errorf("Context.Tools %v, System %q", tools, ctx.System().Prompt())
	}
	if session.ReplaySystem([]session.Message{userMsg("q")}) != nil || len((session.Context{}).Tools()) != 0 {
		t.Error("a replay without system messages")
	}
	// The system messages never reach a provider as messages.
	if got := session.ToLLM(msgs); len(got) != 2 {
		t.Errorf("ToLLM kept %d messages", len(got))
	}
	if _, ok := session.ToLLMMessage(first); ok {
		t.Error("ToLLMMessage passed a system message")
	}
}

func userMsg(text string) *llm.UserMessage {
	return &llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}}
}

func slicesEqual(a, b []string) bool {
	return cmp.Equal(a, b)
}
