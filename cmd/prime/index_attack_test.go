package main

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
)

// craftIndex rewrites the one persistent index in the agent directory as
// an attacker would: the last record's parent is itself and record 5's
// parent a later entry (a cycle), with the index's checksum recomputed so
// that it reads as whole. The layout is the index file's (104 bytes of
// fixed part, the small part's length at 92, records of 48 bytes with the
// parent at 28); a change to it makes this test fail, not pass.
func craftIndex(t *testing.T, agentDir string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(session.IndexDir(agentDir), "*.idx"))
	if len(files) != 1 {
		t.Fatalf("%d index files", len(files))
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	const fixedLen, recLen, parentAt = 104, 48, 28
	recs := fixedLen + int(binary.LittleEndian.Uint32(b[92:]))
	n := int(binary.LittleEndian.Uint32(b[96:]))
	put := func(i, parent int) { binary.LittleEndian.PutUint32(b[recs+i*recLen+parentAt:], uint32(parent)) }
	put(n-1, n-1)
	put(5, n-10)
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], crc32.MakeTable(crc32.Castagnoli)))
	if err := os.WriteFile(files[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A crafted session index (a cycle and a self-parent, checksum
// recomputed) no longer makes "session context" and "-p --session" spin:
// the index is dropped with a warning, the context is the file's, and
// one SIGTERM stops the run.
func TestCraftedIndexDoesNotHang(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	e := newAgentEnv(t, srv, 0, "")
	// plain runs the binary without the agent's flags, at most a minute.
	plain := func(args ...string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, e.bin, args...)
		cmd.Dir, cmd.Env = e.project, e.command().Env
		return cmd.Output()
	}
	file := filepath.Join(e.project, "big.jsonl")
	if out, err := plain("dev", "gen-session", "--entries", "6000", "--out", file); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	contextOf := func() (int, string, []warningJSON) {
		out, err := plain("session", "context", file, "--json")
		if err != nil {
			t.Fatalf("session context: %v (the walk spins?)", err)
		}
		var got struct {
			Messages int           `json:"messages"`
			LeafID   string        `json:"leafId"`
			Warnings []warningJSON `json:"warnings"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		return got.Messages, got.LeafID, got.Warnings
	}
	wantN, wantLeaf, _ := contextOf() // writes the index
	craftIndex(t, e.agentDir)
	n, leaf, warnings := contextOf()
	if n != wantN || leaf != wantLeaf {
		t.Errorf("context of %d messages at %s, the file's is %d at %s", n, leaf, wantN, wantLeaf)
	}
	if len(warnings) != 1 || warnings[0].Kind != "index" {
		t.Errorf("warnings %+v: want one saying the index was dropped", warnings)
	}

	craftIndex(t, e.agentDir)
	long := strings.Repeat("word ", 400)
	srv.Queue(llmtest.Reply{Parts: []llmtest.Part{llmtest.Text(long)}, Delay: 100 * time.Millisecond})
	cmd, wait := e.start(t, "-p", "--session", file, "go on")
	waitFor(t, "the model to be asked", func() bool { return len(srv.Requests()) > 0 })
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	if code, out := wait(); code != exitTerminated {
		t.Errorf("exit %d, want 143:\n%s", code, out)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("stopped %v after SIGTERM", d)
	}
}
