package agent_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/llm/registry"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
	"github.com/prime-agent/prime/tool"
)

// upper is a tool that upper-cases its text argument.
type upper struct{}

func (upper) Spec() tool.Spec {
	return tool.Spec{Name: "upper", Description: "upper-cases text", Snippet: "upper-case text",
		Parameters: jsontext.Value(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)}
}

func (upper) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	var a struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(c.Args, &a); err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Content: []llm.Content{llm.Text{Text: strings.ToUpper(a.Text)}}}, nil
}

// live starts an agent on a new session file in a fresh directory, talking
// to srv with the given tools; it is closed when the test ends.
func live(t *testing.T, srv *llmtest.Server, ev *events, tools ...tool.Tool) (*agent.Agent, string) {
	t.Helper()
	return liveWith(t, srv, ev, testSettings(t), tools...)
}

// liveWith is live with settings.
func liveWith(t *testing.T, srv *llmtest.Server, ev *events, st *settings.Settings, tools ...tool.Tool) (*agent.Agent, string) {
	t.Helper()
	dir := agentDir(t, srv)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s, err := session.Create(path, session.Options{CWD: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config(dir, st, ev)
	cfg.Model = srv.Model().Provider + "/" + srv.Model().ID
	cfg.Tools = tools
	cfg.NoContextFiles = true
	ag := agent.New(s, cfg)
	t.Cleanup(func() { ag.Close() })
	return ag, path
}

// send prompts and waits until the agent settles.
func send(t *testing.T, ag *agent.Agent, text string) {
	t.Helper()
	if _, err := ag.Prompt(t.Context(), text, agent.PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := ag.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestPromptWithToolCall(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.Text("Let me shout."), llmtest.ToolCall("c1", "upper", `{"text":"hello"}`), llmtest.Usage(100, 10))
	srv.Reply(llmtest.Text("It says HELLO."), llmtest.Usage(120, 5))
	var ev events
	ag, path := live(t, srv, &ev, upper{})
	send(t, ag, "shout hello")

	s, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, e := range s.Entries() {
		r := e.Type
		if e.Type == session.TypeMessage {
			r, _ = e.MessageRole()
		}
		roles = append(roles, r)
	}
	got := strings.Join(roles, " ")
	if !strings.HasPrefix(got, "model_change thinking_level_change system user assistant toolResult") || !strings.HasSuffix(got, "assistant") {
		t.Errorf("entries: %s", got)
	}
	var names []string
	for _, e := range ev.all() {
		if _, ok := e.(agent.MessageUpdate); !ok {
			names = append(names, e.EventType())
		}
	}
	t.Logf("events: %s", strings.Join(names, " "))
	if names[len(names)-1] != "agent_settled" {
		t.Errorf("last event %s", names[len(names)-1])
	}
	if r := srv.Requests()[1]; !strings.Contains(r.Text(), "HELLO") {
		t.Errorf("second request lacks the tool result: %s", r.Text())
	}
}

// names lists the events by type, message updates left out.
func (e *events) names() []string {
	var out []string
	for _, ev := range e.all() {
		switch ev.(type) {
		case agent.MessageUpdate, *agent.Progress:
		default:
			out = append(out, ev.EventType())
		}
	}
	return out
}

// entryKinds lists a session file's entries: the type, or a message's role.
func entryKinds(t *testing.T, path string) string {
	t.Helper()
	s, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range s.Entries() {
		k := e.Type
		if e.Type == session.TypeMessage {
			k, _ = e.MessageRole()
		}
		out = append(out, k)
	}
	return strings.Join(out, " ")
}

func TestRetryAfterRateLimit(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.Queue(llmtest.HTTPError(429, "", "Rate limit reached, slow down"))
	srv.Reply(llmtest.Text("finally"), llmtest.Usage(10, 2))
	var ev events
	st := testSettings(t, "retry.enabled", "true", "retry.baseDelayMs", "5")
	ag, path := liveWith(t, srv, &ev, st)
	send(t, ag, "hi")
	got := strings.Join(ev.names(), " ")
	for _, want := range []string{
		"agent_end auto_retry_start entry_appended agent_start",
		"message_end auto_retry_end turn_end agent_end agent_settled",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("events lack %q:\n%s", want, got)
		}
	}
	for _, e := range ev.all() {
		switch e := e.(type) {
		case agent.AgentEnd:
			if strings.Contains(got, "auto_retry_start") && !e.WillRetry && len(e.Messages) > 0 {
				if last, ok := e.Messages[len(e.Messages)-1].(*llm.AssistantMessage); ok && last.StopReason == llm.StopReasonError {
					t.Error("the failed run's agent_end says no retry")
				}
			}
		case agent.RetryStart:
			if e.Attempt != 1 || e.MaxAttempts != 3 || !strings.Contains(e.ErrorMessage, "Rate limit") {
				t.Errorf("retry start %+v", e)
			}
		case agent.RetryEnd:
			if !e.Success || e.Attempt != 1 {
				t.Errorf("retry end %+v", e)
			}
		}
	}
	if k := entryKinds(t, path); !strings.HasSuffix(k, "user assistant context_edit assistant") {
		t.Errorf("entries %s", k)
	}
}

func TestRetriesRunOut(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	for range 3 {
		srv.Queue(llmtest.HTTPError(529, "overloaded_error", "Overloaded"))
	}
	var ev events
	st := testSettings(t, "retry.enabled", "true", "retry.baseDelayMs", "1", "retry.maxRetries", "2")
	ag, _ := liveWith(t, srv, &ev, st)
	send(t, ag, "hi")
	var end *agent.RetryEnd
	starts := 0
	for _, e := range ev.all() {
		switch e := e.(type) {
		case agent.RetryStart:
			starts++
		case agent.RetryEnd:
			end = &e
		}
	}
	if starts != 2 || end == nil || end.Success || end.Attempt != 2 || !strings.Contains(end.FinalError, "Overloaded") {
		t.Errorf("%d retries, end %+v", starts, end)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

// conversation answers summary requests as echo does, and conversation
// requests with the replies given, in order (then "reply to: ..." as echo).
func conversation(srv *llmtest.Server, replies ...llmtest.Reply) {
	srv.Handle(llmtest.Scripted(echo, echo, replies...))
}

// eventsOf returns the events of type T.
func eventsOf[T agent.Event](ev *events) []T {
	var out []T
	for _, e := range ev.all() {
		if t, ok := e.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

func TestOverflowRecovery(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	conversation(srv,
		llmtest.Stream(llmtest.Text("one"), llmtest.Usage(30, 2)),
		llmtest.Stream(llmtest.Text("two"), llmtest.Usage(40, 2)),
		llmtest.Overflow(),
		llmtest.Stream(llmtest.Text("after the compaction"), llmtest.Usage(20, 3)),
	)
	var ev events
	st := testSettings(t, "compaction.keepRecentTokens", "5")
	ag, path := liveWith(t, srv, &ev, st)
	send(t, ag, "first")
	send(t, ag, "second")
	ev.reset()
	send(t, ag, "third, which overflows")
	got := strings.Join(ev.names(), " ")
	want := "message_end turn_end agent_end entry_appended compaction_start compaction_end agent_start turn_start message_start message_end turn_end agent_end agent_settled"
	if !strings.Contains(got, want) {
		t.Errorf("events:\n%s\nwant them to end with:\n%s", got, want)
	}
	ends := eventsOf[agent.CompactionEnd](&ev)
	if len(ends) != 1 || ends[0].Reason != agent.ReasonOverflow || !ends[0].WillRetry || ends[0].Result == nil {
		t.Fatalf("compaction ends %+v", ends)
	}
	if k := entryKinds(t, path); !strings.HasSuffix(k, "user assistant context_edit compaction assistant") {
		t.Errorf("entries %s", k)
	}
	msgs, _ := ag.Messages()
	if last := msgs[len(msgs)-1].(*llm.AssistantMessage); last.Text() != "after the compaction" {
		t.Errorf("last message %q", last.Text())
	}
}

func TestSecondOverflowDoesNotLoop(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	conversation(srv,
		llmtest.Stream(llmtest.Text("one"), llmtest.Usage(30, 2)),
		llmtest.Overflow(),
		llmtest.Overflow(),
		llmtest.Stream(llmtest.Text("never asked"), llmtest.Usage(20, 3)),
	)
	var ev events
	ag, _ := liveWith(t, srv, &ev, testSettings(t, "compaction.keepRecentTokens", "5"))
	send(t, ag, "first")
	ev.reset()
	send(t, ag, "second, which overflows twice")
	starts := eventsOf[agent.CompactionStart](&ev)
	ends := eventsOf[agent.CompactionEnd](&ev)
	if len(starts) != 1 || len(ends) != 2 {
		t.Fatalf("%d starts, %d ends; want one compaction, then a failure without a start", len(starts), len(ends))
	}
	if e := ends[1]; e.Reason != agent.ReasonOverflow || e.WillRetry || !errors.Is(e.Err, agent.ErrRecoveryFailed) {
		t.Errorf("second end %+v", e)
	}
	conv := 0
	for _, r := range srv.Requests() {
		if !strings.Contains(r.LastUserText(), "<conversation>") {
			conv++
		}
	}
	if conv != 3 {
		t.Errorf("%d conversation requests, want 3 (first, overflow, the one retry)", conv)
	}
}

func TestCompactsBetweenTurns(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	conversation(srv,
		llmtest.Stream(llmtest.Text("step one"), llmtest.ToolCall("c1", "upper", `{"text":"a"}`), llmtest.Usage(50, 5)),
		llmtest.Stream(llmtest.Text("step two"), llmtest.ToolCall("c2", "upper", `{"text":"b"}`), llmtest.Usage(400, 5)),
		llmtest.Stream(llmtest.Text("done"), llmtest.Usage(60, 5)),
	)
	var ev events
	// The threshold is 200,000 - 199,700 = 300 tokens.
	st := testSettings(t, "compaction.keepRecentTokens", "5", "compaction.reserveTokens", "199700")
	ag, path := liveWith(t, srv, &ev, st, upper{})
	send(t, ag, "go, in several steps")
	got := strings.Join(ev.names(), " ")
	if !strings.Contains(got, "turn_end compaction_start compaction_end turn_start") {
		t.Errorf("no compaction between turns:\n%s", got)
	}
	if n := len(eventsOf[agent.CompactionStart](&ev)); n != 1 {
		t.Errorf("%d compactions, want 1", n)
	}
	if e := eventsOf[agent.CompactionStart](&ev); len(e) > 0 && e[0].Reason != agent.ReasonThreshold {
		t.Errorf("reason %s", e[0].Reason)
	}
	if k := entryKinds(t, path); !strings.Contains(k, "toolResult compaction") || !strings.HasSuffix(k, "assistant") {
		t.Errorf("entries %s", k)
	}
}

// appendMessages appends messages to a session in order.
func appendMessages(t *testing.T, s *session.Session, ps ...session.Payload) {
	t.Helper()
	for _, p := range ps {
		if _, err := s.Append(p); err != nil {
			t.Fatal(err)
		}
	}
}

func userEntry(text string) *session.MessageEntry {
	return &session.MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}, Timestamp: 1}}
}

func replyEntry(srv *llmtest.Server, text string, stop llm.StopReason, input int, errText string) *session.MessageEntry {
	m := srv.Model()
	return &session.MessageEntry{Message: &llm.AssistantMessage{
		Content: []llm.Content{llm.Text{Text: text}}, API: m.API, Provider: m.Provider, Model: m.ID,
		Usage: llm.Usage{Input: input, TotalTokens: input}, StopReason: stop, ErrorMessage: errText, Timestamp: 2,
	}}
}

// TestCompactionBeforePrompt re-creates pi's auto-compaction checks on the
// last reply of a session: which sessions are
// compacted before the next prompt goes out.
func TestCompactionBeforePrompt(t *testing.T) {
	const window = 200000
	above := window - 16384 + 1
	for _, tc := range []struct {
		name    string
		entries func(srv *llmtest.Server, s *session.Session) []session.Payload
		compact bool
	}{
		{"57 an error after a reply above the threshold compacts", func(srv *llmtest.Server, s *session.Session) []session.Payload {
			return []session.Payload{userEntry("a"), replyEntry(srv, "big", llm.StopReasonStop, above, ""),
				userEntry("b"), replyEntry(srv, "", llm.StopReasonError, 0, "529 overloaded")}
		}, true},
		{"58 an error with no usage before it does not", func(srv *llmtest.Server, s *session.Session) []session.Payload {
			return []session.Payload{userEntry("a"), replyEntry(srv, "", llm.StopReasonError, 0, "529 overloaded")}
		}, false},
		{"a reply above the threshold compacts", func(srv *llmtest.Server, s *session.Session) []session.Payload {
			return []session.Payload{userEntry("a"), replyEntry(srv, "one", llm.StopReasonStop, 10, ""),
				userEntry("b"), replyEntry(srv, "big", llm.StopReasonStop, above, "")}
		}, true},
		{"a reply at the threshold does not", func(srv *llmtest.Server, s *session.Session) []session.Payload {
			return []session.Payload{userEntry("a"), replyEntry(srv, "one", llm.StopReasonStop, 10, ""),
				userEntry("b"), replyEntry(srv, "big", llm.StopReasonStop, above-1, "")}
		}, false},
		{"nothing to compact says nothing", func(srv *llmtest.Server, s *session.Session) []session.Payload {
			return []session.Payload{userEntry("a"), replyEntry(srv, "big", llm.StopReasonStop, above, "")}
		}, false},
		{"an aborted reply above the threshold is still checked", func(srv *llmtest.Server, s *session.Session) []session.Payload {
			return []session.Payload{userEntry("a"), replyEntry(srv, "big", llm.StopReasonStop, above, ""),
				userEntry("b"), replyEntry(srv, "", llm.StopReasonAborted, 0, "aborted")}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewAnthropic(t)
			srv.Handle(echo)
			var ev events
			ag, _ := liveWith(t, srv, &ev, testSettings(t, "compaction.keepRecentTokens", "2"))
			appendMessages(t, ag.Session(), tc.entries(srv, ag.Session())...)
			send(t, ag, "next")
			starts := eventsOf[agent.CompactionStart](&ev)
			if got := len(starts) > 0; got != tc.compact {
				t.Fatalf("compacted %v, want %v: %s", got, tc.compact, strings.Join(ev.names(), " "))
			}
			if tc.compact {
				if starts[0].Reason != agent.ReasonThreshold {
					t.Errorf("reason %s", starts[0].Reason)
				}
				if names := ev.names(); names[0] != "compaction_start" {
					t.Errorf("the compaction did not come before the run: %v", names)
				}
				if e := eventsOf[agent.CompactionEnd](&ev); e[0].WillRetry || e[0].Result == nil {
					t.Errorf("end %+v", e[0])
				}
			}
		})
	}
}

// TestStaleUsageAfterCompaction: 56 and 59 — usage measured before the
// latest compaction never triggers another one.
func TestStaleUsageAfterCompaction(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	var ev events
	ag, _ := liveWith(t, srv, &ev, testSettings(t, "compaction.keepRecentTokens", "2"))
	s := ag.Session()
	appendMessages(t, s, userEntry("a"), replyEntry(srv, "huge", llm.StopReasonStop, 610000, ""), userEntry("b"),
		replyEntry(srv, "small", llm.StopReasonStop, 10, ""))
	if _, err := ag.Compact(t.Context(), agent.CompactRequest{}); err != nil {
		t.Fatal(err)
	}
	ev.reset()
	send(t, ag, "after") // 56: the stale 610k reply is not checked
	if n := len(eventsOf[agent.CompactionStart](&ev)); n != 0 {
		t.Errorf("56: %d compactions before the prompt", n)
	}
}

// blocker is a tool that runs until its context is cancelled, telling
// started when it begins.
type blocker struct{ started chan struct{} }

func (b blocker) Spec() tool.Spec {
	return tool.Spec{Name: "wait", Description: "waits", Parameters: jsontext.Value(`{"type":"object","properties":{}}`)}
}

func (b blocker) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	close(b.started)
	<-ctx.Done()
	return tool.Result{}, errors.New("stopped: the user aborted")
}

func TestAbortMidStream(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Queue(llmtest.Reply{Parts: []llmtest.Part{llmtest.Text("a long"), llmtest.Text(" answer"), llmtest.Text(" that goes on")}, Delay: 200 * time.Millisecond})
	var ev events
	ag, path := live(t, srv, &ev)
	updates := make(chan struct{}, 10)
	ev.setOn(func(e agent.Event) {
		if _, ok := e.(agent.MessageUpdate); ok {
			updates <- struct{}{}
		}
	})
	if _, err := ag.Prompt(t.Context(), "talk", agent.PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	<-updates
	ag.Abort()
	if ag.Busy() {
		t.Fatal("busy after Abort returned")
	}
	settled := eventsOf[agent.AgentSettled](&ev)
	if len(settled) != 1 || !settled[0].Aborted {
		t.Fatalf("settled %+v", settled)
	}
	s, _ := session.Load(path)
	last, _ := s.Leaf().Message()
	if a, ok := last.(*llm.AssistantMessage); !ok || a.StopReason != llm.StopReasonAborted {
		t.Errorf("last entry %+v, want the aborted reply", last)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests", n)
	}
}

func TestAbortMidTool(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.Reply(llmtest.ToolCall("c1", "wait", `{}`), llmtest.ToolCall("c2", "nosuch", `{}`))
	var ev events
	b := blocker{started: make(chan struct{})}
	ag, path := live(t, srv, &ev, b)
	if _, err := ag.Prompt(t.Context(), "wait", agent.PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	<-b.started
	ag.Abort()
	if k := entryKinds(t, path); !strings.HasSuffix(k, "user assistant toolResult toolResult") {
		t.Errorf("entries %s: every call needs a result, and no extra reply", k)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	if s := eventsOf[agent.AgentSettled](&ev); len(s) != 1 || !s[0].Aborted {
		t.Errorf("settled %+v", s)
	}
	// The session goes on: the next prompt is answered.
	srv.Reply(llmtest.Text("fine"))
	send(t, ag, "again")
	if k := entryKinds(t, path); !strings.HasSuffix(k, "toolResult toolResult user assistant") {
		t.Errorf("entries after the next prompt %s", k)
	}
}

func TestBusyPrompts(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Queue(llmtest.Reply{Parts: []llmtest.Part{llmtest.Text("working"), llmtest.Text(" on it")}, Delay: 100 * time.Millisecond})
	srv.Reply(llmtest.Text("after the steer"))
	srv.Reply(llmtest.Text("after the follow-up"))
	var ev events
	ag, _ := live(t, srv, &ev)
	started := make(chan struct{}, 1)
	ev.setOn(func(e agent.Event) {
		if _, ok := e.(agent.MessageUpdate); ok {
			select {
			case started <- struct{}{}:
			default:
			}
		}
	})
	if _, err := ag.Prompt(t.Context(), "first", agent.PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	<-started
	if _, err := ag.Prompt(t.Context(), "second", agent.PromptOptions{}); !errors.Is(err, agent.ErrBusy) {
		t.Errorf("a prompt while busy: %v, want ErrBusy", err)
	}
	if d, err := ag.FollowUp(t.Context(), "then this"); err != nil || d != agent.Queued {
		t.Errorf("follow-up: %v %v", d, err)
	}
	if d, err := ag.Steer(t.Context(), "steer this"); err != nil || d != agent.Queued {
		t.Errorf("steer: %v %v", d, err)
	}
	if s, f := ag.Queued(); len(s) != 1 || len(f) != 1 {
		t.Errorf("queued %v %v", s, f)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	ag.Wait(ctx)
	msgs, _ := ag.Messages()
	var texts []string
	for _, m := range msgs {
		switch m := m.(type) {
		case *llm.UserMessage:
			texts = append(texts, "user: "+llm.TextOf(m.Content))
		case *llm.AssistantMessage:
			texts = append(texts, "assistant: "+m.Text())
		}
	}
	want := "user: first|assistant: working\n on it|user: steer this|assistant: after the steer|user: then this|assistant: after the follow-up"
	if got := strings.Join(texts, "|"); got != want {
		t.Errorf("conversation\n got %s\nwant %s", got, want)
	}
	if n := len(eventsOf[agent.AgentSettled](&ev)); n != 1 {
		t.Errorf("%d settles, want 1", n)
	}
	if u := eventsOf[agent.QueueUpdate](&ev); len(u) < 4 {
		t.Errorf("%d queue updates, want one per enqueue and delivery", len(u))
	}
}

func TestPromptsSentTogetherAreNotLost(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.Handle(echo)
	var ev events
	ag, _ := live(t, srv, &ev)
	// The second prompt arrives before the first run has shown itself.
	hold := make(chan struct{})
	ev.setOn(func(e agent.Event) {
		if _, ok := e.(agent.AgentStart); ok {
			<-hold
		}
	})
	d1, err1 := ag.Prompt(t.Context(), "one", agent.PromptOptions{})
	d2, err2 := ag.Prompt(t.Context(), "two", agent.PromptOptions{})
	close(hold)
	if err1 != nil || err2 != nil || d1 != agent.Started || d2 != agent.Queued {
		t.Fatalf("dispositions %s %v, %s %v", d1, err1, d2, err2)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	ag.Wait(ctx)
	msgs, _ := ag.Messages()
	users := 0
	for _, m := range msgs {
		if _, ok := m.(*llm.UserMessage); ok {
			users++
		}
	}
	if users != 2 {
		t.Errorf("%d user messages, want both", users)
	}
}

// TestLocalServerFound: with no model named and no key set, the agent talks
// to a local OpenAI-compatible server that answers; with none, the error
// says what to set.
func TestLocalServerFound(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.FlavorLlamaCpp)
	srv.Reply(llmtest.Text("hello from the local model"))
	target, _ := url.Parse(srv.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			w.Write([]byte(`{"data":[{"id":"qwen3-8b.gguf"}]}`))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer local.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()

	s, _ := session.Create("", session.Options{CWD: t.TempDir()})
	cfg := config(t.TempDir(), testSettings(t), nil)
	cfg.DiscoverLocal, cfg.NoContextFiles = true, true
	cfg.LocalServers = []registry.LocalServer{{Provider: "ollama", BaseURL: down.URL + "/v1"}, {Provider: "llamacpp", BaseURL: local.URL + "/v1"}}
	ag := agent.New(s, cfg)
	defer ag.Close()
	m, err := ag.Model(t.Context())
	if err != nil || m.Provider != "llamacpp" || m.ID != "qwen3-8b.gguf" {
		t.Fatalf("model %+v, %v", m, err)
	}
	send(t, ag, "hi")
	if text, _ := ag.LastAssistantText(); text != "hello from the local model" {
		t.Errorf("reply %q", text)
	}

	s2, _ := session.Create("", session.Options{CWD: t.TempDir()})
	cfg.LocalServers = cfg.LocalServers[:1]
	ag2 := agent.New(s2, cfg)
	defer ag2.Close()
	_, err = ag2.Prompt(t.Context(), "hi", agent.PromptOptions{})
	if !errors.Is(err, agent.ErrNoConversationModel) || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") || !strings.Contains(err.Error(), "11434") {
		t.Errorf("no model: %v", err)
	}
}
