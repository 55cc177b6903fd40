package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm/llmtest"
)

// TestReadToolsAskForDeniedPaths: in sandbox mode a read of a path on the
// deny list asks (denied with a result saying why where no one can
// answer, read with --yes), and a grep of the directory above walks past
// it.
func TestReadToolsAskForDeniedPaths(t *testing.T) {
	for _, tc := range []struct {
		name      string
		approvals agent.Approvals
		readWant  string
	}{
		{"no one to ask", agent.ApprovalsNone, "is on the sandbox's deny list"},
		{"--yes", agent.ApprovalsApprove, "PRIVATE needle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			for p, text := range map[string]string{".ssh/key": "PRIVATE needle\n", "notes.txt": "a needle\n"} {
				p = filepath.Join(home, p)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			args := func(v map[string]string) string { b, _ := json.Marshal(v); return string(b) }
			srv := llmtest.NewAnthropic(t)
			srv.Reply(llmtest.ToolCall("c1", "read", args(map[string]string{"path": filepath.Join(home, ".ssh/key")})), llmtest.Usage(10, 1))
			srv.Reply(llmtest.ToolCall("c2", "grep", args(map[string]string{"pattern": "needle", "path": home})), llmtest.Usage(10, 1))
			srv.Reply(llmtest.Text("done"), llmtest.Usage(10, 1))
			g := newGated(t, srv, "sandbox", tc.approvals, agent.Confinement{NoSandbox: "none", DenyRead: []string{filepath.Join(home, ".ssh")}})
			send(t, g.ag, "go")
			res := g.toolResults()
			if len(res) != 2 {
				t.Fatalf("results: %q", res)
			}
			if !strings.Contains(res[0], tc.readWant) {
				t.Errorf("read: %q; want %q", res[0], tc.readWant)
			}
			if tc.approvals == agent.ApprovalsNone && !strings.HasPrefix(res[0], "Not run: ") {
				t.Errorf("read: %q; want it not run", res[0])
			}
			if !strings.Contains(res[1], "notes.txt") || strings.Contains(res[1], "PRIVATE") {
				t.Errorf("grep: %q; want notes.txt and not the key", res[1])
			}
		})
	}
}
