package llm

import (
	"testing"

	"github.com/go-json-experiment/json"
)

func TestPrepareMessages(t *testing.T) {
	call := func(id string) ToolCall { return ToolCall{ID: id, Name: "bash"} }
	user := &UserMessage{Content: []Content{Text{Text: "go"}}, Timestamp: 1}
	a1 := &AssistantMessage{StopReason: StopReasonToolUse, Content: []Content{call("c1"), call("c2")}, Timestamp: 2}
	r1 := &ToolResultMessage{ToolCallID: "c1", ToolName: "bash", Timestamp: 3}
	failed := &AssistantMessage{StopReason: StopReasonError, ErrorMessage: "prompt is too long", Content: []Content{call("c3")}, Timestamp: 4}
	orphan := &ToolResultMessage{ToolCallID: "c3", ToolName: "bash", Timestamp: 5}
	dup := &ToolResultMessage{ToolCallID: "c1", ToolName: "bash", Timestamp: 6}
	user2 := &UserMessage{Content: []Content{Text{Text: "again"}}, Timestamp: 7}
	a2 := &AssistantMessage{StopReason: StopReasonToolUse, Content: []Content{call("c4")}, Timestamp: 8}

	got := PrepareMessages([]Message{user, a1, r1, failed, orphan, dup, user2, a2})
	var roles []string
	for _, m := range got {
		b, _ := json.Marshal(m)
		roles = append(roles, string(b))
	}
	want := []string{
		`{"role":"user","content":[{"type":"text","text":"go"}],"timestamp":1}`,
		`{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{}},{"type":"toolCall","id":"c2","name":"bash","arguments":{}}],"api":"","provider":"","model":"","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2}`,
		`{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[],"isError":false,"timestamp":3}`,
		`{"role":"toolResult","toolCallId":"c2","toolName":"bash","content":[{"type":"text","text":"No result provided"}],"isError":true,"timestamp":4}`,
		`{"role":"user","content":[{"type":"text","text":"again"}],"timestamp":7}`,
		`{"role":"assistant","content":[{"type":"toolCall","id":"c4","name":"bash","arguments":{}}],"api":"","provider":"","model":"","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":8}`,
		`{"role":"toolResult","toolCallId":"c4","toolName":"bash","content":[{"type":"text","text":"No result provided"}],"isError":true,"timestamp":0}`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d messages:\n%v", len(got), roles)
	}
	for i := range want {
		if roles[i] != want[i] {
			t.Errorf("message %d:\n got %s\nwant %s", i, roles[i], want[i])
		}
	}
}
