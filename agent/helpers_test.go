package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/permission"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
)

// agentDir writes a models.json in a fresh directory that points each
// server's provider (anthropic, openai, or the flavour's name) at the
// server, with its fake model, and returns the directory.
func agentDir(t testing.TB, servers ...*llmtest.Server) string {
	t.Helper()
	providers := map[string]any{}
	for _, srv := range servers {
		m := srv.Model()
		providers[m.Provider] = map[string]any{
			"baseUrl": m.BaseURL, "api": m.API, "apiKey": llmtest.Key,
			"models": []any{map[string]any{
				"id": m.ID, "name": m.Name, "api": m.API, "reasoning": m.Reasoning, "input": m.Input,
				"contextWindow": m.ContextWindow, "maxTokens": m.MaxTokens,
			}},
		}
	}
	dir := t.TempDir()
	b, err := json.Marshal(map[string]any{"providers": providers}, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "models.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// testSettings returns defaults with overrides applied ("key", "value", ...)
// and retries off, so a failing fake fails at once.
func testSettings(t testing.TB, kv ...string) *settings.Settings {
	t.Helper()
	s, err := settings.Defaults().WithOverride("retry.enabled", "false")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if s, err = s.WithOverride(kv[i], kv[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// events records an agent's events; on, when set, is told each one as it
// comes (outside the lock).
type events struct {
	mu   sync.Mutex
	list []agent.Event
	on   func(agent.Event)
}

func (e *events) add(ev agent.Event) {
	e.mu.Lock()
	e.list = append(e.list, ev)
	on := e.on
	e.mu.Unlock()
	if on != nil {
		on(ev)
	}
}

// setOn sets the function told each event.
func (e *events) setOn(f func(agent.Event)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.on = f
}

func (e *events) reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = nil
}

func (e *events) all() []agent.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]agent.Event(nil), e.list...)
}

// kinds lists the event kinds in order, text deltas folded into one.
func (e *events) kinds() string {
	var out []string
	for _, ev := range e.all() {
		k := kindOf(ev)
		if len(out) > 0 && k == "text" && out[len(out)-1] == "text" {
			continue
		}
		out = append(out, k)
	}
	return strings.Join(out, " ")
}

// kindOf names an event as kinds lists it: "start" and "end" for the
// beginning and end of an operation, else the progress kind.
func kindOf(ev agent.Event) string {
	switch ev := ev.(type) {
	case agent.CompactionStart, agent.BranchSummaryStart:
		return "start"
	case agent.CompactionEnd, agent.BranchSummaryEnd:
		return "end"
	case *agent.Progress:
		return ev.Kind.String()
	}
	return ev.EventType()
}

// lastEnd returns the last event, which must end an operation: whether it
// was aborted and which operation it ended.
func lastEnd(t *testing.T, all []agent.Event) (aborted bool, op agent.Op) {
	t.Helper()
	if len(all) == 0 {
		t.Fatal("no events")
	}
	switch e := all[len(all)-1].(type) {
	case agent.CompactionEnd:
		return e.Aborted, agent.OpCompaction
	case agent.BranchSummaryEnd:
		return e.Aborted, agent.OpBranchSummary
	}
	t.Fatalf("last event %#v does not end an operation", all[len(all)-1])
	return false, ""
}

// config returns a config reading models from dir, with no environment.
func config(dir string, st *settings.Settings, ev *events) agent.Config {
	c := agent.Config{Settings: st, AgentDir: dir, Getenv: func(string) string { return "" }}
	if ev != nil {
		c.Events = ev.add
	}
	return c
}

// prompt is one turn of a minimal agent loop: the user's text is appended,
// the model (srv) answers the conversation as the session shows it, and
// the answer is appended. It returns the assistant entry.
func prompt(t *testing.T, s *session.Session, srv *llmtest.Server, text string) *session.Entry {
	t.Helper()
	if _, err := s.Append(&session.MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}, Timestamp: 1}}); err != nil {
		t.Fatal(err)
	}
	c, err := s.Context("")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := llm.Complete(context.Background(), srv.Provider(), &llm.Request{Model: srv.Model(), Messages: session.ToLLM(c.Messages)})
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.Append(&session.MessageEntry{Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// echo answers every request: a conversation gets "reply to: <last user
// text>", a summary request a structured summary that quotes the
// instructions it was given, if any.
func echo(r *llmtest.Request) llmtest.Reply {
	text := r.LastUserText()
	if strings.Contains(text, "<conversation>") {
		sum := "## Goal\nSummarized by the fake model.\n\n## Next Steps\n1. Continue."
		if i := strings.Index(text, "<user-instructions>"); i >= 0 {
			instr, _, _ := strings.Cut(text[i+len("<user-instructions>"):], "</user-instructions>")
			sum += "\n\n## Critical Context\n- " + strings.TrimSpace(instr)
		}
		return llmtest.Stream(llmtest.Text(sum), llmtest.Usage(llm.UTF16Len(r.Text())/4, 40))
	}
	return llmtest.Stream(llmtest.Text("reply to: "+text), llmtest.Usage(llm.UTF16Len(r.Text())/4+1, 8))
}

// summaryRequests returns the requests that asked for a summary.
func summaryRequests(srv *llmtest.Server) []*llmtest.Request {
	var out []*llmtest.Request
	for _, r := range srv.Requests() {
		if strings.Contains(r.LastUserText(), "<conversation>") {
			out = append(out, r)
		}
	}
	return out
}

// countType counts the entries of a type.
func countType(s *session.Session, typ string) int {
	n := 0
	for _, e := range s.Entries() {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// TestMain runs the tests, or, with PRIME_AGENT_TEST_APPEND set, is the
// other process of TestAppendsFromAnotherProcess: it appends to that
// session file and prints the ids it wrote.
func TestMain(m *testing.M) {
	permission.Trampoline() // the sandbox's trampoline, when a test confines a command
	if path := os.Getenv("PRIME_AGENT_TEST_APPEND"); path != "" {
		s, err := session.Open(path)
		if err == nil {
			defer s.Close()
			var a, b *session.Entry
			if a, err = s.Append(&session.CustomEntry{CustomType: "elsewhere", Data: []byte(`{"from":"another process"}`)}); err == nil {
				if b, err = s.Append(&session.SessionInfoEntry{Name: "named elsewhere"}); err == nil {
					fmt.Println(a.ID, b.ID)
				}
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// cancelWhen calls cancel once asked is closed (a request arrived), or
// returns when ctx ends first.
func cancelWhen(ctx context.Context, asked <-chan struct{}, cancel context.CancelFunc) {
	select {
	case <-asked:
		cancel()
	case <-ctx.Done():
	}
}
