package gemini

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/internal/streamtest"
)

// FuzzRead feeds arbitrary bytes as a streamGenerateContent stream (see
// streamtest.FuzzRead).
func FuzzRead(f *testing.F) {
	seeds := streamtest.Seeds(f, "testdata/*.sse")
	streamtest.FuzzRead(f, llm.Model{ID: "m", Provider: "google", API: llm.APIGoogleGenerativeAI}, read, seeds...)
}

// FuzzParseError: any body reads without panicking into an error with
// non-negative sizes and valid UTF-8 (see streamtest.FuzzParseError).
func FuzzParseError(f *testing.F) {
	streamtest.FuzzParseError(f, "google", ParseError,
		`{"error":{"code":400,"message":"The input token count (1196265) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`,
		`[{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}]`,
	)
}

// FuzzSchema: any schema converts to a JSON object.
func FuzzSchema(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"const":"x"}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		out := Schema(jsontext.Value(raw))
		if !out.IsValid() || out.Kind() != '{' {
			t.Fatalf("Schema(%q) = %s", raw, out)
		}
	})
}

// BenchmarkRead parses a long answer: 10,000 text chunks into one message.
func BenchmarkRead(b *testing.B) {
	var in bytes.Buffer
	for range 10000 {
		in.WriteString("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"some words \"}],\"role\":\"model\"},\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":10,\"totalTokenCount\":10},\"modelVersion\":\"m\"}\r\n\r\n")
	}
	in.WriteString("data: {\"candidates\":[{\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":10,\"candidatesTokenCount\":20000,\"totalTokenCount\":20010}}\r\n\r\n")
	streamtest.BenchRead(b, llm.Model{ID: "m", Provider: "google", API: llm.APIGoogleGenerativeAI}, read, in.Bytes())
}
