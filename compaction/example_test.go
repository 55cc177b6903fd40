package compaction_test

import (
	"fmt"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// A program that writes summaries with its own model sends it the
// conversation as text: the agent messages converted as the model sees them
// (session.ToLLM), then serialized as Prime's own summary requests are, for
// the family of the model that will read it. Claude-family models get no
// reasoning.
func ExampleTranscript() {
	var msgs []session.Message
	for _, line := range []string{
		`{"role":"user","content":"Why does the build fail?","timestamp":1}`,
		`{"role":"assistant","content":[{"type":"thinking","thinking":"The compiler output will say."},{"type":"text","text":"Let me run it."},{"type":"toolCall","id":"call_1","name":"bash","arguments":{"command":"go build ./..."}}],"stopReason":"toolUse","timestamp":2}`,
		`{"role":"toolResult","toolCallId":"call_1","toolName":"bash","content":[{"type":"text","text":"main.go:3: undefined: cfg"}],"isError":true,"timestamp":3}`,
		`{"role":"bashExecution","command":"git status --short","output":" M main.go","exitCode":0,"timestamp":4}`,
	} {
		m, err := session.DecodeMessage([]byte(line))
		if err != nil {
			panic(err)
		}
		msgs = append(msgs, m)
	}
	for _, model := range []llm.Model{
		{Provider: "ollama", ID: "qwen3:8b", API: llm.APIOpenAICompletions},
		{Provider: "anthropic", ID: "claude-haiku-4-5", API: llm.APIAnthropicMessages},
	} {
		opts := compaction.TranscriptOptionsFor(model)
		fmt.Printf("--- for %s (reasoning %v, %d tool bodies)\n", model.ID, opts.Reasoning, opts.ToolBodies)
		fmt.Println(compaction.Transcript(session.ToLLM(msgs), opts))
	}
	// Output:
	// --- for qwen3:8b (reasoning true, 3 tool bodies)
	// [User]: Why does the build fail?
	//
	// [Assistant reasoning]: The compiler output will say.
	//
	// [Assistant]: Let me run it.
	//
	// [Assistant tool calls]: bash#call_1(command="go build ./...")
	//
	// [Tool result bash#call_1 error=true]: main.go:3: undefined: cfg
	//
	// [User]: Ran `git status --short`
	// ```
	//  M main.go
	// ```
	// --- for claude-haiku-4-5 (reasoning false, 3 tool bodies)
	// [User]: Why does the build fail?
	//
	// [Assistant]: Let me run it.
	//
	// [Assistant tool calls]: bash#call_1(command="go build ./...")
	//
	// [Tool result bash#call_1 error=true]: main.go:3: undefined: cfg
	//
	// [User]: Ran `git status --short`
	// ```
	//  M main.go
	// ```
}

// What a compaction summarizes, as the texts of Prime's requests: the
// history, and the first part of a split turn on its own.
func ExamplePreparation_Transcripts() {
	prep := &compaction.Preparation{
		MessagesToSummarize: []session.Message{
			&llm.UserMessage{Content: []llm.Content{llm.Text{Text: "Rename Config to Settings everywhere."}}},
			&llm.AssistantMessage{Content: []llm.Content{llm.Text{Text: "Done in 14 files."}}, StopReason: llm.StopReasonStop},
		},
		TurnPrefixMessages: []session.Message{
			&llm.UserMessage{Content: []llm.Content{llm.Text{Text: "Now update the docs."}}},
		},
		IsSplitTurn: true,
	}
	history, turnPrefix := prep.Transcripts(compaction.TranscriptOptionsFor(llm.Model{Provider: "openai", ID: "gpt-5-mini"}))
	fmt.Printf("history:\n%s\n\nturn prefix:\n%s\n", history, turnPrefix)
	// Output:
	// history:
	// [User]: Rename Config to Settings everywhere.
	//
	// [Assistant]: Done in 14 files.
	//
	// turn prefix:
	// [User]: Now update the docs.
}
