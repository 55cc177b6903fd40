package tool

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBashWarnsOfPlantedFiles: what a confined command makes that git or
// Prime would use outside the sandbox, and that could not be read-only
// because it was not there yet, is named in a warning in the result; an
// ordinary command, and git init alone, get none.
func TestBashWarnsOfPlantedFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	env, _ := sandboxedEnv(t)
	env.Sandbox.Project = env.CWD
	if err := env.Sandbox.Probe(); err != nil {
		t.Skipf("this kernel refuses the sandbox's mount namespace: %v", err)
	}
	tests := []struct {
		name, script string
		planted      []string // named in the warning; none: no warning
	}{
		{"an ordinary command", "echo a > a.txt", nil},
		{"a hook in a new repository", "git init -q . && printf '#!/bin/sh\\n' > .git/hooks/pre-commit", []string{".git/hooks/pre-commit"}},
		{"a commondir", "echo /tmp/evil > .git/commondir", []string{".git/commondir"}},
		{"a .prime", "mkdir .prime && echo '{}' > .prime/settings.json", []string{".prime"}},
		{"nothing new once protected", "echo b > b.txt", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := mustCall(t, env, "bash", bashArgsJSON(tt.script))
			warned := strings.Contains(out, "Warning: this command made")
			if warned != (len(tt.planted) > 0) {
				t.Errorf("warning %v in %q; want it for %q", warned, out, tt.planted)
			}
			for _, p := range tt.planted {
				if !strings.Contains(out, filepath.Join(env.CWD, p)) {
					t.Errorf("%s not named in %q", p, out)
				}
			}
		})
	}
	// git init alone, in a project of its own, is not warned of: its
	// hooks are git's samples.
	fresh, _ := sandboxedEnv(t)
	fresh.Sandbox.Project = fresh.CWD
	if out := mustCall(t, fresh, "bash", bashArgsJSON("git init -q . && ls .git/hooks | grep -c sample")); strings.Contains(out, "Warning") {
		t.Errorf("git init: %q", out)
	}
}
