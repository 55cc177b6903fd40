package anthropic

import (
	"bytes"
	"os"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/internal/streamtest"
)

// FuzzRead feeds arbitrary bytes as a Messages API stream (see
// streamtest.FuzzRead).
func FuzzRead(f *testing.F) {
	var seeds [][]byte
	for _, name := range []string{"thinking_tool_use", "error_mid_stream", "max_tokens"} {
		if b, err := os.ReadFile("testdata/" + name + ".sse"); err == nil {
			seeds = append(seeds, b)
		}
	}
	seeds = append(seeds, []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":9,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n"))
	streamtest.FuzzRead(f, llm.Model{ID: "m", Provider: "anthropic", API: llm.APIAnthropicMessages}, read, seeds...)
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
	streamtest.BenchRead(b, llm.Model{ID: "m", Provider: "anthropic"}, read, in.Bytes())
}
