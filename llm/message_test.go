package llm

import (
	"bufio"
	"bytes"
	"os"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/pifixtures"
)

// TestPiMessagesRoundTrip decodes every message in pi's own session files and
// encodes it again: the bytes must be the ones pi wrote. (Old pi versions
// wrote no usage.totalTokens and kept a streaming leftover, partialJson, on
// some tool calls, and empty thinking signatures; Prime writes none of these,
// so those messages are skipped.)
func TestPiMessagesRoundTrip(t *testing.T) {
	for _, name := range []string{pifixtures.LargeSession, pifixtures.BeforeCompaction} {
		f, err := os.Open(pifixtures.Path(t, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		n := 0
		for sc.Scan() {
			var e struct {
				Type    string         `json:"type"`
				Message jsontext.Value `json:"message"`
			}
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatal(err)
			}
			if e.Type != "message" {
				continue
			}
			role, _ := PeekRole(e.Message)
			if role != RoleUser && role != RoleAssistant && role != RoleToolResult {
				continue
			}
			m, err := DecodeMessage(e.Message)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, e.Message) && !bytes.Contains(e.Message, []byte("partialJson")) &&
				!bytes.Contains(e.Message, []byte(`"thinkingSignature":""`)) &&
				(role != RoleAssistant || bytes.Contains(e.Message, []byte(`"totalTokens"`))) {
				i := 0
				for i < len(got) && i < len(e.Message) && got[i] == e.Message[i] {
					i++
				}
				lo := max(0, i-80)
				t.Errorf("%s: round trip differs at %d:\n got %.200s\nwant %.200s", name, i, got[lo:], e.Message[lo:])
				if n++; n > 3 {
					t.FailNow()
				}
			}
		}
	}
}

// TestRecordedDurations checks the members pi 1.6 adds to finished turns and
// tool results (durationMs, thinkingLevel): written in pi's place, read back.
func TestRecordedDurations(t *testing.T) {
	for _, tc := range []struct {
		msg  Message
		want string
	}{
		{&AssistantMessage{Content: []Content{}, StopReason: StopReasonStop, Timestamp: 5, DurationMs: 1200, ThinkingLevel: ThinkingOff},
			`{"role":"assistant","content":[],"api":"","provider":"","model":"","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":5,"durationMs":1200,"thinkingLevel":"off"}`},
		{&ToolResultMessage{ToolCallID: "c", ToolName: "bash", Content: []Content{Text{Text: "ok"}}, DurationMs: 40, Timestamp: 6},
			`{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text","text":"ok"}],"isError":false,"durationMs":40,"timestamp":6}`},
	} {
		got, err := json.Marshal(tc.msg)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
		back, err := DecodeMessage(got)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := json.Marshal(back)
		if string(again) != tc.want {
			t.Errorf("read back as %s", again)
		}
	}
}
