// Package providertest holds what the provider packages' external tests
// share: replaying recorded transcripts and checking golden request
// bodies. It is apart from llmtest, which other packages' tests import,
// because it brings in the golden-file flag.
package providertest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
)

// Transcripts replays each recorded stream testdata/NAME.sse (a vendor's
// stream as its API reference documents it) from a fresh server and
// compares the message it ends as, indented, and its error, with
// testdata/NAME.golden; the stored form must decode back to the same
// bytes. Without names, every testdata/*.sse is replayed.
func Transcripts(t *testing.T, newServer func(*testing.T) *llmtest.Server, request func(*llmtest.Server) *llm.Request, names ...string) {
	t.Helper()
	if len(names) == 0 {
		files, _ := filepath.Glob("testdata/*.sse")
		for _, f := range files {
			names = append(names, strings.TrimSuffix(filepath.Base(f), ".sse"))
		}
	}
	if len(names) == 0 {
		t.Fatal("no transcripts")
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", name+".sse"))
			if err != nil {
				t.Fatal(err)
			}
			srv := newServer(t)
			srv.Queue(llmtest.Reply{Raw: string(raw)})
			msg, err := llm.Complete(t.Context(), srv.Provider(), request(srv))
			if msg == nil {
				t.Fatalf("no message: %v", err)
			}
			out := Indent(t, msg)
			if err != nil {
				out = fmt.Appendf(out, "error: %v\n", err)
			}
			golden.Check(t, name+".golden", out)
			stored, _ := json.Marshal(msg)
			back, err := llm.DecodeMessage(stored)
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := json.Marshal(back); !bytes.Equal(stored, again) {
				t.Errorf("stored message does not round-trip:\n%s\n%s", stored, again)
			}
		})
	}
}

// Indent is v as indented JSON with a final newline, the form of golden
// files.
func Indent(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	if err := (*jsontext.Value)(&b).Indent(); err != nil {
		tb.Fatal(err)
	}
	return append(b, '\n')
}

// CheckBody compares a request's body, indented, with testdata/NAME (a
// golden request; go test -update rewrites it).
func CheckBody(tb testing.TB, r *llmtest.Request, name string) {
	tb.Helper()
	body := jsontext.Value(bytes.Clone(r.Body))
	if err := body.Indent(); err != nil {
		tb.Fatal(err)
	}
	golden.Check(tb, name, append(body, '\n'))
}

// Now is the clock of the providers' tests: a fixed instant, so the
// messages a fake server's replies end as compare with golden files.
func Now() time.Time { return time.UnixMilli(1767225600000) }

// Fixed sets srv's clock to [Now] and returns it.
func Fixed(srv *llmtest.Server) *llmtest.Server {
	srv.SetNow(Now)
	return srv
}

// User is a user message of text, sent at ts.
func User(text string, ts int64) *llm.UserMessage {
	return &llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}, Timestamp: ts}
}

// Request is a request to srv's model with a test's system prompt and the
// reasoning level: msgs, or without them one user message of text.
func Request(srv *llmtest.Server, reasoning llm.ThinkingLevel, text string, msgs ...llm.Message) *llm.Request {
	if len(msgs) == 0 {
		msgs = []llm.Message{User(text, 1)}
	}
	return &llm.Request{Model: srv.Model(), SystemPrompt: "You are a test.", Messages: msgs, Reasoning: reasoning}
}
