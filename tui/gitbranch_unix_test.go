//go:build unix

package tui

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestGitBranchHostileHead: the footer reads a cloned repository's
// .git/HEAD before the first frame. A FIFO there made the terminal UI
// wait forever for a writer, and a link to /dev/zero filled memory; both
// show no branch, at once.
func TestGitBranchHostileHead(t *testing.T) {
	cases := map[string]func(t *testing.T, head string){
		"fifo": func(t *testing.T, head string) {
			if err := syscall.Mkfifo(head, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"dev zero": func(t *testing.T, head string) {
			if err := os.Symlink("/dev/zero", head); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, plant := range cases {
		t.Run(name, func(t *testing.T) {
			repo := t.TempDir()
			if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			plant(t, filepath.Join(repo, ".git", "HEAD"))
			done := make(chan string, 1)
			go func() { done <- gitBranch(repo) }()
			select {
			case got := <-done:
				if got != "" {
					t.Errorf("branch %q, want none", got)
				}
			case <-time.After(2 * time.Minute):
				t.Fatal("gitBranch did not return")
			}
		})
	}
}
