package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/vt"
)

// TestTUIResumeFirstFrame records everything the binary writes to the
// terminal while it resumes a session of 200 and of 100,000 entries, then
// plays the recording back, one synchronized update at a time (each write
// of the program is one), into a terminal emulator: every screen shown
// before the last must be blank or already the last one's layout — the
// same rows, the footer included — except the footer's last row, whose
// sums may come a moment later.
func TestTUIResumeFirstFrame(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the screen tests drive the binary in tmux (apt-get install -y tmux)")
	}
	bin := buildPrime(t)
	const width, height = 100, 30
	for _, n := range []int{200, 100_000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			if out, err := exec.Command(bin, "dev", "gen-session", "--entries", strconv.Itoa(n), "--seed", "3", "--out", path).CombinedOutput(); err != nil {
				t.Fatalf("gen-session: %v\n%s", err, out)
			}
			s := startScreenPrime(t, bin, width, height, "start", "--session", path)
			rec := filepath.Join(t.TempDir(), "out.bin")
			s.run("pipe-pane", "-o", "-t", "prime", "cat > "+rec+"; tmux -S "+s.socket+" wait-for -S recorded")
			s.run("wait-for", "-S", "start")
			s.waitFor("~/proj")
			s.waitFooter("$")
			final := s.settled()
			s.run("pipe-pane", "-t", "prime") // stops the recording
			s.run("wait-for", "recorded")
			out, err := os.ReadFile(rec)
			if err != nil {
				t.Fatal(err)
			}
			checkFrames(t, out, width, height, final)
		})
	}
}

// checkFrames plays out back into an emulator, one synchronized update at
// a time, and fails at the first screen that is neither blank nor the last
// screen's layout.
func checkFrames(t *testing.T, out []byte, width, height int, final string) {
	t.Helper()
	emu := vt.NewEmulator(width, height)
	done := make(chan struct{})
	go func() { defer close(done); io.Copy(io.Discard, emu) }() // the emulator's answers to queries
	defer func() {
		if pw, ok := emu.InputPipe().(*io.PipeWriter); ok {
			pw.Close()
			<-done
		}
	}()
	const end = "\x1b[?2026l"
	if !bytes.Contains(out, []byte(end)) {
		t.Fatal("the program's writes are not synchronized updates")
	}
	var screens []string
	for len(out) > 0 {
		i := bytes.Index(out, []byte(end))
		if i < 0 {
			i = len(out)
		} else {
			i += len(end)
		}
		emu.Write(out[:i])
		out = out[i:]
		if scr := emu.String(); len(screens) == 0 || scr != screens[len(screens)-1] {
			screens = append(screens, scr)
		}
	}
	last := rowsOf(screens[len(screens)-1], height)
	if got, want := normalScreen(strings.Join(last[:height-1], "\n")), strings.Join(rowsOf(final, height)[:height-1], "\n"); got != want {
		t.Fatalf("the recording ends on another screen than tmux shows (%d screens):\n%s", len(screens), sideBySide(want, got))
	}
	if !strings.HasPrefix(last[height-2], "~/proj") {
		t.Fatalf("the last screen has no footer on its last rows:\n%s", strings.Join(last, "\n"))
	}
	for i, scr := range screens[:len(screens)-1] {
		if strings.TrimSpace(scr) == "" {
			continue
		}
		rows := rowsOf(scr, height)
		if strings.Join(rows[:height-1], "\n") != strings.Join(last[:height-1], "\n") {
			t.Fatalf("screen %d of %d is not the final layout:\n%s", i+1, len(screens), sideBySide(strings.Join(last, "\n"), strings.Join(rows, "\n")))
		}
	}
	t.Logf("%d screens, all in the final layout", len(screens))
}

// rowsOf is a screen's rows, trailing blanks dropped, padded to height.
func rowsOf(scr string, height int) []string {
	rows := strings.Split(strings.TrimSuffix(scr, "\n"), "\n")
	for i := range rows {
		rows[i] = strings.TrimRight(rows[i], " ")
	}
	for len(rows) < height {
		rows = append(rows, "")
	}
	return rows[:height]
}
