// Package streamtest holds what the providers' own tests share: the fuzz
// target of a stream reader. It lives apart from llmtest because a
// provider's in-package tests cannot import llmtest (whose fake servers
// import the provider).
package streamtest

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/internal/stream"
)

// ReadFunc is a provider's stream reader, as the providers' fuzz targets
// drive it.
type ReadFunc func(ctx context.Context, b *stream.Builder, body io.Reader) error

// FuzzRead feeds arbitrary bytes to a provider's stream reader: it must
// not panic, must end with exactly one final event, and the message it
// ends with must encode as a message that decodes back.
func FuzzRead(f *testing.F, model llm.Model, read ReadFunc, seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		finals := 0
		var final llm.Event
		b := stream.New(model, time.UnixMilli(0), func(ev llm.Event) bool {
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

// Seeds reads the files matching pattern (a provider's recorded streams,
// "testdata/*.sse"), for a fuzz target's corpus.
func Seeds(tb testing.TB, pattern string) [][]byte {
	files, err := filepath.Glob(pattern)
	if err != nil {
		tb.Fatal(err)
	}
	var seeds [][]byte
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	return seeds
}

// BenchRead measures a provider's stream reader on one recorded body.
func BenchRead(b *testing.B, model llm.Model, read ReadFunc, body []byte) {
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		bl := stream.New(model, time.UnixMilli(0), func(llm.Event) bool { return true })
		if err := read(context.Background(), bl, bytes.NewReader(body)); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzParseError feeds arbitrary bytes to a provider's error-body parser:
// the error it classifies as must have non-negative sizes and valid UTF-8
// texts.
func FuzzParseError(f *testing.F, provider string, parse func(raw []byte) stream.ErrorReport, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		e := parse(raw).APIError(provider, 400, 0)
		if e.PromptTokens < 0 || e.ContextTokens < 0 {
			t.Fatalf("negative sizes %d/%d", e.PromptTokens, e.ContextTokens)
		}
		if !utf8.ValidString(e.Message) || !utf8.ValidString(e.Type) {
			t.Fatalf("invalid UTF-8 kept: %q %q", e.Type, e.Message)
		}
	})
}
