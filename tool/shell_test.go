package tool_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/prime-agent/prime/tool"
)

func TestRunShell(t *testing.T) {
	env := tool.Env{CWD: t.TempDir(), TempDir: t.TempDir()}
	var mu sync.Mutex
	var streamed strings.Builder
	res, err := tool.RunShell(context.Background(), env, `printf '\033[31mred\033[0m\r\n'; echo done >&2; exit 3`, func(s string) {
		mu.Lock()
		streamed.WriteString(s)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "red\ndone\n" || res.ExitCode == nil || *res.ExitCode != 3 || res.Cancelled || res.Truncated {
		t.Errorf("result %+v (exit %v)", res, res.ExitCode)
	}
	if got := streamed.String(); got != "red\ndone\n" {
		t.Errorf("streamed %q", got)
	}

	res, err = tool.RunShell(context.Background(), env, "seq 1 100000", nil)
	if err != nil || !res.Truncated || res.FullOutputPath == "" || !strings.HasSuffix(res.Output, "100000") {
		t.Errorf("long output: %v, truncated %v, file %q, ends %q", err, res.Truncated, res.FullOutputPath, res.Output[max(0, len(res.Output)-20):])
	}

	// Cancelled once the command has printed, however long it took to start.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen strings.Builder // onOutput may be called from another goroutine, and with part of a line
	res, err = tool.RunShell(ctx, env, "echo started; sleep 30", func(s string) {
		mu.Lock()
		defer mu.Unlock()
		if seen.WriteString(s); strings.Contains(seen.String(), "started") {
			cancel()
		}
	})
	if err != nil || !res.Cancelled || res.ExitCode != nil || !strings.Contains(res.Output, "started") {
		t.Errorf("cancelled: %v %+v", err, res)
	}
}

func TestCleanTerminalText(t *testing.T) {
	for in, want := range map[string]string{
		"\x1b[1;32mok\x1b[0m":         "ok",
		"a\rb\x07c":                   "abc",
		"\x1b]0;title\x07text\ttab\n": "text\ttab\n",
		"plain":                       "plain",
	} {
		if got := tool.CleanTerminalText(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}
