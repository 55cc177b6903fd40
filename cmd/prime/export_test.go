package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/session/sessiongen"
)

// TestExportCommand: "prime export" writes the page beside the session or
// to -o, masks secrets unless --no-redact, and refuses bad input.
func TestExportCommand(t *testing.T) {
	path := genFile(t, sessiongen.Options{Entries: 400, Seed: 2, ContextWindow: 30_000, KeepRecentTokens: 5_000, ReserveTokens: 5_000, BranchRate: 0.1})
	env := fakeEnv(t, nil)
	code, out, errOut := runPrime(t, env, "export", path, "--context-window", "30000")
	want := strings.TrimSuffix(path, ".jsonl") + ".html"
	if code != 0 || !strings.Contains(out, "wrote "+want+": 400 entries") || !strings.Contains(out, "secrets masked: 0") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	page, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"<!DOCTYPE html>", `<svg id="ctx-chart"`, "window 30,000", "compaction threshold 13,616", `<g class="drop"`} {
		if !strings.Contains(string(page), s) {
			t.Errorf("the page lacks %q", s)
		}
	}
	other := filepath.Join(t.TempDir(), "sub", "page.html")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runPrime(t, env, "export", path, "-o", other, "--no-redact"); code != 0 || !strings.Contains(out, "not redacted") {
		t.Errorf("-o --no-redact: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(other); err != nil {
		t.Error(err)
	}
	for _, args := range [][]string{{"export"}, {"export", path, "-o", path}, {"export", path, "--context-window", "-1"}, {"export", filepath.Join(t.TempDir(), "none.jsonl")}} {
		if code, _, _ := runPrime(t, env, args...); code != exitBadUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitBadUsage)
		}
	}
}
