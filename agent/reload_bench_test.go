package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
)

// BenchmarkSettingsCheck is the look at the settings files made before
// each prompt and between turns, when nothing changed: what every turn
// pays for a change to apply without a restart.
func BenchmarkSettingsCheck(b *testing.B) {
	dir, project := b.TempDir(), b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"compaction": {"keepRecentTokens": 5000}}`), 0o600); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	st, err := settings.Load(ctx, settings.Options{AgentDir: dir, ProjectDir: project})
	if err != nil {
		b.Fatal(err)
	}
	s, err := session.Create("", session.Options{CWD: project})
	if err != nil {
		b.Fatal(err)
	}
	a := New(s, Config{Settings: st, AgentDir: dir, Getenv: func(string) string { return "" }, CWD: project})
	b.Cleanup(func() { a.Close() })
	a.reloadSettings(ctx)
	b.ReportAllocs()
	for b.Loop() {
		a.reloadSettings(ctx)
	}
}
