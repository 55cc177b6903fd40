package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmeScript returns the README's shell block that holds marker, as the
// text to run: each pair of subs replaced in order (the README's /tmp paths
// by the test's own, its go build by a copy of the binary the tests built),
// and the lines holding one of drop left out.
func readmeScript(t *testing.T, marker string, subs [][2]string, drop ...string) string {
	t.Helper()
	var kept []string
	for _, l := range readmeBlock(t, marker) {
		skip := false
		for _, d := range drop {
			skip = skip || strings.Contains(l, d)
		}
		if !skip {
			kept = append(kept, l)
		}
	}
	text := strings.Join(kept, "\n") + "\n"
	for _, s := range subs {
		if !strings.Contains(text, s[0]) {
			t.Fatalf("the README's block with %q no longer holds %q:\n%s", marker, s[0], text)
		}
		text = strings.ReplaceAll(text, s[0], s[1])
	}
	return text
}

// runScript runs a shell script with bash -e in its own process group, in
// dir, with home as HOME and no API key, and returns its output; the group
// (a server the script left running) is killed when the test ends.
func runScript(t *testing.T, dir, home, script string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home, "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "PRIME_CODING_AGENT_DIR=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	err := cmd.Wait()
	return out.String(), err
}

// TestREADMETryWithoutModel runs the README's "Try it without a model"
// script as written, but for its paths and its build: a fake model server
// with a script of a tool call and an answer, then prime -p against it.
// The script's terminal-UI line is left out (it needs a terminal;
// TestREADMETryWithoutModelTUI runs the whole script in tmux).
func TestREADMETryWithoutModel(t *testing.T) {
	bin := buildPrime(t)
	dir := t.TempDir()
	try := filepath.Join(dir, "prime-try")
	script := readmeScript(t, "prime-try", [][2]string{
		{"go build -o /tmp/prime ./cmd/prime", "cp @BIN@ /tmp/prime"},
		{"/tmp/prime-try", try},
		{"/tmp/prime", filepath.Join(dir, "prime")},
		{"@BIN@", bin}, // last: the built binary's own path may start with /tmp/prime
	}, "# the same in the terminal UI")
	out, err := runScript(t, dir, t.TempDir(), script)
	if err != nil {
		t.Fatalf("%v\n%s\nthe script:\n%s", err, out, script)
	}
	if !strings.Contains(out, "This directory holds a script file and the model list.") {
		t.Errorf("the answer is not in the output:\n%s", out)
	}
	// The tool call ran in the directory: the session holds its listing.
	files, _ := filepath.Glob(filepath.Join(try, "sessions", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions %v", files)
	}
	data, _ := os.ReadFile(files[0])
	if !strings.Contains(string(data), "script.json") || !strings.Contains(string(data), `"toolResult"`) {
		t.Errorf("the session lacks the ls -la result:\n%s", data)
	}
}

// TestREADMECompactDemo runs the README's end-to-end compaction against a
// fake model server as written, but for its paths and its build.
func TestREADMECompactDemo(t *testing.T) {
	bin := buildPrime(t)
	dir := t.TempDir()
	demo := filepath.Join(dir, "prime-demo")
	script := readmeScript(t, "prime-demo", [][2]string{
		{"go build -o /tmp/prime-demo/prime ./cmd/prime", "cp @BIN@ /tmp/prime-demo/prime"},
		{"/tmp/prime-demo", demo},
		{"@BIN@", bin},
	})
	out, err := runScript(t, dir, t.TempDir(), script)
	if err != nil {
		t.Fatalf("%v\n%s\nthe script:\n%s", err, out, script)
	}
	for _, want := range []string{"Ship the planner.", "appended to s.jsonl", "tokens before"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
}

// TestREADMETryWithoutModelTUI runs the whole "Try it without a model"
// script in tmux, its terminal-UI line included: after the print-mode
// answer, the terminal UI opens on the fake model; quitting it (Ctrl-C
// twice) lets the script stop the server and end with status 0.
func TestREADMETryWithoutModelTUI(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the script's terminal UI needs a terminal")
	}
	bin := buildPrime(t)
	dir := t.TempDir()
	script := readmeScript(t, "prime-try", [][2]string{
		{"go build -o /tmp/prime ./cmd/prime", "cp @BIN@ /tmp/prime"},
		{"/tmp/prime-try", filepath.Join(dir, "prime-try")},
		{"/tmp/prime", filepath.Join(dir, "prime")},
		{"@BIN@", bin},
	})
	if !strings.Contains(script, "# the same in the terminal UI") {
		t.Fatalf("the README's script has no terminal-UI line:\n%s", script)
	}
	path := filepath.Join(dir, "try.sh")
	writeFile(t, path, script)
	home := t.TempDir()
	s := &tmuxSession{t: t, socket: filepath.Join(dir, "tmux.sock")}
	command := "env -u PRIME_CODING_AGENT_DIR HOME=" + home + " ANTHROPIC_API_KEY= OPENAI_API_KEY= bash -e " + path + "; echo SCRIPT-EXITED $?; sleep 600"
	s.run("new-session", "-d", "-s", "prime", "-x", "120", "-y", "40", "-c", dir, command)
	t.Cleanup(func() { exec.Command("tmux", "-S", s.socket, "kill-server").Run() })
	s.waitFor(bannerVersion(t, bin), "fake-model • medium")
	s.keys("C-c", "C-c")
	s.waitFor("SCRIPT-EXITED 0")
}
