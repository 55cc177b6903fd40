package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prime-agent/prime/settings"
)

// screenScript is the fake model's replies for the screen tests: a long
// paragraph and a table, an edit (its diff), and a long list.
func screenScript() string {
	para := "wrapping: " + strings.Repeat("aaaaaaaaaa bbbbbbbbbb cccccccccc dddddddddd eeeeeeeeee ffffffffff gggggggggg hhhhhhhhhh iiiiiiiiii jjjjjjjjjj kkkkkkkkkk llllllllll. ", 2)
	table := `| Tool | What it does |\n|------|--------------|\n| grep | searches the files for a pattern |\n| sed | edits a stream |`
	var items []string
	for i := range 24 {
		items = append(items, "- item "+strconv.Itoa(i+1)+" of the list")
	}
	return `{"replies": [
 {"parts": [{"text": "Here is a long paragraph.\n\n` + para + `\n\n` + table + `"}, {"usage": {"input": 900, "output": 20, "cacheRead": 800}}]},
 {"parts": [{"text": "Let me fix it."}, {"toolCall": {"id": "c1", "name": "edit", "arguments": {"path": "calc.go", "edits": [{"oldText": "return a - b", "newText": "return a + b"}]}}}, {"usage": {"input": 1000, "output": 20}}]},
 {"parts": [{"text": "Fixed: ` + "`Add`" + ` now adds."}, {"usage": {"input": 1100, "output": 10}}]},
 {"parts": [{"text": "The list:\n\n` + strings.Join(items, `\n`) + `"}, {"usage": {"input": 1200, "output": 10}}]}
]}`
}

// screenPrime is the binary in a tmux pane of the given size, on a fake
// model of its own and in a home of its own (so that two of them show the
// same footer).
func screenPrime(t *testing.T, bin string, width, height int, args ...string) *tmuxSession {
	t.Helper()
	return startScreenPrime(t, bin, width, height, "", args...)
}

// startScreenPrime is screenPrime whose pane, when gate is set, waits for
// "tmux wait-for -S gate" before it starts the binary.
func startScreenPrime(t *testing.T, bin string, width, height int, gate string, args ...string) *tmuxSession {
	t.Helper()
	return scriptedPrime(t, bin, width, height, gate, screenScript(), args...)
}

// scriptedPrime is startScreenPrime on a fake model replying script.
func scriptedPrime(t *testing.T, bin string, width, height int, gate, replies string, args ...string) *tmuxSession {
	t.Helper()
	home := t.TempDir()
	agentDir, project := filepath.Join(home, "agent"), filepath.Join(home, "proj")
	for _, dir := range []string{agentDir, project} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(agentDir, "settings.json"), `{"retry": {"enabled": false}}`)
	writeFile(t, filepath.Join(project, "calc.go"), "package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n")
	script := filepath.Join(home, "script.json")
	writeFile(t, script, replies)
	serveFakeLLM(t, bin, script, filepath.Join(agentDir, "models.json"))
	s := &tmuxSession{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	command := ""
	if gate != "" {
		command = "tmux -S " + s.socket + " wait-for " + gate + "; "
	}
	command += "env HOME=" + home + " " + settings.AgentDirEnv + "=" + agentDir + " " + bin + " --model fake/fake-model " + strings.Join(args, " ") + "; echo PRIME-EXITED $?; sleep 600"
	s.run("new-session", "-d", "-s", "prime", "-x", strconv.Itoa(width), "-y", strconv.Itoa(height), "-c", project, command)
	t.Cleanup(func() { exec.Command("tmux", "-S", s.socket, "kill-server").Run() })
	return s
}

// serveFakeLLM serves a script of replies with "prime dev fake-llm" for the
// test's length, and writes the models.json that points at it.
func serveFakeLLM(t *testing.T, bin, script, modelsJSON string) {
	t.Helper()
	fake := exec.Command(bin, "dev", "fake-llm", "--api", "anthropic", "--script", script, "--models-json", modelsJSON)
	stdout, err := fake.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Process.Signal(syscall.SIGINT); fake.Wait() })
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatalf("the fake model did not start: %v", err)
	}
}

// converse has the conversation of the screen tests: three prompts, a pin
// and its removal (two notices).
func (s *tmuxSession) converse() {
	s.t.Helper()
	s.waitFor("fake-model • medium")
	for _, step := range []struct{ text, want string }{
		{"show me", "edits a stream"},
		{"fix add", "now adds."},
		{"/pin never push to main", "Pinned "},
		{"/unpin never push to main", "Unpinned "},
		{"the list", "item 24 of the list"},
	} {
		s.literal(step.text)
		s.keys("Enter")
		s.waitFor(step.want)
	}
}

// waitFooter waits until the last row shows text.
func (s *tmuxSession) waitFooter(text string) {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		rows := strings.Split(strings.TrimSuffix(s.screen(), "\n"), "\n")
		if strings.Contains(rows[len(rows)-1], text) {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the footer never showed %q:\n%s", text, s.screen())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// settled returns the screen once it has stayed the same for a while.
func (s *tmuxSession) settled() string {
	s.t.Helper()
	last, same := "", 0
	deadline := time.Now().Add(20 * time.Second)
	for same < 4 {
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen never settled:\n%s", last)
		}
		time.Sleep(100 * time.Millisecond)
		scr := s.screen()
		if scr == last {
			same++
		} else {
			last, same = scr, 0
		}
	}
	return normalScreen(last)
}

var (
	screenIDs   = regexp.MustCompile(`\b[0-9a-f]{8}\b`)
	screenTimes = regexp.MustCompile(`Took \d+\.\ds`)
)

// normalScreen drops what differs between two runs of the same
// conversation: pin ids and elapsed times.
func normalScreen(s string) string {
	return screenTimes.ReplaceAllString(screenIDs.ReplaceAllString(s, "ID"), "Took Ns")
}

// checkFooterLast fails unless the screen's last two rows are the
// footer's (its first line names the directory, ~/proj).
func checkFooterLast(t *testing.T, scr, what string) {
	t.Helper()
	rows := strings.Split(strings.TrimSuffix(scr, "\n"), "\n")
	if len(rows) < 2 || !strings.HasPrefix(rows[len(rows)-2], "~/proj") || rows[len(rows)-1] == "" {
		t.Errorf("%s: the footer is not on the last rows:\n%s", what, scr)
	}
}

// TestTUIResize resizes the terminal through widths and heights under a
// conversation with a long paragraph, a table, a diff and notices: after
// each resize the screen is the one a fresh start at that size shows (the
// same lines in the same order), with the footer on the last row.
func TestTUIResize(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the screen tests drive the binary in tmux (apt-get install -y tmux)")
	}
	bin := buildPrime(t)
	s := screenPrime(t, bin, 120, 40)
	s.converse()
	checkResizes(t, s, func(w, h int) *tmuxSession {
		fresh := screenPrime(t, bin, w, h)
		fresh.converse()
		return fresh
	})
	// Quitting leaves a clean last frame: the hint of the first Ctrl-C
	// shows, and is gone once the second exits.
	s.keys("C-c")
	s.waitFor("ctrl+c again to exit")
	s.keys("C-c")
	end := s.waitFor("PRIME-EXITED 0")
	if strings.Contains(end, "ctrl+c again") || strings.Contains(end, "working…") {
		t.Errorf("the last frame keeps a hint:\n%s", end)
	}
}

// checkResizes resizes s through widths and heights; after each, its
// screen must be the one start shows at that size, the footer on the last
// row.
func checkResizes(t *testing.T, s *tmuxSession, start func(w, h int) *tmuxSession) {
	t.Helper()
	checkFooterLast(t, s.settled(), "the first size")
	for _, size := range [][2]int{{40, 40}, {200, 40}, {80, 40}, {80, 15}, {80, 60}} {
		w, h := size[0], size[1]
		s.run("resize-window", "-t", "prime", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h))
		fresh := start(w, h)
		want := fresh.settled()
		got := s.settledTo(want)
		what := strconv.Itoa(w) + "x" + strconv.Itoa(h)
		if got != want {
			t.Errorf("after resizing to %s the screen is not a fresh start's:\n%s", what, sideBySide(want, got))
		}
		checkFooterLast(t, got, what)
		fresh.run("kill-server")
	}
}

// TestTUIResizeResumed resizes a resumed session of 200 and of 100,000
// entries: each screen is the one a fresh resume at that size shows.
func TestTUIResizeResumed(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the screen tests drive the binary in tmux (apt-get install -y tmux)")
	}
	bin := buildPrime(t)
	for _, n := range []int{200, 100_000} {
		path := filepath.Join(t.TempDir(), "s.jsonl")
		if out, err := exec.Command(bin, "dev", "gen-session", "--entries", strconv.Itoa(n), "--seed", "3", "--out", path).CombinedOutput(); err != nil {
			t.Fatalf("gen-session: %v\n%s", err, out)
		}
		start := func(w, h int) *tmuxSession {
			s := screenPrime(t, bin, w, h, "--session", path)
			s.waitFor("~/proj")
			s.waitFooter("$") // the sums of a long session come a moment later
			return s
		}
		checkResizes(t, start(120, 40), start)
	}
}

// TestTUITreeMoveAndBack moves with /tree to an earlier point and back to
// the last reply: the transcript drawn again holds the edit's whole diff,
// and the footer is on the last row.
func TestTUITreeMoveAndBack(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the screen tests drive the binary in tmux (apt-get install -y tmux)")
	}
	bin := buildPrime(t)
	s := screenPrime(t, bin, 100, 30)
	s.converse()
	s.treeSelect("user: fix add", true)
	s.waitFor("Navigated to selected point")
	s.keys("C-u") // the message navigated to is back in the editor
	s.treeSelect("assistant: The list:", true)
	s.waitFor("item 24 of the list")
	scr := s.settled()
	checkFooterLast(t, scr, "after the move back")
	all := s.run("capture-pane", "-p", "-t", "prime", "-S", "-")
	diff := []string{"1 package calc", "3 func Add(a, b int) int {", "-4  return a - b", "+4  return a + b", "5 }"}
	at := 0
	for _, l := range diff {
		i := strings.Index(all[at:], l)
		if i < 0 {
			t.Fatalf("after the move back the diff has no line %q in place:\n%s", l, all)
		}
		at += i + len(l)
	}
}

// settledTo returns the screen once it settled as want, or, after a
// generous while, as it last settled: a screen that stays put for a moment
// after a resize has not always redrawn yet on a loaded machine.
func (s *tmuxSession) settledTo(want string) string {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := s.settled()
		if got == want || time.Now().After(deadline) {
			return got
		}
	}
}

// treeSelect opens /tree, moves to the row containing text and goes there
// (without a summary when summary is set: a move to another branch asks).
func (s *tmuxSession) treeSelect(text string, summary bool) {
	s.t.Helper()
	s.literal("/tree")
	s.keys("Enter")
	s.waitFor("Session Tree", "← you are here")
	s.treeMoveTo("Up", text)
	s.keys("Enter")
	if summary {
		s.waitFor("Summarize branch?")
		s.keys("Enter")
	}
}

// treeMoveTo presses key in the open tree until the selected row begins
// with text (after its bullet, if it has one). It presses one key at a time
// and waits for the selection to move on the screen (its "(n/m)" position
// to change; two rows can read the same) before looking again, so a redraw
// that lags behind the keys on a loaded machine cannot make it run past the
// row; the tree wraps around, so every key moves it.
func (s *tmuxSession) treeMoveTo(key, text string) {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	row, pos := treeSelection(s.screen())
	for range 200 {
		if strings.HasPrefix(row, "› "+text) || strings.HasPrefix(row, "› • "+text) {
			return
		}
		s.keys(key)
		for prev := pos; pos == prev; row, pos = treeSelection(s.screen()) {
			if time.Now().After(deadline) {
				s.t.Fatalf("the tree's selection did not move from %q (%s) after %s:\n%s", row, prev, key, s.screen())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	s.t.Fatalf("no row of the tree begins with %q:\n%s", text, s.screen())
}

// treePosition is the tree's "(n/m)" line: the selected row's place.
var treePosition = regexp.MustCompile(`^\s*\(\d+/\d+\)`)

// treeSelection returns the tree's selected row as the screen shows it,
// from its "› " marker on, and the "(n/m)" position under the rows ("" for
// what the screen does not show).
func treeSelection(scr string) (row, pos string) {
	for line := range strings.SplitSeq(scr, "\n") {
		if rest := strings.TrimLeft(line, " "); row == "" && strings.HasPrefix(rest, "› ") {
			row = strings.TrimRight(rest, " ")
		}
		if m := treePosition.FindString(line); m != "" {
			pos = strings.TrimSpace(m)
		}
	}
	return row, pos
}

// sideBySide shows two screens, the first differing row marked.
func sideBySide(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	b.WriteString("fresh start | resized\n")
	for i := range max(len(w), len(g)) {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		mark := "  "
		if a != c {
			mark = "≠ "
		}
		b.WriteString(mark + a + "\n" + "  " + c + "\n")
	}
	return b.String()
}

// TestTUIOverlayClose opens and closes what draws over the editor — the
// /tree selector, the /resume picker, the command completion — on a full
// screen: once each is closed the screen is the one before it opened (the
// transcript's end in view above the editor, no blank rows in its place).
func TestTUIOverlayClose(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the screen tests drive the binary in tmux (apt-get install -y tmux)")
	}
	bin := buildPrime(t)
	s := screenPrime(t, bin, 100, 30)
	s.converse()
	before := s.settled()
	for _, open := range []struct{ what, text, enter, wait, close string }{
		{"/tree", "/tree", "Enter", "Session Tree", "Escape"},
		{"/resume", "/resume", "Enter", "Resume Session", "Escape"},
		{"the completion", "/co", "", "/compact ", "C-u"},
	} {
		s.literal(open.text)
		if open.enter != "" {
			s.keys(open.enter)
		}
		s.waitFor(open.wait)
		s.keys(open.close)
		if got := s.settled(); got != before {
			t.Errorf("after closing %s the screen is not the one before:\n%s", open.what, sideBySide(before, got))
		}
	}
}

// TestTUIExitMidRun exits with Ctrl-C twice while a command runs: the agent
// is stopped first, and the last frame shows the command stopped (its
// "aborted" result and how long it took), not a block frozen as running.
func TestTUIExitMidRun(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the screen tests drive the binary in tmux (apt-get install -y tmux)")
	}
	bin := buildPrime(t)
	script := `{"replies": [{"parts": [{"text": "Counting."}, {"toolCall": {"id": "c1", "name": "bash", "arguments": {"command": "for i in $(seq 1 600); do echo tick $i; sleep 0.1; done"}}}]}]}`
	s := scriptedPrime(t, bin, 80, 24, "", script)
	s.waitFor("fake-model • medium")
	s.literal("count")
	s.keys("Enter")
	s.waitFor("tick 3", "Elapsed")
	s.keys("C-c")
	s.waitFor("ctrl+c again to exit")
	s.keys("C-c")
	end := s.waitFor("PRIME-EXITED 0")
	if !strings.Contains(end, "The command was aborted.") || strings.Contains(end, "Elapsed") || !strings.Contains(end, "Took ") {
		t.Errorf("the last frame does not show the command stopped:\n%s", end)
	}
}
