package openai

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/internal/stream"
)

// FuzzRead feeds arbitrary bytes as a Chat Completions stream: the reader
// must not panic, must end with exactly one final event, and the message
// must encode and decode back.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.sse")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		finals := 0
		var final llm.Event
		b := stream.New(llm.Model{ID: "m", Provider: "openai", API: llm.APIOpenAICompletions}, time.UnixMilli(0), func(ev llm.Event) bool {
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
