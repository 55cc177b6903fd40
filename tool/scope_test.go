package tool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/permission"
)

// TestWriteScope: in sandbox mode write and edit change files in the
// project and the temporary directory only, with the path's links
// resolved first: "..", absolute paths and symbolic links out of the
// project are refused with an error that says why, and nothing is written.
func TestWriteScope(t *testing.T) {
	root := t.TempDir()
	project, outside, tmp := filepath.Join(root, "project"), filepath.Join(root, "outside"), filepath.Join(root, "tmp")
	for _, d := range []string{project, outside, tmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	victim := filepath.Join(outside, "victim.txt")
	if err := os.WriteFile(victim, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(project, "linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(project, "linkfile.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(project, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := Env{CWD: project, WriteScope: &permission.Scope{Write: []string{project, tmp}, Deny: []string{filepath.Join(project, ".git")}}}
	write := func(path string) string { return fmt.Sprintf(`{"path":%q,"content":"new\n"}`, path) }
	edit := func(path string) string {
		return fmt.Sprintf(`{"path":%q,"edits":[{"oldText":"keep me","newText":"changed"}]}`, path)
	}
	tests := []struct {
		tool, args string
		ok         bool
	}{
		{"write", write("src/a.go"), true},
		{"write", write(filepath.Join(tmp, "scratch.txt")), true},
		{"write", write("../outside/new.txt"), false},
		{"write", write(filepath.Join(outside, "new.txt")), false},
		{"write", write("linkdir/new.txt"), false},
		{"write", write("linkfile.txt"), false},
		{"edit", edit("linkfile.txt"), false},
		{"edit", edit(victim), false},
		{"write", write("~/.bashrc"), false},
		{"write", write(".git/hooks/pre-commit"), false},
	}
	for _, tt := range tests {
		res, err := call(t, context.Background(), env, tt.tool, tt.args)
		var oe *permission.OutsideError
		switch {
		case tt.ok && (err != nil || res.IsError):
			t.Errorf("%s %s: %v %q", tt.tool, tt.args, err, resultText(res))
		case !tt.ok && (!errors.As(err, &oe) || !strings.Contains(err.Error(), "outside the project") && !oe.Denied):
			t.Errorf("%s %s: %v, want an outside-the-project error", tt.tool, tt.args, err)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me\n" {
		t.Errorf("the file outside was changed: %q", b)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("files outside: %v", entries)
	}
	if b, _ := os.ReadFile(filepath.Join(project, "src", "a.go")); string(b) != "new\n" {
		t.Errorf("in the project: %q", b)
	}
}
