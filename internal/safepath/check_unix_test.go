//go:build unix

package safepath

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	asRoot := os.Geteuid() == 0
	tests := []struct {
		name     string
		setup    func(t *testing.T, dir, file string)
		root     bool // needs root (chown)
		wantPath string
		wantWhy  string
	}{
		{name: "own file", setup: func(*testing.T, string, string) {}},
		{name: "world-writable file", setup: func(t *testing.T, _, f string) { chmod(t, f, 0o666) },
			wantPath: "settings.json", wantWhy: "writable by every user (mode 0666)"},
		{name: "world-writable directory", setup: func(t *testing.T, d, _ string) { chmod(t, d, 0o777) },
			wantPath: "agent", wantWhy: "writable by every user (mode 0777)"},
		{name: "sticky world-writable directory", setup: func(t *testing.T, d, _ string) { chmod(t, d, 0o777|os.ModeSticky) }},
		{name: "file of another user", root: true, setup: func(t *testing.T, _, f string) { chown(t, f, 4242, -1) },
			wantPath: "settings.json", wantWhy: "owned by user 4242, not by you"},
		{name: "directory of another user", root: true, setup: func(t *testing.T, d, _ string) { chown(t, d, 4242, -1) },
			wantPath: "agent", wantWhy: "owned by user 4242"},
		{name: "group-writable, the owner's private group", setup: func(t *testing.T, _, f string) { chmod(t, f, 0o664) }, root: true},
		{name: "group-writable, a shared group", root: true, setup: func(t *testing.T, _, f string) {
			chown(t, f, -1, 4243)
			chmod(t, f, 0o664)
		}, wantPath: "settings.json", wantWhy: "writable by the group 4243 (mode 0664)"},
		{name: "link to a world-writable file", setup: func(t *testing.T, d, f string) {
			target := filepath.Join(t.TempDir(), "real.json")
			if err := os.WriteFile(target, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			chmod(t, target, 0o666)
			os.Remove(f)
			if err := os.Symlink(target, f); err != nil {
				t.Fatal(err)
			}
		}, wantPath: "real.json", wantWhy: "mode 0666"},
		{name: "missing file in a world-writable directory", setup: func(t *testing.T, d, f string) {
			os.Remove(f)
			chmod(t, d, 0o777)
		}, wantPath: "agent", wantWhy: "every user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root && !asRoot {
				t.Skip("needs root to give files to another user")
			}
			dir := filepath.Join(t.TempDir(), "agent")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "settings.json")
			if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
			chmod(t, file, 0o644)
			tt.setup(t, dir, file)
			err := Check(file)
			if tt.wantPath == "" {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			var ue *UnsafeError
			if !errors.As(err, &ue) {
				t.Fatalf("Check = %v, want an *UnsafeError", err)
			}
			if filepath.Base(ue.Path) != tt.wantPath || !strings.Contains(ue.Why, tt.wantWhy) {
				t.Errorf("Check = %q (path %s), want path …/%s, why containing %q", err, ue.Path, tt.wantPath, tt.wantWhy)
			}
		})
	}
}

func chmod(t *testing.T, p string, m os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, m); err != nil {
		t.Fatal(err)
	}
}

func chown(t *testing.T, p string, uid, gid int) {
	t.Helper()
	if err := os.Chown(p, uid, gid); err != nil {
		t.Fatal(err)
	}
}
