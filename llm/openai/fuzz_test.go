package openai

import (
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/internal/streamtest"
)

// FuzzRead feeds arbitrary bytes as a Chat Completions stream (see
// streamtest.FuzzRead).
func FuzzRead(f *testing.F) {
	seeds := streamtest.Seeds(f, "testdata/*.sse")
	streamtest.FuzzRead(f, llm.Model{ID: "m", Provider: "openai", API: llm.APIOpenAICompletions}, read, seeds...)
}
