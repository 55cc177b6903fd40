package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestTUIQuitKeepsFooter: however the TUI is quit, the terminal keeps its
// last frame whole, the footer's two rows included, and what is printed next (the
// session's name, the shell's line) goes below it (bubbletea's shutdown erased the frame's last
// row, the footer's second, and left the cursor there).
func TestTUIQuitKeepsFooter(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the screen tests drive the binary in tmux (apt-get install -y tmux)")
	}
	bin := buildPrime(t)
	for _, quit := range []struct {
		name string
		do   func(s *tmuxSession)
	}{
		{"ctrl+d", func(s *tmuxSession) { s.keys("C-d") }},
		{"/quit", func(s *tmuxSession) { s.literal("/quit"); s.keys("Enter") }},
		{"ctrl+c twice", func(s *tmuxSession) { s.keys("C-c"); s.waitFor("ctrl+c again to exit"); s.keys("C-c") }},
	} {
		t.Run(quit.name, func(t *testing.T) {
			s := screenPrime(t, bin, 90, 24)
			s.waitFor("fake-model • medium")
			s.literal("show me")
			s.keys("Enter")
			s.waitFor("edits a stream")
			before := strings.Split(strings.TrimRight(s.settled(), "\n"), "\n")
			footer := before[len(before)-2:]
			quit.do(s)
			end := strings.Split(s.waitFor("PRIME-EXITED 0"), "\n")
			for i, row := range end {
				// What is printed after the TUI: the session's name, the
				// shell's line.
				if !strings.HasPrefix(row, "Session: ") && !strings.HasPrefix(row, "PRIME-EXITED 0") {
					continue
				}
				if i < 2 || end[i-2] != footer[0] || end[i-1] != footer[1] {
					t.Errorf("the footer is not whole above the shell's output; want\n%s\ngot\n%s", strings.Join(footer, "\n"), strings.Join(end, "\n"))
				}
				return
			}
		})
	}
}
