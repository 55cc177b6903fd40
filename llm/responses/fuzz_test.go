package responses

import (
	"bytes"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/internal/streamtest"
)

// FuzzRead feeds arbitrary bytes as a Responses stream (see
// streamtest.FuzzRead).
func FuzzRead(f *testing.F) {
	seeds := streamtest.Seeds(f, "testdata/*.sse")
	seeds = append(seeds, []byte("data: {\"type\":\"response.output_item.done\",\"output_index\":3,\"item\":{\"type\":\"reasoning\",\"id\":\"x\"}}\n\n"))
	streamtest.FuzzRead(f, llm.Model{ID: "m", Provider: "openai", API: llm.APIOpenAIResponses}, read, seeds...)
}

// FuzzWithEncrypted: setting the encrypted content of any stored item
// gives valid JSON or the item unchanged.
func FuzzWithEncrypted(f *testing.F) {
	f.Add(`{"id":"rs_1","type":"reasoning","summary":[]}`, "ENC")
	f.Add(`{"encrypted_content":null}`, "x")
	f.Fuzz(func(t *testing.T, item, enc string) {
		got := withEncrypted(item, enc)
		if got != item && !jsonValid(got) {
			t.Fatalf("withEncrypted(%q, %q) = %q", item, enc, got)
		}
	})
}

// BenchmarkRead parses a long answer: 10,000 text deltas into one message.
func BenchmarkRead(b *testing.B) {
	var in bytes.Buffer
	in.WriteString("event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"content\":[]}}\n\n")
	for range 10000 {
		in.WriteString("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"some words \",\"sequence_number\":7}\n\n")
	}
	in.WriteString("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"status\":\"completed\",\"usage\":{\"input_tokens\":10,\"output_tokens\":20000,\"total_tokens\":20010}}}\n\n")
	streamtest.BenchRead(b, llm.Model{ID: "m", Provider: "p", API: llm.APIOpenAIResponses}, read, in.Bytes())
}
