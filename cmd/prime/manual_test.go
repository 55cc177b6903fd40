package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
)

// sub runs a subcommand of the binary (no --model in front) in the agent
// environment.
func (e *agentEnv) sub(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(e.bin, args...)
	cmd.Dir = e.project
	cmd.Env = append(os.Environ(), settings.AgentDirEnv+"="+e.agentDir, "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), errOut.String(), ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errOut.String(), 0
}

// TestManualCompactDefaults: with the default settings (keepRecentTokens
// 20,000), "/compact" in print mode after one exchange says once, on
// standard output, that there is nothing before it, and exits 0; after two
// it summarizes the first and keeps the second. prime compact FILE decides
// the same; given --keep-recent-tokens it keeps pi's decision.
func TestManualCompactDefaults(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	e := newAgentEnv(t, srv, 0, "")
	srv.Reply(llmtest.Text("The parser is in parse.go."))
	if _, errOut, code := e.run(t, "", "-p", "where is the parser?"); code != 0 {
		t.Fatalf("first prompt: exit %d: %s", code, errOut)
	}
	out, errOut, code := e.run(t, "", "-p", "/compact", "-c")
	if code != 0 || errOut != "" || strings.Count(out, "nothing to compact") != 1 ||
		!strings.HasPrefix(out, "nothing to compact: the conversation is one exchange (") ||
		!strings.HasSuffix(out, " tokens), with nothing before it to summarize\n") {
		t.Errorf("/compact after one exchange: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	path := e.sessionFile(t)
	out, _, code = e.sub(t, "compact", path, "--dry-run")
	if code != 0 || !strings.HasPrefix(out, "nothing to compact: the conversation is one exchange") {
		t.Errorf("prime compact --dry-run after one exchange: exit %d %q", code, out)
	}

	srv.Reply(llmtest.Text("Keep the old signature."))
	if _, errOut, code := e.run(t, "", "-p", "-c", "keep the old signature"); code != 0 {
		t.Fatalf("second prompt: exit %d: %s", code, errOut)
	}
	out, _, code = e.sub(t, "compact", path, "--dry-run", "--keep-recent-tokens", "20000")
	if code != 0 || !strings.HasPrefix(out, "nothing to compact: the conversation's ") {
		t.Errorf("prime compact --keep-recent-tokens 20000: exit %d %q, want pi's decision", code, out)
	}
	out, _, code = e.sub(t, "compact", path, "--dry-run", "--json")
	if code != 0 || !strings.Contains(out, `"messagesToSummarize": 2`) {
		t.Errorf("prime compact --dry-run --json: exit %d %s", code, out)
	}

	srv.Reply(llmtest.Text("## Goal\nFind the parser."))
	out, errOut, code = e.run(t, "", "-p", "/compact", "-c")
	if code != 0 || !strings.HasPrefix(out, "compacted: ") || !strings.Contains(out, "## Goal\nFind the parser.") {
		t.Fatalf("/compact after two exchanges: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	kinds, s := kinds(t, path)
	if !strings.HasSuffix(kinds, "user assistant user assistant compaction") {
		t.Fatalf("entries %s", kinds)
	}
	c := s.Entries()[len(s.Entries())-1]
	p, err := c.Payload()
	if err != nil {
		t.Fatal(err)
	}
	kept := s.Entry(p.(*session.CompactionEntry).FirstKeptEntryID)
	raw, _ := kept.Raw()
	if role, _ := kept.MessageRole(); role != "user" || !strings.Contains(string(raw), "keep the old signature") {
		t.Errorf("the compaction keeps from %s, want the latest user message", raw)
	}
}
