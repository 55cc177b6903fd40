package anthropic

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/internal/stream"
)

// FuzzRead feeds arbitrary bytes as a Messages API stream: the reader must
// not panic, must end with exactly one final event, and a successful turn
// must encode as a message that decodes back.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"thinking_tool_use", "error_mid_stream", "max_tokens"} {
		if b, err := os.ReadFile("testdata/" + name + ".sse"); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":9,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		finals := 0
		var final llm.Event
		b := stream.New(llm.Model{ID: "m", Provider: "anthropic", API: llm.APIAnthropicMessages}, time.UnixMilli(0), func(ev llm.Event) bool {
			if ev.Type == llm.EventDone || ev.Type == llm.EventError {
				finals++
				final = ev
			}
			return true
		})
		ctx := context.Background()
		if err := read(ctx, b, bytes.NewReader(body)); err != nil {
			b.Fail(ctx, err)
		}
		if finals != 1 {
			t.Fatalf("%d final events", finals)
		}
		enc, err := json.Marshal(final.Message)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := llm.DecodeMessage(enc); err != nil {
			t.Fatalf("stored message does not decode: %v\n%s", err, enc)
		}
	})
}

// BenchmarkRead parses a long answer: 10,000 text deltas into one message.
func BenchmarkRead(b *testing.B) {
	var in bytes.Buffer
	in.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n")
	in.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for range 10000 {
		in.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"some words \"}}\n\n")
	}
	in.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	in.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":20000}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	data := in.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		bl := stream.New(llm.Model{ID: "m", Provider: "anthropic"}, time.UnixMilli(0), func(llm.Event) bool { return true })
		if err := read(context.Background(), bl, bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
