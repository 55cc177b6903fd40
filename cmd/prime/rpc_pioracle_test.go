package main

import (
	"strings"
	"testing"

	"github.com/prime-agent/prime/internal/pioracle"
	"github.com/prime-agent/prime/settings"
)

// TestRPCPiOracleClient drives prime --mode rpc with pi 1.6's own RpcClient
// (the client pi ships for programs that embed it): every call a pi
// client makes works against Prime unchanged. Opt-in: PRIME_PIORACLE names
// internal/pioracle/harness/pioracle.
func TestRPCPiOracleClient(t *testing.T) {
	pioracle.Path(t)
	s := newRPCSetup(t, map[string]any{"compaction": map[string]any{"keepRecentTokens": 1}})
	t.Setenv(settings.AgentDirEnv, s.agentDir) // for the prime the client starts
	var answer struct {
		Calls []struct {
			Name  string `json:"name"`
			OK    bool   `json:"ok"`
			Value any    `json:"value"`
			Error string `json:"error"`
		} `json:"calls"`
		Stderr string `json:"stderr"`
	}
	pioracle.Ask(t, &answer, "rpc-client", s.bin, "--cwd", s.project, "--model", "fake/fake-model")
	got := map[string]any{}
	for _, c := range answer.Calls {
		switch {
		case c.Name == "exportHtml":
			if c.OK || !strings.Contains(c.Error, "not supported") {
				t.Errorf("exportHtml: %+v", c)
			}
		case !c.OK:
			t.Errorf("%s failed: %s", c.Name, c.Error)
		}
		got[c.Name] = c.Value
	}
	if t.Failed() {
		t.Logf("prime's stderr:\n%s", answer.Stderr)
	}
	events, _ := got["promptAndWait"].([]any)
	if len(events) == 0 || events[0] != "agent_start" || events[len(events)-1] != "agent_settled" {
		t.Errorf("promptAndWait events %v", events)
	}
	if got["getLastAssistantText"] != "reply to: What is two plus two?" {
		t.Errorf("last assistant text %v", got["getLastAssistantText"])
	}
	if c, _ := got["compact"].(map[string]any); c == nil || !strings.Contains(c["summary"].(string), "keep the arithmetic") {
		t.Errorf("compact %v", got["compact"])
	}
	forked, _ := got["forkedState"].(map[string]any)
	first, _ := got["getState"].(map[string]any)
	if forked == nil || first == nil || forked["sessionFile"] == first["sessionFile"] {
		t.Errorf("fork did not move to a new session: %v", forked)
	}
	if b, _ := got["bash"].(map[string]any); b == nil || b["output"] != "from bash\n" {
		t.Errorf("bash %v", got["bash"])
	}
	for _, name := range []string{"getState", "promptAndWait", "steer", "followUp", "getSessionStats", "compact", "getEntries", "getTree", "fork", "switchSession", "bash", "newSession", "finalState"} {
		if _, ok := got[name]; !ok {
			t.Errorf("%s was not called", name)
		}
	}
}
