package printmode_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/printmode"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
)

// run sends msgs through a Printer to an agent talking to srv and returns
// what it wrote and Run's error.
func run(ctx context.Context, t *testing.T, srv *llmtest.Server, jsonMode bool, msgs ...string) (stdout, stderr string, err error) {
	t.Helper()
	return runWith(ctx, t, srv, nil, jsonMode, msgs...)
}

// runWith is run with settings overrides ("key", "value", ...).
func runWith(ctx context.Context, t *testing.T, srv *llmtest.Server, overrides []string, jsonMode bool, msgs ...string) (stdout, stderr string, err error) {
	t.Helper()
	return runOpts(ctx, t, srv, overrides, printmode.Options{JSON: jsonMode}, msgs...)
}

// runOpts is runWith with the printer's options (its streams are the
// test's).
func runOpts(ctx context.Context, t *testing.T, srv *llmtest.Server, overrides []string, o printmode.Options, msgs ...string) (stdout, stderr string, err error) {
	t.Helper()
	m := srv.Model()
	models, mErr := json.Marshal(map[string]any{"providers": map[string]any{m.Provider: map[string]any{
		"baseUrl": m.BaseURL, "api": m.API, "apiKey": llmtest.Key,
		"models": []any{map[string]any{"id": m.ID, "api": m.API, "contextWindow": m.ContextWindow, "maxTokens": m.MaxTokens}},
	}}})
	if mErr != nil {
		t.Fatal(mErr)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "models.json"), models, 0o600); err != nil {
		t.Fatal(err)
	}
	s, sErr := session.Create(filepath.Join(t.TempDir(), "s.jsonl"), session.Options{CWD: t.TempDir()})
	if sErr != nil {
		t.Fatal(sErr)
	}
	st, stErr := settings.Defaults().WithOverride("retry.enabled", "false")
	for i := 0; stErr == nil && i+1 < len(overrides); i += 2 {
		st, stErr = st.WithOverride(overrides[i], overrides[i+1])
	}
	if stErr != nil {
		t.Fatal(stErr)
	}
	var out, errOut bytes.Buffer
	o.Stdout, o.Stderr = &out, &errOut
	p := printmode.New(o)
	ag := agent.New(s, agent.Config{
		Settings: st, AgentDir: dir, Getenv: func(string) string { return "" }, Events: p.Event,
		Model: m.Provider + "/" + m.ID, NoContextFiles: true,
	})
	t.Cleanup(func() { ag.Close(); s.Close() })
	err = p.Run(ctx, ag, msgs, nil)
	return out.String(), errOut.String(), err
}

func TestRun(t *testing.T) {
	for _, c := range []struct {
		name          string
		replies       [][]llmtest.Part
		msgs          []string
		stdout, err   string // stdout and stderr as wanted
		want          error
		jsonMode      bool
		jsonHasPrefix string
	}{
		{name: "answer", replies: [][]llmtest.Part{{llmtest.Text("Hello.")}}, msgs: []string{"hi"}, stdout: "Hello.\n"},
		{name: "last answer only", replies: [][]llmtest.Part{{llmtest.Text("one")}, {llmtest.Text("two")}}, msgs: []string{"a", "b"}, stdout: "two\n"},
		{name: "cut off", replies: [][]llmtest.Part{{llmtest.Text("Hel"), llmtest.MaxTokens()}}, msgs: []string{"hi"},
			stdout: "Hel\n", err: "prime: the answer was cut off at the model's output limit\n", want: printmode.ErrFailed},
		{name: "model error", replies: [][]llmtest.Part{{llmtest.ErrorEvent("invalid_request_error", "bad request")}}, msgs: []string{"hi"},
			want: printmode.ErrFailed},
		{name: "nothing to compact", msgs: []string{"/compact"}, stdout: "nothing to compact"},
		{name: "json", jsonMode: true, replies: [][]llmtest.Part{{llmtest.Text("Hello.")}}, msgs: []string{"hi"}, jsonHasPrefix: `{"type":"session"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.NewAnthropic(t)
			for _, r := range c.replies {
				srv.Reply(r...)
			}
			stdout, stderr, err := run(context.Background(), t, srv, c.jsonMode, c.msgs...)
			if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
				t.Fatalf("Run: %v, want %v (stderr %q)", err, c.want, stderr)
			}
			if c.jsonMode {
				lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
				if !strings.HasPrefix(lines[0], c.jsonHasPrefix) {
					t.Errorf("first line %s, want the session header", lines[0])
				}
				last := lines[len(lines)-1]
				if last != `{"type":"agent_settled","aborted":false}` {
					t.Errorf("last line %s", last)
				}
				if strings.Contains(stdout, "\nHello.\n") {
					t.Errorf("JSON mode printed the answer as text:\n%s", stdout)
				}
				return
			}
			if !strings.HasPrefix(stdout, c.stdout) {
				t.Errorf("stdout %q, want %q", stdout, c.stdout)
			}
			if c.err != "" && stderr != c.err {
				t.Errorf("stderr %q, want %q", stderr, c.err)
			}
			if c.want != nil && c.err == "" && !strings.HasPrefix(stderr, "prime: ") {
				t.Errorf("stderr %q says nothing of the failure", stderr)
			}
		})
	}
}

// TestInterrupted: a context cancelled while the model works aborts the
// run and says so.
func TestInterrupted(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv.Handle(func(*llmtest.Request) llmtest.Reply {
		cancel()
		<-release
		return llmtest.Stream(llmtest.Text("late"))
	})
	_, stderr, err := run(ctx, t, srv, false, "hi")
	if !errors.Is(err, printmode.ErrInterrupted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	if want := "prime: interrupted; the session keeps everything up to here\n"; !strings.HasSuffix(stderr, want) {
		t.Errorf("stderr %q, want it to end %q", stderr, want)
	}
}

// TestCompactMessage: "/compact" after an exchange compacts and says so on
// standard output; a compaction that cannot start (its model is unknown)
// is a CompactError carrying the agent's error, and nothing is printed.
func TestCompactMessage(t *testing.T) {
	keep := []string{"compaction.keepRecentTokens", "1"}
	t.Run("compacted", func(t *testing.T) {
		srv := llmtest.NewAnthropic(t)
		srv.Reply(llmtest.Text("The first answer."))
		srv.Reply(llmtest.Text("The second answer."))
		for range 2 { // the history, and the turn's prefix when it is split
			srv.Reply(llmtest.Text("## Goal\nAnswer the questions."))
		}
		stdout, stderr, err := runWith(context.Background(), t, srv, keep, false, "a question", "another", "/compact keep it short")
		if err != nil {
			t.Fatalf("Run: %v (stderr %q)", err, stderr)
		}
		if !strings.HasPrefix(stdout, "compacted: ") || !strings.Contains(stdout, " tokens\n\n## Goal\nAnswer the questions.") {
			t.Errorf("stdout %q", stdout)
		}
		if got := srv.LastRequest().LastUserText(); !strings.Contains(got, "keep it short") {
			t.Errorf("the instructions did not reach the summarizer: %q", got)
		}
	})
	t.Run("unknown summarizer", func(t *testing.T) {
		srv := llmtest.NewAnthropic(t)
		srv.Reply(llmtest.Text("The answer."))
		srv.Reply(llmtest.Text("Another."))
		stdout, _, err := runWith(context.Background(), t, srv, append(keep, "compaction.model", "nowhere/no-model"), false, "a question", "another", "/compact")
		var ce *printmode.CompactError
		var me *agent.ModelError
		if !errors.As(err, &ce) || !errors.As(err, &me) {
			t.Fatalf("Run: %v, want a CompactError with the agent's ModelError", err)
		}
		if stdout != "" {
			t.Errorf("stdout %q, want nothing", stdout)
		}
	})
}

// TestTerminalText: a reply written to a terminal loses the escape
// sequences in it (one set the terminal's title, another could write its
// clipboard); to a pipe it is written exactly, for scripts.
func TestTerminalText(t *testing.T) {
	reply := "answer \x1b]0;PWNED\x07\x1b]52;c;Q0xJUA==\x07 done"
	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.Text(reply))
	out, _, err := runOpts(t.Context(), t, srv, nil, printmode.Options{StdoutTerminal: true, StderrTerminal: true}, "hi")
	if err != nil || out != "answer  done\n" {
		t.Errorf("to a terminal: %q, %v", out, err)
	}
	srv.Reply(llmtest.Text(reply))
	out, _, err = runOpts(t.Context(), t, srv, nil, printmode.Options{}, "hi")
	if err != nil || out != reply+"\n" {
		t.Errorf("to a pipe: %q, %v", out, err)
	}
}
