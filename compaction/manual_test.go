package compaction

import (
	"errors"
	"slices"
	"testing"
)

func manual(n int) Settings { s := keep(n); s.Manual = true; return s }

// TestPrepareManual: a compaction the user asks for summarizes everything
// before the latest exchange when keepRecentTokens would keep it all, and
// finds nothing to do only when nothing precedes that exchange; when
// keepRecentTokens leaves something to summarize, the cut is pi's.
func TestPrepareManual(t *testing.T) {
	tests := []struct {
		name, path string
		keep       int
		// first is the first kept entry; summarized and prefix the
		// messages summarized and the turn prefix (nil: nothing to
		// compact, with reason).
		first               string
		summarized, prefix  []string
		reason              string
		piFirst, piNotFound bool // the same path without Manual: pi's cut is first, or nothing
	}{
		{name: "two exchanges that fit", path: "S1:400 u1:40 a1:40 u2:40 a2:40", keep: DefaultKeepRecentTokens,
			first: "u2", summarized: []string{"u1", "a1"}, piNotFound: true},
		{name: "metadata before the latest exchange stays with it", path: "u1:40 a1:40 m1 l1 u2:40 a2:40", keep: DefaultKeepRecentTokens,
			first: "m1", summarized: []string{"u1", "a1"}, piNotFound: true},
		{name: "a tool loop in the latest exchange", path: "u1:40 a1:40 u2:40 a2:40!read=x.go r2:400 a3:40", keep: DefaultKeepRecentTokens,
			first: "u2", summarized: []string{"u1", "a1"}, piNotFound: true},
		{name: "a bash execution begins the latest exchange", path: "u1:40 a1:40 b1:40", keep: DefaultKeepRecentTokens,
			first: "b1", summarized: []string{"u1", "a1"}, piNotFound: true},
		{name: "after a compaction, what it kept", path: "u1:40 a1:40 u2:40 a2:40 C1(keep u2) u3:40 a3:40", keep: DefaultKeepRecentTokens,
			first: "u3", summarized: []string{"u2", "a2"}, piNotFound: true},
		{name: "keepRecentTokens cuts: pi's cut", path: "u1:4000 a1:4000 u2:4000 a2:4000 u3:40 a3:40", keep: 1000,
			first: "a2", summarized: []string{"u1", "a1"}, prefix: []string{"u2"}, piFirst: true},
		{name: "a split turn: pi's cut", path: "u1:40 a1:8!read=x.go r1:4000 a2:40", keep: 500,
			first: "a2", prefix: []string{"u1", "a1", "r1"}, piFirst: true},
		{name: "one exchange", path: "S1:4000 u1:40 a1:40", keep: DefaultKeepRecentTokens,
			reason: "the conversation is one exchange (20 tokens), with nothing before it to summarize", piNotFound: true},
		{name: "one exchange since the last compaction", path: "u1:40 a1:40 u2:40 a2:40 C1(keep u3) u3:40 a3:40", keep: DefaultKeepRecentTokens,
			reason: "since the last compaction, the conversation is one exchange (20 tokens), with nothing before it to summarize", piNotFound: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newBuilder(t).parse(tc.path)
			p, err := Prepare(b.path, manual(tc.keep))
			pi, piErr := Prepare(b.path, keep(tc.keep))
			if tc.reason != "" {
				var nc *NotCompactableError
				if !errors.As(err, &nc) || !errors.Is(err, ErrNothingToCompact) || nc.Reason != tc.reason {
					t.Fatalf("err = %v, want nothing to compact: %s", err, tc.reason)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if p.FirstKeptEntryID != tc.first || !slices.Equal(ids(t, p.MessagesToSummarize), tc.summarized) && len(tc.summarized)+len(p.MessagesToSummarize) > 0 ||
					!slices.Equal(ids(t, p.TurnPrefixMessages), tc.prefix) && len(tc.prefix)+len(p.TurnPrefixMessages) > 0 {
					t.Errorf("kept from %s, summarized %v, prefix %v; want %s, %v, %v",
						p.FirstKeptEntryID, ids(t, p.MessagesToSummarize), ids(t, p.TurnPrefixMessages), tc.first, tc.summarized, tc.prefix)
				}
				if !p.Settings.Manual {
					t.Error("the preparation does not record that it is manual")
				}
			}
			switch {
			case tc.piNotFound && !errors.Is(piErr, ErrNothingToCompact):
				t.Errorf("without Manual: %v, want nothing to compact", piErr)
			case tc.piFirst && (piErr != nil || pi.FirstKeptEntryID != p.FirstKeptEntryID || pi.IsSplitTurn != p.IsSplitTurn):
				t.Errorf("without Manual: %v %+v, want the same cut", piErr, pi)
			}
		})
	}
}

// TestNothingToCompactReasons: the reasons add up (the system prompt and
// tools are not the conversation) and say why nothing can be cut.
func TestNothingToCompactReasons(t *testing.T) {
	tests := []struct {
		path   string
		keep   int
		reason string
	}{
		{"S1:4000 u1:40 a1:40", DefaultKeepRecentTokens,
			"the conversation's 20 tokens fit in the 20,000 kept verbatim (keepRecentTokens), so a summary would replace nothing"},
		// The case: the walk reaches keepRecentTokens inside the
		// system prompt, so the cut is the first message.
		{"S1:4000 u1:40 a1:40", 300,
			"the conversation's 20 tokens fit in the 300 kept verbatim (keepRecentTokens), so a summary would replace nothing"},
		{"S1:400 u1:4000 a1:40", 300,
			"the newest 300 tokens kept verbatim (keepRecentTokens) reach into the first message, and nothing before it can be summarized (1,010 tokens of conversation, 100 of system prompt and tools)"},
	}
	for _, tc := range tests {
		_, err := Prepare(newBuilder(t).parse(tc.path).path, keep(tc.keep))
		var nc *NotCompactableError
		if !errors.As(err, &nc) || nc.Reason != tc.reason {
			t.Errorf("%s, keep %d: %v\nwant %s", tc.path, tc.keep, err, tc.reason)
		}
	}
}

// TestReadable: the summary a user reads has no split-turn scaffolding.
func TestReadable(t *testing.T) {
	turn := "## Turn Request\nFix the lexer.\n\n## Done in This Turn So Far\n- read lexer.go"
	for _, tc := range []struct{ stored, want string }{
		{noHistory + splitTurnSeparator + turn, turn},
		{"## Goal\nShip it." + splitTurnSeparator + turn, "## Goal\nShip it.\n\n" + turn},
		{"## Goal\nShip it.", "## Goal\nShip it."},
	} {
		if got := Readable(tc.stored); got != tc.want {
			t.Errorf("Readable(%q) = %q, want %q", tc.stored, got, tc.want)
		}
	}
}
