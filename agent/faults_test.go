package agent_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/internal/pioracle"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiontest"
	"github.com/prime-agent/prime/tool"
)

// faultModel answers a conversation by the shape of its end: a new prompt
// gets a tool call with a large usage (so the threshold compacts between
// turns), a tool result a short answer; summary requests get a summary.
func faultModel(r *llmtest.Request) llmtest.Reply {
	if strings.Contains(r.LastUserText(), "<conversation>") {
		return llmtest.Stream(llmtest.Text("## Goal\nSummarized.\n\n## Next Steps\n1. Go on."), llmtest.Usage(100, 20))
	}
	msgs := r.Messages()
	last, _ := msgs[len(msgs)-1]["content"].([]any)
	for _, c := range last {
		if b, _ := c.(map[string]any); b["type"] == "tool_result" {
			return llmtest.Stream(llmtest.Text("done: "+fmt.Sprint(len(msgs))), llmtest.Usage(60, 5))
		}
	}
	id := fmt.Sprintf("c%d", len(msgs))
	return llmtest.Stream(llmtest.Text("working"), llmtest.ToolCall(id, "upper", `{"text":"`+id+`"}`), llmtest.Usage(400, 5))
}

// faultScriptRun is a scripted multi-turn run: three prompts with tool
// calls (each compacting between its turns), a manual compaction, and a
// resumption by a second agent on the same file, which prompts once more.
// Every write goes through write. It returns the session file and the
// write failure the agents met, if any.
func faultScriptRun(t *testing.T, srv *llmtest.Server, dir string, write session.WriteFunc) (string, *agent.WriteFailure) {
	t.Helper()
	st := testSettings(t, "compaction.keepRecentTokens", "5", "compaction.reserveTokens", "199700")
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s, err := session.Create(path, session.Options{CWD: t.TempDir(), Write: write})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config(dir, st, nil)
	cfg.Model = srv.Model().Provider + "/" + srv.Model().ID
	cfg.Tools = []tool.Tool{upper{}}
	cfg.NoContextFiles = true
	ag := agent.New(s, cfg)
	for _, p := range []string{"first", "second", "third"} {
		send(t, ag, p)
	}
	ag.Compact(t.Context(), agent.CompactRequest{Instructions: "keep the ids"}) // fails when nothing is left to compact: fine
	failure := ag.WriteFailure()
	checkAgainstFile(t, ag, path, "first agent")
	ag.Close()

	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return path, failure // the file was never created: nothing to resume
	}
	s, err = session.OpenWith(path, session.ReadOptions{Write: write})
	if err != nil {
		t.Fatalf("resuming: %v", err)
	}
	ag = agent.New(s, cfg)
	send(t, ag, "fourth")
	if f := ag.WriteFailure(); failure == nil {
		failure = f
	}
	checkAgainstFile(t, ag, path, "second agent")
	ag.Close()
	return path, failure
}

// checkAgainstFile asserts that the file loads without a warning and holds
// exactly the entries the agent's session acknowledged, in order.
func checkAgainstFile(t *testing.T, ag *agent.Agent, path, who string) {
	t.Helper()
	var want []string
	ag.View(func(s *session.Session) {
		for _, e := range s.Entries() {
			want = append(want, e.ID)
		}
	})
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return // never created: the entries are still in memory
	}
	sessiontest.Holds(t, path, want, who)
}

// TestAgentFaultInjection fails every write of faultScriptRun in each way
// writeFaults lists. After each run: the file loads without a warning and
// holds exactly what the agents acknowledged; the agent reports the
// failure (naming a tool result that was lost, when one was); and the file
// goes on being written afterwards. With PRIME_PIORACLE set, pi 1.6 reads
// every file with Prime's context.
func TestAgentFaultInjection(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(faultModel)
	dir := agentDir(t, srv)
	clean := &sessiontest.FaultAt{At: -1}
	path, failure := faultScriptRun(t, srv, dir, clean.Write)
	if failure != nil {
		t.Fatalf("the clean run failed: %v", failure)
	}
	if k := entryKinds(t, path); strings.Count(k, "compaction") < 3 {
		t.Fatalf("the script compacts too little: %s", k)
	}
	n := clean.Writes()
	var files []string
	lost, compactions := 0, 0
	faults := sessiontest.WriteFaults()
	for _, wf := range faults {
		for at := range n {
			f := &sessiontest.FaultAt{At: at, Fault: wf}
			path, failure := faultScriptRun(t, srv, dir, f.Write)
			where := fmt.Sprintf("%s at write %d", wf.Name, at)
			if !f.Fired() {
				t.Fatalf("%s: the run made only %d writes", where, f.Writes())
			}
			compaction := bytes.HasPrefix(bytes.TrimLeft(f.Failed(), "\n"), []byte(`{"type":"compaction"`))
			switch {
			case failure == nil && compaction:
				// A compaction that could not be written is a failed
				// compaction: reported, nothing lost, the run goes on.
				compactions++
			case failure == nil || !errors.Is(failure, syscall.ENOSPC) && !errors.Is(failure, syscall.EIO) && !errors.Is(failure, io.ErrShortWrite):
				t.Errorf("%s: the agent reports %v", where, failure)
			}
			if failure != nil && len(failure.LostResults) > 0 {
				lost++
				if !strings.Contains(failure.Error(), "the tool call upper ("+failure.LostResults[0].ID+") ran, but its result is not in the file") {
					t.Errorf("%s: %v", where, failure)
				}
			}
			files = append(files, path)
		}
	}
	t.Logf("%d writes × %d faults: every file whole; %d runs lost a tool result and said which; %d failed a compaction's write", n, len(faults), lost, compactions)
	if lost == 0 {
		t.Error("no fault hit a tool result")
	}
	agentPiReads(t, files)
}

// agentPiReads asks pi 1.6 for each existing file's context and checks it
// has as many messages, of the same roles, as Prime's.
func agentPiReads(t *testing.T, files []string) {
	if os.Getenv("PRIME_PIORACLE") == "" {
		return
	}
	var reqs []any
	var asked []string
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			reqs = append(reqs, map[string]string{"cmd": "context", "file": f})
			asked = append(asked, f)
		}
	}
	for i, answer := range pioracle.Batch(t, reqs) {
		var pi struct {
			Error string `json:"error"`
			Items []struct {
				Role   string `json:"role"`
				Tokens int    `json:"tokens"`
			} `json:"items"`
		}
		if err := json.Unmarshal(answer, &pi); err != nil || pi.Error != "" {
			t.Fatalf("%s: pi: %v %s", asked[i], err, pi.Error)
		}
		s, err := session.Load(asked[i])
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.Context("")
		if err != nil {
			t.Fatal(err)
		}
		var prime, theirs []string
		for _, m := range c.Messages {
			prime = append(prime, fmt.Sprintf("%s:%d", m.Role(), session.EstimateTokens(m)))
		}
		for _, it := range pi.Items {
			theirs = append(theirs, fmt.Sprintf("%s:%d", it.Role, it.Tokens))
		}
		if !slices.Equal(prime, theirs) {
			t.Errorf("%s: pi reads %v, Prime %v", asked[i], theirs, prime)
		}
	}
	t.Logf("pi 1.6 reads all %d files with Prime's context", len(asked))
}
