package settings

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReloadKeepsOptions(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(file, []byte(`{"compaction": {"reserveTokens": 1000}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(t.Context(), Options{AgentDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.WithOverride("compaction.keepRecentTokens", "123"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(`{"compaction": {"reserveTokens": 2000}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ns, err := s.Reload(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if c := ns.Compaction(""); c.ReserveTokens != 2000 || c.KeepRecentTokens != 123 {
		t.Errorf("reread: reserve %d keep %d, want the file's 2000 and the flag's 123", c.ReserveTokens, c.KeepRecentTokens)
	}
	if d, err := Defaults().Reload(t.Context()); err != nil || d == nil {
		t.Errorf("defaults reread: %v, %v", d, err)
	}
}
