package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm/llmtest"
)

// TestSettingsCompaction: /settings lists the compaction settings; one
// typed there is saved to the global file and used by the running session
// from its next prompt (the agent reads the file again).
func TestSettingsCompaction(t *testing.T) {
	h := newHarness(t, setup{})
	h.srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		return llmtest.Stream(llmtest.Text("ok"), llmtest.Usage(100, 5))
	})
	h.waitText("v0.0.0-test")
	h.send("/settings")
	f := h.waitText("keep recent tokens", "reserve tokens", "background summary", "background threshold %", "summary model")
	frameGolden(t, "list", linesFrom(f, "Settings (enter changes"))
	h.key(tea.KeyDown)
	h.key(tea.KeyDown)
	h.enter()
	h.waitText("New value of compaction.keepRecentTokens", "20000")
	for range 5 {
		h.key(tea.KeyBackspace)
	}
	h.typeText("3000")
	h.enter()
	h.waitText("Saved compaction.keepRecentTokens = 3000 (used from the next prompt)")
	data, _ := os.ReadFile(filepath.Join(h.agent, "settings.json"))
	if !strings.Contains(string(data), `"keepRecentTokens": 3000`) {
		t.Fatalf("settings.json:\n%s", data)
	}
	h.send("one")
	h.waitIdle("ok")
	h.send("two")
	h.waitIdle("settings reloaded")
	plan, err := h.ag.PlanCompaction(t.Context(), agent.CompactRequest{})
	if err != nil || plan.Preparation.Settings.KeepRecentTokens != 3000 {
		t.Errorf("the session's keepRecentTokens: %v %+v", err, plan)
	}
}
