package hook

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prime-agent/prime/session"
)

// The scenarios of pi's compaction-extensions.test.ts and of its hook
// tests for tree navigation, each with in-process handlers and with
// real command hooks (a shell script), played through the orchestration of
// compactFlow and treeFlow.

// named reports whether a handler name is the test handler name: an
// in-process handler's name, or a command line with name as an argument.
func named(handler, name string) bool {
	return handler == name || strings.Contains(handler, " "+name+" ")
}

func TestPreparationCutsTheTestSession(t *testing.T) {
	// The scenarios rely on this shape: a history to summarize (the first
	// turn) and a kept part starting at the second user message.
	s := testSession(t)
	run, log := goRunner(t, behavior{name: "ext1"})
	if _, _, err := compactFlow(context.Background(), run, s, compactOptions{}); err != nil {
		t.Fatal(err)
	}
	prep := ofType(log(), EventBeforeCompact)[0].event["preparation"].(map[string]any)
	if got := prep["firstKeptEntryId"]; got != "u2" {
		t.Fatalf("firstKeptEntryId = %v, want u2", got)
	}
	if n := len(prep["messagesToSummarize"].([]any)); n != 6 {
		t.Fatalf("%d messages to summarize, want 6 (u1 … a3)", n)
	}
}

func TestPiCompactionExtensions(t *testing.T) {
	for _, kind := range handlerKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Run("39 one before and one after event", func(t *testing.T) {
				s := testSession(t)
				run, log := kind.runner(t, behavior{name: "ext1"})
				if _, _, err := compactFlow(context.Background(), run, s, compactOptions{}); err != nil {
					t.Fatal(err)
				}
				if got := sequence(log()); got != "ext1:session_before_compact ext1:session_compact" {
					t.Fatalf("events: %s", got)
				}
				before := log()[0].event
				prep := before["preparation"].(map[string]any)
				if _, ok := prep["messagesToSummarize"].([]any); !ok {
					t.Errorf("messagesToSummarize is %T", prep["messagesToSummarize"])
				}
				if _, ok := prep["turnPrefixMessages"].([]any); !ok {
					t.Errorf("turnPrefixMessages is %T", prep["turnPrefixMessages"])
				}
				if tb, ok := prep["tokensBefore"].(float64); !ok || tb < 0 {
					t.Errorf("tokensBefore = %v", prep["tokensBefore"])
				}
				if _, ok := prep["isSplitTurn"].(bool); !ok {
					t.Errorf("isSplitTurn is %T", prep["isSplitTurn"])
				}
				if entries, ok := before["branchEntries"].([]any); !ok || len(entries) != 10 {
					t.Errorf("branchEntries = %v", before["branchEntries"])
				}
				after := log()[1].event
				entry := after["compactionEntry"].(map[string]any)
				if summary, _ := entry["summary"].(string); summary == "" {
					t.Error("the compaction entry has no summary")
				}
				if after["fromExtension"] != false {
					t.Errorf("fromExtension = %v, want false", after["fromExtension"])
				}
			})

			t.Run("40 cancel writes nothing", func(t *testing.T) {
				s := testSession(t)
				n := len(s.entries)
				run, log := kind.runner(t, behavior{name: "ext1", compact: "cancel"})
				_, d, err := compactFlow(context.Background(), run, s, compactOptions{})
				if !errors.Is(err, errCompactionCancelled) {
					t.Fatalf("err = %v, want cancelled", err)
				}
				if !named(d.CancelledBy, "ext1") || len(s.entries) != n || s.leaf != "a5" {
					t.Fatalf("cancelled by %q; %d entries (want %d), leaf %s", d.CancelledBy, len(s.entries), n, s.leaf)
				}
				if got := sequence(log()); got != "ext1:session_before_compact ext1:session_compact_failed" {
					t.Fatalf("events: %s", got)
				}
				failed := log()[1].event
				if failed["aborted"] != true || failed["fromExtension"] != true || !strings.Contains(failed["errorMessage"].(string), "cancelled") {
					t.Errorf("session_compact_failed = %v", failed)
				}
			})

			t.Run("41 42 46 48 custom compaction is stored", func(t *testing.T) {
				s := testSession(t)
				run, log := kind.runner(t, behavior{name: "ext1", compact: "custom"})
				e, d, err := compactFlow(context.Background(), run, s, compactOptions{instructions: "  focus on tests "})
				if err != nil {
					t.Fatal(err)
				}
				p, err := e.Payload()
				if err != nil {
					t.Fatal(err)
				}
				c := p.(*session.CompactionEntry)
				if c.Summary != "custom summary from ext1" || c.TokensBefore != 999 || !c.FromHook ||
					c.FirstKeptEntryID != "u2" || string(c.Details) != `{"by":"ext1"}` || c.CustomInstructions != "focus on tests" {
					t.Errorf("stored %+v", c)
				}
				if !named(d.CompactionBy, "ext1") {
					t.Errorf("CompactionBy = %q", d.CompactionBy)
				}
				// 42: the session now holds the entry, and (#17) the after
				// event carries exactly that entry.
				if s.entries[len(s.entries)-1] != e {
					t.Fatal("the entry was not appended")
				}
				after := ofType(log(), EventCompact)
				if len(after) != 1 {
					t.Fatalf("%d session_compact events", len(after))
				}
				ce := after[0].event["compactionEntry"].(map[string]any)
				if ce["type"] != "compaction" || ce["id"] != e.ID || ce["parentId"] != "a5" ||
					ce["summary"] != "custom summary from ext1" || ce["tokensBefore"] != 999.0 || ce["fromHook"] != true {
					t.Errorf("compactionEntry = %v", ce)
				}
				if after[0].event["fromExtension"] != true {
					t.Errorf("fromExtension = %v", after[0].event["fromExtension"])
				}
			})

			t.Run("43 a failing handler leaves the default compaction", func(t *testing.T) {
				s := testSession(t)
				run, log := kind.runner(t, behavior{name: "ext1", compact: "fail"})
				e, d, err := compactFlow(context.Background(), run, s, compactOptions{})
				if err != nil {
					t.Fatal(err)
				}
				p, _ := e.Payload()
				if c := p.(*session.CompactionEntry); c.FromHook || !strings.Contains(c.Summary, "## Goal") {
					t.Errorf("stored %+v", c)
				}
				if len(d.Reports) != 1 || d.Reports[0].Kind != Failed || d.Reports[0].Handler == "" ||
					!strings.Contains(d.Reports[0].Error(), "boom from ext1") {
					t.Fatalf("reports: %v", d.Reports)
				}
				if after := ofType(log(), EventCompact); len(after) != 1 || after[0].event["fromExtension"] != false {
					t.Errorf("session_compact: %v", after)
				}
			})

			t.Run("44 two extensions in order", func(t *testing.T) {
				s := testSession(t)
				run, log := kind.runner(t, behavior{name: "ext1"}, behavior{name: "ext2"})
				if _, _, err := compactFlow(context.Background(), run, s, compactOptions{}); err != nil {
					t.Fatal(err)
				}
				want := "ext1:session_before_compact ext2:session_before_compact ext1:session_compact ext2:session_compact"
				if got := sequence(log()); got != want {
					t.Fatalf("events:\n got %s\nwant %s", got, want)
				}
			})

			t.Run("45 event shape", func(t *testing.T) {
				s := testSession(t)
				run, log := kind.runner(t, behavior{name: "ext1"})
				if _, _, err := compactFlow(context.Background(), run, s, compactOptions{instructions: "keep it short"}); err != nil {
					t.Fatal(err)
				}
				ev := log()[0].event
				prep := ev["preparation"].(map[string]any)
				if id, _ := prep["firstKeptEntryId"].(string); id == "" {
					t.Error("firstKeptEntryId missing")
				}
				for _, k := range []string{"fileOps", "settings"} {
					if _, ok := prep[k].(map[string]any); !ok {
						t.Errorf("preparation.%s = %v", k, prep[k])
					}
				}
				for _, e := range ev["branchEntries"].([]any) {
					m := e.(map[string]any)
					if m["type"] != "message" || m["id"] == nil {
						t.Errorf("branch entry %v", m)
					}
				}
				first := prep["messagesToSummarize"].([]any)[0].(map[string]any)
				if first["role"] != "user" || first["timestamp"] == nil {
					t.Errorf("messages are not in the session's format: %v", first)
				}
				if ev["customInstructions"] != "keep it short" || ev["reason"] != "manual" || ev["willRetry"] != false {
					t.Errorf("event: instructions %v, reason %v, willRetry %v", ev["customInstructions"], ev["reason"], ev["willRetry"])
				}
			})

			t.Run("179 reason and willRetry", func(t *testing.T) {
				for _, tc := range []struct {
					reason    Reason
					willRetry bool
				}{{ReasonManual, false}, {ReasonThreshold, false}, {ReasonOverflow, true}} {
					s := testSession(t)
					run, log := kind.runner(t, behavior{name: "ext1"})
					if _, _, err := compactFlow(context.Background(), run, s, compactOptions{reason: tc.reason, willRetry: tc.willRetry}); err != nil {
						t.Fatal(err)
					}
					for _, l := range log() {
						if l.event["reason"] != string(tc.reason) || l.event["willRetry"] != tc.willRetry {
							t.Errorf("%s: reason %v, willRetry %v; want %s, %v", l.typ(), l.event["reason"], l.event["willRetry"], tc.reason, tc.willRetry)
						}
					}
				}
			})

			t.Run("179 reason and willRetry on failure", func(t *testing.T) {
				s := testSession(t)
				run, log := kind.runner(t, behavior{name: "ext1", compact: "cancel"})
				_, _, _ = compactFlow(context.Background(), run, s, compactOptions{reason: ReasonOverflow, willRetry: true})
				failed := ofType(log(), EventCompactFailed)
				if len(failed) != 1 || failed[0].event["reason"] != "overflow" || failed[0].event["willRetry"] != true {
					t.Fatalf("session_compact_failed: %v", failed)
				}
			})

			t.Run("178 cancelled navigation changes nothing", func(t *testing.T) {
				s := testSession(t)
				n := len(s.entries)
				run, log := kind.runner(t, behavior{name: "ext1", tree: "cancel"})
				e, d, err := treeFlow(context.Background(), run, s, "b2", true)
				if err != nil {
					t.Fatal(err)
				}
				if !d.Cancelled || !named(d.CancelledBy, "ext1") || e != nil || s.leaf != "a5" || len(s.entries) != n {
					t.Fatalf("cancelled %v by %q, entry %v, leaf %s, %d entries", d.Cancelled, d.CancelledBy, e, s.leaf, len(s.entries))
				}
				if got := sequence(log()); got != "ext1:session_before_tree" {
					t.Fatalf("events: %s", got)
				}
				prep := log()[0].event["preparation"].(map[string]any)
				if prep["targetId"] != "b2" || prep["oldLeafId"] != "a5" || prep["commonAncestorId"] != "a3" ||
					len(prep["entriesToSummarize"].([]any)) != 4 || prep["userWantsSummary"] != true {
					t.Errorf("preparation = %v", prep)
				}
			})

			t.Run("tree summary from a hook", func(t *testing.T) {
				s := testSession(t)
				run, log := kind.runner(t, behavior{name: "ext1", tree: "summary"})
				e, _, err := treeFlow(context.Background(), run, s, "b2", true)
				if err != nil {
					t.Fatal(err)
				}
				p, _ := e.Payload()
				bs := p.(*session.BranchSummaryEntry)
				if bs.Summary != "branch summary from ext1" || !bs.FromHook || bs.FromID != "a5" || e.ParentID != "b2" {
					t.Errorf("stored %+v under %s", bs, e.ParentID)
				}
				after := ofType(log(), EventTree)
				if len(after) != 1 {
					t.Fatalf("%d session_tree events", len(after))
				}
				ev := after[0].event
				if ev["newLeafId"] != e.ID || ev["oldLeafId"] != "a5" || ev["fromExtension"] != true ||
					ev["summaryEntry"].(map[string]any)["id"] != e.ID {
					t.Errorf("session_tree = %v", ev)
				}
			})

			t.Run("tree summary unused when none was asked for", func(t *testing.T) {
				s := testSession(t)
				run, log := kind.runner(t, behavior{name: "ext1", tree: "summary"})
				e, d, err := treeFlow(context.Background(), run, s, "b2", false)
				if err != nil {
					t.Fatal(err)
				}
				if e != nil || d.Summary != nil || s.leaf != "b2" {
					t.Fatalf("entry %v, summary %v, leaf %s", e, d.Summary, s.leaf)
				}
				after := ofType(log(), EventTree)
				if len(after) != 1 || after[0].event["summaryEntry"] != nil || after[0].event["fromExtension"] != false {
					t.Errorf("session_tree = %v", after)
				}
			})
		})
	}
}
