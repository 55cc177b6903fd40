package llmtest_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/pifixtures"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
)

func ask(text string) []llm.Message {
	return []llm.Message{&llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}, Timestamp: 1}}
}

// TestFinishedStreamIsPisMessage replays real assistant messages from pi's
// session files through the fake Anthropic server and the provider: the
// finished stream must encode to the very message pi stored (pi's old files
// lack totalTokens, which is filled in on the pi side before comparing).
func TestFinishedStreamIsPisMessage(t *testing.T) {
	f, err := os.Open(pifixtures.Path(t, pifixtures.LargeSession))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	srv := llmtest.NewAnthropic(t)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	replayed := 0
	for sc.Scan() && replayed < 60 {
		var e struct {
			Type    string         `json:"type"`
			Message jsontext.Value `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Type != "message" {
			continue
		}
		m, err := llm.DecodeMessage(e.Message)
		if err != nil {
			continue
		}
		want, ok := m.(*llm.AssistantMessage)
		if !ok || want.API != llm.APIAnthropicMessages || (want.StopReason != llm.StopReasonStop && want.StopReason != llm.StopReasonToolUse) {
			continue
		}
		parts, ok := partsOf(want)
		if !ok {
			continue
		}
		srv.SetNow(func() time.Time { return time.UnixMilli(want.Timestamp) })
		srv.Reply(parts...)
		model := srv.Model()
		model.ID, model.Provider = want.Model, want.Provider
		got, err := llm.Complete(t.Context(), srv.Provider(), &llm.Request{Model: model, Messages: ask("go")})
		if err != nil {
			t.Fatal(err)
		}
		got.ResponseID = "" // pi 0.x stored none
		u := &want.Usage
		u.TotalTokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if !bytes.Equal(gb, wb) {
			t.Fatalf("stream of message at %d differs:\n got %s\nwant %s", want.Timestamp, gb, wb)
		}
		replayed++
	}
	if replayed < 20 {
		t.Fatalf("only %d messages replayed", replayed)
	}
}

// partsOf scripts a stored message; false when it holds blocks a stream
// cannot produce (empty ones).
func partsOf(m *llm.AssistantMessage) ([]llmtest.Part, bool) {
	var parts []llmtest.Part
	for _, c := range m.Content {
		switch c := c.(type) {
		case llm.Text:
			if c.Text == "" || c.Signature != "" {
				return nil, false
			}
			parts = append(parts, llmtest.Text(c.Text))
		case llm.Thinking:
			if c.Thinking == "" || c.Redacted {
				return nil, false
			}
			parts = append(parts, llmtest.Thinking(c.Thinking, c.Signature))
		case llm.ToolCall:
			parts = append(parts, llmtest.ToolCall(c.ID, c.Name, c.Arguments.String()))
		default:
			return nil, false
		}
	}
	u := m.Usage
	return append(parts, llmtest.CacheUsage(u.Input, u.Output, u.CacheRead, u.CacheWrite), llmtest.Stop(m.StopReason)), true
}

// TestHandler answers according to the request, as a compaction test does.
func TestHandler(t *testing.T) {
	for _, srv := range []*llmtest.Server{llmtest.NewAnthropic(t), llmtest.NewOpenAI(t)} {
		t.Run(srv.API(), func(t *testing.T) {
			srv.Handle(func(r *llmtest.Request) llmtest.Reply {
				switch {
				case strings.Contains(r.Text(), "too big"):
					return llmtest.Overflow()
				case r.MaxTokens() < 100:
					return llmtest.Stream(llmtest.Text("## Goal\ncut"), llmtest.MaxTokens())
				default:
					return llmtest.Stream(llmtest.Text("summary of: " + r.LastUserText()))
				}
			})
			model := srv.Model()
			req := &llm.Request{Model: model, SystemPrompt: "Summarize.", Messages: ask("the session")}
			msg, err := llm.Complete(t.Context(), srv.Provider(), req)
			if err != nil || msg.Text() != "summary of: the session" {
				t.Fatalf("%q, %v", msg.Text(), err)
			}
			req.Messages = ask("this is too big")
			if _, err := llm.Complete(t.Context(), srv.Provider(), req); !errors.Is(err, llm.ErrContextOverflow) {
				t.Errorf("err = %v", err)
			}
			req.Messages, req.MaxTokens = ask("short"), 50
			msg, err = llm.Complete(t.Context(), srv.Provider(), req)
			if err != nil || msg.StopReason != llm.StopReasonLength {
				t.Errorf("stop %q, err %v", msg.StopReason, err)
			}
			reqs := srv.Requests()
			if len(reqs) != 3 || reqs[0].System() != "Summarize." || reqs[2].MaxTokens() != 50 || reqs[0].Model() != model.ID {
				t.Errorf("recorded %d requests; system %q", len(reqs), reqs[0].System())
			}
		})
	}
}

func TestQueueOrderAndUnscripted(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.Reply(llmtest.Text("one"))
	srv.Queue(llmtest.HTTPError(http.StatusTooManyRequests, "", "slow down"))
	srv.Reply(llmtest.Text("three"))
	want := []string{"one", "", "three"}
	for i, w := range want {
		msg, _ := llm.Complete(t.Context(), srv.Provider(), &llm.Request{Model: srv.Model(), Messages: ask("q")})
		if msg.Text() != w {
			t.Errorf("reply %d: %q, want %q", i, msg.Text(), w)
		}
	}
	if srv.Pending() != 0 {
		t.Errorf("%d pending", srv.Pending())
	}
}

// recordingTB keeps the errors reported to it instead of failing.
type recordingTB struct {
	testing.TB
	errors []string
}

func (r *recordingTB) Errorf(format string, args ...any) { r.errors = append(r.errors, format) }

func TestUnscriptedRequestFailsTheTest(t *testing.T) {
	rec := &recordingTB{TB: t}
	srv := llmtest.NewOpenAI(rec)
	_, err := llm.Complete(t.Context(), srv.Provider(), &llm.Request{Model: srv.Model(), Messages: ask("q")})
	if err == nil || len(rec.errors) != 1 {
		t.Errorf("err %v, reported %q", err, rec.errors)
	}
}

func TestScriptFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "script.json")
	os.WriteFile(path, []byte(`{"replies": [
		{"parts": [{"thinking": "hm", "signature": "s1"}, {"text": "Hello"}, {"usage": {"input": 10, "output": 2}}]},
		{"parts": [{"toolCall": {"id": "t1", "name": "bash", "arguments": {"command": "ls"}}}]},
		{"status": 429, "errorMessage": "slow down", "retryAfter": 2},
		{"overflow": true}
	], "loop": true}`), 0o600)
	sc, err := llmtest.ReadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewAnthropic(t)
	srv.Play(sc)
	var got []string
	for range 5 {
		msg, err := llm.Complete(t.Context(), srv.Provider(), &llm.Request{Model: srv.Model(), Messages: ask("q")})
		s := string(msg.StopReason) + ":" + msg.Text()
		if calls := msg.ToolCalls(); len(calls) > 0 {
			s += calls[0].Name + calls[0].Arguments.String()
		}
		if err != nil {
			s += " " + llm.RetryAfterOf(err).String()
			if errors.Is(err, llm.ErrContextOverflow) {
				s += " overflow"
			}
		}
		got = append(got, s)
	}
	want := []string{"stop:Hello", `toolUse:bash{"command":"ls"}`, "error: 2s", "error: 0s overflow", "stop:Hello"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got  %q\nwant %q", got, want)
	}

	os.WriteFile(path, []byte("{\"replies\": [\n  {\"parts\": [{\"txt\": \"typo\"}]}\n]}"), 0o600)
	if _, err := llmtest.ReadScript(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("err = %v", err)
	}
}

func TestSlowStream(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.Queue(llmtest.Reply{Parts: []llmtest.Part{llmtest.Text("a b c d e f g h i j k l m n o p")}, Delay: 5 * time.Millisecond})
	var deltas int
	for ev := range srv.Provider().Stream(t.Context(), &llm.Request{Model: srv.Model(), Messages: ask("q")}) {
		if ev.Type == llm.EventTextDelta {
			deltas++
		}
	}
	if deltas < 2 {
		t.Errorf("%d deltas: not streamed in pieces", deltas)
	}
}

// TestScripted: summary requests go to their handler wherever they come;
// the conversation's requests get the replies in order, then the fallback.
func TestScripted(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	summary := func(*llmtest.Request) llmtest.Reply { return llmtest.Stream(llmtest.Text("a summary")) }
	then := func(*llmtest.Request) llmtest.Reply { return llmtest.Stream(llmtest.Text("afterwards")) }
	srv.Handle(llmtest.Scripted(summary, then, llmtest.Stream(llmtest.Text("first")), llmtest.Stream(llmtest.Text("second"))))
	var got []string
	for _, text := range []string{"hi", "<conversation>\n[User]: hi\n</conversation>\n\nSummarize.", "again", "more"} {
		m, err := llm.Complete(context.Background(), srv.Provider(), &llm.Request{Model: srv.Model(), Messages: ask(text)})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m.Text())
	}
	if strings.Join(got, "|") != "first|a summary|second|afterwards" {
		t.Errorf("answers %v", got)
	}
}
