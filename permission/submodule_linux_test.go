package permission

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// submoduleFixture is a protected project with one submodule, lib, whose
// git directory is .git/modules/lib.
func submoduleFixture(t *testing.T) *sandboxFixture {
	f := protectedFixture(t, false)
	lib := filepath.Join(filepath.Dir(f.project), "lib")
	gitRepo(t, lib)
	for _, args := range [][]string{
		{"-C", f.project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib"},
		{"-C", f.project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "lib"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return f
}

// TestSandboxProtectsSubmodules: git runs a submodule's configuration and
// hooks outside the sandbox too (the user's next "git status" in the
// project runs git in each submodule, and its core.fsmonitor with it), so
// a confined command may change neither the submodule's git directory's
// configuration and hooks nor the submodule's .git file that names that
// directory.
func TestSandboxProtectsSubmodules(t *testing.T) {
	tests := []struct{ name, script, planted string }{
		{"write the submodule's config", "git -C lib config core.fsmonitor 'touch MARK; false'", ""},
		{"append to it", "printf '[core]\\n\\tfsmonitor = touch MARK\\n' >> .git/modules/lib/config", ""},
		{"write a submodule hook", "printf '#!/bin/sh\\ntouch MARK\\n' > .git/modules/lib/hooks/post-checkout", ".git/modules/lib/hooks/post-checkout"},
		{"point the submodule elsewhere", "echo 'gitdir: EVIL' > lib/.git", ""},
		{"move the submodule's git directory", "mv .git/modules/lib .git/modules/old && cp -r .git/modules/old .git/modules/lib && " +
			"git -C lib config core.fsmonitor 'touch MARK; false'", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := submoduleFixture(t)
			mark := filepath.Join(f.outside, "pwned")
			// A git directory the attack points the submodule at.
			evil := filepath.Join(f.outside, "evilgit")
			if out, err := exec.Command("git", "-C", f.project, "-c", "protocol.file.allow=always", "clone", "-q", "--bare",
				filepath.Join(f.project, "lib"), evil).CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			exec.Command("git", "-C", evil, "config", "core.fsmonitor", "touch "+mark+"; false").Run()
			exec.Command("git", "-C", evil, "config", "core.bare", "false").Run()
			script := strings.NewReplacer("MARK", mark, "EVIL", evil).Replace(tc.script)
			out, _ := f.run(t, script)
			// What the user does next, outside the sandbox.
			st := exec.Command("git", "status")
			st.Dir = f.project
			st.CombinedOutput()
			if _, err := os.Stat(mark); err == nil {
				t.Errorf("git status outside the sandbox ran what the command planted (%s)", strings.TrimSpace(out))
			}
			if tc.planted != "" {
				if _, err := os.Stat(filepath.Join(f.project, tc.planted)); err == nil {
					t.Errorf("the command wrote %s (%s)", tc.planted, strings.TrimSpace(out))
				}
			}
			if out, err := f.run(t, "git -C lib status --short && git -C lib log --oneline | wc -l"); err != nil {
				t.Errorf("git in the submodule fails in the sandbox: %v\n%s", err, out)
			}
		})
	}
}

// TestPlantedSubmodule: a submodule a confined command adds has a git
// directory and a .git file that did not exist when the command started,
// so nothing kept them read-only; they are reported as planted, for the
// user to check before running git.
func TestPlantedSubmodule(t *testing.T) {
	f := submoduleFixture(t)
	before := ProjectProtected(f.project)
	out, err := f.run(t, "git -c protocol.file.allow=always submodule add -q "+filepath.Join(filepath.Dir(f.project), "lib")+" second")
	if err != nil {
		t.Fatalf("git submodule add in the sandbox: %v\n%s", err, out)
	}
	got := Planted(before, ProjectProtected(f.project))
	for _, want := range []string{filepath.Join(f.project, "second", ".git"), filepath.Join(f.project, ".git", "modules", "second", "config")} {
		found := false
		for _, p := range got {
			found = found || p == want
		}
		if !found {
			t.Errorf("planted %v, want %s among them", got, want)
		}
	}
}

// TestPlantedGitlink: git status also runs git in a submodule that only
// the index records (no .gitmodules entry), with the configuration its
// .git file leads to. A confined command can add one (the index is the
// project's, for git add), so its new .git is reported as planted; and
// the .git of one that was there when the command started is read-only.
func TestPlantedGitlink(t *testing.T) {
	f := protectedFixture(t, false)
	before := ProjectProtected(f.project)
	out, err := f.run(t, "git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),evil && mkdir evil && "+
		"echo 'gitdir: "+filepath.Join(f.outside, "evilgit")+"' > evil/.git")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	after := ProjectProtected(f.project)
	want := filepath.Join(f.project, "evil", ".git")
	if got := Planted(before, after); !slices.Contains(got, want) {
		t.Errorf("planted %v, want %s among them", got, want)
	}
	if !slices.Contains(after.ReadOnly, want) {
		t.Fatalf("read-only %v, want %s among them", after.ReadOnly, want)
	}
	f.sb.Project = f.project
	if out, err := f.run(t, "echo 'gitdir: /tmp' > evil/.git"); err == nil {
		t.Errorf("the next command rewrote %s: %s", want, out)
	}
}
