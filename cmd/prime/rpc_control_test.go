package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/internal/proctest"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session/sessiontest"
)

// TestRPCForkAndSwitch: fork starts a session holding what came before a
// user message; switch_session goes back; get_entries and get_tree follow
// each move.
func TestRPCForkAndSwitch(t *testing.T) {
	s := newRPCSetup(t, nil)
	p := s.start(t)
	p.converse("first question", "second question")
	original := p.call("s", `{"id":"s","type":"get_state"}`).str("sessionFile")
	all := p.call("e", `{"id":"e","type":"get_entries"}`)
	allIDs, _ := entryList(all)
	second := userEntry(t, all, "second question")
	r := p.call("f", fmt.Sprintf(`{"id":"f","type":"fork","entryId":%q}`, second))
	if r.str("text") != "second question" || r.data()["cancelled"] != false {
		t.Errorf("fork: %s", r.raw)
	}
	forked := p.call("s2", `{"id":"s2","type":"get_state"}`).str("sessionFile")
	if forked == "" || forked == original {
		t.Fatalf("the fork is %q (the original %q)", forked, original)
	}
	ids, ks := entryList(p.call("e2", `{"id":"e2","type":"get_entries"}`))
	if i := slices.Index(allIDs, second); !slices.Equal(ids, allIDs[:i]) {
		t.Errorf("the fork holds %v (%v), want %v", ids, ks, allIDs[:i])
	}
	tree := p.call("t2", `{"id":"t2","type":"get_tree"}`)
	if tree.data()["leafId"] != ids[len(ids)-1] || !strings.HasSuffix(treeShape(tree.data()["tree"].([]any)), "user(assistant))))") {
		t.Errorf("the fork's tree %s", tree.raw)
	}
	p.send(`{"id":"p","type":"prompt","message":"another second question"}`)
	p.settle()
	if k := sessionKinds(t, forked); !strings.HasSuffix(k, "system user assistant user assistant") {
		t.Errorf("the fork %s", k)
	}
	if r := p.call("w", fmt.Sprintf(`{"id":"w","type":"switch_session","sessionPath":%q}`, original)); r.data()["cancelled"] != false {
		t.Errorf("switch: %s", r.raw)
	}
	back, _ := entryList(p.call("e3", `{"id":"e3","type":"get_entries"}`))
	if !slices.Equal(back, allIDs) {
		t.Errorf("back in the original: %v, want %v", back, allIDs)
	}
	if tree := p.call("t3", `{"id":"t3","type":"get_tree"}`); tree.data()["leafId"] != allIDs[len(allIDs)-1] {
		t.Errorf("the original's leaf %v", tree.data()["leafId"])
	}
	forks := p.call("fm", `{"id":"fm","type":"get_fork_messages"}`).data()["messages"].([]any)
	if len(forks) != 2 || forks[1].(map[string]any)["entryId"] != second {
		t.Errorf("fork messages %v", forks)
	}
	for _, c := range [][2]string{
		{`{"id":"x1","type":"fork","entryId":"nowhere"}`, "cannot fork"},
		{fmt.Sprintf(`{"id":"x2","type":"fork","entryId":%q}`, allIDs[len(allIDs)-1]), "fork from a user message"},
		{fmt.Sprintf(`{"id":"x3","type":"switch_session","sessionPath":%q}`, filepath.Join(s.project, "none.jsonl")), "no such file"},
	} {
		var id map[string]any
		json.Unmarshal([]byte(c[0]), &id)
		if r := p.call(id["id"].(string), c[0]); r.ok() || !strings.Contains(r.errText(), c[1]) {
			t.Errorf("%s: %s", c[0], r.raw)
		}
	}
}

// TestRPCBadInput: over the real pipes, every kind of bad input gets its
// failure response, two prompts sent together are both kept, a last line
// without a newline still counts, and the session file stays valid.
func TestRPCBadInput(t *testing.T) {
	s := newRPCSetup(t, nil)
	gate := filepath.Join(s.project, "go")
	s.script(bashCall("c1", waitUntilFile(gate)))
	p := s.start(t)
	// Two prompts together, before anything ran: the second is queued.
	p.send(`{"id":"1","type":"prompt","message":"first"}`, `{"id":"2","type":"prompt","message":"second"}`)
	got := p.until(func(l rpcLine) bool { return l.answers("2") })
	if got[0].str("disposition") != "started" || got[len(got)-1].str("disposition") != "queued" {
		t.Errorf("two prompts together: %s … %s", got[0].raw, got[len(got)-1].raw)
	}
	p.until(func(l rpcLine) bool { return l.is("tool_execution_start") })
	for _, c := range []struct{ line, command, err string }{
		{"{\"id\":\"x\",\"type\":\"prompt\",\"message\":\"unterminated", "parse", "Failed to parse command: "},
		{`{"id":"b1","type":"get_everything"}`, "get_everything", "Unknown command: get_everything"},
		{`{"id":"b2","type":"prompt"}`, "prompt", `missing "message"`},
		{`{"id":"b3","type":"set_follow_up_mode","mode":1}`, "set_follow_up_mode", `"mode" must be a string, not a number`},
		{`{"id":"b4","type":"prompt","message":"while busy"}`, "prompt", `"streamingBehavior"`},
		{`{"id":"b5","type":"navigate_tree","targetId":"x"}`, "navigate_tree", "busy"},
		{`{"id":"b6","type":"fork"}`, "fork", `missing "entryId"`},
	} {
		p.send(c.line)
		r := p.until(func(l rpcLine) bool { return l.is("response") })
		if l := r[len(r)-1]; l.ok() || l.field("command") != c.command || !strings.Contains(l.errText(), c.err) {
			t.Errorf("%s: %s", c.line, l.raw)
		}
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p.settle()
	state := p.call("s", `{"id":"s","type":"get_state"}`)
	path := state.str("sessionFile")
	if got := sessiontest.UserTexts(t, path); !slices.Equal(got, []string{"first", "second"}) {
		t.Errorf("user messages %q", got)
	}
	// The last line has no newline: it is a command all the same.
	if _, err := io.WriteString(p.in, `{"id":"last","type":"get_last_assistant_text"}`); err != nil {
		t.Fatal(err)
	}
	code, rest := p.exit()
	if code != 0 || len(rest) != 1 || !rest[0].answers("last") || rest[0].str("text") != "reply to: second" {
		t.Errorf("exit %d, %d lines after the end of input: %v", code, len(rest), rest)
	}
	sessionKinds(t, path)
}

// TestRPCShutdown: the end of input with --abort-at-eof and SIGTERM/SIGHUP
// abort the run, wait for it, and exit 0/143/129 with the session file
// complete; a second signal exits at once.
func TestRPCShutdown(t *testing.T) {
	for _, c := range []struct {
		name string
		stop func(p *rpcProc)
		code int
	}{
		{"end of input", func(p *rpcProc) { p.in.Close() }, 0},
		{"SIGTERM", func(p *rpcProc) { p.cmd.Process.Signal(syscall.SIGTERM) }, 143},
		{"SIGHUP", func(p *rpcProc) { p.cmd.Process.Signal(syscall.SIGHUP) }, 129},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newRPCSetup(t, nil)
			s.script(bashCall("c1", "sleep 60"))
			p := s.start(t, "--abort-at-eof")
			path := p.call("s", `{"id":"s","type":"get_state"}`).str("sessionFile")
			p.send(`{"id":"p","type":"prompt","message":"wait a minute"}`)
			p.until(func(l rpcLine) bool { return l.is("tool_execution_start") })
			c.stop(p)
			code, rest := p.wait()
			if code != c.code {
				t.Errorf("exit %d, want %d (stderr: %s)", code, c.code, p.stderr)
			}
			if len(rest) == 0 || !rest[len(rest)-1].is("agent_settled") || rest[len(rest)-1].field("aborted") != true {
				t.Errorf("the last lines: %s", lineKinds(rest))
			}
			if k := sessionKinds(t, path); !strings.HasSuffix(k, "user assistant toolResult") {
				t.Errorf("session %s", k)
			}
		})
	}

	t.Run("second signal", func(t *testing.T) {
		// A session_compact_failed hook that takes its time holds the
		// shutdown after the first SIGTERM (after-events get a few
		// seconds); the second exits before it ends.
		// The hook writes its pid to marker and runs while hold exists;
		// hold is removed when the test ends, and then the hook must end.
		hookPID := 0
		t.Cleanup(func() {
			if hookPID > 0 {
				proctest.WaitGone(t, hookPID)
			}
		})
		hold := t.TempDir()
		marker := filepath.Join(t.TempDir(), "started")
		hook := filepath.Join(t.TempDir(), "hook.sh")
		script := fmt.Sprintf("#!/bin/sh\ncat >/dev/null\necho $$ > '%[1]s.tmp' && mv '%[1]s.tmp' '%[1]s'\nwhile [ -d '%[2]s' ]; do sleep 0.02; done\n", marker, hold)
		if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		s := newRPCSetup(t, map[string]any{
			"hooks":      []any{map[string]any{"event": "session_compact_failed", "command": hook}},
			"compaction": map[string]any{"keepRecentTokens": 1},
		})
		held := make(chan struct{})
		t.Cleanup(func() { close(held) }) // before the fake server closes
		s.srv.Handle(func(r *llmtest.Request) llmtest.Reply {
			if strings.Contains(r.LastUserText(), "<conversation>") {
				<-held
			}
			return s.answer(r)
		})
		p := s.start(t)
		p.send(`{"type":"prompt","message":"one"}`)
		p.settle()
		p.send(`{"id":"c","type":"compact"}`)
		p.until(func(l rpcLine) bool { return l.is("compaction_start") })
		waitFor(t, "the summary request", func() bool { return len(s.summaryRequests()) > 0 })
		p.cmd.Process.Signal(syscall.SIGTERM)
		waitForFile(t, marker)
		pid, err := os.ReadFile(marker)
		if hookPID, err = strconv.Atoi(strings.TrimSpace(string(pid))); err != nil {
			t.Fatalf("the hook's pid: %q", pid)
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		code, rest := p.wait()
		if code != 143 {
			t.Errorf("exit %d, want 143", code)
		}
		for _, l := range rest {
			if l.answers("c") || l.is("compaction_end") {
				t.Errorf("the shutdown went on after the second signal: %s", l.raw)
			}
		}
	})
}

// TestRPCArguments: RPC mode takes its messages on standard input; @file
// arguments fail (exit 1, as in pi) and messages are a usage error.
func TestRPCArguments(t *testing.T) {
	s := newRPCSetup(t, nil)
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"@notes.txt"}, 1, "@file arguments are not taken in RPC mode"},
		{[]string{"hello"}, 2, "takes its messages as prompt commands"},
	} {
		p := s.start(t, c.args...)
		code, rest := p.wait()
		if code != c.code || len(rest) != 0 || !strings.Contains(p.stderr.String(), c.err) {
			t.Errorf("%v: exit %d, %d lines, stderr %q", c.args, code, len(rest), p.stderr)
		}
	}
}
