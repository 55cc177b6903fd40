package permission

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo makes a repository with one commit at dir.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for _, args := range [][]string{{"init", "-q", dir}, {"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "one"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// protectedFixture is a sandbox fixture whose project is a git repository
// with .prime settings, protected as Prime protects it; it is skipped
// where the kernel refuses mount namespaces.
func protectedFixture(t *testing.T, network bool) *sandboxFixture {
	f := newSandboxFixture(t, network)
	gitRepo(t, f.project)
	if err := os.MkdirAll(filepath.Join(f.project, ".prime"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.project, ".prime", "settings.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.sb.Project = f.project
	if err := f.sb.Probe(); err != nil {
		t.Skipf("this kernel refuses the sandbox's mount namespace, so nothing to test: %v", err)
	}
	return f
}

// TestSandboxProtectsGitAndPrime: a confined command sees .git/hooks,
// .git/config and .prime read-only, cannot move them aside, and git still
// works in the project.
func TestSandboxProtectsGitAndPrime(t *testing.T) {
	for _, network := range []bool{false, true} {
		f := protectedFixture(t, network)
		hook := filepath.Join(f.project, ".git", "hooks", "pre-commit")
		tests := []struct {
			name, script string
			ok           bool
			want         string
		}{
			{"write a hook", "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit", false, "Read-only file system"},
			{"write the git config", "echo '[core] fsmonitor = /tmp/evil' >> .git/config", false, "Read-only file system"},
			{"git config", "git config core.hooksPath /tmp/evil", false, ""},
			{"write the Prime settings", `echo '{"permissions":{"mode":"full"}}' > .prime/settings.json`, false, "Read-only file system"},
			{"add a Prime file", "echo x > .prime/extensions.json", false, "Read-only file system"},
			{"move the hooks aside", "mv .git/hooks .git/old-hooks", false, "busy"},
			{"remove the config", "rm -f .git/config", false, "busy"},
			{"move .git aside", "mv .git .git-old", false, "busy"},
			{"move .prime aside", "mv .prime .prime-old", false, "busy"},
			{"a relative path from a subdirectory", "mkdir -p sub && cd sub && echo x > ../.git/hooks/post-checkout", false, "Read-only file system"},
			{"a hard link to the config", "ln .git/config cfg && echo '[core] pager = /tmp/evil' >> cfg", false, "Invalid cross-device link"},
			{"through /proc/self/root", "echo x > /proc/self/root" + hook, false, "Read-only file system"},
			{"through a link in the project", "ln -s .git/hooks h && echo x > h/pre-commit", false, "Read-only file system"},
			{"remount read-write", "mount -o remount,rw " + filepath.Join(f.project, ".git", "hooks"), false, ""},
			{"the trampoline again, without the protection", reenter(`{"shell":"/bin/sh","write":["/"]}`, hook), true, ""},
			{"unmount in a new namespace", "unshare -rm sh -c 'umount " + filepath.Join(f.project, ".git", "hooks") + " && echo x > .git/hooks/pre-commit'", false, ""},
			{"git add and commit", "echo a > a.txt && git add a.txt && git -c user.name=t -c user.email=t@t commit -qm two && git log --oneline | wc -l", true, "2"},
			{"git branch, checkout, gc", "git checkout -qb topic && git checkout -q - && git gc -q && git branch | wc -l", true, "2"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				out, err := f.run(t, tt.script)
				t.Logf("network %v: %s: %v\n%s", network, tt.script, err, out) // the escape attempts, for the record
				if (err == nil) != tt.ok || !strings.Contains(out, tt.want) {
					t.Errorf("%s: err %v, output:\n%s\nwant ok=%v and %q", tt.script, err, out, tt.ok, tt.want)
				}
				if !tt.ok && tt.want != "" && !strings.Contains(f.sb.Explain(out), ".git hooks") {
					t.Errorf("%s: the note does not say why: %q", tt.script, f.sb.Explain(out))
				}
			})
		}
		if _, err := os.Stat(hook); err == nil {
			t.Errorf("%s was written from the sandbox", hook)
		}
		if b, _ := os.ReadFile(filepath.Join(f.project, ".prime", "settings.json")); string(b) != "{}\n" {
			t.Errorf(".prime/settings.json: %q", b)
		}
		if b, _ := os.ReadFile(filepath.Join(f.project, ".git", "config")); strings.Contains(string(b), "evil") {
			t.Errorf(".git/config was changed:\n%s", b)
		}
		// Outside the sandbox nothing is left mounted.
		if err := os.WriteFile(hook, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Errorf("the hooks are read-only outside the sandbox too: %v", err)
		}
		os.Remove(hook)
	}
}

// TestSandboxProtectsWorktree: in a worktree, the .git file and the hooks
// and configuration of the common git directory are read-only, and a
// commit works.
func TestSandboxProtectsWorktree(t *testing.T) {
	f := newSandboxFixture(t, false)
	main := filepath.Join(filepath.Dir(f.project), "main")
	gitRepo(t, main)
	os.Remove(f.project)
	if out, err := exec.Command("git", "-C", main, "worktree", "add", "-q", f.project).CombinedOutput(); err != nil {
		t.Fatalf("git worktree add: %v\n%s", err, out)
	}
	f.sb.Write = append(f.sb.Write, filepath.Join(main, ".git"))
	f.sb.Project = f.project
	if err := f.sb.Probe(); err != nil {
		t.Skipf("this kernel refuses the sandbox's mount namespace, so nothing to test: %v", err)
	}
	for _, script := range []string{
		"echo 'gitdir: /tmp/evil' > .git",
		"echo x > " + filepath.Join(main, ".git", "hooks", "pre-commit"),
		"echo '[core] hooksPath = /tmp' >> " + filepath.Join(main, ".git", "config"),
		"echo /tmp/evil > $(git rev-parse --git-dir)/commondir",
	} {
		if out, err := f.run(t, script); err == nil || !strings.Contains(out, "Read-only file system") {
			t.Errorf("%s: err %v, output %q", script, err, out)
		}
	}
	if out, err := f.run(t, "echo a > a.txt && git add a.txt && git -c user.name=t -c user.email=t@t commit -qm two && git log --oneline | wc -l"); err != nil || out != "2\n" {
		t.Errorf("commit in the worktree: %v, %q", err, out)
	}
}

// TestProjectProtected: which paths are protected, for the shapes a
// project takes.
func TestProjectProtected(t *testing.T) {
	root := t.TempDir()
	mk := func(files ...string) string {
		dir, err := os.MkdirTemp(root, "p")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			p := filepath.Join(dir, f)
			if strings.HasSuffix(f, "/") {
				os.MkdirAll(p, 0o755)
				continue
			}
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte("x"), 0o644)
		}
		return dir
	}
	rel := func(dir string, p Protected) (ro, pin []string) {
		for _, x := range p.ReadOnly {
			r, _ := filepath.Rel(dir, x)
			ro = append(ro, r)
		}
		for _, x := range p.Pin {
			r, _ := filepath.Rel(dir, x)
			pin = append(pin, r)
		}
		return ro, pin
	}
	wt := mk("main/.git/hooks/", "main/.git/config", "main/.git/worktrees/w/commondir", "w/")
	os.WriteFile(filepath.Join(wt, "main/.git/worktrees/w/commondir"), []byte("../..\n"), 0o644)
	os.WriteFile(filepath.Join(wt, "w/.git"), []byte("gitdir: ../main/.git/worktrees/w\n"), 0o644)
	tests := []struct {
		name, dir, project string
		ro, pin            []string
	}{
		{"no git, no prime", mk("a.txt"), ".", nil, []string{"."}},
		{"a repository and settings", mk(".git/hooks/", ".git/config", ".git/objects/", ".prime/settings.json"), ".",
			[]string{".prime", ".git/hooks", ".git/config"}, []string{".", ".git"}},
		{"a worktree", wt, "w",
			[]string{"w/.git", "main/.git/worktrees/w/commondir", "main/.git/hooks", "main/.git/config"},
			[]string{"w", "main/.git/worktrees/w", "main/.git"}},
		{"a .git file naming nothing", mk(".git"), ".", []string{".git"}, []string{"."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, _ := filepath.EvalSymlinks(tt.dir)
			ro, pin := rel(dir, ProjectProtected(filepath.Join(dir, tt.project)))
			if strings.Join(ro, " ") != strings.Join(tt.ro, " ") || strings.Join(pin, " ") != strings.Join(tt.pin, " ") {
				t.Errorf("read-only %q, pinned %q; want %q, %q", ro, pin, tt.ro, tt.pin)
			}
		})
	}
}

// TestSandboxProtectsNewRepository: a repository a first command makes is
// protected from the next command on.
func TestSandboxProtectsNewRepository(t *testing.T) {
	f := newSandboxFixture(t, false)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	f.sb.Project = f.project
	if err := f.sb.Probe(); err != nil {
		t.Skipf("this kernel refuses the sandbox's mount namespace, so nothing to test: %v", err)
	}
	if out, err := f.run(t, "git init -q . && echo x > .git/hooks/made-in-the-same-command"); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	if out, err := f.run(t, "echo x > .git/hooks/pre-commit"); err == nil || !strings.Contains(out, "Read-only file system") {
		t.Errorf("a hook written by the next command: err %v, %q", err, out)
	}
}
