package agent_test

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
)

// Another process appends to the session file while the agent has it open:
// at its next append the agent reads those entries (the name the other
// process set is the session's name), its own entries continue its own
// branch, and the file holds every entry once, whole, with unique ids.
func TestAppendsFromAnotherProcess(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.Text("one"), llmtest.Usage(30, 2))
	srv.Reply(llmtest.Text("two"), llmtest.Usage(40, 2))
	var ev events
	ag, path := live(t, srv, &ev)
	send(t, ag, "first")
	var leaf string
	ag.View(func(s *session.Session) { leaf = s.LeafID() })

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PRIME_AGENT_TEST_APPEND="+path)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the other process: %v", err)
	}
	theirs := strings.Fields(string(out))
	if len(theirs) != 2 {
		t.Fatalf("the other process wrote %q", out)
	}
	ag.View(func(s *session.Session) {
		if s.Entry(theirs[0]) != nil {
			t.Error("the agent saw the other process's entry before appending")
		}
	})

	send(t, ag, "second")
	ag.View(func(s *session.Session) {
		for _, id := range theirs {
			if s.Entry(id) == nil {
				t.Errorf("entry %s of the other process is not in the agent's session", id)
			}
		}
		if s.Name() != "named elsewhere" {
			t.Errorf("session name %q", s.Name())
		}
		path := s.LeafPath()
		var onPath []string
		for _, e := range path {
			onPath = append(onPath, e.ID)
		}
		if slices.Contains(onPath, theirs[0]) || !slices.Contains(onPath, leaf) {
			t.Errorf("the agent's branch %v: it must go through %s, not %s", onPath, leaf, theirs[0])
		}
	})
	if st := ag.State(); st.SessionName != "named elsewhere" {
		t.Errorf("state: session name %q", st.SessionName)
	}
	r, err := session.Load(path)
	if err != nil || len(r.Warnings()) != 0 {
		t.Fatalf("reload: %v %v", err, r.Warnings())
	}
	seen := map[string]bool{}
	for _, e := range r.Entries() {
		if seen[e.ID] {
			t.Fatalf("id %s twice", e.ID)
		}
		seen[e.ID] = true
	}
	if !seen[theirs[0]] || !seen[theirs[1]] {
		t.Error("the other process's entries are not in the file")
	}
	if got := srv.Requests()[1].Text(); strings.Contains(got, "another process") {
		t.Errorf("the other process's custom entry reached the model: %s", got)
	}
}

// The session file is cut short behind the agent's back: the next prompt
// cannot be written, the run stops with one error that says why (not one
// for the prompt and another for the reply that ends the run), and the file
// is left as it was found, never rewritten.
func TestSessionFileCutBehindTheAgent(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.Text("one"), llmtest.Usage(30, 2))
	srv.Reply(llmtest.Text("two"), llmtest.Usage(40, 2))
	var ev events
	ag, path := live(t, srv, &ev)
	send(t, ag, "first")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := data[:bytes.IndexByte(data, '\n')+1] // the header alone
	if err := os.WriteFile(path, cut, 0o600); err != nil {
		t.Fatal(err)
	}
	send(t, ag, "second")
	var errs []string
	for _, n := range eventsOf[agent.Notice](&ev) {
		if n.Level == agent.NoticeError {
			errs = append(errs, n.Text)
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "could not write to the session file") || !strings.Contains(errs[0], "shrank from") {
		t.Errorf("errors %q, want one saying the file changed", errs)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, cut) {
		t.Errorf("the file was written after it changed (%v):\n%s", err, got)
	}
}

// Stats keeps its sums and adds only what was appended since the last
// call: after more turns they equal those of the file read afresh, and a
// new session starts from nothing.
func TestStatsKept(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.Text("one"), llmtest.Usage(30, 2))
	srv.Reply(llmtest.ToolCall("c1", "read", `{"path":"nowhere.txt"}`), llmtest.Usage(40, 3))
	srv.Reply(llmtest.Text("three"), llmtest.Usage(50, 4))
	var ev events
	ag, path := live(t, srv, &ev)
	send(t, ag, "first")
	if st := ag.Stats(); st.TotalMessages != 3 || st.Tokens.Input != 30 { // the system message, the prompt, the reply
		t.Errorf("after one turn: %+v", st)
	}
	send(t, ag, "second")
	got := ag.Stats()
	fresh, err := agent.Load(path, config(t.TempDir(), testSettings(t), nil))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if want := fresh.Stats(); got != want || got.TotalMessages != 7 || got.ToolResults != 1 || got.Tokens.Input != 120 {
		t.Errorf("kept sums %+v, the file read afresh %+v", got, want)
	}
	if err := ag.NewSession(); err != nil {
		t.Fatal(err)
	}
	if st := ag.Stats(); st != (agent.Stats{}) {
		t.Errorf("a new session: %+v", st)
	}
}
