package compaction

import (
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
)

func userMsg(parts ...llm.Content) *llm.UserMessage { return &llm.UserMessage{Content: parts} }

func assistantMsg(parts ...llm.Content) *llm.AssistantMessage {
	return &llm.AssistantMessage{Content: parts, StopReason: llm.StopReasonStop}
}

func resultMsg(id, name, body string, isErr bool) *llm.ToolResultMessage {
	var content []llm.Content
	if body != "" {
		content = []llm.Content{llm.Text{Text: body}}
	}
	return &llm.ToolResultMessage{ToolCallID: id, ToolName: name, Content: content, IsError: isErr}
}

// a4Span is Appendix A.4 in the spec's projection, plus the cases the
// projection rules decide: an image, an orphaned result, a useless result,
// an empty error, redacted reasoning, a custom message and a branch summary.
func a4Span() []session.Message {
	exit0, exit2 := 0, 2
	return []session.Message{
		userMsg(llm.Text{Text: "fix it"}, llm.Image{Data: "aGVsbG8=", MIMEType: "image/png"}, llm.Text{Text: "see above"}),
		assistantMsg(llm.Thinking{Thinking: "look"}, llm.Thinking{Thinking: "secret", Redacted: true}, llm.Text{Text: "ok"},
			call("c1", "edit", `{"path":"a.ts","old":"x","n":1.50,"opts":{"deep":[1,"<b>"]}}`), call("c2", "read", `{"path":"b.ts"}`)),
		resultMsg("c1", "edit", "done", false),
		resultMsg("c2", "read", "   \n", false),         // useless: dropped
		resultMsg("c9", "bash", "who called me", false), // orphaned: dropped
		&session.BashExecution{Command: "ls", Output: "a.ts", ExitCode: &exit0},
		&session.BashExecution{Command: "secret", Output: "hidden", ExcludeFromContext: true},
		assistantMsg(call("c3", "bash", `{"command":"go test ./..."}`), call("c4", "bash", `{"command":"false"}`), call("c5", "shot", `{}`)),
		resultMsg("c3", "bash", "FAIL a_test.go:12", true),
		resultMsg("c4", "", "", true), // empty error: kept, name from its call
		&llm.ToolResultMessage{ToolCallID: "c5", ToolName: "shot", Content: []llm.Content{llm.Image{Data: "eA==", MIMEType: "image/png"}}},
		&session.CustomMessage{CustomType: "note", Content: []llm.Content{llm.Text{Text: "remember the flag"}}},
		&session.BranchSummaryMessage{Summary: "tried plan B", FromID: "x"},
		&session.BashExecution{Command: "make", Output: "boom", ExitCode: &exit2},
		assistantMsg(llm.Text{Text: "fixed"}, llm.Text{Text: "second line"}),
	}
}

func TestTranscriptGolden(t *testing.T) {
	golden.Check(t, "transcript.golden", renderTranscript(a4Span(), TranscriptOptions{Reasoning: true, ToolBodies: 3}))
	golden.Check(t, "transcript-claude.golden", renderTranscript(a4Span(), TranscriptOptions{Reasoning: false, ToolBodies: 3}))
}

func TestTranscriptRules(t *testing.T) {
	tests := []struct {
		name    string
		msgs    []session.Message
		opts    TranscriptOptions
		want    []string // substrings that must appear
		notWant []string
	}{
		{
			name: "image becomes a placeholder",
			msgs: []session.Message{userMsg(llm.Text{Text: "look"}, llm.Image{Data: "QUJD", MIMEType: "image/png"})},
			want: []string{"[User]: look [image]"}, notWant: []string{"QUJD"},
		},
		{
			name: "image-only user message",
			msgs: []session.Message{userMsg(llm.Image{Data: "QUJD"})},
			want: []string{"[User]: [image]"},
		},
		{
			name: "orphaned result dropped, also when its call comes later",
			msgs: []session.Message{resultMsg("c1", "read", "early", false), assistantMsg(call("c1", "read", `{"path":"a"}`))},
			opts: TranscriptOptions{ToolBodies: 3}, notWant: []string{"early", "[Tool result"},
		},
		{
			name: "result without a call id is orphaned",
			msgs: []session.Message{assistantMsg(call("", "read", `{}`)), resultMsg("", "read", "body", false)},
			opts: TranscriptOptions{ToolBodies: 3}, notWant: []string{"body"},
		},
		{
			name: "useless result dropped; white space only",
			msgs: []session.Message{assistantMsg(call("c1", "read", `{}`)), resultMsg("c1", "read", " \t\n", false)},
			opts: TranscriptOptions{ToolBodies: 3}, notWant: []string{"[Tool result"},
		},
		{
			name: "empty error kept with a note",
			msgs: []session.Message{assistantMsg(call("c1", "bash", `{}`)), resultMsg("c1", "bash", "", true)},
			opts: TranscriptOptions{ToolBodies: 3}, want: []string{"[Tool result bash#c1 error=true]: (no output)"},
		},
		{
			name: "image-only result kept",
			msgs: []session.Message{assistantMsg(call("c1", "shot", `{}`)), &llm.ToolResultMessage{ToolCallID: "c1", ToolName: "shot", Content: []llm.Content{llm.Image{}}}},
			opts: TranscriptOptions{ToolBodies: 3}, want: []string{"[Tool result shot#c1 error=false]: [image]"},
		},
		{
			name: "reasoning kept for compatible models",
			msgs: []session.Message{assistantMsg(llm.Thinking{Thinking: "hmm"}, llm.Text{Text: "ok"})},
			opts: TranscriptOptions{Reasoning: true}, want: []string{"[Assistant reasoning]: hmm\n\n[Assistant]: ok"},
		},
		{
			name: "reasoning omitted for Claude",
			msgs: []session.Message{assistantMsg(llm.Thinking{Thinking: "hmm"}, llm.Text{Text: "ok"})},
			want: []string{"[Assistant]: ok"}, notWant: []string{"hmm", "reasoning"},
		},
		{
			name: "non-object arguments",
			msgs: []session.Message{assistantMsg(call("c1", "raw", `[1,2]`))},
			want: []string{"[Assistant tool calls]: raw#c1([1,2])"},
		},
		{
			name: "empty arguments",
			msgs: []session.Message{assistantMsg(call("c1", "ls", `{}`))},
			want: []string{"[Assistant tool calls]: ls#c1()"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := renderTranscript(tc.msgs, tc.opts)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(got, w) {
					t.Errorf("unexpected %q in:\n%s", w, got)
				}
			}
		})
	}
}

// TestTranscriptToolBodies: only the newest N valid results keep a body.
func TestTranscriptToolBodies(t *testing.T) {
	var msgs []session.Message
	for i, body := range []string{"one", "two", "three", "four", "five"} {
		id := "c" + string(rune('1'+i))
		msgs = append(msgs, assistantMsg(call(id, "bash", `{}`)), resultMsg(id, "bash", "body-"+body, false))
	}
	msgs = append(msgs, assistantMsg(call("c9", "bash", `{}`)), resultMsg("c9", "bash", "", false)) // useless: not counted
	for _, tc := range []struct {
		n    int
		kept []string
	}{
		{3, []string{"body-three", "body-four", "body-five"}},
		{1, []string{"body-five"}},
		{0, nil},
	} {
		got := renderTranscript(msgs, TranscriptOptions{ToolBodies: tc.n})
		if c := strings.Count(got, "body-"); c != len(tc.kept) {
			t.Errorf("n=%d: %d bodies kept, want %d:\n%s", tc.n, c, len(tc.kept), got)
		}
		for _, k := range tc.kept {
			if !strings.Contains(got, k) {
				t.Errorf("n=%d: %s missing", tc.n, k)
			}
		}
		if want := 5 - len(tc.kept); strings.Count(got, "]: [tool result]") != want {
			t.Errorf("n=%d: want %d placeholders:\n%s", tc.n, want, got)
		}
		if !strings.Contains(got, "[Tool result bash#c1 error=false]") {
			t.Errorf("n=%d: older results lost their header", tc.n)
		}
	}
}

// TestTranscriptBodyBound pins the decision that a kept body keeps its first
// and last 2,000 UTF-16 units (pi-reference §9.3 #25–27, adapted).
func TestTranscriptBodyBound(t *testing.T) {
	render := func(body string) string {
		return renderTranscript([]session.Message{assistantMsg(call("c1", "read", `{}`)), resultMsg("c1", "read", body, false)},
			TranscriptOptions{ToolBodies: 3})
	}
	long := strings.Repeat("h", 2500) + strings.Repeat("t", 2500)
	got := render(long)
	if !strings.Contains(got, strings.Repeat("h", 2000)+"\n\n[... 1000 characters left out ...]\n\n"+strings.Repeat("t", 2000)) {
		t.Errorf("5000-unit body not bounded to head and tail:\n%.300s", got)
	}
	short := strings.Repeat("x", 1500)
	if got := render(short); got != "[Assistant tool calls]: read#c1()\n\n[Tool result read#c1 error=false]: "+short {
		t.Errorf("1500-unit body changed")
	}
	// User and assistant text is never cut (§9.3 #27).
	y := strings.Repeat("y", 5000)
	got = renderTranscript([]session.Message{userMsg(llm.Text{Text: y}), assistantMsg(llm.Text{Text: y})}, TranscriptOptions{})
	if strings.Count(got, y) != 2 {
		t.Error("user or assistant text was cut")
	}
	// Surrogate pairs are never split.
	emoji := strings.Repeat("😀", 2500) // 5000 units
	got = render(emoji)
	if !strings.Contains(got, strings.Repeat("😀", 1000)+"\n\n[... 1000 characters left out ...]") {
		t.Errorf("emoji body bound wrong:\n%.200s", got)
	}
}

// TestTranscriptLeavesInputUnchanged: the projection is built on copies.
func TestTranscriptLeavesInputUnchanged(t *testing.T) {
	msgs := a4Span()
	before, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	snapshot := a4Span()
	renderTranscript(msgs, TranscriptOptions{Reasoning: true, ToolBodies: 1})
	renderTranscript(msgs, TranscriptOptions{ToolBodies: 0})
	after, _ := json.Marshal(msgs)
	if string(before) != string(after) {
		t.Error("the messages' JSON changed")
	}
	if !reflect.DeepEqual(msgs, snapshot) {
		t.Error("the messages changed")
	}
}

func TestHeadTail(t *testing.T) {
	if got := headTail("short", 2, 2); got != "short" {
		t.Errorf("short text changed: %q", got)
	}
	s := strings.Repeat("a", 100) + strings.Repeat("b", 100)
	got := headTail(s, 10, 10)
	if got != strings.Repeat("a", 10)+"\n\n[... 180 characters left out ...]\n\n"+strings.Repeat("b", 10) {
		t.Errorf("headTail = %q", got)
	}
	if llm.UTF16Len(headTail(strings.Repeat("z", 100000), 500, 500)) > 1100 {
		t.Error("bound too loose")
	}
}

func TestIsClaudeFamily(t *testing.T) {
	for _, tc := range []struct {
		m    llm.Model
		want bool
	}{
		{llm.Model{ID: "claude-sonnet-4-5", Provider: "anthropic", API: llm.APIAnthropicMessages}, true},
		{llm.Model{ID: "anthropic/claude-3.5-haiku", Provider: "openrouter", API: llm.APIOpenAICompletions}, true},
		{llm.Model{ID: "us.anthropic.Claude-opus-4", Provider: "bedrock"}, true},
		{llm.Model{ID: "some-model", Provider: "Anthropic"}, true},
		{llm.Model{ID: "custom", Provider: "proxy", API: llm.APIAnthropicMessages}, true},
		{llm.Model{ID: "gpt-5", Provider: "openai", API: llm.APIOpenAICompletions}, false},
		{llm.Model{ID: "qwen3-coder", Provider: "ollama", API: llm.APIOpenAICompletions}, false},
	} {
		if got := isClaudeFamily(tc.m); got != tc.want {
			t.Errorf("isClaudeFamily(%+v) = %v", tc.m, got)
		}
	}
}

func TestRounds(t *testing.T) {
	msgs := []session.Message{
		assistantMsg(llm.Text{Text: "a0"}), resultMsg("x", "t", "r0", false), // leading partial round
		userMsg(llm.Text{Text: "u1"}), assistantMsg(llm.Text{Text: "a1"}),
		&session.BashExecution{Command: "hidden", ExcludeFromContext: true}, // not a round start
		&session.BashExecution{Command: "ls"},
		&session.CustomMessage{Content: []llm.Content{llm.Text{Text: "c"}}},
		&session.BranchSummaryMessage{Summary: "s"},
		userMsg(llm.Text{Text: "u2"}),
	}
	var sizes []int
	for _, r := range rounds(msgs) {
		sizes = append(sizes, len(r))
	}
	if want := []int{2, 3, 1, 1, 1, 1}; !reflect.DeepEqual(sizes, want) {
		t.Errorf("round sizes = %v, want %v", sizes, want)
	}
	if len(flatten(rounds(msgs))) != len(msgs) {
		t.Error("flatten lost messages")
	}
	if rounds(nil) != nil {
		t.Error("no messages, want no rounds")
	}
}

// TestExportedTranscriptIsTheRequest: the exported serialization
// (Transcript of session.ToLLM, Preparation.Transcripts,
// BranchPreparation.Transcript, with TranscriptOptionsFor the summarizer) is
// byte for byte the transcript of the requests the fake servers receive:
// the history and the turn prefix of a split turn, and a branch, with
// reasoning kept for an OpenAI-compatible model and left out for Claude.
func TestExportedTranscriptIsTheRequest(t *testing.T) {
	prefix := []session.Message{
		userMsg(llm.Text{Text: "now the parser"}),
		assistantMsg(llm.Thinking{Thinking: "the lexer first"}, call("p1", "read", `{"path":"lex.go"}`)),
		resultMsg("p1", "read", "package lex", false),
	}
	reply := func(*llmtest.Request) llmtest.Reply {
		return llmtest.Stream(llmtest.Text("## Goal\nSummarized."), llmtest.Usage(100, 10))
	}
	withFakes(t, func(t *testing.T, srv *llmtest.Server) {
		srv.Handle(reply)
		model := srv.Model()
		opts := TranscriptOptionsFor(model)
		if opts.Reasoning == (model.API == llm.APIAnthropicMessages) || opts.ToolBodies != DefaultToolBodies {
			t.Fatalf("options for %s: %+v", model.API, opts)
		}
		prep := &Preparation{FirstKeptEntryID: "kept", MessagesToSummarize: a4Span(), TurnPrefixMessages: prefix, IsSplitTurn: true,
			TokensBefore: 5000, Settings: DefaultSettings()}
		if _, err := Compact(t.Context(), prep, Options{Provider: srv.Provider(), Model: model}); err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests, want the history's and the turn prefix's", len(reqs))
		}
		history, turnPrefix := prep.Transcripts(opts)
		if got := llmtest.Conversation(t, reqs[0]); got != history {
			t.Errorf("history request holds:\n%s\n\nTranscripts gives:\n%s", got, history)
		}
		if got := llmtest.Conversation(t, reqs[1]); got != turnPrefix {
			t.Errorf("turn prefix request holds:\n%s\n\nTranscripts gives:\n%s", got, turnPrefix)
		}
		if got := Transcript(session.ToLLM(prep.MessagesToSummarize), opts); got != history {
			t.Errorf("Transcript(ToLLM(history)) differs from the request:\n%s", got)
		}
		name := "transcript"
		if !opts.Reasoning {
			name = "transcript-claude"
		}
		golden.Check(t, name+".golden", history) // the same text as TestTranscriptGolden's
		golden.Check(t, name+"-turn-prefix.golden", turnPrefix)

		bp := &BranchPreparation{Messages: append(a4Span(), prefix...)}
		if _, err := SummarizeBranch(t.Context(), bp, Options{Provider: srv.Provider(), Model: model}); err != nil {
			t.Fatal(err)
		}
		if got, want := llmtest.Conversation(t, srv.LastRequest()), bp.Transcript(opts); got != want {
			t.Errorf("branch request holds:\n%s\n\nBranchPreparation.Transcript gives:\n%s", got, want)
		}
	})
}

// TestPreparationTranscripts: the texts follow Compact's split: a turn
// prefix is its own text only when the turn is split; otherwise it is part
// of the history.
func TestPreparationTranscripts(t *testing.T) {
	h := []session.Message{userMsg(llm.Text{Text: "old"})}
	p := []session.Message{userMsg(llm.Text{Text: "prefix"})}
	opts := TranscriptOptions{ToolBodies: DefaultToolBodies}
	for _, tc := range []struct {
		name                 string
		prep                 Preparation
		wantHistory, wantPre string
	}{
		{"split", Preparation{MessagesToSummarize: h, TurnPrefixMessages: p, IsSplitTurn: true}, "[User]: old", "[User]: prefix"},
		{"split, no history", Preparation{TurnPrefixMessages: p, IsSplitTurn: true}, "", "[User]: prefix"},
		{"split without a prefix", Preparation{MessagesToSummarize: h, IsSplitTurn: true}, "[User]: old", ""},
		{"a prefix without a split", Preparation{MessagesToSummarize: h, TurnPrefixMessages: p}, "[User]: old\n\n[User]: prefix", ""},
		{"nothing", Preparation{}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			history, prefix := tc.prep.Transcripts(opts)
			if history != tc.wantHistory || prefix != tc.wantPre {
				t.Errorf("got %q, %q; want %q, %q", history, prefix, tc.wantHistory, tc.wantPre)
			}
		})
	}
	// Negative tool bodies keep none.
	msgs := []session.Message{assistantMsg(call("c1", "read", `{}`)), resultMsg("c1", "read", "body", false)}
	if got := Transcript(session.ToLLM(msgs), TranscriptOptions{ToolBodies: -1}); got != "[Assistant tool calls]: read#c1()\n\n[Tool result read#c1 error=false]: [tool result]" {
		t.Errorf("negative tool bodies: %q", got)
	}
}
