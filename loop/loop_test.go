package loop_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/loop"
	"github.com/prime-agent/prime/tool"
)

// store plays the caller: it keeps every message the loop ends, builds each
// request from them, and records the events by name.
type store struct {
	srv   *llmtest.Server
	mu    sync.Mutex
	msgs  []llm.Message
	names []string
	ends  []loop.ToolEnd
	reqs  int
	queue *queue
}

func newStore(t *testing.T, srv *llmtest.Server) *store {
	return &store{srv: srv, queue: &queue{}}
}

func (s *store) config(tools ...tool.Tool) *loop.Config {
	return &loop.Config{
		Tools: tools,
		Queue: s.queue,
		Request: func(ctx context.Context) (loop.Request, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.reqs++
			var msgs []llm.Message
			for _, m := range s.msgs {
				msgs = append(msgs, m)
			}
			specs := make([]llm.Tool, len(tools))
			for i, t := range tools {
				specs[i] = t.Spec().LLM()
			}
			return loop.Request{Provider: s.srv.Provider(), Request: &llm.Request{
				Model: s.srv.Model(), SystemPrompt: "You are a test.", Messages: llm.PrepareMessages(msgs), Tools: specs,
			}}, nil
		},
		Emit: func(e loop.Event) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.names = append(s.names, name(e))
			switch e := e.(type) {
			case loop.MessageEnd:
				s.msgs = append(s.msgs, e.Message)
			case loop.ToolEnd:
				s.ends = append(s.ends, e)
			}
		},
	}
}

// name is an event's short name, with the role of a message and the tool of
// a call, such as "end:assistant" or "tool-end:read".
func name(e loop.Event) string {
	switch e := e.(type) {
	case loop.RunStart:
		return "run-start"
	case loop.RunEnd:
		return "run-end"
	case loop.TurnStart:
		return "turn-start"
	case loop.TurnEnd:
		return "turn-end"
	case loop.MessageStart:
		return "start:" + e.Message.Role()
	case loop.MessageUpdate:
		return "update"
	case loop.MessageEnd:
		return "end:" + e.Message.Role()
	case loop.ToolStart:
		return "tool-start:" + e.Call.Name
	case loop.ToolUpdate:
		return "tool-update:" + e.Call.Name
	case loop.ToolEnd:
		return "tool-end:" + e.Call.Name
	}
	return fmt.Sprintf("%T", e)
}

// compact drops the updates from a list of event names.
func compact(names []string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "update" })
}

func user(text string) llm.Message {
	return &llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}, Timestamp: 1}
}

// queue is a loop.Queue of texts.
type queue struct {
	mu       sync.Mutex
	steering []string
	followUp []string
}

func (q *queue) Waiting(k loop.Kind) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if k == loop.Steering {
		return len(q.steering) > 0
	}
	return len(q.followUp) > 0
}

func (q *queue) Take(k loop.Kind) []llm.Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	l := &q.steering
	if k == loop.FollowUp {
		l = &q.followUp
	}
	if len(*l) == 0 {
		return nil
	}
	m := user((*l)[0])
	*l = (*l)[1:]
	return []llm.Message{m}
}

func (q *queue) add(k loop.Kind, text string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if k == loop.Steering {
		q.steering = append(q.steering, text)
	} else {
		q.followUp = append(q.followUp, text)
	}
}

// fakeTool is a tool whose behaviour a test sets.
type fakeTool struct {
	name   string
	schema string
	run    func(ctx context.Context, c tool.Call) (tool.Result, error)
	paths  func(args jsontext.Value) []string
}

func (f *fakeTool) Spec() tool.Spec {
	schema := f.schema
	if schema == "" {
		schema = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`
	}
	return tool.Spec{Name: f.name, Description: "a test tool", Parameters: jsontext.Value(schema)}
}

func (f *fakeTool) Run(ctx context.Context, c tool.Call) (tool.Result, error) { return f.run(ctx, c) }

// pathTool is a fakeTool whose calls touch the file in their "text" argument.
type pathTool struct{ fakeTool }

func (p *pathTool) Paths(args jsontext.Value) []string {
	var a struct {
		Text string `json:"text"`
	}
	json.Unmarshal(args, &a)
	return []string{"/" + a.Text}
}

func echo(name string) *fakeTool {
	return &fakeTool{name: name, run: func(ctx context.Context, c tool.Call) (tool.Result, error) {
		var a struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(c.Args, &a); err != nil {
			return tool.Result{}, err
		}
		return tool.Result{Content: []llm.Content{llm.Text{Text: "echo " + a.Text}}}, nil
	}}
}

func resultText(m *llm.ToolResultMessage) string { return llm.TextOf(m.Content) }

func TestTextReply(t *testing.T) {
	for _, srv := range []*llmtest.Server{llmtest.NewAnthropic(t), llmtest.NewOpenAI(t)} {
		t.Run(srv.API(), func(t *testing.T) {
			srv.Reply(llmtest.Text("Hello there."), llmtest.Usage(10, 3))
			s := newStore(t, srv)
			out := loop.Run(context.Background(), s.config(), []llm.Message{user("hi")})
			want := []string{"run-start", "turn-start", "start:user", "end:user", "start:assistant", "end:assistant", "turn-end", "run-end"}
			if diff := cmp.Diff(want, compact(s.names)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if len(out) != 2 {
				t.Fatalf("run returned %d messages", len(out))
			}
			a := out[1].(*llm.AssistantMessage)
			if a.Text() != "Hello there." || a.StopReason != llm.StopReasonStop || a.ThinkingLevel != llm.ThinkingOff {
				t.Errorf("reply %+v", a)
			}
			if !slices.Contains(s.names, "update") {
				t.Error("no streamed update")
			}
		})
	}
}

func TestToolCallTurns(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.Reply(llmtest.Text("Let me look."), llmtest.ToolCall("c1", "echo", `{"text":"one"}`))
	srv.Reply(llmtest.Text("Done."))
	s := newStore(t, srv)
	out := loop.Run(context.Background(), s.config(echo("echo")), []llm.Message{user("go")})
	want := []string{
		"run-start", "turn-start", "start:user", "end:user",
		"start:assistant", "end:assistant", "tool-start:echo", "tool-end:echo", "start:toolResult", "end:toolResult", "turn-end",
		"turn-start", "start:assistant", "end:assistant", "turn-end", "run-end",
	}
	if diff := cmp.Diff(want, compact(s.names)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if len(out) != 4 {
		t.Fatalf("%d messages", len(out))
	}
	r := out[2].(*llm.ToolResultMessage)
	if r.ToolCallID != "c1" || r.ToolName != "echo" || resultText(r) != "echo one" || r.IsError || r.DurationMs < 1 {
		t.Errorf("result %+v", r)
	}
	// The second request carried the call and its result.
	got := srv.Requests()[1].Text()
	if !strings.Contains(got, "echo one") {
		t.Errorf("second request lacks the tool result: %s", got)
	}
}

func TestParallelCallsResultsInCallOrder(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.ToolCall("a", "slow", `{"text":"a"}`), llmtest.ToolCall("b", "fast", `{"text":"b"}`))
	srv.Reply(llmtest.Text("ok"))
	// Both calls must be running at once: each waits until both started.
	var started sync.WaitGroup
	started.Add(2)
	release := make(chan struct{})
	go func() { started.Wait(); close(release) }()
	// The slow call ends only once the fast one's end was told.
	fastEnded := make(chan struct{})
	mk := func(name string, after <-chan struct{}) *fakeTool {
		return &fakeTool{name: name, run: func(ctx context.Context, c tool.Call) (tool.Result, error) {
			started.Done()
			select {
			case <-release:
			case <-time.After(20 * time.Second):
				return tool.Result{}, errors.New("the other call never started: calls ran one after another")
			}
			if after != nil {
				select {
				case <-after:
				case <-time.After(20 * time.Second):
					return tool.Result{}, errors.New("the fast call's end was not told before the slow call ended")
				}
			}
			return tool.Result{Content: []llm.Content{llm.Text{Text: name}}}, nil
		}}
	}
	s := newStore(t, srv)
	cfg := s.config(mk("slow", fastEnded), mk("fast", nil))
	emit := cfg.Emit
	cfg.Emit = func(e loop.Event) {
		emit(e)
		if end, ok := e.(loop.ToolEnd); ok && end.Call.Name == "fast" {
			close(fastEnded)
		}
	}
	out := loop.Run(context.Background(), cfg, []llm.Message{user("go")})
	if resultText(out[2].(*llm.ToolResultMessage)) != "slow" || resultText(out[3].(*llm.ToolResultMessage)) != "fast" {
		t.Fatalf("results out of call order: %v %v", out[2], out[3])
	}
	// ToolEnd comes in completion order: fast first.
	if s.ends[0].Call.Name != "fast" {
		t.Errorf("tool ends %s, %s; want fast first", s.ends[0].Call.Name, s.ends[1].Call.Name)
	}
}

// TestCallsRunAfterAllStarts: every call of a reply is announced before any
// runs, as pi does, so a fast call's end never comes before a later call's
// start. The last start waits (a little) for a call to begin running: one
// that ran early would be seen by the count.
func TestCallsRunAfterAllStarts(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.ToolCall("1", "quick", `{"text":"a"}`), llmtest.ToolCall("2", "quick", `{"text":"b"}`), llmtest.ToolCall("3", "quick", `{"text":"c"}`))
	srv.Reply(llmtest.Text("ok"))
	var mu sync.Mutex
	starts := 0
	var seen []int // starts announced when each call began
	began := make(chan struct{}, 3)
	quick := &fakeTool{name: "quick", run: func(ctx context.Context, c tool.Call) (tool.Result, error) {
		mu.Lock()
		seen = append(seen, starts)
		mu.Unlock()
		began <- struct{}{}
		return tool.Result{Content: []llm.Content{llm.Text{Text: c.ID}}}, nil
	}}
	s := newStore(t, srv)
	cfg := s.config(quick)
	emit := cfg.Emit
	cfg.Emit = func(e loop.Event) {
		if st, ok := e.(loop.ToolStart); ok {
			if st.Call.ID == "3" {
				select {
				case <-began:
				case <-time.After(300 * time.Millisecond):
				}
			}
			mu.Lock()
			starts++
			mu.Unlock()
		}
		emit(e)
	}
	loop.Run(context.Background(), cfg, []llm.Message{user("go")})
	if !slices.Equal(seen, []int{3, 3, 3}) {
		t.Errorf("starts announced when each call began: %v, want all 3", seen)
	}
	got := strings.Join(compact(s.names), " ")
	if want := "tool-start:quick tool-start:quick tool-start:quick tool-end:quick tool-end:quick tool-end:quick"; !strings.Contains(got, want) {
		t.Errorf("events %s\nlack %s", got, want)
	}
}

func TestSameFileCallsRunInOrder(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.Reply(llmtest.ToolCall("1", "file", `{"text":"x"}`), llmtest.ToolCall("2", "file", `{"text":"y"}`), llmtest.ToolCall("3", "file", `{"text":"x"}`))
	srv.Reply(llmtest.Text("ok"))
	var mu sync.Mutex
	var log []string
	running := map[string]bool{}
	ft := &pathTool{fakeTool{name: "file", run: func(ctx context.Context, c tool.Call) (tool.Result, error) {
		var a struct {
			Text string `json:"text"`
		}
		json.Unmarshal(c.Args, &a)
		mu.Lock()
		if running[a.Text] {
			mu.Unlock()
			return tool.Result{}, fmt.Errorf("two calls on %s at once", a.Text)
		}
		running[a.Text] = true
		log = append(log, "start "+c.ID)
		mu.Unlock()
		time.Sleep(30 * time.Millisecond)
		mu.Lock()
		running[a.Text] = false
		log = append(log, "end "+c.ID)
		mu.Unlock()
		return tool.Result{Content: []llm.Content{llm.Text{Text: c.ID}}}, nil
	}}}
	s := newStore(t, srv)
	out := loop.Run(context.Background(), s.config(ft), []llm.Message{user("go")})
	for i := 2; i < 5; i++ {
		if r := out[i].(*llm.ToolResultMessage); r.IsError {
			t.Fatalf("call failed: %s", resultText(r))
		}
	}
	if i1, i3 := slices.Index(log, "end 1"), slices.Index(log, "start 3"); i1 < 0 || i3 < i1 {
		t.Errorf("call 3 started before call 1 ended: %v", log)
	}
}

func TestFailedCalls(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Reply(
		llmtest.ToolCall("1", "nosuch", `{}`),
		llmtest.ToolCall("2", "echo", `{"text":{"not":"a string"}}`),
		llmtest.ToolCall("3", "fails", `{"text":"x"}`),
		llmtest.ToolCall("4", "panics", `{"text":"x"}`),
		llmtest.ToolCall("5", "partial", `{"text":"x"}`),
	)
	srv.Reply(llmtest.Text("noted"))
	fails := &fakeTool{name: "fails", run: func(ctx context.Context, c tool.Call) (tool.Result, error) {
		return tool.Result{}, errors.New("disk on fire")
	}}
	panics := &fakeTool{name: "panics", run: func(ctx context.Context, c tool.Call) (tool.Result, error) {
		panic("boom")
	}}
	partial := &fakeTool{name: "partial", run: func(ctx context.Context, c tool.Call) (tool.Result, error) {
		return tool.Result{Content: []llm.Content{llm.Text{Text: "exit 2"}}, Details: jsontext.Value(`{"exitCode":2}`), IsError: true}, nil
	}}
	s := newStore(t, srv)
	out := loop.Run(context.Background(), s.config(echo("echo"), fails, panics, partial), []llm.Message{user("go")})
	if len(out) != 8 {
		t.Fatalf("%d messages, want user, reply, 5 results, reply", len(out))
	}
	want := []struct {
		text string
		ran  bool
	}{
		{`There is no tool named "nosuch". The tools you can call are: echo, fails, panics, partial.`, false},
		{"", false}, // the validation error's own text
		{"disk on fire", true},
		{"The panics tool failed unexpectedly: boom", true},
		{"exit 2", true},
	}
	for i, w := range want {
		r := out[2+i].(*llm.ToolResultMessage)
		if !r.IsError {
			t.Errorf("result %d is not an error: %s", i+1, resultText(r))
		}
		if w.text != "" && resultText(r) != w.text {
			t.Errorf("result %d: %q, want %q", i+1, resultText(r), w.text)
		}
		if (r.DurationMs > 0) != w.ran || s.ends[i].Ran != w.ran {
			t.Errorf("result %d: ran %v, want %v", i+1, r.DurationMs > 0, w.ran)
		}
	}
	if got := resultText(out[3].(*llm.ToolResultMessage)); !strings.Contains(got, "text") {
		t.Errorf("validation error does not name the argument: %s", got)
	}
	if string(out[6].(*llm.ToolResultMessage).Details) != `{"exitCode":2}` {
		t.Error("an error result lost its details")
	}
}

func TestLengthStopRunsNoCall(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.Reply(llmtest.ToolCall("1", "echo", `{"text":"a"}`), llmtest.MaxTokens())
	srv.Reply(llmtest.Text("retrying properly"))
	ran := false
	e := echo("echo")
	inner := e.run
	e.run = func(ctx context.Context, c tool.Call) (tool.Result, error) { ran = true; return inner(ctx, c) }
	s := newStore(t, srv)
	out := loop.Run(context.Background(), s.config(e), []llm.Message{user("go")})
	if ran {
		t.Fatal("a call of a truncated reply ran")
	}
	r := out[2].(*llm.ToolResultMessage)
	if !r.IsError || !strings.Contains(resultText(r), "output token limit") {
		t.Errorf("result %q", resultText(r))
	}
	if len(out) != 4 || out[3].(*llm.AssistantMessage).Text() != "retrying properly" {
		t.Errorf("the run did not go on after the refused calls: %d messages", len(out))
	}
}

func TestAbortMidStream(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Queue(llmtest.Reply{Parts: []llmtest.Part{llmtest.Text("a long answer"), llmtest.Text("that never ends")}, Delay: 300 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	s := newStore(t, srv)
	cfg := s.config(echo("echo"))
	emit := cfg.Emit
	cfg.Emit = func(e loop.Event) {
		emit(e)
		if _, ok := e.(loop.MessageUpdate); ok {
			cancel()
		}
	}
	out := loop.Run(ctx, cfg, []llm.Message{user("go")})
	a := out[len(out)-1].(*llm.AssistantMessage)
	if a.StopReason != llm.StopReasonAborted {
		t.Fatalf("stop reason %s", a.StopReason)
	}
	if s.reqs != 1 {
		t.Errorf("%d requests after an abort, want 1", s.reqs)
	}
	if last := compact(s.names); last[len(last)-1] != "run-end" || last[len(last)-2] != "turn-end" {
		t.Errorf("events end %v", last)
	}
}

func TestAbortMidTool(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.Reply(llmtest.ToolCall("1", "block", `{"text":"f"}`), llmtest.ToolCall("2", "block", `{"text":"f"}`))
	ctx, cancel := context.WithCancel(context.Background())
	block := &pathTool{fakeTool{name: "block", run: func(ctx context.Context, c tool.Call) (tool.Result, error) {
		cancel()
		<-ctx.Done()
		return tool.Result{}, errors.New("stopped by the abort")
	}}}
	s := newStore(t, srv)
	out := loop.Run(ctx, s.config(block), []llm.Message{user("go")})
	if len(out) != 4 {
		t.Fatalf("%d messages, want user, reply and two results (no extra reply)", len(out))
	}
	if got := resultText(out[2].(*llm.ToolResultMessage)); got != "stopped by the abort" {
		t.Errorf("running call: %q", got)
	}
	if got := resultText(out[3].(*llm.ToolResultMessage)); !strings.Contains(got, "stopped the turn") {
		t.Errorf("waiting call: %q", got)
	}
	if s.reqs != 1 {
		t.Errorf("%d requests, want 1", s.reqs)
	}
}

func TestSteeringAndFollowUp(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	s := newStore(t, srv)
	// Queued before the run: steering joins the first request.
	s.queue.add(loop.Steering, "early steer")
	srv.Reply(llmtest.Text("first"))
	srv.Reply(llmtest.Text("after steer"))
	srv.Reply(llmtest.Text("after follow-up"))
	cfg := s.config()
	emit := cfg.Emit
	steered := false
	cfg.Emit = func(e loop.Event) {
		emit(e)
		if m, ok := e.(loop.MessageEnd); ok && m.Message.Role() == llm.RoleAssistant && !steered {
			steered = true
			s.queue.add(loop.FollowUp, "later")
			s.queue.add(loop.Steering, "mid steer")
		}
	}
	betweens := 0
	cfg.BetweenTurns = func(ctx context.Context, last loop.Turn) []llm.Message {
		betweens++
		return nil
	}
	out := loop.Run(context.Background(), cfg, []llm.Message{user("start")})
	var texts []string
	for _, m := range out {
		switch m := m.(type) {
		case *llm.UserMessage:
			texts = append(texts, "user "+llm.TextOf(m.Content))
		case *llm.AssistantMessage:
			texts = append(texts, "assistant "+m.Text())
		}
	}
	want := []string{"user start", "user early steer", "assistant first", "user mid steer", "assistant after steer", "user later", "assistant after follow-up"}
	if diff := cmp.Diff(want, texts); diff != "" {
		t.Errorf("conversation (-want +got):\n%s", diff)
	}
	if betweens != 2 {
		t.Errorf("BetweenTurns ran %d times, want 2", betweens)
	}
}

func TestBetweenTurnsMessagesGoFirst(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.Reply(llmtest.ToolCall("1", "echo", `{"text":"a"}`))
	srv.Reply(llmtest.Text("done"))
	s := newStore(t, srv)
	s.queue.add(loop.Steering, "") // taken at the start
	cfg := s.config(echo("echo"))
	cfg.BetweenTurns = func(ctx context.Context, last loop.Turn) []llm.Message {
		if len(last.ToolResults) != 1 {
			t.Errorf("last turn has %d results", len(last.ToolResults))
		}
		s.queue.add(loop.Steering, "steer")
		return []llm.Message{user("patch")}
	}
	out := loop.Run(context.Background(), cfg, []llm.Message{user("go")})
	var got []string
	for _, m := range out {
		if u, ok := m.(*llm.UserMessage); ok {
			got = append(got, llm.TextOf(u.Content))
		}
	}
	if diff := cmp.Diff([]string{"go", "", "patch", "steer"}, got); diff != "" {
		t.Errorf("user messages (-want +got):\n%s", diff)
	}
}

func TestRequestFails(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	s := newStore(t, srv)
	cfg := s.config()
	cfg.Request = func(ctx context.Context) (loop.Request, error) {
		return loop.Request{}, errors.New("no API key for openai")
	}
	out := loop.Run(context.Background(), cfg, []llm.Message{user("go")})
	a := out[1].(*llm.AssistantMessage)
	if a.StopReason != llm.StopReasonError || a.ErrorMessage != "no API key for openai" {
		t.Errorf("reply %+v", a)
	}
	want := []string{"run-start", "turn-start", "start:user", "end:user", "start:assistant", "end:assistant", "turn-end", "run-end"}
	if diff := cmp.Diff(want, s.names); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestProviderErrorCarriesClass(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Overflow()
	s := newStore(t, srv)
	var endErr error
	cfg := s.config()
	emit := cfg.Emit
	cfg.Emit = func(e loop.Event) {
		emit(e)
		if m, ok := e.(loop.MessageEnd); ok && m.Message.Role() == llm.RoleAssistant {
			endErr = m.Err
		}
	}
	out := loop.Run(context.Background(), cfg, []llm.Message{user("go")})
	if a := out[1].(*llm.AssistantMessage); a.StopReason != llm.StopReasonError {
		t.Fatalf("stop %s", a.StopReason)
	}
	if !errors.Is(endErr, llm.ErrContextOverflow) {
		t.Errorf("MessageEnd.Err = %v, want a context overflow", endErr)
	}
}

func TestToolUpdatesStopAtEnd(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.Reply(llmtest.ToolCall("1", "chatty", `{"text":"a"}`))
	srv.Reply(llmtest.Text("ok"))
	late := make(chan func(tool.Result), 1)
	chatty := &fakeTool{name: "chatty", run: func(ctx context.Context, c tool.Call) (tool.Result, error) {
		c.Update(tool.Result{Content: []llm.Content{llm.Text{Text: "partial"}}})
		late <- c.Update
		return tool.Result{Content: []llm.Content{llm.Text{Text: "final"}}}, nil
	}}
	s := newStore(t, srv)
	loop.Run(context.Background(), s.config(chatty), []llm.Message{user("go")})
	(<-late)(tool.Result{}) // an update after the end is dropped
	n := 0
	for _, name := range s.names {
		if name == "tool-update:chatty" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d updates, want 1", n)
	}
}
