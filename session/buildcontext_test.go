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
	"github.com/prime-agent/prime/session/sessiontest"
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

	// The session keeps the last context it built; once it builds
	// another, nothing holds the messages any more: they can be
	// collected.
	refs := make([]weak.Pointer[llm.UserMessage], 1)
	refs[0] = weak.Make(first.Messages[0].(*llm.UserMessage))
	first, m = session.Context{}, nil
	runtime.GC()
	if refs[0].Value() == nil {
		t.Error("the session does not keep its last context")
	}
	leaf := s.LeafID()
	s.ResetLeaf()
	if c, err := s.Context(""); err != nil || len(c.Messages) != 0 {
		t.Fatalf("context after ResetLeaf: %d messages, %v", len(c.Messages), err)
	}
	runtime.GC()
	if refs[0].Value() != nil {
		t.Error("a decoded message stays alive after its last use")
	}
	s.SetLeaf(leaf)
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

func hide(target string) *session.ContextEditEntry {
	return &session.ContextEditEntry{TargetID: target}
}

func replace(target, text string) *session.ContextEditEntry {
	return &session.ContextEditEntry{TargetID: target, Replacement: &session.ContextReplacement{Content: []llm.Content{llm.Text{Text: text}}}}
}

func toolResult(text string) *session.MessageEntry {
	return &session.MessageEntry{Message: &llm.ToolResultMessage{ToolCallID: "c1", ToolName: "bash", Content: []llm.Content{llm.Text{Text: text}}}}
}

func systemEntry(text string) *session.MessageEntry {
	return &session.MessageEntry{Message: &session.SystemMessage{Sections: []session.SystemSection{{Name: "preamble", Text: text}}, Timestamp: 1}}
}

// TestContextEdits: pi 1.6's context_edit entries hide or replace what the
// model sees of an earlier entry; the latest edit of an entry wins; an
// edit outside the projection (summarized away) does nothing.
func TestContextEdits(t *testing.T) {
	custom := &session.CustomMessageEntry{CustomType: "note", Content: []llm.Content{llm.Text{Text: "custom"}}}
	bash := &session.MessageEntry{Message: &session.BashExecution{Command: "ls", Output: "a"}}
	tests := []struct {
		name string
		ents []ent
		want []string
	}{
		{
			name: "a retried error reply and its tool result hidden",
			ents: chain(user("q"), assistant("failed"), toolResult("partial"), hide("test-id-2"), hide("test-id-3"), assistant("retried")),
			want: []string{"user:q", "assistant:retried"},
		},
		{
			name: "replacements of user, assistant, tool result and custom content",
			ents: chain(user("q"), assistant("a"), toolResult("long output"), custom, replace("test-id-1", "Q"), replace("test-id-2", "A"),
				replace("test-id-3", "short"), replace("test-id-4", "C")),
			want: []string{"user:Q", "assistant:A", "toolResult:short", "custom:C"},
		},
		{
			name: "the latest edit wins",
			ents: chain(user("q"), replace("test-id-1", "first"), hide("test-id-1"), replace("test-id-1", "last")),
			want: []string{"user:last"},
		},
		{
			name: "a replacement does not change other roles; a hiding hides them",
			ents: chain(systemEntry("S"), bash, &session.BranchSummaryEntry{FromID: "x", Summary: "b"}, user("u"),
				replace("test-id-1", "x"), replace("test-id-2", "x"), hide("test-id-3")),
			want: []string{"system:S", "bashExecution:", "user:u"},
		},
		{
			name: "edits before the kept range are summarized away",
			ents: chain(user("q1"), assistant("a1"), hide("test-id-2"), user("q2"),
				&session.CompactionEntry{Summary: "s", FirstKeptEntryID: "test-id-4"}, user("q3")),
			want: []string{"compactionSummary:s", "user:q2", "user:q3"},
		},
		{
			name: "an edit after a compaction reaches into its kept range",
			ents: chain(user("q1"), assistant("a1"), &session.CompactionEntry{Summary: "s", FirstKeptEntryID: "test-id-2"}, hide("test-id-2"), user("q2")),
			want: []string{"compactionSummary:s", "user:q2"},
		},
		{
			name: "a hidden compaction hides its summary and system state",
			ents: chain(user("q1"), &session.CompactionEntry{Summary: "s", FirstKeptEntryID: "test-id-1",
				SystemMessage: &session.SystemMessage{Content: "P", Timestamp: 1}}, hide("test-id-2"), user("q2")),
			want: []string{"user:q1", "user:q2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, err := parse(t, tt.ents...).Context("")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, texts(ctx.Messages)); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
		})
	}
}

// TestContextEditBadInput: an edit pi cannot apply either is an error
// naming its line, not a context silently shown otherwise.
func TestContextEditBadInput(t *testing.T) {
	for _, bad := range []string{`"targetId":"a"`, `"targetId":"a","replacement":{}`, `"targetId":"a","replacement":{"content":7}`,
		`"targetId":"a","replacement":{"content":null}`, `"targetId":"a","replacement":"x"`} {
		data := fmt.Sprintf(`{"type":"session","version":3,"id":"s"}`+"\n"+
			`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"q"}}`+"\n"+
			`{"type":"context_edit","id":"e","parentId":"a","timestamp":"t",%s}`+"\n", bad)
		s, err := session.Parse("s", []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Context(""); err == nil || !strings.Contains(err.Error(), "line 3") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	// A replacement's string content is one text block.
	s, err := session.Parse("s", []byte(`{"type":"session","version":3,"id":"s"}`+"\n"+
		`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"q"}}`+"\n"+
		`{"type":"context_edit","id":"e","parentId":"a","timestamp":"t","targetId":"a","replacement":{"content":"plain"}}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if ctx, err := s.Context(""); err != nil || !cmp.Equal(texts(ctx.Messages), []string{"user:plain"}) {
		t.Errorf("string replacement: %v %v", texts(ctx.Messages), err)
	}
	line, err := session.EncodeEntry("e", "a", "t", hide("a"))
	if err != nil || !strings.HasSuffix(string(line), `"targetId":"a","replacement":null}`) {
		t.Errorf("encoded %s, %v", line, err)
	}
	line, _ = session.EncodeEntry("e", "a", "t", &session.ContextEditEntry{TargetID: "a", Replacement: &session.ContextReplacement{}})
	if !strings.HasSuffix(string(line), `"replacement":{"content":[]}}`) {
		t.Errorf("encoded %s", line)
	}
}

// TestCompactionSystemMessage: a compaction's system state comes first in
// the context, mapped to the compaction entry; system messages in its
// kept range are left out; an append stamps the state with the entry's
// time and writes it as the entry's last member.
func TestCompactionSystemMessage(t *testing.T) {
	dir := t.TempDir()
	s, err := session.Create(dir+"/s.jsonl", session.Options{CWD: "/tmp", Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []session.Payload{systemEntry("P1"), user("q1"), assistant("a1"), systemEntry("P2"), user("q2")} {
		if _, err := s.Append(p); err != nil {
			t.Fatal(err)
		}
	}
	kept := s.Entries()[1].ID
	before, err := s.Context("")
	if err != nil {
		t.Fatal(err)
	}
	state := before.System()
	state.Timestamp = 5
	c, err := s.Append(&session.CompactionEntry{Summary: "sum", FirstKeptEntryID: kept, TokensBefore: 10, SystemMessage: state})
	if err != nil {
		t.Fatal(err)
	}
	if state.Timestamp != 5 {
		t.Error("Append changed the caller's system message")
	}
	if !strings.HasSuffix(string(sessiontest.Line(t, c)), fmt.Sprintf(`,"fromHook":false,"systemMessage":{"role":"system","content":"","sections":{"preamble":"P2"},"timestamp":%d}}`, c.Millis())) {
		t.Errorf("compaction line %s", sessiontest.Line(t, c))
	}
	s.Append(user("q3"))
	ctx, err := s.Context("")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"system:P2", "compactionSummary:sum", "user:q1", "assistant:a1", "user:q2", "user:q3"}, texts(ctx.Messages)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if ctx.Entries[0] != c || ctx.Entries[1] != c {
		t.Error("the system message and the summary do not map to the compaction entry")
	}
	var proj []string
	for e, msgs := range ctx.Projection() {
		proj = append(proj, fmt.Sprintf("%s:%d", e.Type, len(msgs)))
	}
	// The kept range without its system message, then the entries after.
	if want := []string{"compaction:2", "message:1", "message:1", "message:1", "message:1"}; !cmp.Equal(proj, want) {
		t.Errorf("projection %v, want %v", proj, want)
	}
	if p, _ := c.Payload(); p.(*session.CompactionEntry).SystemMessage.Prompt() != "P2" {
		t.Errorf("payload %+v", p)
	}
}

// TestEstimateNextContextEdit: usage at or before the latest context edit
// is distrusted like usage before a compaction (pi 1.6), and the pure
// estimate counts the replayed system state once.
func TestEstimateNextContextEdit(t *testing.T) {
	withUsage := func(text string, total int) *session.MessageEntry {
		m := assistant(text)
		m.Message.(*llm.AssistantMessage).Usage = llm.Usage{Input: total, TotalTokens: total}
		return m
	}
	patch := &session.MessageEntry{Message: &session.SystemMessage{Sections: []session.SystemSection{{Name: "cwd", Text: strings.Repeat("x", 40)}}, Timestamp: 2}}
	ents := chain(systemEntry(strings.Repeat("p", 400)), user("q"), withUsage("a", 5000), patch, user("failed try"), hide("test-id-5"), user("again"))
	c, err := parse(t, ents...).Context("")
	if err != nil {
		t.Fatal(err)
	}
	sys := c.System()
	want := session.EstimateTokens(sys)
	for _, m := range c.Messages {
		if m.Role() != session.RoleSystem {
			want += session.EstimateTokens(m)
		}
	}
	if got := c.EstimateNext(); got.Tokens != want || got.LastUsageIndex != -1 || want != 100+10+1+1+2 {
		t.Errorf("EstimateNext = %+v, want %d by characters", got, want)
	}
	if got := session.EstimateContextTokens(c.Messages); got.UsageTokens != 5000 {
		t.Errorf("EstimateContextTokens = %+v", got)
	}
	// A reply after the edit is trusted.
	ents = append(ents, ent{id: "test-id-8", parent: "test-id-7", p: withUsage("b", 6000)})
	if c, err = parse(t, ents...).Context(""); err != nil {
		t.Fatal(err)
	}
	if got := c.EstimateNext(); got.UsageTokens != 6000 {
		t.Errorf("after a new reply: %+v", got)
	}
	// pi finds the usage entry by its id: one without an id is never
	// trusted.
	ents[len(ents)-1].id = ""
	if c, err = parse(t, ents...).Context(""); err != nil {
		t.Fatal(err)
	}
	if got := c.EstimateNext(); got.LastUsageIndex != -1 {
		t.Errorf("usage entry without an id: %+v", got)
	}
}
