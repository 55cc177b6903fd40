package agent_test

import (
	"testing"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// The tree names Prime's own custom entries by what they do.
func TestDescribeCustomEntries(t *testing.T) {
	for _, c := range []struct {
		p    *session.CustomEntry
		want string
	}{
		{compaction.PinEntry("keep the lexer small", ""), "[pin]: keep the lexer small"},
		{compaction.UnpinEntry("0a1b2c3d"), "[unpin]"},
		{&session.CustomEntry{CustomType: agent.CustomTypeUncompact, Data: []byte(`{"compactionId":"0a1b2c3d"}`)}, "[compaction undone]"},
		{&session.CustomEntry{CustomType: "ext.state", Data: []byte(`{}`)}, "[ext.state]"},
		{&session.CustomEntry{CustomType: compaction.CustomTypePin, Data: []byte(`{"text":"  "}`)}, "[prime.pin]"},
	} {
		e := entryOf(t, c.p)
		if got := agent.NewDescriber().Describe(e, false).Text; got != c.want {
			t.Errorf("%T: %q, want %q", c.p, got, c.want)
		}
	}
}

// TestToolTitle: one line saying what a call does, for the built-in tools;
// any other tool by its name and arguments.
func TestToolTitle(t *testing.T) {
	for _, c := range []struct {
		name, args, want string
	}{
		{"bash", `{"command":"go  test\n./..."}`, "$ go test ./..."},
		{"bash", `{"command":"sleep 9","timeout":5}`, "$ sleep 9 (timeout 5s)"},
		{"read", `{"path":"a.go","offset":10,"limit":20}`, "read a.go:10-29"},
		{"read", `{"path":"a.go","offset":10}`, "read a.go:10-"},
		{"read", `{"path":"a.go","limit":5}`, "read a.go:1-5"},
		{"edit", `{"path":"a.go"}`, "edit a.go"},
		{"grep", `{"pattern":"TODO","path":"src","glob":"*.go"}`, "grep /TODO/ in src (*.go)"},
		{"find", `{"pattern":"*.md"}`, "find *.md"},
		{"ls", `{}`, "ls ."},
		{"mcp_search", `{"q":"x"}`, `mcp_search {"q":"x"}`},
	} {
		args, err := llm.NewArguments([]byte(c.args))
		if err != nil {
			t.Fatal(err)
		}
		if got := agent.ToolTitle(c.name, args); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.name, c.args, got, c.want)
		}
	}
}

// TestDescribe: the wording of each kind of entry, a tool result named by
// the call before it.
func TestDescribe(t *testing.T) {
	args, _ := llm.NewArguments([]byte(`{"command":"make"}`))
	call := &llm.AssistantMessage{Content: []llm.Content{llm.ToolCall{ID: "t1", Name: "bash", Arguments: args}}, StopReason: llm.StopReasonToolUse}
	d := agent.NewDescriber()
	for _, c := range []struct {
		p    session.Payload
		leaf bool
		want string
	}{
		{&session.MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: "hi"}, llm.Image{MIMEType: "image/png", Data: "AA"}}}}, false, "user: hi\n[image]"},
		{&session.MessageEntry{Message: call}, false, "assistant: (tool calls)"},
		{&session.MessageEntry{Message: &llm.ToolResultMessage{ToolCallID: "t1", ToolName: "bash"}}, false, "[bash: make]"},
		{&session.MessageEntry{Message: &llm.ToolResultMessage{ToolCallID: "t9", ToolName: "read"}}, false, "[read]"},
		{&session.MessageEntry{Message: &llm.AssistantMessage{StopReason: llm.StopReasonError, ErrorMessage: "boom"}}, false, "assistant: (error: boom)"},
		{&session.MessageEntry{Message: &llm.AssistantMessage{StopReason: llm.StopReasonAborted}}, false, "assistant: (aborted)"},
		{&session.CompactionEntry{Summary: "s", TokensBefore: 12_345}, false, "[compaction: 12k tokens]"},
		{&session.BranchSummaryEntry{Summary: "gone"}, false, "[branch summary]: gone"},
		{&session.ModelChangeEntry{Provider: "p", ModelID: "m"}, false, "[model: m]"},
		{&session.ThinkingLevelChangeEntry{ThinkingLevel: llm.ThinkingHigh}, false, "[thinking: high]"},
		{&session.LabelEntry{TargetID: "1a2b3c4d", Label: "idea"}, false, "[label: idea]"},
		{&session.SessionInfoEntry{Name: "work"}, false, "[title: work]"},
		{&session.ContextEditEntry{TargetID: "1a2b3c4d"}, false, "[context omit: 1a2b3c4d]"},
	} {
		e := entryOf(t, c.p)
		if got := d.Describe(e, c.leaf).Text; got != c.want {
			t.Errorf("%T: %q, want %q", c.p, got, c.want)
		}
	}
	// A reply that only calls tools is hidden from a tree, unless it is
	// the leaf.
	e := entryOf(t, &session.MessageEntry{Message: call})
	if !d.Describe(e, false).ToolCallsOnly || d.Describe(e, true).ToolCallsOnly {
		t.Error("ToolCallsOnly does not follow the leaf")
	}
}

// entryOf is the entry holding p, as read from a file.
func entryOf(t *testing.T, p session.Payload) *session.Entry {
	t.Helper()
	line, err := session.EncodeEntry("1a2b3c4d", "", "2025-12-03T14:00:00.000Z", p)
	if err != nil {
		t.Fatal(err)
	}
	e, err := session.NewEntry(line)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
