package main

import (
	"net"
	"regexp"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm/llmtest"
)

// TestUnreachableModel: a model whose local server is not running fails at
// once with one line that names the URL and what to start (exit 1); a
// server that keeps failing is retried, each retry on a line, then one
// "gave up after N retries" line, and the error is not said again.
func TestUnreachableModel(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	e := newAgentEnv(t, srv, 0, `{"retry": {"baseDelayMs": 1, "maxRetries": 2}}`)

	srv.Handle(func(*llmtest.Request) llmtest.Reply {
		return llmtest.HTTPError(503, "server_error", "the server is busy")
	})
	out, errOut, code := e.run(t, "", "-p", "hello")
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	retry := regexp.MustCompile(`^prime: 503 server_error from fake: the server is busy; retrying in \d+ms \([12]/2\)…$`)
	if code != 1 || out != "" || len(lines) != 3 || !retry.MatchString(lines[0]) || !retry.MatchString(lines[1]) ||
		lines[2] != "prime: gave up after 2 retries: 503 server_error from fake: the server is busy" {
		t.Errorf("a failing server: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}

	// The server's port, with nothing listening on it any more.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	e2 := newAgentEnvAt(t, e, "http://"+addr+"/v1")
	out, errOut, code = e2.run(t, "", "-p", "hello")
	want := "prime: connection to fake failed: nothing is listening at http://" + addr + "/v1/chat/completions (connection refused): start the model's server there, or choose another model with --model\n"
	if code != 1 || out != "" || errOut != want {
		t.Errorf("no server: exit %d, stdout %q\nstderr %q\nwant   %q", code, out, errOut, want)
	}
}

// newAgentEnvAt is e with its models.json pointing at baseURL.
func newAgentEnvAt(t *testing.T, e *agentEnv, baseURL string) *agentEnv {
	t.Helper()
	c := *e
	c.agentDir = t.TempDir()
	if err := writeFakeModels(c.agentDir+"/models.json", e.srv.API(), baseURL, 0); err != nil {
		t.Fatal(err)
	}
	return &c
}

// TestModelErrorsSayItOnce: an error about the model names it once, with no
// package names, and says what to do.
func TestModelErrorsSayItOnce(t *testing.T) {
	e := newAgentEnv(t, llmtest.NewOpenAI(t), 0, "")
	for _, tc := range []struct {
		model, want string
	}{
		{"anthropic/claude-haiku-4-5", "prime: model anthropic/claude-haiku-4-5: no API key: set ANTHROPIC_API_KEY\n"},
		{"nope/x", "prime: --model: unknown model \"nope/x\" (run 'prime models' for the list)\n"},
	} {
		cmd := e.command("-p", "--model", tc.model, "hello")
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		if cmd.ProcessState.ExitCode() != 1 || errOut.String() != tc.want || out.Len() != 0 {
			t.Errorf("--model %s: %v, stdout %q\nstderr %q\nwant   %q", tc.model, err, out.String(), errOut.String(), tc.want)
		}
	}
}
