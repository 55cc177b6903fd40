package compaction

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

func TestThresholdAndMark(t *testing.T) {
	tests := []struct {
		name                string
		tokens, window      int
		s                   Settings
		percent             int
		threshold, mark     int
		compact, background bool
	}{
		{"below both", 50000, 100000, Settings{Enabled: true, ReserveTokens: 10000}, 80, 90000, 72000, false, false},
		{"past the mark", 80000, 100000, Settings{Enabled: true, ReserveTokens: 10000}, 80, 90000, 72000, false, true},
		{"at the threshold: not past it", 90000, 100000, Settings{Enabled: true, ReserveTokens: 10000}, 80, 90000, 72000, false, true},
		{"past the threshold", 90001, 100000, Settings{Enabled: true, ReserveTokens: 10000}, 80, 90000, 72000, true, true},
		{"disabled", 99000, 100000, Settings{ReserveTokens: 10000}, 80, 90000, 72000, false, true},
		{"no reserve", 100001, 100000, Settings{Enabled: true}, 50, 100000, 50000, true, true},
		{"reserve over the window", 1, 1000, Settings{Enabled: true, ReserveTokens: 2000}, 80, -1000, -800, true, true},
		{"mark at the threshold", 95000, 100000, Settings{Enabled: true, ReserveTokens: 10000}, 100, 90000, 90000, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Threshold(tt.window, tt.s); got != tt.threshold {
				t.Errorf("Threshold = %d, want %d", got, tt.threshold)
			}
			if got := ShouldCompact(tt.tokens, tt.window, tt.s); got != tt.compact {
				t.Errorf("ShouldCompact = %v, want %v", got, tt.compact)
			}
			mark := BackgroundMark(tt.window, tt.percent, tt.s)
			if mark != tt.mark {
				t.Errorf("BackgroundMark = %d, want %d", mark, tt.mark)
			}
			if got := tt.tokens > mark; got != tt.background {
				t.Errorf("past the mark = %v, want %v", got, tt.background)
			}
		})
	}
}

func TestReceiptOf(t *testing.T) {
	prep := &Preparation{MessagesToSummarize: msgs(3), TurnPrefixMessages: msgs(2)}
	model := &Result{TokensBefore: 9000}
	code := &Result{TokensBefore: 9000, Deterministic: true}
	tests := []struct {
		name string
		out  *Result
		took time.Duration
		bg   *BackgroundUse
		want Receipt
	}{
		{"model", model, 1500 * time.Millisecond, nil,
			Receipt{Reason: "threshold", Model: "p/m", TokensBefore: 9000, TokensAfter: 2000, Messages: 5, DurationMs: 1500}},
		{"code: no model named", code, 20 * time.Millisecond, nil,
			Receipt{Reason: "threshold", TokensBefore: 9000, TokensAfter: 2000, Messages: 5, DurationMs: 20}},
		{"background as it was", model, time.Millisecond, &BackgroundUse{PlannedAt: "a7", Took: 4 * time.Second, Waited: 3 * time.Millisecond, Messages: 4},
			Receipt{Reason: "threshold", Model: "p/m", TokensBefore: 9000, TokensAfter: 2000, Messages: 5, DurationMs: 4000, Background: true, WaitMs: 3, PlannedAt: "a7"}},
		{"background updated: both requests, both spans", model, 700 * time.Millisecond, &BackgroundUse{PlannedAt: "a7", Updated: true, Took: 4 * time.Second, Waited: 800 * time.Millisecond, Messages: 4},
			Receipt{Reason: "threshold", Model: "p/m", TokensBefore: 9000, TokensAfter: 2000, Messages: 9, DurationMs: 4700, Background: true, Updated: true, WaitMs: 800, PlannedAt: "a7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ReceiptOf("threshold", prep, tt.out, "p/m", tt.took, 2000, tt.bg)
			if *got != tt.want {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

func TestWithReceipt(t *testing.T) {
	r := &Receipt{Reason: "manual", TokensBefore: 10, TokensAfter: 4, Messages: 2}
	tests := []struct {
		name    string
		details string
		ok      bool
	}{
		{"Prime's details", `{"readFiles":["a"],"modifiedFiles":[]}`, true},
		{"none", ``, false},
		{"not an object", `[1]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := jsontext.Value(tt.details)
			got, ok := WithReceipt(in, r)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				if string(got) != tt.details {
					t.Errorf("details changed: %s", got)
				}
				return
			}
			d, parsed := ParseDetails(got)
			if !parsed || d.Receipt == nil || *d.Receipt != *r || strings.Join(d.ReadFiles, ",") != "a" {
				t.Errorf("got %s", got)
			}
		})
	}
}

// msgs makes n user messages.
func msgs(n int) []session.Message {
	out := make([]session.Message, n)
	for i := range out {
		out[i] = &llm.UserMessage{Content: []llm.Content{llm.Text{Text: "m"}}}
	}
	return out
}

// stored writes path to a session file and reads it back, so that its
// entries carry their line numbers as a session's do.
func stored(t *testing.T, path []*session.Entry) []*session.Entry {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"threshold","timestamp":"2025-12-03T14:00:00.000Z","cwd":"/tmp/project"}` + "\n")
	for _, e := range path {
		line, err := e.Raw()
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	file := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.LeafPath()
}

func TestThresholdTokens(t *testing.T) {
	failed := func(b *builder) {
		b.add("af", &session.MessageEntry{Message: &llm.AssistantMessage{StopReason: llm.StopReasonError, ErrorMessage: "overloaded", Timestamp: b.ms()}})
	}
	unmeasured := func(b *builder) {
		b.add("au", &session.MessageEntry{Message: &llm.AssistantMessage{Content: []llm.Content{llm.Text{Text: "hi"}}, StopReason: llm.StopReasonStop, Timestamp: b.ms()}})
	}
	tests := []struct {
		name      string
		spec      string
		last      func(*builder) // appends the last reply; nil: the spec's last entry is it
		projected bool
		want      func(c session.Context) int
		ok        bool
	}{
		{"a measured reply: its usage", "u1:400 a1@5000/200", nil, false,
			func(session.Context) int { return 5200 }, true},
		{"projected: the estimate for the next request", "u1:400 a1@5000/200 u2:4000", nil, true,
			func(c session.Context) int { return c.EstimateNext().Tokens }, true},
		{"a failed reply: the last usage and what follows", "u1:400 a1@5000/200 u2:400", failed, false,
			func(c session.Context) int { return session.EstimateContextTokens(c.Messages).Tokens }, true},
		{"an unmeasured reply: the same", "u1:400 a1@5000/200 u2:400", unmeasured, false,
			func(c session.Context) int { return session.EstimateContextTokens(c.Messages).Tokens }, true},
		{"no usage at all: no check", "u1:400", failed, false, nil, false},
		{"the only usage is from before the compaction: no check", "u1:400 a1@5000/200 u2:400 a2@6000/100 C1(keep u2) u3:400", failed, false, nil, false},
		{"a usage after the compaction counts", "u1:400 a1@5000/200 C1(keep u1) u2:400 a2@3000/100 u3:100", failed, false,
			func(c session.Context) int { return session.EstimateContextTokens(c.Messages).Tokens }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder(t).parse(tt.spec)
			if tt.last != nil {
				tt.last(b)
			}
			path := stored(t, b.path)
			c, err := session.BuildContext(path)
			if err != nil {
				t.Fatal(err)
			}
			m, err := path[len(path)-1].Message()
			if err != nil {
				t.Fatal(err)
			}
			reply, isReply := m.(*llm.AssistantMessage)
			if !isReply {
				reply = &llm.AssistantMessage{Usage: llm.Usage{Input: 5000, Output: 200, TotalTokens: 5200}, StopReason: llm.StopReasonStop}
			}
			got, ok := ThresholdTokens(c, reply, tt.projected)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v (tokens %d)", ok, tt.ok, got)
			}
			if ok && got != tt.want(c) {
				t.Errorf("tokens = %d, want %d", got, tt.want(c))
			}
		})
	}
}
