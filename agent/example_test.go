package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/hook"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
)

// A program that embeds Prime writes its compactions with a model of its own
// choosing, here a local model behind an OpenAI-compatible server (a fake
// one, for the example), while the session talks to another. Its in-process
// hook serializes what the compaction replaces exactly as Prime's summary
// requests do, for its own model's family, sends it, and returns the answer
// with the file lists Prime adds to its own summaries. Prime stores it
// (fromHook true) and asks no model of its own.
func Example_customCompaction() {
	local := llmtest.NewServer(llm.APIOpenAICompletions, llmtest.FlavorOllama)
	defer local.Close()
	local.Reply(llmtest.Text("## Goal\nFix checkout totals when a coupon and tax both apply.\n\n## Progress\n### Done\n- [x] Coupon now comes off before tax (shop/price.go)"))
	model := local.Model()

	summarize := &hook.Hooks{
		Name: "local-summary",
		BeforeCompact: func(ctx context.Context, ev *hook.BeforeCompactEvent) (*hook.BeforeCompactResult, error) {
			prep := ev.Preparation
			// ev.Transcript holds the same texts for Prime's summarizer.
			history, turnPrefix := prep.Transcripts(compaction.TranscriptOptionsFor(model))
			text := "<conversation>\n" + strings.TrimSpace(history+"\n\n"+turnPrefix) + "\n</conversation>\n\nSummarize this coding session for the agent that carries it on."
			msg, err := llm.Complete(ctx, local.Provider(), &llm.Request{
				Model:    model,
				Messages: []llm.Message{&llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}}},
			})
			if err != nil {
				return nil, err // reported; Prime then summarizes itself
			}
			readFiles, modifiedFiles := prep.FileOps.Lists()
			return &hook.BeforeCompactResult{Compaction: &hook.CustomCompaction{
				Summary:          strings.TrimSpace(msg.Text()) + compaction.FormatFileLists(readFiles, modifiedFiles),
				FirstKeptEntryID: prep.FirstKeptEntryID,
				TokensBefore:     prep.TokensBefore,
				Details:          compaction.Details{ReadFiles: readFiles, ModifiedFiles: modifiedFiles}.Encode(),
			}}, nil
		},
	}

	s, cleanup := exampleSession()
	defer cleanup()
	st, _ := settings.Defaults().WithOverride("compaction.keepRecentTokens", "1")
	ag := agent.New(s, agent.Config{Settings: st, AgentDir: filepath.Dir(s.File()), Getenv: func(string) string { return "" },
		Hooks: hook.New(nil, hook.Options{Hooks: summarize})})
	res, err := ag.Compact(context.Background(), agent.CompactRequest{})
	if err != nil {
		panic(err)
	}
	p, _ := res.Entry.Payload()
	c := p.(*session.CompactionEntry)
	fmt.Printf("stored by %s (fromHook %v), keeping %s on:\n%s\n\n", res.Hook, c.FromHook, c.FirstKeptEntryID, c.Summary)
	sent := local.LastRequest().LastUserText()
	fmt.Printf("%s was sent %d characters, starting:\n%s\n", model.ID, len(sent), strings.Join(strings.SplitN(sent, "\n", 3)[:2], "\n"))
	// Output:
	// stored by local-summary (fromHook true), keeping a6 on:
	// ## Goal
	// Fix checkout totals when a coupon and tax both apply.
	//
	// ## Progress
	// ### Done
	// - [x] Coupon now comes off before tax (shop/price.go)
	//
	// <modified-files>
	// shop/price.go
	// shop/price_regress_test.go
	// </modified-files>
	//
	// gpt-test was sent 1732 characters, starting:
	// <conversation>
	// [User]: The checkout total is wrong when a coupon and tax both apply. Screenshot: [image]
}

// exampleSession opens a copy of testdata/transcript.jsonl in a temporary
// directory that cleanup removes.
func exampleSession() (s *session.Session, cleanup func()) {
	data, err := os.ReadFile(filepath.Join("testdata", "transcript.jsonl"))
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "prime-example-")
	if err != nil {
		panic(err)
	}
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		panic(err)
	}
	if s, err = session.Open(path); err != nil {
		panic(err)
	}
	return s, func() { s.Close(); os.RemoveAll(dir) }
}
