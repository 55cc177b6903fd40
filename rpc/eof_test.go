package rpc_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prime-agent/prime/internal/procmem"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/rpc"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiontest"
)

// TestLineTooLong: a 256 MB command line is answered with a parse failure
// naming the limit, without being held whole (the server's memory grows by
// far less than the line), and the next command is handled.
func TestLineTooLong(t *testing.T) {
	h := start(t, llmtest.NewAnthropic(t), settingsFor(t))
	const size = 256 << 20
	var r msg
	grew := procmem.PeakGrowthMB(func() {
		if _, err := io.WriteString(h.in, `{"type":"prompt","message":"`); err != nil {
			t.Fatal(err)
		}
		chunk := []byte(strings.Repeat("a", 1<<20))
		for sent := 0; sent < size; sent += len(chunk) {
			if _, err := h.in.Write(chunk); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := io.WriteString(h.in, "\"}\n"+`{"id":"s","type":"get_state"}`+"\n"); err != nil {
			t.Fatal(err)
		}
		r = h.out.next(t)
	})
	t.Logf("peak RSS growth %.0f MB for a %d MB line", grew, size>>20)
	want := fmt.Sprintf("more than the %d a command may have", rpc.MaxLineBytes)
	if r.m["command"] != "parse" || r.success() || !strings.Contains(r.errText(), want) {
		t.Fatalf("a line too long: %s", r.raw)
	}
	if s := h.response("s"); !s.success() {
		t.Errorf("the command after it: %s", s.raw)
	}
	// Bounded by the limit (the first 32 MiB are read before the line is
	// known to be too long), not by the line.
	if limit := 5 * float64(rpc.MaxLineBytes>>20); grew > limit {
		t.Errorf("memory grew %.0f MB reading a line it refused, more than %.0f", grew, limit)
	}
}

// TestEndOfInputFinishesTheWork: when the input ends, the run under way
// ends as it would have, and the follow-up queued behind it is sent and
// answered; Serve returns once the agent settled.
func TestEndOfInputFinishesTheWork(t *testing.T) {
	h, g := startGated(t, llmtest.NewAnthropic(t), false, "first")
	h.send(`{"id":"f","type":"follow_up","message":"second"}`)
	if r := h.response("f"); !r.success() {
		t.Fatalf("follow_up: %s", r.raw)
	}
	h.in.Close()
	select {
	case err := <-h.done:
		t.Fatalf("Serve returned (%v) before the run ended", err)
		h.done <- err
	case <-time.After(100 * time.Millisecond):
	}
	close(g.release)
	if err := h.finish(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if texts := sessiontest.UserTexts(t, h.path); !slices.Equal(texts, []string{"first", "second"}) {
		t.Errorf("user messages stored %q", texts)
	}
	got := h.until(func(m msg) bool { return m.isEvent("agent_settled") })
	if last := got[len(got)-1]; last.m["aborted"] == true {
		t.Errorf("settled %s", last.raw)
	}
}

// TestEndOfInputDropsWithAbortAtEOF: with AbortAtEOF the run is aborted at
// the end of input and the follow-up it never sent is reported dropped.
func TestEndOfInputDropsWithAbortAtEOF(t *testing.T) {
	h, _ := startGatedWith(t, llmtest.NewAnthropic(t), true, "first", rpc.Options{AbortAtEOF: true})
	h.send(`{"id":"f","type":"follow_up","message":"second"}`)
	h.response("f")
	if err := h.finish(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	got := h.until(func(m msg) bool { return m.isEvent("queue_dropped") })
	d := got[len(got)-1]
	if fu, _ := d.m["followUp"].([]any); len(fu) != 1 || fu[0] != "second" {
		t.Errorf("dropped %s", d.raw)
	}
}

// TestPromptThenCompact: a compact right after an accepted prompt aborts
// the run, but the prompt is stored all the same.
func TestPromptThenCompact(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	h := start(t, srv, settingsFor(t))
	h.send(`{"id":"p","type":"prompt","message":"first"}`, `{"id":"c","type":"compact"}`)
	if r := h.response("p"); !r.success() || r.data()["disposition"] != "started" && r.data() != nil {
		t.Fatalf("prompt: %s", r.raw)
	}
	h.response("c")
	if err := h.finish(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if texts := sessiontest.UserTexts(t, h.path); !slices.Contains(texts, "first") {
		t.Errorf("the accepted prompt was lost: user messages %q", texts)
	}
}

// TestBashAtEndOfInput: a user command that completes as the input ends is
// answered with its exit code, not as cancelled; with AbortAtEOF, one whose
// shell had exited (its output complete) while a process it left in the
// background still wrote is not cancelled either.
func TestBashAtEndOfInput(t *testing.T) {
	// A marker file says when the input may end: the "finish" shell is
	// sleeping; in "abort", the shell has exited (its background writer
	// waits until the shell is gone, then makes the marker and writes on).
	for _, c := range []struct {
		name    string
		opts    rpc.Options
		command string
	}{
		{"finish", rpc.Options{}, "touch %[1]s; sleep 0.3; echo done"},
		{"abort", rpc.Options{AbortAtEOF: true},
			"echo done; p=$$; (while kill -0 $p 2>/dev/null; do :; done; touch %[1]s; while :; do sleep 0.05; echo tick; done) &"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := session.Create(filepath.Join(t.TempDir(), "s.jsonl"), session.Options{CWD: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			h := startWith(t, s, llmtest.NewAnthropic(t), settingsFor(t), c.opts)
			marker := filepath.Join(t.TempDir(), "marker")
			h.send(fmt.Sprintf(`{"id":"b","type":"bash","command":%q}`, fmt.Sprintf(c.command, marker)))
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				if _, err := os.Stat(marker); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the command never made its marker")
				}
			}
			if err := h.finish(); err != nil {
				t.Errorf("Serve: %v", err)
			}
			r := h.response("b")
			d := r.data()
			if !r.success() || d["cancelled"] == true || d["exitCode"] != 0.0 || !strings.HasPrefix(d["output"].(string), "done\n") {
				t.Errorf("bash: %s", r.raw)
			}
		})
	}
}
