package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/internal/proctest"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
	"github.com/prime-agent/prime/settings"
)

// compactSession is the generated session the compaction commands are
// tried on: 1,500 entries with compactions and branches.
func compactSession(t *testing.T) (string, []byte) {
	t.Helper()
	path := genFile(t, sessiongen.Options{Entries: 1500, Seed: 7, ContextWindow: 40_000, KeepRecentTokens: 6_000, ReserveTokens: 4_000})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, data
}

// fakeEnv starts nothing: it writes a models.json whose provider "fake"
// serves "fake/fake-model" from srv, and returns the environment that
// points Prime at it (and at no settings of the user's).
func fakeEnv(t *testing.T, srv *llmtest.Server) map[string]string {
	t.Helper()
	dir := t.TempDir()
	if srv != nil {
		if err := writeFakeModels(filepath.Join(dir, "models.json"), srv.API(), srv.Model().BaseURL, 0); err != nil {
			t.Fatal(err)
		}
	}
	return map[string]string{settings.AgentDirEnv: dir}
}

// unchanged fails the test if the file at path no longer holds data.
func unchanged(t *testing.T, path string, data []byte) {
	t.Helper()
	if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
		t.Error("the file changed")
	}
}

// summaryReply answers a summary request with a structured summary.
func summaryReply(r *llmtest.Request) llmtest.Reply {
	if !strings.Contains(r.LastUserText(), "<conversation>") {
		return llmtest.HTTPError(400, "", "not a summary request")
	}
	return llmtest.Stream(llmtest.Text("## Goal\nFrom the fake.\n\n## Next Steps\n1. Go on."), llmtest.Usage(llm.UTF16Len(r.Text())/4, 20))
}

func TestCompactDryRunGolden(t *testing.T) {
	path, data := compactSession(t)
	env := fakeEnv(t, nil)
	code, out, errOut := runPrime(t, env, "compact", path, "--dry-run", "--json", "--keep-recent-tokens", "4000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden.Check(t, "compact-dry-run.json", out)
	// The JSON is the preparation the compaction package makes.
	s, _ := session.Load(path)
	prep, err := compaction.Prepare(s.LeafPath(), compaction.Settings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 4000})
	if err != nil {
		t.Fatal(err)
	}
	var got compactDryRunJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.FirstKeptEntryID != prep.FirstKeptEntryID ||
		got.MessagesToSummarize != len(prep.MessagesToSummarize) || got.TokensBefore != prep.TokensBefore {
		t.Errorf("%v: %+v", err, got)
	}

	// Everything kept: not compactable, and not a failure.
	code, out, _ = runPrime(t, env, "compact", path, "--dry-run", "--json", "--keep-recent-tokens", "100000000")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	golden.Check(t, "compact-dry-run-nothing.json", out)
	code, out, _ = runPrime(t, env, "compact", path, "--dry-run", "--keep-recent-tokens", "100000000")
	if code != 0 || !strings.HasPrefix(out, "nothing to compact: ") {
		t.Errorf("text: exit %d, %q", code, out)
	}
	// The text form names the plan's numbers and the summarizer (unusable
	// here: the test's environment has no API key), without failing.
	code, out, _ = runPrime(t, env, "compact", path, "--dry-run", "--keep-recent-tokens", "4000")
	for _, want := range []string{"dry run: nothing written", "keep from:        " + prep.FirstKeptEntryID, "unavailable: summarizer ", "(the session's model): no API key: set "} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	unchanged(t, path, data)
}

func TestBranchDryRunGolden(t *testing.T) {
	path, data := compactSession(t)
	s, _ := session.Load(path)
	env := fakeEnv(t, nil)
	// The first entry (a user message at the root), and the start of the
	// first other branch.
	var other string
	for _, l := range s.Leaves() {
		if l.ID != s.LeafID() {
			other = s.Path(l.ID)[len(s.Path(l.ID))-3].ID
			break
		}
	}
	for name, target := range map[string]string{"branch-dry-run-root.json": s.Entries()[0].ID, "branch-dry-run-other.json": other} {
		code, out, errOut := runPrime(t, env, "branch", path, "--to", target, "--dry-run", "--json", "--offline")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		golden.Check(t, name, out)
	}
	code, out, _ := runPrime(t, env, "branch", path, "--to", s.Entries()[0].ID, "--dry-run")
	for _, want := range []string{"dry run: nothing written", "new leaf:         (before the first entry)", "editor text:", "a real run writes nothing"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	unchanged(t, path, data)
}

// TestCompactCommandEndToEnd runs prime compact against the fake servers of
// both wire formats, offline, and against a provider that always overflows.
func TestCompactCommandEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		name string
		srv  func(t *testing.T) *llmtest.Server
	}{
		{"openai", func(t *testing.T) *llmtest.Server { return llmtest.NewOpenAI(t) }},
		{"anthropic", func(t *testing.T) *llmtest.Server { return llmtest.NewAnthropic(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := tc.srv(t)
			srv.Handle(summaryReply)
			path, data := compactSession(t)
			code, out, errOut := runPrime(t, fakeEnv(t, srv), "compact", path, "--model", "fake/fake-model", "--keep-recent-tokens", "4000",
				"--instructions", "mind the parser", "--json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var res compactJSON
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatal(err)
			}
			if res.Deterministic || res.Model == nil || *res.Model != "fake/fake-model" || res.Usage == nil || res.CustomInstructions != "mind the parser" ||
				!strings.HasPrefix(res.Summary, "## Goal\nFrom the fake.") || res.TokensAfter <= 0 {
				t.Errorf("result %+v", res)
			}
			checkCompactedFile(t, path, data, res.EntryID)
			reqs := srv.Requests()
			if len(reqs) == 0 || !strings.Contains(reqs[0].LastUserText(), "mind the parser") || reqs[0].Model() != "fake-model" {
				t.Errorf("%d requests", len(reqs))
			}
			// Progress went to stderr as plain lines (not a terminal).
			if !strings.Contains(errOut, "compaction by fake/fake-model…") || !strings.Contains(errOut, "summarizing the history…") {
				t.Errorf("stderr %q", errOut)
			}
		})
	}

	t.Run("offline", func(t *testing.T) {
		path, data := compactSession(t)
		code, out, errOut := runPrime(t, fakeEnv(t, nil), "compact", path, "--offline", "--keep-recent-tokens", "4000")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		s, _ := session.Load(path)
		for _, want := range []string{"## Goal", "compaction " + s.LeafID() + " appended", "tokens before", "summary built by code: no summarizer model"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q", want)
			}
		}
		checkCompactedFile(t, path, data, s.LeafID())
		// The context right after: pi's estimate still uses the last
		// reported usage, which measured the context before the
		// compaction; the next request is estimated by characters, and is
		// the size the compaction reported as after.
		m := regexp.MustCompile(`tokens before, ([0-9,]+) after`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no size after in %q", out)
		}
		code, out, errOut = runPrime(t, fakeEnv(t, nil), "session", "context", path, "--json")
		var ctxOut struct {
			EstimatedTokens int `json:"estimatedTokens"`
			NextTokens      int `json:"nextTokens"`
		}
		if err := json.Unmarshal([]byte(out), &ctxOut); code != 0 || err != nil {
			t.Fatalf("session context: exit %d, %v: %s", code, err, errOut)
		}
		if got := strconv.Itoa(ctxOut.NextTokens); strings.ReplaceAll(m[1], ",", "") != got || ctxOut.NextTokens >= ctxOut.EstimatedTokens {
			t.Errorf("session context after the compaction: estimated %d, next %d; compact reported %s after", ctxOut.EstimatedTokens, ctxOut.NextTokens, m[1])
		}

		// Again: already compacted, exit 0, nothing written.
		after, _ := os.ReadFile(path)
		code, out, _ = runPrime(t, fakeEnv(t, nil), "compact", path, "--offline", "--json")
		if code != 0 || !strings.Contains(out, `"compactable": false`) || !strings.Contains(out, "already compacted") {
			t.Errorf("second run: exit %d, %s", code, out)
		}
		unchanged(t, path, after)
	})

	t.Run("always overflow", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t, llmtest.FlavorLlamaCpp)
		srv.Handle(func(*llmtest.Request) llmtest.Reply { return llmtest.Overflow() })
		path, data := compactSession(t)
		code, out, errOut := runPrime(t, fakeEnv(t, srv), "compact", path, "--model", "fake/fake-model", "--keep-recent-tokens", "4000", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var res compactJSON
		json.Unmarshal([]byte(out), &res)
		d, _ := compaction.ParseDetails(res.Details)
		if !res.Deterministic || d.Summarizer != compaction.SummarizerDeterministic || !strings.Contains(res.DeterministicReason, "still too large after 2 smaller retries") {
			t.Errorf("result %+v", res)
		}
		checkCompactedFile(t, path, data, res.EntryID)
		if !strings.Contains(errOut, "did not fit the model's context window") || !strings.Contains(errOut, "building it by code") {
			t.Errorf("stderr %q", errOut)
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		srv := llmtest.NewAnthropic(t)
		asked := llmtest.Hold(srv, "x")
		path, data := compactSession(t)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() {
			select {
			case <-asked:
				cancel()
			case <-ctx.Done():
			}
		}()
		a, _, errOut := testApp(fakeEnv(t, srv))
		code := run(ctx, []string{"compact", path, "--model", "fake/fake-model", "--keep-recent-tokens", "4000"}, a)
		if code != exitInterrupted || !strings.Contains(errOut.String(), "prime compact: compaction cancelled, nothing written\n") {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
		unchanged(t, path, data)
	})
}

// checkCompactedFile checks that exactly one line was appended to the file,
// the compaction entryID, and that the file loads with its summary first.
func checkCompactedFile(t *testing.T, path string, before []byte, entryID string) {
	t.Helper()
	after, _ := os.ReadFile(path)
	if !bytes.HasPrefix(after, before) || bytes.Count(after[len(before):], []byte("\n")) != 1 {
		t.Fatal("not exactly one line appended")
	}
	s, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.LeafID() != entryID || s.Leaf().Type != session.TypeCompaction || len(s.Warnings()) != 0 {
		t.Fatalf("leaf %s %s, warnings %v", s.LeafID(), s.Leaf().Type, s.Warnings())
	}
	c, err := s.Context("")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Messages[0].(*session.CompactionSummaryMessage); !ok {
		t.Errorf("context starts with %T", c.Messages[0])
	}
}

func TestCompactCommandErrors(t *testing.T) {
	path, data := compactSession(t)
	env := fakeEnv(t, nil)
	// The same session, switched last to a model Prime does not know.
	s, _ := session.Load(path)
	change, err := session.EncodeEntry("0dd0dd0d", s.LeafID(), "2025-11-05T09:00:00.000Z", &session.ModelChangeEntry{Provider: "openai", ModelID: "gpt-5.1-codex"})
	if err != nil {
		t.Fatal(err)
	}
	unknownModel := filepath.Join(t.TempDir(), "unknown-model.jsonl")
	if err := os.WriteFile(unknownModel, append(append(slices.Clip(data), change...), '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"compact", path, "--model", "a/b", "--offline"}, 2, "exclude each other"},
		{[]string{"compact", path, "--context-window", "0"}, 2, "--context-window"},
		{[]string{"compact", path, "--keep-recent-tokens", "-1"}, 2, "must not be negative"},
		{[]string{"compact", path, "--leaf", "nope", "--offline"}, 2, "nope"},
		{[]string{"compact"}, 2, "want one session FILE"},
		{[]string{"compact", path, "--model", "nobody/nothing", "--keep-recent-tokens", "4000"}, 2, "not a model Prime knows"},
		{[]string{"compact", path, "--keep-recent-tokens", "4000"}, 1, "(the session's model): no API key: set "},
		{[]string{"compact", unknownModel, "--keep-recent-tokens", "4000"}, 1, "(the session's model): not a model Prime knows"},
		{[]string{"compact", path, "--model", "anthropic/claude-haiku-4-5", "--keep-recent-tokens", "4000"}, 1,
			"summarizer anthropic/claude-haiku-4-5: no API key: set ANTHROPIC_API_KEY\n  pass --model PROVIDER/ID"},
		{[]string{"compact", filepath.Join(t.TempDir(), "missing.jsonl")}, 2, "missing.jsonl"},
		{[]string{"branch", path}, 2, "--to ID is required"},
		{[]string{"branch", path, "--to", "nope"}, 2, "nope"},
		{[]string{"branch", path, "--to", "x", "--instructions", "y"}, 2, "add --summarize"},
	} {
		code, _, errOut := runPrime(t, env, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args[1:], code, errOut, tc.code, tc.want)
		}
	}
	unchanged(t, path, data)
}

// TestBranchCommand re-creates a few of pi's tree-navigation cases
// through the command.
func TestBranchCommand(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(summaryReply)
	env := fakeEnv(t, srv)
	path, data := compactSession(t)
	s, _ := session.Load(path)
	root := s.Entries()[0]
	rootMsg, _ := root.Message()
	rootText := llm.TextOf(rootMsg.(*llm.UserMessage).Content)

	// 60 and 66: to the root user message without a summary: the text comes
	// back for editing, and nothing is written.
	code, out, errOut := runPrime(t, env, "branch", path, "--to", root.ID)
	if code != 0 || !strings.Contains(out, "leaf: (before the first entry) (was "+s.LeafID()+")") ||
		!strings.Contains(out, "nothing written") || !strings.Contains(out, rootText) {
		t.Errorf("exit %d %s\n%s", code, errOut, out)
	}
	unchanged(t, path, data)

	// 67: to where we are.
	code, out, _ = runPrime(t, env, "branch", path, "--to", s.LeafID(), "--json")
	if code != 0 || !strings.Contains(out, `"written": false`) || !strings.Contains(out, "nothing to do") {
		t.Errorf("current leaf: exit %d %s", code, out)
	}
	unchanged(t, path, data)

	// 62: to the root user message with a summary from the model: a new
	// root, the leaf after a reload.
	code, out, errOut = runPrime(t, env, "branch", path, "--to", root.ID, "--summarize", "--model", "fake/fake-model", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res branchJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if !res.Written || res.SummaryEntryID == nil || res.LeafID == nil || *res.LeafID != *res.SummaryEntryID || res.EditorText == nil ||
		*res.EditorText != rootText || res.FromID != s.LeafID() || res.Deterministic || !strings.Contains(*res.Summary, "From the fake.") {
		t.Fatalf("result %s", out)
	}
	s2, _ := session.Load(path)
	e := s2.Leaf()
	p, _ := e.Payload()
	if e.ID != *res.SummaryEntryID || e.ParentID != "" || p.(*session.BranchSummaryEntry).FromID != s.LeafID() {
		t.Errorf("reloaded leaf %s (parent %q), payload %+v", e.ID, e.ParentID, p)
	}
	if r := srv.LastRequest(); !strings.Contains(r.LastUserText(), "<conversation>") {
		t.Error("the request was not a summary request")
	}
}

// TestCompactBinary runs the README's commands through the built binary:
// offline, against a fake provider, and interrupted with SIGINT while the
// provider hangs.
func TestCompactBinary(t *testing.T) {
	bin := buildPrime(t)
	command := func(env map[string]string, args ...string) *exec.Cmd {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), settings.AgentDirEnv+"="+env[settings.AgentDirEnv])
		return cmd
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if out, err := command(fakeEnv(t, nil), "dev", "gen-session", "--entries", "5000", "--seed", "1", "--out", path).CombinedOutput(); err != nil {
		t.Fatalf("gen-session: %v\n%s", err, out)
	}
	data, _ := os.ReadFile(path)

	t.Run("offline", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "s.jsonl")
		os.WriteFile(p, data, 0o600)
		out, err := command(fakeEnv(t, nil), "compact", p, "--offline").Output()
		if err != nil || !strings.Contains(string(out), "<modified-files>") || !strings.Contains(string(out), "appended to "+p) {
			t.Fatalf("%v\n%s", err, out)
		}
		// The context shrinks, by the numbers the README quotes.
		m := regexp.MustCompile(`context: ([\d,]+) tokens before, ([\d,]+) after`).FindStringSubmatch(string(out))
		readme, _ := os.ReadFile(filepath.Join("..", "..", "README.md"))
		if m == nil || !strings.Contains(strings.Join(strings.Fields(string(readme)), " "), "shrinking from "+m[1]+" to "+m[2]+" tokens") {
			t.Errorf("the README does not quote the demo's context sizes %q:\n%s", m, out)
		}
		s, _ := session.Load(p)
		checkCompactedFile(t, p, data, s.LeafID())
	})

	t.Run("openai", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t, llmtest.FlavorOllama)
		srv.Handle(summaryReply)
		p := filepath.Join(t.TempDir(), "s.jsonl")
		os.WriteFile(p, data, 0o600)
		cmd := command(fakeEnv(t, srv), "compact", p, "--model", "fake/fake-model", "--json")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		var res compactJSON
		if err := json.Unmarshal(out, &res); err != nil || res.Deterministic || len(srv.Requests()) == 0 {
			t.Fatalf("%v: %s", err, out)
		}
		checkCompactedFile(t, p, data, res.EntryID)
	})

	t.Run("interrupted", func(t *testing.T) {
		srv := llmtest.NewAnthropic(t)
		asked := llmtest.Hold(srv, "x")
		p := filepath.Join(t.TempDir(), "s.jsonl")
		os.WriteFile(p, data, 0o600)
		cmd := command(fakeEnv(t, srv), "compact", p, "--model", "fake/fake-model")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-asked:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no request; stderr %q", stderr.String())
		}
		cmd.Process.Signal(syscall.SIGINT)
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted || !strings.Contains(stderr.String(), "compaction cancelled, nothing written") {
			t.Errorf("%v, stderr %q", err, stderr.String())
		}
		unchanged(t, p, data)
	})
}

// TestProgress feeds a compaction's events to the progress display, as
// plain lines and as a terminal's redrawn status line.
func TestProgress(t *testing.T) {
	evs := []agent.Event{
		agent.CompactionStart{Summarizer: "fake/m"},
		&agent.Progress{Kind: agent.ProgressRequest, Phase: compaction.PhaseHistory, Part: 1},
		&agent.Progress{Kind: agent.ProgressText, Delta: "## Goal"},
		&agent.Progress{Kind: agent.ProgressRetry, Attempt: 1, Delay: 2 * time.Second, Err: errors.New("overloaded")},
		&agent.Progress{Kind: agent.ProgressOverflowRetry, Attempt: 1},
		&agent.Progress{Kind: agent.ProgressRequest, Phase: compaction.PhaseHistory, Part: 2, Attempt: 1},
		&agent.Progress{Kind: agent.ProgressFallback, Phase: compaction.PhaseHistory, Message: "the model failed"},
		agent.CompactionEnd{},
	}
	for _, tty := range []bool{false, true} {
		var out proctest.Buffer
		p := &progress{w: &out, tty: tty}
		for _, e := range evs {
			p.event(e)
		}
		p.close()
		p.event(agent.CompactionStart{}) // after close: ignored
		got := out.String()
		for _, want := range []string{"compaction by fake/m", "summarizing the history, part 2, smaller retry 1",
			"retrying in 2s (retry 1)", "sending a smaller one", "no model summary: the model failed; building it by code"} {
			if !strings.Contains(got, want) {
				t.Errorf("tty %v: output lacks %q:\n%q", tty, want, got)
			}
		}
		if tty != strings.Contains(got, "\r\x1b[K") || tty == strings.Contains(got, "received 7 characters") {
			t.Errorf("tty %v: %q", tty, got)
		}
	}
}

// TestProgressOrder: in plain lines, the characters a failed answer
// received are reported before what happened to it (the smaller retry, the
// fallback), never after; a context that filled up says so.
func TestProgressOrder(t *testing.T) {
	filled := fmt.Errorf("request still too large: %w", compaction.ErrContextFilled)
	var out proctest.Buffer
	p := &progress{w: &out}
	for _, e := range []agent.Event{
		agent.CompactionStart{Summarizer: "local/llama"},
		&agent.Progress{Kind: agent.ProgressRequest, Phase: compaction.PhaseHistory, Part: 1},
		&agent.Progress{Kind: agent.ProgressText, Delta: "## Goal\n- cut"},
		&agent.Progress{Kind: agent.ProgressOverflowRetry, Attempt: 1, Err: filled},
		&agent.Progress{Kind: agent.ProgressRequest, Phase: compaction.PhaseHistory, Part: 1, Attempt: 1},
		&agent.Progress{Kind: agent.ProgressText, Delta: "## Goal"},
		&agent.Progress{Kind: agent.ProgressFallback, Phase: compaction.PhaseHistory, Message: "the summarizer model failed"},
		agent.CompactionEnd{},
	} {
		p.event(e)
	}
	p.close()
	want := "compaction by local/llama…\n" +
		"summarizing the history…\n" +
		"received 13 characters\n" +
		"the model's context window filled up before the summary was finished; sending a smaller request\n" +
		"summarizing the history, smaller retry 1…\n" +
		"received 7 characters\n" +
		"no model summary: the summarizer model failed; building it by code\n"
	if got := out.String(); got != want {
		t.Errorf("progress:\n%s\nwant:\n%s", got, want)
	}
}

func TestBenchCompactCommand(t *testing.T) {
	path := genFile(t, sessiongen.Options{Entries: 3000, Seed: 1})
	data, _ := os.ReadFile(path)
	code, out, errOut := runPrime(t, nil, "dev", "bench-compact", path, "--runs", "1", "--json")
	var b benchCompactJSON
	if err := json.Unmarshal([]byte(out), &b); err != nil || code != 0 || b.Entries != 3000 || b.DryRunNs <= 0 || b.OfflineNs <= 0 || b.TokensAfter <= 0 {
		t.Errorf("exit %d %s: %v %s", code, errOut, err, out)
	}
	unchanged(t, path, data)
}

// TestCompactThroughLlamaCpp: prime compact and prime branch --summarize
// through a llama.cpp server with an 8,192-token context, a tokenizer 2.3
// times the chars/4 estimate, and a models.json that gives the model a
// window of 200,000: the server's first refusal (n_prompt_tokens, n_ctx)
// sizes every later request, the model writes the summary, and stderr
// tells of one smaller request.
func TestCompactThroughLlamaCpp(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.FlavorLlamaCpp)
	srv.SetWindow(llmtest.Window{Size: 8192, Ratio: 2.3})
	srv.Handle(summaryReply)
	env := fakeEnv(t, srv)
	path, _ := compactSession(t)
	s, _ := session.Load(path)
	root := s.Entries()[0]

	code, out, errOut := runPrime(t, env, "compact", path, "--model", "fake/fake-model", "--keep-recent-tokens", "4000", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res compactJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Deterministic || !strings.Contains(res.Summary, "From the fake.") {
		t.Fatalf("%v: %s", err, out)
	}
	st := srv.WindowStats()
	t.Logf("compaction: %d requests, %d refused, %d filled", len(srv.Requests()), st.Refused, st.Filled)
	if st.Refused+st.Filled != 1 || strings.Count(errOut, "did not fit the model's context window") != 1 || strings.Contains(errOut, "building it by code") {
		t.Errorf("stats %+v, stderr:\n%s", st, errOut)
	}

	srv.SetWindow(llmtest.Window{Size: 8192, Ratio: 2.3})
	before := len(srv.Requests())
	code, out, errOut = runPrime(t, env, "branch", path, "--to", root.ID, "--summarize", "--model", "fake/fake-model", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var br branchJSON
	if err := json.Unmarshal([]byte(out), &br); err != nil || br.Deterministic || br.Summary == nil || !strings.Contains(*br.Summary, "From the fake.") {
		t.Fatalf("%v: %s", err, out)
	}
	st = srv.WindowStats()
	t.Logf("branch summary: %d requests, %d refused, %d filled", len(srv.Requests())-before, st.Refused, st.Filled)
	if st.Refused+st.Filled != 1 {
		t.Errorf("stats %+v", st)
	}
}
