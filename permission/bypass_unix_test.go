//go:build unix

package permission

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAllowRuleBypassesAreReal runs, in the real bash, each line that an
// allow rule for echo once let through although it does more than echo:
// each really creates its mark file, so the rule must not allow it.
func TestAllowRuleBypassesAreReal(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash here")
	}
	lines := []string{
		"echo $'\\'';touch MARK;#'",
		"echo ${x:=\\$(touch MARK)} ${x@P}",
		"echo ${x:='a[$(touch MARK)]'} ${y[x]}",
		"echo hi #'\ntouch MARK\n'",
		"echo x >&MARK",
		"echo x >& MARK",
	}
	allow := Rules{Allow: mustRules(t, "Bash(echo:*)")}
	for _, line := range lines {
		mark := filepath.Join(t.TempDir(), "mark")
		line = strings.ReplaceAll(line, "MARK", mark)
		exec.Command(bash, "-c", line).Run()
		if _, err := os.Stat(mark); err != nil {
			t.Errorf("%q: bash did not write %s, so the line is no attack: %v", line, mark, err)
		}
		if v, r := allow.Decide(Call{Tool: "bash", Command: line}); v != NoRule {
			t.Errorf("%q: %v by %s, want it to ask", line, v, r.Text)
		}
	}
}
