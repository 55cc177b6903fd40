package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/llm/llmtest"
)

// TestPrintModeSessionChanged: the session file is truncated, replaced or
// deleted while the model answers; the answer cannot be written, so print
// mode exits 1 and JSON mode's last line says why.
func TestPrintModeSessionChanged(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, path string)
		want   string
	}{
		{"truncated", func(t *testing.T, p string) {
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:bytes.IndexByte(b, '\n')+1], 0o600)
		}, "shrank from"},
		{"replaced", func(t *testing.T, p string) {
			b, _ := os.ReadFile(p)
			tmp := p + ".new"
			os.WriteFile(tmp, b, 0o600)
			os.Rename(tmp, p)
		}, "was replaced or removed"},
		{"deleted", func(t *testing.T, p string) { os.Remove(p) }, "was replaced or removed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newRPCSetup(t, nil)
			s.srv.Handle(func(r *llmtest.Request) llmtest.Reply {
				files, _ := filepath.Glob(filepath.Join(s.agentDir, "sessions", "*", "*.jsonl"))
				for _, f := range files {
					tt.change(t, f)
				}
				return textReply("The answer nobody keeps.")
			})
			out, errOut, code := s.run(t, "", "--no-context-files", "--mode", "json", "-p", "hi")
			if code != exitFailed || !strings.Contains(errOut, tt.want) {
				t.Fatalf("exit %d, want %d; stderr %s", code, exitFailed, errOut)
			}
			if last := lastJSONLine(t, out); last["type"] != "session_write_failed" || !strings.Contains(last["error"].(string), tt.want) {
				t.Errorf("last line %v", last)
			}
			out, _, code = s.run(t, "", "--no-context-files", "-p", "hi")
			if code != exitFailed || strings.Contains(out, "nobody keeps") {
				t.Errorf("text mode: exit %d, stdout %q", code, out)
			}
		})
	}
}

// lastJSONLine decodes the last line of JSON mode's output.
func lastJSONLine(t *testing.T, out string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatalf("last line %q: %v", lines[len(lines)-1], err)
	}
	return m
}
