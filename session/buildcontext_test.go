package session_test

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/google/go-cmp/cmp"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// Scenarios 73–87 of pi-reference §9.12 (build-context.test.ts).
func TestBuildContextScenarios(t *testing.T) {
	compaction := func(summary, firstKept string) *session.CompactionEntry {
		return &session.CompactionEntry{Summary: summary, FirstKeptEntryID: firstKept, TokensBefore: 1000}
	}
	tests := []struct {
		name     string
		ents     []ent
		leaf     string // "" = the last entry
		want     []string
		thinking llm.ThinkingLevel
		model    *session.ModelRef
	}{
		{name: "73 no entries", want: []string{}, thinking: "off"},
		{name: "74 single user", ents: chain(user("hello")), want: []string{"user:hello"}, thinking: "off"},
		{
			name: "75 user assistant alternation",
			ents: chain(user("q1"), assistant("a1"), user("q2"), assistant("a2")),
			want: []string{"user:q1", "assistant:a1", "user:q2", "assistant:a2"}, thinking: "off",
			model: &session.ModelRef{Provider: "anthropic", ModelID: "claude-sonnet-4-5"},
		},
		{
			name: "76 thinking change between messages",
			ents: chain(user("q1"), &session.ThinkingLevelChangeEntry{ThinkingLevel: "high"}, assistant("a1")),
			want: []string{"user:q1", "assistant:a1"}, thinking: "high",
			model: &session.ModelRef{Provider: "anthropic", ModelID: "claude-sonnet-4-5"},
		},
		{
			name: "77 model from the assistant message",
			ents: chain(user("q"), assistantOf("a", "openai", "gpt-4o")),
			want: []string{"user:q", "assistant:a"}, thinking: "off",
			model: &session.ModelRef{Provider: "openai", ModelID: "gpt-4o"},
		},
		{
			name: "78 assistant after model_change wins",
			ents: chain(&session.ModelChangeEntry{Provider: "openai", ModelID: "gpt-4o"}, user("q"), assistantOf("a", "anthropic", "claude-opus-4-5")),
			want: []string{"user:q", "assistant:a"}, thinking: "off",
			model: &session.ModelRef{Provider: "anthropic", ModelID: "claude-opus-4-5"},
		},
		{
			name: "79 compaction keeping from entry 3",
			ents: chain(user("first"), assistant("response1"), user("second"), assistant("response2"),
				compaction("summary", "test-id-3"), user("third"), assistant("response3")),
			want:     []string{"compactionSummary:summary", "user:second", "assistant:response2", "user:third", "assistant:response3"},
			thinking: "off", model: &session.ModelRef{Provider: "anthropic", ModelID: "claude-sonnet-4-5"},
		},
		{
			name: "80 compaction keeping from the first entry",
			ents: chain(user("first"), assistant("response1"), user("second"), compaction("summary", "test-id-1")),
			want: []string{"compactionSummary:summary", "user:first", "assistant:response1", "user:second"}, thinking: "off",
			model: &session.ModelRef{Provider: "anthropic", ModelID: "claude-sonnet-4-5"},
		},
		{
			name: "81 two compactions: the second wins",
			ents: chain(user("q1"), assistant("a1"), user("q2"), assistant("a2"), compaction("first summary", "test-id-3"),
				user("q3"), assistant("a3"), compaction("second summary", "test-id-4")),
			want:     []string{"compactionSummary:second summary", "assistant:a2", "user:q3", "assistant:a3"},
			thinking: "off", model: &session.ModelRef{Provider: "anthropic", ModelID: "claude-sonnet-4-5"},
		},
		{
			name: "82 sibling 3 under 2",
			ents: append(chain(user("q"), assistant("a")), ent{id: "test-id-3", parent: "test-id-2", p: user("left")},
				ent{id: "test-id-4", parent: "test-id-2", p: user("right")}),
			leaf: "test-id-3", want: []string{"user:q", "assistant:a", "user:left"}, thinking: "off",
			model: &session.ModelRef{Provider: "anthropic", ModelID: "claude-sonnet-4-5"},
		},
		{
			name: "82 sibling 4 under 2",
			ents: append(chain(user("q"), assistant("a")), ent{id: "test-id-3", parent: "test-id-2", p: user("left")},
				ent{id: "test-id-4", parent: "test-id-2", p: user("right")}),
			leaf: "test-id-4", want: []string{"user:q", "assistant:a", "user:right"}, thinking: "off",
			model: &session.ModelRef{Provider: "anthropic", ModelID: "claude-sonnet-4-5"},
		},
		{
			name: "83 branch summary on the path",
			ents: chain(user("start"), assistant("r1"), &session.BranchSummaryEntry{FromID: "test-id-9", Summary: "tried X"}, user("new direction")),
			want: []string{"user:start", "assistant:r1", "branchSummary:tried X", "user:new direction"}, thinking: "off",
			model: &session.ModelRef{Provider: "anthropic", ModelID: "claude-sonnet-4-5"},
		},
		{
			name: "84 compacted main path",
			ents: append(chain(user("start"), assistant("r1"), user("q2"), assistant("r2"), compaction("summary", "test-id-3"), user("q3"), assistant("r3")),
				ent{id: "side-1", parent: "test-id-3", p: &session.BranchSummaryEntry{FromID: "test-id-7", Summary: "summary"}},
				ent{id: "side-2", parent: "side-1", p: user("better approach")}),
			leaf: "test-id-7", want: []string{"compactionSummary:summary", "user:q2", "assistant:r2", "user:q3", "assistant:r3"}, thinking: "off",
			model: &session.ModelRef{Provider: "anthropic", ModelID: "claude-sonnet-4-5"},
		},
		{
			name: "84 branch-summary side path",
			ents: append(chain(user("start"), assistant("r1"), user("q2"), assistant("r2"), compaction("summary", "test-id-3"), user("q3"), assistant("r3")),
				ent{id: "side-1", parent: "test-id-3", p: &session.BranchSummaryEntry{FromID: "test-id-7", Summary: "summary"}},
				ent{id: "side-2", parent: "side-1", p: user("better approach")}),
			leaf: "side-2", want: []string{"user:start", "assistant:r1", "user:q2", "branchSummary:summary", "user:better approach"}, thinking: "off",
			model: &session.ModelRef{Provider: "anthropic", ModelID: "claude-sonnet-4-5"},
		},
		{
			name: "85 unknown leaf falls back to the last entry",
			ents: chain(user("q"), assistant("a")), leaf: "no-such-id",
			want: []string{"user:q", "assistant:a"}, thinking: "off",
			model: &session.ModelRef{Provider: "anthropic", ModelID: "claude-sonnet-4-5"},
		},
		{
			name: "86 entry whose parent is missing",
			ents: []ent{{id: "test-id-1", p: user("lost parent")}, {id: "test-id-2", parent: "gone", p: user("orphan")}},
			want: []string{"user:orphan"}, thinking: "off",
		},
		{
			name: "87 hidden custom_message reaches the context",
			ents: chain(user("q"), &session.CustomMessageEntry{CustomType: "reminder", Content: []llm.Content{llm.Text{Text: "note"}}, Display: false}),
			want: []string{"user:q", "custom:note"}, thinking: "off",
		},
		{
			name: "empty branch summary is invisible",
			ents: chain(user("q"), &session.BranchSummaryEntry{FromID: "x", Summary: ""}, user("after")),
			want: []string{"user:q", "user:after"}, thinking: "off",
		},
		{
			name: "firstKeptEntryId not on the path keeps nothing before the compaction",
			ents: chain(user("q1"), assistant("a1"), compaction("s", "elsewhere"), user("q2")),
			want: []string{"compactionSummary:s", "user:q2"}, thinking: "off",
			model: &session.ModelRef{Provider: "anthropic", ModelID: "claude-sonnet-4-5"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := parse(t, tt.ents...)
			ctx, err := s.Context(tt.leaf)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, texts(ctx.Messages)); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			if ctx.ThinkingLevel != tt.thinking {
				t.Errorf("thinking = %q, want %q", ctx.ThinkingLevel, tt.thinking)
			}
			if diff := cmp.Diff(tt.model, ctx.Model); diff != "" {
				t.Errorf("model (-want +got):\n%s", diff)
			}
			if len(ctx.Entries) != len(ctx.Messages) {
				t.Errorf("%d entries for %d messages", len(ctx.Entries), len(ctx.Messages))
			}
		})
	}
}

func TestCustomMessageContextFields(t *testing.T) {
	s := parse(t, chain(&session.CustomMessageEntry{CustomType: "reminder", Content: []llm.Content{llm.Text{Text: "note"}}, Display: false})...)
	ctx, err := s.Context("")
	if err != nil {
		t.Fatal(err)
	}
	m, ok := ctx.Messages[0].(*session.CustomMessage)
	if !ok || m.CustomType != "reminder" || m.Display || llm.TextOf(m.Content) != "note" || m.Timestamp != testStart.Add(1e9).UnixMilli() {
		t.Errorf("custom message = %+v", ctx.Messages[0])
	}
}

// contextTwice builds the leaf's context twice, the first still in use, and
// checks that it has n messages and that the second has the very same ones.
// It returns the first.
func contextTwice(t *testing.T, s *session.Session, n int) session.Context {
	t.Helper()
	first, err := s.Context("")
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.Context("")
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Messages) != n {
		t.Fatalf("%d messages, want %d", len(first.Messages), n)
	}
	for i := range first.Messages {
		if first.Messages[i] != second.Messages[i] {
			t.Fatalf("message %d decoded twice while in use", i)
		}
	}
	return first
}

// TestDecodedMessagesShared: while a decoded message is in use, decoding
// the same entry again (another context, a compaction's preparation)
// returns it instead of decoding again; once nothing uses it, the entry
// does not keep it alive.
func TestDecodedMessagesShared(t *testing.T) {
	s := parse(t, chain(user("q1"), assistant("a1"), &session.CustomMessageEntry{CustomType: "n", Content: []llm.Content{llm.Text{Text: "c"}}},
		&session.BranchSummaryEntry{FromID: "x", Summary: "b"})...)
	first := contextTwice(t, s, 4)
	m, err := s.Entries()[0].Message()
	if err != nil || m != first.Messages[0] {
		t.Errorf("Entry.Message = %p, %v; want the context's %p", m, err, first.Messages[0])
	}

	// Nothing holds the messages any more: they can be collected.
	refs := make([]weak.Pointer[llm.UserMessage], 1)
	refs[0] = weak.Make(first.Messages[0].(*llm.UserMessage))
	first, m = session.Context{}, nil
	runtime.GC()
	if refs[0].Value() != nil {
		t.Error("a decoded message stays alive after its last use")
	}
	again, err := s.Context("")
	if err != nil || texts(again.Messages)[0] != "user:q1" {
		t.Fatalf("decoding again: %v %v", texts(again.Messages), err)
	}
}

// TestBatchDecodedMessagesShared is TestDecodedMessagesShared for a context
// large enough to be decoded in batches on several goroutines, with a
// message the fast decoder leaves to the general one: every message is
// found again while in use, one message kept alive is still found after
// everything else is dropped, and nothing is kept once it is unused.
func TestBatchDecodedMessagesShared(t *testing.T) {
	var payloads []session.Payload
	long := strings.Repeat("the planner tests again ", 500) // over 1 MB in all: decoded in parallel
	for i := range 500 {
		switch i % 5 {
		case 0:
			payloads = append(payloads, user(fmt.Sprintf("q%d %s", i, long)))
		case 1, 3:
			payloads = append(payloads, assistant(fmt.Sprintf("a%d", i)))
		case 2:
			payloads = append(payloads, &session.MessageEntry{Message: &llm.ToolResultMessage{ToolCallID: "c", ToolName: "read",
				Content: []llm.Content{llm.Text{Text: fmt.Sprintf("r%d", i)}}}})
		case 4:
			payloads = append(payloads, &session.CustomMessageEntry{CustomType: "n", Content: []llm.Content{llm.Text{Text: "c"}}})
		}
	}
	payloads[250] = user("LONE")
	data := bytes.Replace(fileBytes(t, chain(payloads...)...), []byte("LONE"), []byte(`\ud800`), 1)
	s, err := session.Parse("test.jsonl", data)
	if err != nil {
		t.Fatal(err)
	}
	first := contextTwice(t, s, 500)
	es := s.Entries()
	if m, err := es[250].Message(); err != nil || m != first.Messages[250] || llm.TextOf(m.(*llm.UserMessage).Content) != "\ufffd" {
		t.Errorf("message with a lone surrogate: %v, %v", m, err)
	}

	kept := first.Messages[101]
	ref := weak.Make(kept.(*llm.AssistantMessage))
	first = session.Context{}
	runtime.GC()
	if m, err := es[101].Message(); err != nil || m != kept {
		t.Errorf("a message still in use was decoded again: %p, want %p (%v)", m, kept, err)
	}
	runtime.KeepAlive(kept)
	kept = nil
	runtime.GC()
	if ref.Value() != nil {
		t.Error("a decoded message stays alive after its last use")
	}
}

// TestEstimateNext: right after a compaction, the newest usage belongs to a
// message the compaction kept and measured the context before it, so the
// next context is estimated by characters (pi 1.6's tokensBefore rule);
// EstimateContextTokens keeps that stale usage, as pi's context estimate
// does. Once a reply comes after the compaction, its usage is trusted again.
func TestEstimateNext(t *testing.T) {
	withUsage := func(text string, total int) *session.MessageEntry {
		m := assistant(text)
		m.Message.(*llm.AssistantMessage).Usage = llm.Usage{Input: total, TotalTokens: total}
		return m
	}
	ents := chain(user("first question"), withUsage("first answer", 5000), user("second question"), withUsage("second answer", 8000),
		&session.CompactionEntry{Summary: "the first exchange", FirstKeptEntryID: "test-id-3", TokensBefore: 8000})
	s, err := session.Parse("s", fileBytes(t, ents...))
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Context("")
	if err != nil {
		t.Fatal(err)
	}
	chars := 0
	for _, m := range c.Messages {
		chars += session.EstimateTokens(m)
	}
	if got := session.EstimateContextTokens(c.Messages); got.Tokens != 8000 || got.UsageTokens != 8000 {
		t.Errorf("EstimateContextTokens = %+v, want the kept message's usage (8000)", got)
	}
	if got := c.EstimateNext(); got.Tokens != chars || got.UsageTokens != 0 || got.LastUsageIndex != -1 {
		t.Errorf("EstimateNext right after the compaction = %+v, want %d tokens by characters", got, chars)
	}

	// A reply after the compaction measured the compacted context.
	ents = append(ents, ent{id: "test-id-6", parent: "test-id-5", p: user("third question")},
		ent{id: "test-id-7", parent: "test-id-6", p: withUsage("third answer", 900)})
	if s, err = session.Parse("s", fileBytes(t, ents...)); err != nil {
		t.Fatal(err)
	}
	if c, err = s.Context(""); err != nil {
		t.Fatal(err)
	}
	if got, want := c.EstimateNext(), session.EstimateContextTokens(c.Messages); got != want || got.UsageTokens != 900 {
		t.Errorf("EstimateNext after a new reply = %+v, want %+v (usage 900)", got, want)
	}
}
