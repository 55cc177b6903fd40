package hook

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/internal/mdblocks"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
)

// TestDocsExample runs the command hook of docs/hooks.md exactly as the
// documentation gives it: the script, declared by the settings shown
// there (a path relative to the settings file), and checks that the
// summary it stores is the one the documentation shows.
func TestDocsExample(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed; the documented example is a Python script")
	}
	blocks, err := mdblocks.Tested(filepath.Join("..", "docs", "hooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"user-requests.py", "settings.json", "summary"} {
		if blocks[name] == "" {
			t.Fatalf("docs/hooks.md has no tested block %q", name)
		}
	}
	agentDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(agentDir, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeScript(t, filepath.Join(agentDir, "hooks"), "user-requests.py", blocks["user-requests.py"])
	if err := os.WriteFile(filepath.Join(agentDir, "settings.json"), []byte(blocks["settings.json"]), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := settings.Load(context.Background(), settings.Options{AgentDir: agentDir})
	if err != nil || len(st.Problems()) > 0 {
		t.Fatal(err, st.Problems())
	}

	// A split turn, so both arrays hold a user request.
	s := testSession(t)
	e, d, err := compactFlow(context.Background(), New(st, Options{}), s, compactOptions{keepRecent: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Reports) > 0 || !strings.HasPrefix(d.CompactionBy, "./hooks/user-requests.py") {
		t.Fatalf("reports %v; compaction by %q", d.Reports, d.CompactionBy)
	}
	p, err := e.Payload()
	if err != nil {
		t.Fatal(err)
	}
	c := p.(*session.CompactionEntry)
	if want := strings.TrimSuffix(blocks["summary"], "\n"); c.Summary != want {
		t.Errorf("the example stored:\n%s\n\ndocs/hooks.md shows:\n%s", c.Summary, want)
	}
	if !c.FromHook || c.FirstKeptEntryID != "a4" || c.TokensBefore != 2320 || string(c.Details) != `{"summarizer":"user-requests.py","requests":2}` {
		t.Errorf("stored %+v", c)
	}
}
