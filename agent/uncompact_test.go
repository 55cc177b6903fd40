package agent_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/internal/pioracle"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
)

// sameContext compares two contexts message by message: the same source
// entries, and each message the same as JSON.
func sameContext(t *testing.T, what string, got, want session.Context) {
	t.Helper()
	if len(got.Messages) != len(want.Messages) {
		t.Fatalf("%s: %d messages, want %d", what, len(got.Messages), len(want.Messages))
	}
	for i := range got.Messages {
		g, err := json.Marshal(got.Messages[i])
		if err != nil {
			t.Fatal(err)
		}
		w, err := json.Marshal(want.Messages[i])
		if err != nil {
			t.Fatal(err)
		}
		if got.Entries[i].ID != want.Entries[i].ID || string(g) != string(w) {
			t.Fatalf("%s: message %d differs: entry %s %s, want entry %s %s", what, i, got.Entries[i].ID, g, want.Entries[i].ID, w)
		}
	}
}

// TestUncompact: compact, undo, and the model sees again what it saw before
// the compaction, in this process and after reloading the file (whose last
// entry is the custom entry marking the move); the compaction stays in the
// tree as a side branch.
func TestUncompact(t *testing.T) {
	for _, pi16 := range []bool{false, true} {
		path := genFileOf(t, sessiongen.Options{Entries: 600, Seed: 7, ContextWindow: 40_000, KeepRecentTokens: 6_000, ReserveTokens: 4_000, Pi16: pi16})
		var ev events
		ag, res := compactOffline(t, path, config(t.TempDir(), testSettings(t, "compaction.keepRecentTokens", "3000"), &ev))
		before, err := session.BuildContext(res.Plan.Path)
		if err != nil {
			t.Fatal(err)
		}
		un, err := ag.Uncompact(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		if un.Compaction.ID != res.Entry.ID || un.Entry.ParentID != res.Plan.LeafID || un.Left != 0 {
			t.Errorf("undid %s (left %d) at %s; want %s at %s", un.Compaction.ID, un.Left, un.Entry.ParentID, res.Entry.ID, res.Plan.LeafID)
		}
		sameContext(t, "after the undo", un.Context, before)
		if un.Tokens != before.EstimateNext().Tokens {
			t.Errorf("%d tokens after the undo, %d before the compaction", un.Tokens, before.EstimateNext().Tokens)
		}
		if len(eventsOf[agent.CompactionUndone](&ev)) != 1 {
			t.Error("no CompactionUndone event")
		}
		s, err := session.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if s.LeafID() != un.Entry.ID || s.Entry(res.Entry.ID) == nil {
			t.Fatalf("reloaded: leaf %s, compaction there: %v", s.LeafID(), s.Entry(res.Entry.ID) != nil)
		}
		after, err := s.Context("")
		if err != nil {
			t.Fatal(err)
		}
		sameContext(t, "after reloading", after, before)
	}
}

// TestUncompactErrors: ids that are not compactions, unknown ids, and a path
// without any compaction are errors that write nothing; undoing a
// compaction after more work leaves that work on the side branch, and says
// so.
func TestUncompactErrors(t *testing.T) {
	path := genFileOf(t, sessiongen.Options{Entries: 300, Seed: 3, NoCompactions: true, BranchRate: -1})
	ag, err := agent.Load(path, config(t.TempDir(), testSettings(t, "compaction.keepRecentTokens", "2000"), nil))
	if err != nil {
		t.Fatal(err)
	}
	defer ag.Close()
	if _, err := ag.Uncompact(t.Context(), ""); !errors.Is(err, agent.ErrNoCompaction) {
		t.Errorf("no compaction: %v", err)
	}
	if _, err := ag.Uncompact(t.Context(), "nope"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	var leaf string
	ag.View(func(s *session.Session) { leaf = s.LeafID() })
	if _, err := ag.Uncompact(t.Context(), leaf); !errors.Is(err, agent.ErrNotCompaction) {
		t.Errorf("a message: %v", err)
	}
	before, err := ag.Pin("pinned before the compaction")
	if err != nil {
		t.Fatal(err)
	}
	res, err := ag.Compact(t.Context(), agent.CompactRequest{Summarizer: agent.SummarizerChoice{Offline: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Unpin(before.ID); err != nil {
		t.Fatal(err)
	}
	after, err := ag.Pin("pinned after the compaction")
	if err != nil {
		t.Fatal(err)
	}
	un, err := ag.Uncompact(t.Context(), res.Entry.ID)
	if err != nil {
		t.Fatal(err)
	}
	if un.Left != 2 {
		t.Errorf("%d entries left on the side branch, want the unpin and the pin", un.Left)
	}
	// The pins in force are kept through the undo, in the file too.
	texts := func(pins []compaction.Pin) []string {
		var out []string
		for _, p := range pins {
			out = append(out, p.Text)
		}
		return out
	}
	if got := texts(ag.Pins()); !slices.Equal(got, []string{"pinned after the compaction"}) {
		t.Errorf("pins after the undo %q", got)
	}
	// It is the same pin: its id and time are kept.
	if pins := ag.Pins(); len(pins) != 1 || pins[0] != after {
		t.Errorf("the pin after the undo %+v, before it %+v", pins, after)
	}
	ag.Close()
	s, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := compaction.Pins(s.LeafPath()); len(got) != 1 || got[0] != after {
		t.Errorf("pins in the file after the undo %+v, want %+v", got, after)
	}
	// Its id unpins it there.
	ag2, err := agent.Open(path, config(t.TempDir(), testSettings(t), nil))
	if err != nil {
		t.Fatal(err)
	}
	defer ag2.Close()
	if _, err := ag2.Unpin(after.ID); err != nil || len(ag2.Pins()) != 0 {
		t.Errorf("unpin %s after the undo: %v, pins %+v", after.ID, err, ag2.Pins())
	}
}

// TestReceipt: a compaction's receipt records what it did, in the details
// and in the result; a hook's compaction has only what its entry holds.
func TestReceipt(t *testing.T) {
	path := genFileOf(t, sessiongen.Options{Entries: 400, Seed: 5, NoCompactions: true, BranchRate: -1})
	ag, res := compactOffline(t, path, config(t.TempDir(), testSettings(t, "compaction.keepRecentTokens", "2000"), nil))
	r := res.Receipt
	prep := res.Plan.Preparation
	if r == nil || !r.Recorded || r.Reason != "manual" || r.Model != "" || !r.Deterministic || r.Background {
		t.Fatalf("receipt %+v", r)
	}
	if r.Messages != len(prep.MessagesToSummarize)+len(prep.TurnPrefixMessages) || r.TokensBefore != res.TokensBefore || r.TokensAfter != res.TokensAfter {
		t.Errorf("receipt %d messages, %d → %d tokens; the compaction %d messages, %d → %d", r.Messages, r.TokensBefore, r.TokensAfter,
			len(prep.MessagesToSummarize)+len(prep.TurnPrefixMessages), res.TokensBefore, res.TokensAfter)
	}
	if r.Ledger == nil || r.Ledger.Checked != r.Ledger.Kept+len(r.Ledger.Repaired)+len(r.Ledger.Unfit) || r.Ledger.Checked < len(prep.ModifiedFiles()) {
		t.Errorf("ledger check %+v", r.Ledger)
	}
	again, err := ag.Receipt("")
	if err != nil || again.EntryID != res.Entry.ID || again.Receipt != r.Receipt {
		t.Errorf("Receipt(\"\") = %+v, %v", again, err)
	}
	hooked := &session.CompactionEntry{Summary: "by a hook", FirstKeptEntryID: prep.FirstKeptEntryID, TokensBefore: 99, FromHook: true,
		Details: compaction.Details{}.Encode()}
	ag.Close()
	s, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.Append(hooked)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	hr, err := agent.ReceiptOf(e)
	if err != nil || hr.Recorded || !hr.FromHook || hr.TokensBefore != 99 || hr.Ledger != nil {
		t.Errorf("a hook's receipt %+v, %v", hr, err)
	}
	if _, err := agent.ReceiptOf(res.Plan.Path[len(res.Plan.Path)-1]); !errors.Is(err, agent.ErrNotCompaction) {
		t.Errorf("the receipt of a message: %v", err)
	}
}

// TestPiReadsUncompact: pi 1.6 reads a file after an undone compaction as
// Prime does: the same messages, estimates and system state at its leaf,
// the entry marking the move included (internal/pioracle/harness; opt-in).
func TestPiReadsUncompact(t *testing.T) {
	pioracle.Path(t)
	for seed := uint64(1); seed <= 4; seed++ {
		path := genFileOf(t, sessiongen.Options{Entries: 900, Seed: seed, ContextWindow: 40_000, KeepRecentTokens: 6_000, ReserveTokens: 4_000, Pi16: seed%2 == 0})
		ag, _ := compactOffline(t, path, config(t.TempDir(), testSettings(t, "compaction.keepRecentTokens", "3000"), nil))
		if _, err := ag.Uncompact(t.Context(), ""); err != nil {
			t.Fatal(err)
		}
		ag.Close()
		comparePiContext(t, "after an undone compaction", path, "", piContext(t, path, ""))
	}
}
