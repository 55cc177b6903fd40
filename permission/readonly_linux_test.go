package permission

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadOnlySandbox: read-only mode's sandbox lets a command read the
// project and run programs, write nothing in it, and its note says so.
func TestReadOnlySandbox(t *testing.T) {
	f := newSandboxFixture(t, false)
	if err := os.WriteFile(filepath.Join(f.project, "a.txt"), []byte("in project\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.sb = &Sandbox{Exe: f.sb.Exe, Write: []string{"/dev/null"}, DenyRead: f.sb.DenyRead, ReadOnly: true}
	out, err := f.run(t, "cat a.txt && ls >/dev/null && echo ok")
	if err != nil || out != "in project\nok\n" {
		t.Fatalf("reading: %v, %q", err, out)
	}
	for _, script := range []string{"echo x > b.txt", "rm a.txt", "mkdir d", "echo y >> a.txt", "mv a.txt c.txt", "touch new.txt"} {
		out, err := f.run(t, script)
		if err == nil {
			t.Errorf("%s: succeeded (%q)", script, out)
		}
		if note := f.sb.Explain(out); !strings.Contains(note, "read-only sandbox") {
			t.Errorf("%s: note %q for %q", script, note, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(f.project, "a.txt")); string(b) != "in project\n" {
		t.Errorf("a.txt: %q", b)
	}
}

// BenchmarkProbe measures what checking the sandbox costs at start (once
// per session where the mode confines commands).
func BenchmarkProbe(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	project := b.TempDir()
	if err := os.MkdirAll(filepath.Join(project, ".git", "hooks"), 0o755); err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{".git/config", ".git/HEAD"} {
		if err := os.WriteFile(filepath.Join(project, name), []byte("x"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	// "protected" adds the mount namespace and the read-only .git/hooks
	// and .git/config of a project.
	for _, protect := range []string{"", project} {
		name := "plain"
		if protect != "" {
			name = "protected"
		}
		b.Run(name, func(b *testing.B) {
			sb := &Sandbox{Exe: exe, Write: append([]string{project}, DefaultWrite()...), DenyRead: DefaultDenyRead(os.Getenv("HOME"), ""), Project: protect}
			if err := sb.Probe(); err != nil {
				b.Skipf("no sandbox: %v", err)
			}
			for b.Loop() {
				if err := sb.Probe(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
