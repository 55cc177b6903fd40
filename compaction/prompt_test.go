package compaction

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/llm"
)

var (
	gptModel = llm.Model{ID: "gpt-5", Provider: "openai", API: llm.APIOpenAICompletions,
		Reasoning: true, ContextWindow: 400000, MaxTokens: 128000}
	claudeModel = llm.Model{ID: "claude-sonnet-4-5", Provider: "anthropic", API: llm.APIAnthropicMessages,
		Reasoning: true, ContextWindow: 200000, MaxTokens: 64000}
)

// dumpRequest renders a request as stable text for golden files.
func dumpRequest(r *llm.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model: %s (%s)\nmaxTokens: %d\nreasoning: %q\nnoCache: %v\n", r.Model, r.Model.API, r.MaxTokens, r.Reasoning, r.NoCache)
	b.WriteString("=== system\n" + r.SystemPrompt + "\n")
	for _, m := range r.Messages {
		u := m.(*llm.UserMessage)
		b.WriteString("=== " + m.Role() + "\n" + llm.TextOf(u.Content) + "\n")
	}
	return b.String()
}

// TestRequestGolden pins the whole summary request of each prompt kind, as
// Compact and SummarizeBranch build it (the attempt-0 request).
func TestRequestGolden(t *testing.T) {
	span := a4Span()
	const instructions = "focus on the auth refactor, remember the exact migration command"
	tests := []struct {
		name  string
		model llm.Model
		in    promptInput
		level llm.ThinkingLevel
	}{
		{"initial", gptModel, promptInput{kind: kindHistory}, llm.ThinkingMedium},
		{"initial-instructions", gptModel, promptInput{kind: kindHistory, instructions: instructions}, llm.ThinkingOff},
		{"initial-claude", claudeModel, promptInput{kind: kindHistory}, llm.ThinkingHigh},
		{"update", gptModel, promptInput{kind: kindHistory, previous: "## Goal\nShip it"}, ""},
		{"update-instructions", gptModel, promptInput{kind: kindHistory, previous: "## Goal\nShip it", instructions: instructions}, ""},
		{"update-deterministic", gptModel, promptInput{kind: kindHistory, previous: "## Goal\n- User request: ship it", previousDeterministic: true}, ""},
		{"turn-prefix", gptModel, promptInput{kind: kindTurnPrefix}, ""},
		{"turn-prefix-instructions", gptModel, promptInput{kind: kindTurnPrefix, instructions: instructions}, ""},
		{"turn-prefix-update", gptModel, promptInput{kind: kindTurnPrefix, previous: "## Turn Request\nfix it"}, ""},
		{"branch", gptModel, promptInput{kind: kindBranch}, ""},
		{"branch-instructions", gptModel, promptInput{kind: kindBranch, instructions: instructions}, ""},
		{"branch-claude", claudeModel, promptInput{kind: kindBranch}, ""},
		{"branch-replace", gptModel, promptInput{kind: kindBranch, instructions: "Only list the commands that were run.", replaceTask: true}, ""},
		{"branch-update", gptModel, promptInput{kind: kindBranch, previous: "## Goal\nTry plan B"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSummarizer(Options{Model: tc.model, ThinkingLevel: tc.level}, DefaultReserveTokens)
			req := s.attempt(tc.in, rounds(span), DefaultToolBodies, s.inputBudget(tc.in), 0)
			golden.Check(t, "request-"+tc.name+".golden", dumpRequest(req))
		})
	}
}

func TestPromptText(t *testing.T) {
	in := promptInput{kind: kindHistory, transcript: "[User]: hi", previous: "old", instructions: "  be brief  "}
	got := promptText(in)
	// Order: conversation, previous summary, task, user instructions last.
	order := []string{"<conversation>\n[User]: hi\n</conversation>", "<previous-summary>\nold\n</previous-summary>", "## Goal", instructionsPreamble, "<user-instructions>\nbe brief\n</user-instructions>"}
	at := 0
	for _, o := range order {
		i := strings.Index(got[at:], o)
		if i < 0 {
			t.Fatalf("%q missing or out of order in:\n%s", o, got)
		}
		at += i + len(o)
	}
	if !strings.HasSuffix(got, "</user-instructions>") {
		t.Error("instructions are not last")
	}
	// Every history and branch task asks for the seven sections in order.
	for _, k := range []kind{kindHistory, kindBranch} {
		for _, prev := range []string{"", "p"} {
			text := task(promptInput{kind: k, previous: prev})
			at := 0
			for _, h := range []string{"## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress", "### Blocked", "## Key Decisions", "## Reasoning Digest", "## Next Steps", "## Critical Context"} {
				i := strings.Index(text[at:], h)
				if i < 0 {
					t.Fatalf("kind %d prev %q: %s missing or out of order", k, prev, h)
				}
				at += i
			}
		}
	}
	if strings.Contains(promptText(promptInput{kind: kindHistory}), "<user-instructions>") {
		t.Error("instructions block without instructions")
	}
}

// TestRequestOptions pins the output limit and the reasoning option
// (pi-reference §9.4 #28–35 with Prime's rules).
func TestRequestOptions(t *testing.T) {
	tests := []struct {
		name      string
		model     llm.Model
		level     llm.ThinkingLevel
		reserve   int
		maxTokens int
		reasoning llm.ThinkingLevel
	}{
		{"80% of reserve", llm.Model{MaxTokens: 128000, Reasoning: true}, llm.ThinkingMedium, 16384, 13107, llm.ThinkingMedium},
		{"model limit caps it", llm.Model{MaxTokens: 128000, Reasoning: true}, llm.ThinkingHigh, 500000, 128000, llm.ThinkingHigh},
		{"small model limit", llm.Model{MaxTokens: 4096}, llm.ThinkingHigh, 16384, 4096, ""},
		{"unknown model limit", llm.Model{Reasoning: true}, llm.ThinkingOff, 16384, 13107, ""},
		{"no reserve: model limit", llm.Model{MaxTokens: 8000, Reasoning: true}, "", 0, 8000, ""},
		{"nothing known", llm.Model{}, llm.ThinkingLow, 0, 0, ""},
		{"minimal level", llm.Model{Reasoning: true}, llm.ThinkingMinimal, 10, 8, llm.ThinkingMinimal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSummarizer(Options{Model: tc.model, ThinkingLevel: tc.level}, tc.reserve)
			req := s.request(promptInput{kind: kindHistory})
			if req.MaxTokens != tc.maxTokens || req.Reasoning != tc.reasoning || !req.NoCache {
				t.Errorf("maxTokens %d reasoning %q noCache %v; want %d %q true", req.MaxTokens, req.Reasoning, req.NoCache, tc.maxTokens, tc.reasoning)
			}
			if len(req.Messages) != 1 || req.Messages[0].Role() != llm.RoleUser || req.SystemPrompt != systemPrompt {
				t.Errorf("request shape: %+v", req)
			}
		})
	}
}

// TestSplitTurnLayout pins the merged layout of pi-reference A.1 in Prime's
// words: history, separator, turn prefix; and the layout of stored
// summaries' file lists.
func TestSplitTurnLayout(t *testing.T) {
	if splitTurnSeparator != "\n\n---\n\n**Earlier part of the current turn (the turn was split):**\n\n" {
		t.Errorf("separator changed: %q", splitTurnSeparator)
	}
	if got := FormatFileLists([]string{"x.ts"}, nil); got != "\n\n<read-files>\nx.ts\n</read-files>" {
		t.Errorf("read only: %q", got)
	}
	if got := FormatFileLists([]string{"a", "b"}, []string{"c"}); got != "\n\n<read-files>\na\nb\n</read-files>\n\n<modified-files>\nc\n</modified-files>" {
		t.Errorf("both: %q", got)
	}
	if got := FormatFileLists(nil, nil); got != "" {
		t.Errorf("none: %q", got)
	}
	if !strings.HasPrefix(branchPreamble, "The user explored") || strings.Count(branchPreamble, "\n") != 3 || !strings.HasSuffix(branchPreamble, ":\n\n") {
		t.Errorf("branch preamble is not two lines and a blank line: %q", branchPreamble)
	}
}
