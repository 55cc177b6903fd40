package session_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/prime-agent/prime/internal/pioracle"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiontest"
)

// step is one operation of the scripted run.
type step struct {
	name string
	// parent, when set, appends at that step's entry (a branch summary at
	// the point the user went back to); else at the leaf.
	parent string
	p      func(ids map[string]string) session.Payload
	// reopen closes the session and opens the file again before the step
	// (prime -c).
	reopen bool
	// needs are the steps whose entries p refers to: the step is skipped
	// when one of them was never written.
	needs []string
}

func msg(m llm.Message) func(map[string]string) session.Payload {
	return func(map[string]string) session.Payload { return &session.MessageEntry{Message: m} }
}

var faultT0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC).UnixMilli()

func faultUser(text string) llm.Message {
	return &llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}, Timestamp: faultT0}
}

func faultReply(text string, calls ...string) llm.Message {
	content := []llm.Content{llm.Text{Text: text}}
	stop := llm.StopReasonStop
	for _, c := range calls {
		args, _ := llm.ArgumentsOf(map[string]string{"command": "echo " + c})
		content = append(content, llm.ToolCall{ID: c, Name: "bash", Arguments: args})
		stop = llm.StopReasonToolUse
	}
	return &llm.AssistantMessage{Content: content, API: llm.APIAnthropicMessages, Provider: "anthropic", Model: "claude-sonnet-4-5",
		Usage: llm.Usage{Input: 1000, Output: 50, TotalTokens: 1050}, StopReason: stop, Timestamp: faultT0}
}

func faultResult(id, out string) llm.Message {
	return &llm.ToolResultMessage{ToolCallID: id, ToolName: "bash", Content: []llm.Content{llm.Text{Text: out}}, Timestamp: faultT0}
}

// faultScript is a multi-turn run with tool calls, two compactions, a
// branch summary, a label, a name, a resumption and a large tool output.
func faultScript() []step {
	big := strings.Repeat("output line of a long build log\n", 4000) // ~128 KB: several pages
	return []step{
		{name: "model", p: func(map[string]string) session.Payload {
			return &session.ModelChangeEntry{Provider: "anthropic", ModelID: "claude-sonnet-4-5"}
		}},
		{name: "u1", p: msg(faultUser("fix the failing test"))},
		{name: "a1", p: msg(faultReply("Let me look.", "c1", "c2"))},
		{name: "r1", p: msg(faultResult("c1", "FAIL: TestParse"))},
		{name: "r2", p: msg(faultResult("c2", big))},
		{name: "a2", p: msg(faultReply("Fixed the parser."))},
		{name: "u2", p: msg(faultUser("now the docs"))},
		{name: "a3", p: msg(faultReply("Docs updated.", "c3"))},
		{name: "r3", p: msg(faultResult("c3", "ok"))},
		{name: "k1", needs: []string{"u2"}, p: func(ids map[string]string) session.Payload {
			return &session.CompactionEntry{Summary: "## Goal\nFix the test.", FirstKeptEntryID: ids["u2"], TokensBefore: 40000,
				Details: jsontext.Value(`{"readFiles":["parse.go"],"modifiedFiles":["parse.go"]}`)}
		}},
		{name: "u3", reopen: true, p: msg(faultUser("continue"))},
		{name: "a4", p: msg(faultReply("Continuing."))},
		{name: "label", needs: []string{"u3"}, p: func(ids map[string]string) session.Payload {
			return &session.LabelEntry{TargetID: ids["u3"], Label: "resumed"}
		}},
		{name: "b1", parent: "a2", needs: []string{"a2", "a4"}, p: func(ids map[string]string) session.Payload {
			return &session.BranchSummaryEntry{FromID: ids["a4"], Summary: "Tried the docs; went back."}
		}},
		{name: "u4", p: msg(faultUser("another way"))},
		{name: "a5", p: msg(faultReply("Done another way."))},
		{name: "name", p: func(map[string]string) session.Payload { return &session.SessionInfoEntry{Name: "parser fix"} }},
		{name: "k2", needs: []string{"u4"}, p: func(ids map[string]string) session.Payload {
			return &session.CompactionEntry{Summary: "## Goal\nAnother way.", FirstKeptEntryID: ids["u4"], TokensBefore: 50000}
		}},
		{name: "u5", p: msg(faultUser("thanks"))},
		{name: "a6", p: msg(faultReply("You're welcome."))},
	}
}

// faultRun runs the script against path with writes going through write.
// It returns the ids of the entries whose append was acknowledged (the
// call returned no error), by step, in order, and the step that failed
// ("" when none did). A step that fails is not retried: the run goes on
// with the next step, as an agent goes on with its next prompt.
func faultRun(t *testing.T, path string, write session.WriteFunc, check func(acked []string, failed string)) (acked []string, failedAt string) {
	t.Helper()
	ids := map[string]string{}
	s, err := session.Create(path, session.Options{ID: "fault-run", CWD: "/work/project", Write: write})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	for _, st := range faultScript() {
		if st.reopen {
			s.Close()
			if s, err = session.OpenWith(path, session.ReadOptions{Write: write}); err != nil {
				t.Fatalf("reopening before %s: %v", st.name, err)
			}
		}
		if slices.ContainsFunc(st.needs, func(n string) bool { return ids[n] == "" }) {
			continue
		}
		var e *session.Entry
		if st.parent != "" {
			e, err = s.AppendAt(ids[st.parent], st.p(ids))
		} else {
			e, err = s.Append(st.p(ids))
		}
		if err != nil {
			if failedAt != "" {
				t.Fatalf("%s failed too, after %s: %v", st.name, failedAt, err)
			}
			failedAt = st.name
			if check != nil {
				check(acked, st.name)
			}
			continue
		}
		ids[st.name] = e.ID
		acked = append(acked, e.ID)
	}
	return acked, failedAt
}

// countWrites runs the script without faults and counts its writes.
func countWrites(t *testing.T) int {
	in := &sessiontest.FaultAt{At: -1}
	acked, failed := faultRun(t, filepath.Join(t.TempDir(), "clean.jsonl"), in.Write, nil)
	if failed != "" || len(acked) != len(faultScript()) {
		t.Fatalf("the clean run failed at %s", failed)
	}
	return in.Writes()
}

// checkFile asserts that the file holds exactly the acknowledged entries
// (sessiontest.Holds).
func checkFile(t *testing.T, path string, want []string, where string) {
	t.Helper()
	sessiontest.Holds(t, path, want, where)
}

// TestFaultInjection: every write of a scripted multi-turn run with
// compactions fails in each way faults lists. After each, the file loads
// without a warning and holds exactly the entries acknowledged so far
// (none lost, no torn line); the run then goes on, and the final file holds
// every entry acknowledged. With PRIME_PIORACLE set, pi 1.6 reads every
// final file with the same context as Prime.
func TestFaultInjection(t *testing.T) {
	n := countWrites(t)
	if n < 15 {
		t.Fatalf("the script makes only %d writes", n)
	}
	dir := t.TempDir()
	var files []string
	cases := 0
	faults := sessiontest.WriteFaults()
	for _, f := range faults {
		for at := range n {
			where := fmt.Sprintf("%s at write %d", f.Name, at)
			path := filepath.Join(dir, fmt.Sprintf("%s-%02d.jsonl", strings.ReplaceAll(f.Name, " ", "-"), at))
			in := &sessiontest.FaultAt{At: at, Fault: f}
			acked, failed := faultRun(t, path, in.Write, func(acked []string, failed string) {
				if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
					// The first write creates the file; a failed one
					// leaves none, and nothing was on disk yet.
					return
				}
				checkFile(t, path, acked, where+", right after "+failed+" failed")
			})
			if !in.Fired() || failed == "" {
				t.Fatalf("%s: the fault did not fail a step (fired %v)", where, in.Fired())
			}
			checkFile(t, path, acked, where+", at the end")
			files = append(files, path)
			cases++
		}
	}
	t.Logf("%d writes × %d faults = %d runs, every file whole", n, len(faults), cases)
	piReads(t, files)
}

// piReads asks pi 1.6 for each file's context and compares it with
// Prime's, message by message.
func piReads(t *testing.T, files []string) {
	if os.Getenv("PRIME_PIORACLE") == "" {
		return
	}
	var reqs []any
	for _, f := range files {
		reqs = append(reqs, map[string]string{"cmd": "context", "file": f})
	}
	for i, answer := range pioracle.Batch(t, reqs) {
		var pi oracleContext
		if err := json.Unmarshal(answer, &pi); err != nil || pi.Error != "" {
			t.Fatalf("%s: pi: %v %s", files[i], err, pi.Error)
		}
		s, err := session.Load(files[i])
		if err != nil {
			t.Fatal(err)
		}
		ctx, err := s.Context("")
		if err != nil {
			t.Fatal(err)
		}
		items := primeItems(s, ctx)
		if pi.Items == nil {
			pi.Items = []oracleItem{}
		}
		if diff := cmp.Diff(pi.Items, items); diff != "" {
			t.Errorf("%s: context (-pi +Prime):\n%s", filepath.Base(files[i]), diff)
		}
	}
	t.Logf("pi 1.6 reads all %d files with Prime's context", len(files))
}

// TestShortWriteCutBack: an append that a full disk cuts short leaves no
// part of its line behind, and the session goes on appending whole lines.
func TestShortWriteCutBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	fail := false
	s, err := session.Create(path, session.Options{Write: func(f *os.File, p []byte) (int, error) {
		if fail {
			n, _ := f.Write(p[:len(p)/2])
			return n, syscall.ENOSPC
		}
		return f.Write(p)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u, err := s.Append(&session.MessageEntry{Message: faultUser("hello")})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	fail = true
	_, err = s.Append(&session.MessageEntry{Message: faultResult("c1", strings.Repeat("x", 5000))})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append on a full disk: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Fatalf("the failed append left %d bytes behind", len(after)-len(before))
	}
	fail = false
	a, err := s.Append(&session.MessageEntry{Message: faultReply("hi")})
	if err != nil {
		t.Fatal(err)
	}
	checkFile(t, path, []string{u.ID, a.ID}, "after the disk had room again")
	if s.LeafID() != a.ID || s.Entry(a.ID).ParentID != u.ID {
		t.Errorf("the reply's parent is %s, want %s", s.Entry(a.ID).ParentID, u.ID)
	}
}
