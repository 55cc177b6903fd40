package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/settings"
	"github.com/prime-agent/prime/tool"
)

// TestSettingsReloaded: a settings file changed while the agent runs is
// read again before the next prompt, said once ("settings reloaded"), and
// applies from there; an unchanged file is not read again.
func TestSettingsReloaded(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	dir := agentDir(t, srv)
	file := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(file, []byte(`{"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 5000}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := settings.Load(t.Context(), settings.Options{AgentDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var ev events
	ag, _ := liveWith(t, srv, &ev, st)
	keep := func() int {
		plan, err := ag.PlanCompaction(t.Context(), agent.CompactRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return plan.Preparation.Settings.KeepRecentTokens
	}
	reloaded := func() int {
		n := 0
		for _, e := range ev.all() {
			if n2, ok := e.(agent.Notice); ok && strings.HasPrefix(n2.Text, "settings reloaded") {
				n++
			}
		}
		return n
	}
	send(t, ag, "one")
	send(t, ag, "two")
	if keep() != 5000 || reloaded() != 0 {
		t.Fatalf("before the change: keepRecentTokens %d, %d reloads", keep(), reloaded())
	}
	if err := os.WriteFile(file, []byte(`{"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 123}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	send(t, ag, "three")
	send(t, ag, "four")
	if keep() != 123 || reloaded() != 1 {
		t.Errorf("after the change: keepRecentTokens %d, %d reloads; want 123, 1", keep(), reloaded())
	}
}

// rewriter is a tool that writes a file: a settings file changed in the
// middle of a run.
type rewriter struct{ path, data string }

func (w rewriter) Spec() tool.Spec {
	return tool.Spec{Name: "rewrite", Description: "rewrites the settings", Parameters: jsontext.Value(`{"type":"object","properties":{}}`)}
}

func (w rewriter) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	if err := os.WriteFile(w.path, []byte(w.data), 0o600); err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Content: []llm.Content{llm.Text{Text: "rewritten"}}}, nil
}

// settingsAgent is an agent over the settings of a fresh directory's
// settings.json, which holds doc, with the tools made for that file.
func settingsAgent(t *testing.T, srv *llmtest.Server, ev *events, doc string, tools func(file string) []tool.Tool) (*agent.Agent, string) {
	t.Helper()
	dir := agentDir(t, srv)
	file := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := settings.Load(t.Context(), settings.Options{AgentDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var ts []tool.Tool
	if tools != nil {
		ts = tools(file)
	}
	ag, _ := liveWith(t, srv, ev, st, ts...)
	return ag, file
}

// reloads counts the "settings reloaded" notices among evs.
func reloads(evs []agent.Event) int {
	n := 0
	for _, e := range evs {
		if nt, ok := e.(agent.Notice); ok && strings.HasPrefix(nt.Text, "settings reloaded") {
			n++
		}
	}
	return n
}

// TestSettingsReloadedBetweenTurns: a settings file changed during a run
// (here by the run's own tool call) is read again before the run's next
// turn, said once, and applies from there.
func TestSettingsReloadedBetweenTurns(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	var ev events
	ag, _ := settingsAgent(t, srv, &ev, `{"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 5000}}`,
		func(file string) []tool.Tool {
			return []tool.Tool{rewriter{path: file, data: `{"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 123}}`}}
		})
	srv.Reply(llmtest.Text("Changing the settings."), llmtest.ToolCall("c1", "rewrite", `{}`), llmtest.Usage(100, 10))
	srv.Reply(llmtest.Text("Done."), llmtest.Usage(120, 5))
	send(t, ag, "change them")
	evs := ev.all()
	if n := reloads(evs); n != 1 {
		t.Fatalf("%d reload notices, want 1", n)
	}
	// The notice comes after the tool ran and before the next turn.
	at := func(match func(agent.Event) bool) int {
		for i, e := range evs {
			if match(e) {
				return i
			}
		}
		return -1
	}
	notice := at(func(e agent.Event) bool {
		n, ok := e.(agent.Notice)
		return ok && strings.HasPrefix(n.Text, "settings reloaded")
	})
	toolEnd := at(func(e agent.Event) bool { _, ok := e.(agent.ToolEnd); return ok })
	turns := 0
	second := -1
	for i, e := range evs {
		if _, ok := e.(agent.TurnStart); ok {
			if turns++; turns == 2 {
				second = i
			}
		}
	}
	if !(toolEnd >= 0 && toolEnd < notice && notice < second) {
		t.Errorf("tool end at %d, notice at %d, second turn at %d", toolEnd, notice, second)
	}
	srv.Reply(llmtest.Text("Again."), llmtest.Usage(130, 5))
	send(t, ag, "again") // the file has not changed since: no second notice
	if n := reloads(ev.all()); n != 1 {
		t.Errorf("%d reload notices after the next prompt, want 1", n)
	}
	plan, err := ag.PlanCompaction(t.Context(), agent.CompactRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if k := plan.Preparation.Settings.KeepRecentTokens; k != 123 {
		t.Errorf("keepRecentTokens %d after the run, want 123", k)
	}
}

// TestSettingsFileFlipsAutoCompaction: compaction.enabled edited in the
// file turns automatic compaction on or off for the running session, even
// after the session set it; an edit of other keys leaves the session's
// choice alone.
func TestSettingsFileFlipsAutoCompaction(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	var ev events
	ag, file := settingsAgent(t, srv, &ev, `{"retry": {"enabled": false}, "compaction": {"enabled": true}}`, nil)
	write := func(doc string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	send(t, ag, "one")
	ag.SetAutoCompaction(false) // as /settings or RPC set_auto_compaction does
	for i, step := range []struct {
		doc  string
		want bool
	}{
		{`{"retry": {"enabled": false}, "compaction": {"enabled": true, "keepRecentTokens": 900}}`, false}, // enabled unchanged
		{`{"retry": {"enabled": false}, "compaction": {"enabled": false, "keepRecentTokens": 900}}`, false},
		{`{"retry": {"enabled": false}, "compaction": {"enabled": true, "keepRecentTokens": 900}}`, true},
		{`{"retry": {"enabled": false}, "compaction": {"enabled": false}}`, false},
	} {
		write(step.doc)
		send(t, ag, fmt.Sprintf("step %d", i))
		if got := ag.State().AutoCompaction; got != step.want {
			t.Errorf("step %d (%s): auto-compaction %v, want %v", i, step.doc, got, step.want)
		}
	}
	if n := reloads(ev.all()); n != 4 {
		t.Errorf("%d reload notices, want 4", n)
	}
}
