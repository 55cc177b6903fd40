package loop_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmfake"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/loop"
)

// TestToolErrorBackoff: a model that answers every request with a call of
// a tool that does not exist is slowed after BackoffAfter failing turns
// (each wait twice the one before) and stopped after StopAfterErrors, with
// RunEnd saying why, instead of driving requests as fast as it can.
func TestToolErrorBackoff(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.Handle(func(*llmfake.Request) llmtest.Reply {
		return llmtest.Stream(llmtest.ToolCall("c", "no_such_tool", `{}`))
	})
	s := newStore(t, srv)
	cfg := s.config(echo("echo"))
	cfg.ErrorBackoff = time.Millisecond
	var delays []time.Duration
	var end loop.RunEnd
	emit := cfg.Emit
	cfg.Emit = func(e loop.Event) {
		switch e := e.(type) {
		case loop.Backoff:
			delays = append(delays, e.Delay)
		case loop.RunEnd:
			end = e
		}
		emit(e)
	}
	loop.Run(context.Background(), cfg, []llm.Message{user("go")})
	if s.reqs != loop.StopAfterErrors || end.Stopped != loop.StoppedToolErrors || end.Turns != loop.StopAfterErrors {
		t.Fatalf("%d requests, run end %+v; want %d and stopped for tool errors", s.reqs, end, loop.StopAfterErrors)
	}
	want := []time.Duration{}
	for d, n := time.Millisecond, loop.BackoffAfter; n < loop.StopAfterErrors; n, d = n+1, d*2 {
		want = append(want, d)
	}
	if !slices.Equal(delays, want) {
		t.Errorf("back-off delays %v, want %v", delays, want)
	}
}

// TestMaxTurns: a model that keeps calling a tool that works is stopped
// after MaxTurns turns; a turn with a working call resets the failure count.
func TestMaxTurns(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(func(*llmfake.Request) llmtest.Reply {
		return llmtest.Stream(llmtest.ToolCall("c", "echo", `{"text":"again"}`))
	})
	s := newStore(t, srv)
	cfg := s.config(echo("echo"))
	cfg.MaxTurns = 4
	var end loop.RunEnd
	emit := cfg.Emit
	cfg.Emit = func(e loop.Event) {
		if e, ok := e.(loop.RunEnd); ok {
			end = e
		}
		emit(e)
	}
	loop.Run(context.Background(), cfg, []llm.Message{user("go")})
	if s.reqs != 4 || end.Stopped != loop.StoppedTurns || end.Turns != 4 {
		t.Fatalf("%d requests, run end %+v; want 4 and stopped for turns", s.reqs, end)
	}
}
