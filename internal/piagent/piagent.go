// Package piagent holds a pi user's agent directory for tests: skills and
// prompt templates in ~/.pi/agent's layout (testdata/agent), written for
// Prime's tests to be realistic, valid and not (a broken frontmatter, a
// skill without a description, a name against the specification, skills
// nested in a category directory, ones hidden or in node_modules). [Copy]
// puts it where a test wants it unchanged, as a user moving from pi to
// Prime copies ~/.pi/agent/skills and prompts to ~/.prime/agent.
package piagent

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir returns the directory's path in the source tree.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", "agent")
}

// Copy copies the directory's skills and prompts into dst (created when
// missing), files and modes unchanged.
func Copy(tb testing.TB, dst string) {
	tb.Helper()
	src := Dir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, fi.Mode().Perm())
	})
	if err != nil {
		tb.Fatalf("copying the pi agent directory: %v", err)
	}
}
