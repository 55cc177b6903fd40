package agent_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
)

// TestSaveSetting: a setting saved through the agent is written to the
// global file and read back at once; a value the settings refuse writes
// nothing; settings not loaded from files have nowhere to save.
func TestSaveSetting(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(file, []byte(`{"doubleEscapeAction": "tree"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := settings.Load(t.Context(), settings.Options{AgentDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.Create("", session.Options{CWD: dir})
	if err != nil {
		t.Fatal(err)
	}
	ag := agent.New(s, agent.Config{Settings: st})
	t.Cleanup(func() { ag.Close() })
	if p := ag.Preferences(); p.DoubleEscapeAction != "tree" || p.GlobalFile != file || p.AgentDir != dir {
		t.Fatalf("preferences %+v", p)
	}
	if err := ag.SaveSetting(t.Context(), "doubleEscapeAction", "fork"); err != nil {
		t.Fatal(err)
	}
	if p := ag.Preferences(); p.DoubleEscapeAction != "fork" {
		t.Errorf("after saving: %q", p.DoubleEscapeAction)
	}
	if data, _ := os.ReadFile(file); !strings.Contains(string(data), `"fork"`) {
		t.Errorf("file:\n%s", data)
	}
	if err := ag.SaveSetting(t.Context(), "compaction.keepRecentTokens", "many"); err == nil {
		t.Error("a refused value was saved")
	}
	if data, _ := os.ReadFile(file); strings.Contains(string(data), "many") {
		t.Errorf("a refused value reached the file:\n%s", data)
	}
	if err := ag.SaveSetting(t.Context(), "doubleEscapeAction", ""); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(file); strings.Contains(string(data), "doubleEscapeAction") {
		t.Errorf("unset left the key:\n%s", data)
	}

	bare := agent.New(s, agent.Config{})
	if err := bare.SaveSetting(t.Context(), "steeringMode", "all"); !errors.Is(err, agent.ErrNoSettingsFile) {
		t.Errorf("without files: %v", err)
	}
}
