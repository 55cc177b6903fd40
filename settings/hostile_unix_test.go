//go:build unix

package settings

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHostileSettingsFile puts in a cloned project's place of settings.json
// what a hostile repository can: a FIFO (opening it waits for a writer
// forever, and Prime ignored SIGTERM meanwhile), a link to /dev/zero (Prime
// grew to 8.5 GB in ten seconds), a link to /proc/self/environ (Prime's
// own environment, API keys included), and a file far larger than any
// settings. Each is reported as a file that cannot be read, at once, and
// the global settings still apply.
func TestHostileSettingsFile(t *testing.T) {
	cases := []struct {
		name string
		make func(t *testing.T, file string)
		why  string
	}{
		{"fifo", func(t *testing.T, file string) {
			if err := syscall.Mkfifo(file, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "named pipe"},
		{"dev zero", func(t *testing.T, file string) { symlink(t, "/dev/zero", file) }, "a device"},
		{"proc", func(t *testing.T, file string) { symlink(t, "/proc/self/environ", file) }, "not a regular file"},
		{"huge", func(t *testing.T, file string) {
			f, err := os.Create(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(maxFileSize + 1); err != nil {
				t.Fatal(err)
			}
		}, "larger than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "proc" {
				if _, err := os.Stat("/proc/self/environ"); err != nil {
					t.Skip("no /proc here")
				}
			}
			agent, proj := dirs(t, `{"compaction": {"reserveTokens": 1234}}`, "")
			file := filepath.Join(proj, ".prime", "agent", "settings.json")
			tc.make(t, file)
			done := make(chan *Settings, 1)
			go func() {
				s, err := Load(context.Background(), Options{AgentDir: agent, ProjectDir: proj})
				if err != nil {
					t.Error(err)
				}
				done <- s
			}()
			var s *Settings
			select {
			case s = <-done:
			case <-time.After(2 * time.Minute):
				t.Fatal("loading the settings did not return: it waits on the project's file")
			}
			if s == nil {
				return
			}
			p := s.Problems()
			if len(p) != 1 || p[0].File != file || !p[0].Broken || !strings.Contains(p[0].Msg, tc.why) {
				t.Fatalf("problems = %v, want the project file refused (%s)", p, tc.why)
			}
			if v, src := value(t, s, "", keyCompactionReserve); v != 1234 || src.Scope != Global {
				t.Errorf("reserveTokens = %v from %v, want the global 1234", v, src)
			}
		})
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
