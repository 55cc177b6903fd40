package compaction

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
)

// Issue 8: five places where Prime decided differently from pi 1.6. Each
// test writes a small session as pi writes one and checks Prime's answer
// against pi 1.6's, recorded with internal/pioracle/harness on the same lines (the
// same shapes are sessiongen edge cases, which TestPiOracle compares with
// pi at every entry).

// issue8Lines renders entries as a session file: each entry is
// "id parent type {members}", the common members filled in.
func issue8Lines(entries ...string) []byte {
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"issue8","timestamp":"2025-12-03T14:00:00.000Z","cwd":"/tmp/project"}` + "\n")
	for i, e := range entries {
		f := strings.SplitN(e, " ", 4)
		parent := `"` + f[1] + `"`
		if f[1] == "-" {
			parent = "null"
		}
		fmt.Fprintf(&b, `{"type":%q,"id":%q,"parentId":%s,"timestamp":"2025-12-03T14:%02d:%02d.000Z",%s`+"\n",
			f[2], f[0], parent, (i+1)/60, (i+1)%60, strings.TrimPrefix(f[3], "{"))
	}
	return []byte(b.String())
}

// Message members of the lines, as pi writes them.
func i8user(text string, ts int) string {
	return fmt.Sprintf(`{"message":{"role":"user","content":[{"type":"text","text":%q}],"timestamp":%d}}`, text, 1764770400000+ts)
}

func i8assistant(ts int, text string, calls ...string) string {
	content := []string{}
	if text != "" {
		content = append(content, fmt.Sprintf(`{"type":"text","text":%q}`, text))
	}
	content = append(content, calls...)
	stop := "stop"
	if len(calls) > 0 {
		stop = "toolUse"
	}
	return fmt.Sprintf(`{"message":{"role":"assistant","content":[%s],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5",`+
		`"usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},`+
		`"stopReason":%q,"timestamp":%d}}`, strings.Join(content, ","), stop, 1764770400000+ts)
}

func i8call(id, name, args string) string {
	return fmt.Sprintf(`{"type":"toolCall","id":%q,"name":%q,"arguments":%s}`, id, name, args)
}

func i8result(id, name, text string, ts int, extra string) string {
	return fmt.Sprintf(`{"message":{"role":"toolResult","toolCallId":%q,"toolName":%q,"content":[{"type":"text","text":%q}],"isError":false,"timestamp":%d%s}}`,
		id, name, text, 1764770400000+ts, extra)
}

// issue8Sessions are the sessions of the five tests, by name.
var issue8Sessions = map[string][]byte{
	// 1: empty paths in a compaction's and a branch summary's lists, and
	// a tool call on an empty path.
	"empty-paths": issue8Lines(
		"u1 - message "+i8user("Read the files. "+strings.Repeat("x", 200), 1),
		"a1 u1 message "+i8assistant(2, "Reading.", i8call("c1", "read", `{"path":"a.go"}`)),
		"r1 a1 message "+i8result("c1", "read", "package a", 3, ""),
		"u2 r1 message "+i8user("Now b. "+strings.Repeat("y", 200), 4),
		"a2 u2 message "+i8assistant(5, "Done."),
		`C1 a2 compaction {"summary":"Read a.go.","firstKeptEntryId":"u2","tokensBefore":120,"details":{"readFiles":["","a.go"],"modifiedFiles":[""]},"fromHook":false}`,
		"u3 C1 message "+i8user("Edit d.go. "+strings.Repeat("z", 200), 6),
		"a3 u3 message "+i8assistant(7, "Editing.", i8call("c2", "read", `{"path":""}`), i8call("c3", "edit", `{"path":"d.go","oldText":"a","newText":"b"}`)),
		"r2 a3 message "+i8result("c2", "read", "no such file", 8, ""),
		"r3 r2 message "+i8result("c3", "edit", "edited", 9, ""),
		`b1 r3 branch_summary {"fromId":"zz","summary":"Tried c.go.","details":{"readFiles":["","c.go"],"modifiedFiles":[""]},"fromHook":false}`,
		"u4 b1 message "+i8user("Go on. "+strings.Repeat("w", 200), 10),
		"a4 u4 message "+i8assistant(11, "Went on."),
	),
	// 2: tool-call arguments with a lone high surrogate.
	"lone-surrogate": issue8Lines(
		"u1 - message "+i8user(strings.Repeat("q", 40), 1),
		"a1 u1 message "+i8assistant(2, "", i8call("c1", "read", `{"path":"x","s":"a\ud83db"}`)),
		"r1 a1 message "+i8result("c1", "read", "ok", 3, ""),
		"u2 r1 message "+i8user(strings.Repeat("p", 40), 4),
		"a2 u2 message "+i8assistant(5, "done"),
	),
	// 3: an empty branch summary in the branch being left.
	"empty-branch-summary": issue8Lines(
		"u1 - message "+i8user("First.", 1),
		"a1 u1 message "+i8assistant(2, "One."),
		`b1 a1 branch_summary {"fromId":"zz","summary":"","fromHook":false}`,
		"u2 b1 message "+i8user("Second.", 3),
		"a2 u2 message "+i8assistant(4, "Two."),
	),
	// 4: an older compaction inside the latest one's kept range, right
	// before the cut, with a metadata entry before it.
	"older-compaction": issue8Lines(
		"u1 - message "+i8user("One.", 1),
		"a1 u1 message "+i8assistant(2, "Reply one."),
		"u2 a1 message "+i8user("Two.", 3),
		"a2 u2 message "+i8assistant(4, "Reply two."),
		`t1 a2 thinking_level_change {"thinkingLevel":"high"}`,
		`C1 t1 compaction {"summary":"First summary.","firstKeptEntryId":"u2","tokensBefore":50,"details":{"readFiles":[],"modifiedFiles":[]},"fromHook":false}`,
		"u3 C1 message "+i8user("Three: "+strings.Repeat("long ", 30), 5),
		"a3 u3 message "+i8assistant(6, "Reply three."),
		`C2 a3 compaction {"summary":"Second summary.","firstKeptEntryId":"u2","tokensBefore":90,"details":{"readFiles":[],"modifiedFiles":[]},"fromHook":false}`,
		"u4 C2 message "+i8user("Four.", 7),
		"a4 u4 message "+i8assistant(8, "Reply four."),
	),
	// 5: a script tool's result recording the calls it made.
	"nested-calls": issue8Lines(
		"u1 - message "+i8user("Run the script. "+strings.Repeat("s", 200), 1),
		"a1 u1 message "+i8assistant(2, "Running.", i8call("c1", "script", `{"code":"await read('n1.go'); await edit('n2.go')"}`)),
		"r1 a1 message "+i8result("c1", "script", "script finished", 3,
			`,"nestedCalls":{"calls":[{"id":"n1","name":"read","status":"ok","arguments":{"path":"n1.go"},"durationMs":3},`+
				`{"id":"n2","name":"edit","status":"ok","arguments":{"path":"n2.go","oldText":"a","newText":"b"},"durationMs":4}],"complete":true}`),
		"u2 r1 message "+i8user("Thanks. "+strings.Repeat("t", 200), 4),
		"a2 u2 message "+i8assistant(5, strings.Repeat("Answer. ", 40)),
	),
}

func issue8Session(t *testing.T, name string) (*session.Session, map[string]int) {
	t.Helper()
	s, err := session.Parse(name, issue8Sessions[name])
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings()) > 0 {
		t.Fatalf("%s: %v", name, s.Warnings())
	}
	index := map[string]int{}
	for i, e := range s.Entries() {
		index[e.ID] = i
	}
	return s, index
}

// checkCut compares a preparation's cut, spans and tokensBefore with pi's.
func checkCut(t *testing.T, p *Preparation, firstKept string, split bool, history, prefix, tokensBefore int) {
	t.Helper()
	if p.FirstKeptEntryID != firstKept || p.IsSplitTurn != split || len(p.MessagesToSummarize) != history ||
		len(p.TurnPrefixMessages) != prefix || p.TokensBefore != tokensBefore {
		t.Errorf("first kept %s, split %v, %d+%d messages, tokensBefore %d; pi 1.6: %s, %v, %d+%d, %d", p.FirstKeptEntryID, p.IsSplitTurn,
			len(p.MessagesToSummarize), len(p.TurnPrefixMessages), p.TokensBefore, firstKept, split, history, prefix, tokensBefore)
	}
}

// TestIssue8EmptyPaths (1): an empty path in a summary's file lists is kept
// in the next compaction's and branch summary's lists, as pi 1.6 keeps it;
// a tool call on an empty path adds nothing, as in pi.
func TestIssue8EmptyPaths(t *testing.T) {
	s, _ := issue8Session(t, "empty-paths")
	p := mustPrepare(t, s.LeafPath(), keep(1))
	// pi 1.6: first kept a4, split, 7 + 1 messages, tokensBefore 190,
	// readFiles ["a.go"], modifiedFiles ["", "d.go"]; Prime adds the
	// branch summary's c.go (#20).
	checkCut(t, p, "a4", true, 7, 1, 190)
	if read, mod := p.ReadFiles(), p.ModifiedFiles(); !slices.Equal(read, []string{"a.go", "c.go"}) || !slices.Equal(mod, []string{"", "d.go"}) {
		t.Errorf("prepare: read %q, modified %q", read, mod)
	}
	br := CollectBranch(s.LeafPath(), s.Path("u3"))
	bp, err := prepareBranch(br.Entries, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	// pi 1.6: 4 messages, 75 tokens, readFiles ["c.go"], modifiedFiles
	// ["", "d.go"].
	if read, mod := bp.FileOps.Lists(); !slices.Equal(read, []string{"c.go"}) || !slices.Equal(mod, []string{"", "d.go"}) ||
		len(bp.Messages) != 4 || bp.TotalTokens != 75 {
		t.Errorf("branch: %d messages, %d tokens, read %q, modified %q", len(bp.Messages), bp.TotalTokens, read, mod)
	}
	res, err := Compact(t.Context(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Summary, "<modified-files>\n\nd.go\n</modified-files>") {
		t.Errorf("the summary's lists drop the empty path:\n%s", res.Summary[strings.Index(res.Summary, "<read-files>"):])
	}
}

// TestIssue8LoneSurrogate (2): a lone surrogate in tool-call arguments
// counts as the six characters JSON.stringify writes for it, so the call
// is 8 tokens (4 + 27 characters), not 7, and the keep-recent walk reaches
// its budget on it.
func TestIssue8LoneSurrogate(t *testing.T) {
	s, index := issue8Session(t, "lone-surrogate")
	m, err := s.Entry("a1").Message()
	if err != nil {
		t.Fatal(err)
	}
	if got := session.EstimateTokens(m); got != 8 {
		t.Errorf("the call is %d tokens, pi 1.6 counts 8", got)
	}
	c, _ := s.Context("")
	if got := session.EstimateContextTokens(c.Messages); got.Tokens != 30 {
		t.Errorf("context %d tokens, pi 1.6 counts 30", got.Tokens)
	}
	// pi 1.6 with keepRecentTokens 20: the cut is a1, a split turn with u1
	// as its prefix.
	p := mustPrepare(t, s.LeafPath(), keep(20))
	checkCut(t, p, "a1", true, 0, 1, 30)
	if index["a1"] != 1 {
		t.Errorf("a1 is entry #%d", index["a1"])
	}
	// Written again by Prime, the arguments keep the escape.
	line, err := session.EncodeEntry("x", "", "t", &session.MessageEntry{Message: m})
	if err != nil || !strings.Contains(string(line), `"s":"a\ud83db"`) {
		t.Errorf("written as %s, %v", line, err)
	}
}

// TestIssue8EmptyBranchSummary (3): in the branch-summary walk every
// branch summary is a message, an empty one too (pi 1.6; pi-reference
// §5.3), so the branch being left has 4 messages here, not 3.
func TestIssue8EmptyBranchSummary(t *testing.T) {
	s, _ := issue8Session(t, "empty-branch-summary")
	br := CollectBranch(s.LeafPath(), s.Path("u1"))
	p, err := PrepareBranch(br.Entries, BranchBudget(llm.Model{}, 0))
	if err != nil {
		t.Fatal(err)
	}
	if got := roles(p.Messages); !slices.Equal(got, []string{"assistant", "branchSummary", "user", "assistant"}) || p.TotalTokens != 4 {
		t.Errorf("messages %v, %d tokens; pi 1.6: assistant, branchSummary, user, assistant, 4 tokens", got, p.TotalTokens)
	}
	// For a compaction it stays invisible (C7d): the model never saw it.
	c, _ := s.Context("")
	if len(c.Messages) != 4 {
		t.Errorf("context has %d messages, want 4", len(c.Messages))
	}
}

// TestIssue8OlderCompaction (4): an older compaction inside the latest
// one's kept range stops the scan-back, as in pi 1.6: with the cut on u3,
// the kept part starts at u3, not at the thinking-level change before the
// older compaction. The context is the same either way.
func TestIssue8OlderCompaction(t *testing.T) {
	s, index := issue8Session(t, "older-compaction")
	p := mustPrepare(t, s.LeafPath(), keep(40))
	// pi 1.6: first kept u3 (#6), not split, 2 messages summarized
	// (u2, a2), tokensBefore 56.
	checkCut(t, p, "u3", false, 2, 0, 56)
	if index["u3"] != 6 {
		t.Errorf("u3 is entry #%d", index["u3"])
	}
}

// TestIssue8NestedCalls (5): the file operations of calls a script tool
// made are read from the tool result's own nestedCalls record, where pi
// 1.6 reads them.
func TestIssue8NestedCalls(t *testing.T) {
	s, _ := issue8Session(t, "nested-calls")
	p := mustPrepare(t, s.LeafPath(), keep(60))
	// pi 1.6: first kept a2, split, 3 + 1 messages, tokensBefore 207,
	// readFiles ["n1.go"], modifiedFiles ["n2.go"].
	checkCut(t, p, "a2", true, 3, 1, 207)
	if read, mod := p.ReadFiles(), p.ModifiedFiles(); !slices.Equal(read, []string{"n1.go"}) || !slices.Equal(mod, []string{"n2.go"}) {
		t.Errorf("read %q, modified %q", read, mod)
	}
}

// TestIssue8EdgeCases: sessiongen's edge cases hold these sessions, so that
// the comparisons with pi cover them from now on.
func TestIssue8EdgeCases(t *testing.T) {
	for name, data := range issue8Sessions {
		found := false
		for _, c := range sessiongen.EdgeCases() {
			if c.Name == "issue8-"+name {
				found = true
				if !bytes.Equal(c.Data, data) {
					t.Errorf("edge case issue8-%s differs from the test's session", name)
				}
			}
		}
		if !found {
			t.Errorf("no edge case issue8-%s", name)
		}
	}
}
