package main

import (
	"os"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
)

// TestContextBreakdown: "prime session context --breakdown" draws the
// context as a bar of the width asked, names the kinds and their tokens,
// the threshold and what a compaction would do; --json holds the same.
func TestContextBreakdown(t *testing.T) {
	path := genFile(t, sessiongen.Options{Entries: 600, Seed: 2, ContextWindow: 40_000, KeepRecentTokens: 6_000, ReserveTokens: 4_000, Pi16: true})
	env := fakeEnv(t, nil)
	code, out, errOut := runPrime(t, env, "session", "context", path, "--breakdown", "--width", "60", "--context-window", "40000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 4 || len(lines[1]) != 60 || !strings.Contains(lines[1], "|") || !strings.Contains(out, "a compaction now: summarizes") {
		t.Fatalf("output:\n%s", out)
	}
	golden.Check(t, "context-breakdown.txt", out)
	code, out, errOut = runPrime(t, env, "session", "context", path, "--breakdown", "--json", "--context-window", "40000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Parts []struct {
			Kind   string `json:"kind"`
			Tokens int    `json:"tokens"`
		} `json:"parts"`
		Total        int    `json:"total"`
		Window       int    `json:"window"`
		Threshold    int    `json:"threshold"`
		WindowSource string `json:"windowSource"`
		Compaction   *struct {
			FirstKeptEntryID string `json:"firstKeptEntryId"`
		} `json:"compaction"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, p := range got.Parts {
		sum += p.Tokens
	}
	if len(got.Parts) != 10 || sum != got.Total || got.Window != 40000 || got.Threshold != 40000-16384 || got.WindowSource != "request" || got.Compaction == nil {
		t.Errorf("json %+v", got)
	}
	if code, _, _ := runPrime(t, env, "session", "context", path, "--breakdown", "--width", "-1"); code != exitBadUsage {
		t.Errorf("a negative width: exit %d", code)
	}
}

// TestUncompactCommand: "prime uncompact" undoes the latest compaction on
// the path with one appended entry; the file's context is again what it
// was before; a file without a compaction is bad input and is not written.
func TestUncompactCommand(t *testing.T) {
	path := genFile(t, sessiongen.Options{Entries: 400, Seed: 4, NoCompactions: true, BranchRate: -1})
	env := fakeEnv(t, nil)
	before, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if code, _, errOut := runPrime(t, env, "uncompact", path); code != exitBadUsage || !strings.Contains(errOut, "no compaction") {
		t.Errorf("no compaction: exit %d: %s", code, errOut)
	}
	unchanged(t, path, data)
	if code, _, errOut := runPrime(t, env, "compact", path, "--offline", "--keep-recent-tokens", "2000"); code != 0 {
		t.Fatalf("compact: exit %d: %s", code, errOut)
	}
	code, out, errOut := runPrime(t, env, "uncompact", path, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got uncompactJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	after, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if after.LeafID() != got.EntryID || got.LeafID != before.LeafID() || after.Len() != before.Len()+2 {
		t.Fatalf("leaf %s after, %+v; %d entries, %d before", after.LeafID(), got, after.Len(), before.Len())
	}
	cb, err := before.Context("")
	if err != nil {
		t.Fatal(err)
	}
	ca, err := after.Context("")
	if err != nil {
		t.Fatal(err)
	}
	if len(ca.Messages) != len(cb.Messages) || got.Messages != len(cb.Messages) || got.Tokens != cb.EstimateNext().Tokens {
		t.Errorf("%d messages after the undo (%d tokens), %d before (%d)", len(ca.Messages), got.Tokens, len(cb.Messages), cb.EstimateNext().Tokens)
	}
	if code, _, errOut := runPrime(t, env, "uncompact", path, "--compaction", got.EntryID); code != exitBadUsage {
		t.Errorf("not a compaction: exit %d: %s", code, errOut)
	}
}
