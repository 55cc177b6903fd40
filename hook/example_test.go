package hook_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/hook"
	"github.com/prime-agent/prime/session"
)

// A program that embeds Prime writes its own summaries: an in-process
// handler answers session_before_compact with a compaction, which the
// orchestration appends instead of running Prime's summarizer.
func ExampleHooks() {
	ticket := &hook.Hooks{
		Name: "ticket-summary",
		BeforeCompact: func(ctx context.Context, ev *hook.BeforeCompactEvent) (*hook.BeforeCompactResult, error) {
			p := ev.Preparation
			return &hook.BeforeCompactResult{Compaction: &hook.CustomCompaction{
				Summary:          fmt.Sprintf("## Goal\nClose ticket APP-42.\n\n(%d earlier messages condensed by the host)", len(p.MessagesToSummarize)),
				FirstKeptEntryID: p.FirstKeptEntryID,
				TokensBefore:     p.TokensBefore,
				Details:          []byte(`{"ticket":"APP-42"}`),
			}}, nil
		},
	}
	audit := &hook.Hooks{
		Name: "audit",
		Compact: func(ctx context.Context, ev *hook.CompactEvent) error {
			fmt.Printf("audit: compaction %s stored (from a hook: %v)\n", ev.CompactionEntry.ID, ev.FromExtension)
			return nil
		},
	}
	runner := hook.New(nil, hook.Options{Hooks: hook.Compose(ticket, audit)})

	path := examplePath()
	prep, err := compaction.Prepare(path, compaction.Settings{KeepRecentTokens: 20})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	d, err := runner.BeforeCompact(ctx, &hook.BeforeCompactEvent{Preparation: prep, BranchEntries: path, Reason: hook.ReasonManual})
	if err != nil || d.Cancelled || d.Compaction == nil {
		panic("no custom compaction")
	}
	fmt.Printf("%s wrote the summary; it keeps %s on (fromHook %v)\n", d.CompactionBy, d.Compaction.FirstKeptEntryID, d.Compaction.FromHook)
	fmt.Println(d.Compaction.Summary)

	// The orchestration appends d.Compaction and then reports the entry.
	line, _ := session.EncodeEntry("c1", "a2", "2026-01-05T10:05:00.000Z", d.Compaction)
	appended, _ := session.NewEntry(line)
	runner.Compact(ctx, &hook.CompactEvent{CompactionEntry: appended, FromExtension: true, Reason: hook.ReasonManual})
	// Output:
	// ticket-summary wrote the summary; it keeps u2 on (fromHook true)
	// ## Goal
	// Close ticket APP-42.
	//
	// (2 earlier messages condensed by the host)
	// audit: compaction c1 stored (from a hook: true)
}

// examplePath is a two-turn conversation, root to leaf.
func examplePath() []*session.Entry {
	lines := []string{
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-05T10:00:00.000Z","message":{"role":"user","content":"Fix the login redirect loop reported in APP-42.","timestamp":1767607200000}}`,
		`{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-05T10:01:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"The session cookie was set on the wrong path; fixed in auth/cookie.go."}],"stopReason":"stop","timestamp":1767607260000}}`,
		`{"type":"message","id":"u2","parentId":"a1","timestamp":"2026-01-05T10:02:00.000Z","message":{"role":"user","content":"Add a regression test.","timestamp":1767607320000}}`,
		`{"type":"message","id":"a2","parentId":"u2","timestamp":"2026-01-05T10:03:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("Added TestRedirectLoop. ", 3) + `"}],"stopReason":"stop","timestamp":1767607380000}}`,
	}
	path := make([]*session.Entry, len(lines))
	for i, l := range lines {
		e, err := session.NewEntry([]byte(l))
		if err != nil {
			panic(err)
		}
		path[i] = e
	}
	return path
}
