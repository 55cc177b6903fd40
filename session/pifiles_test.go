package session_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/prime-agent/prime/internal/pifixtures"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// roleCounts counts context messages by role.
func roleCounts(msgs []session.Message) map[string]int {
	m := map[string]int{}
	for _, x := range msgs {
		m[x.Role()]++
	}
	return m
}

func TestPiFiles(t *testing.T) {
	tests := []struct {
		name        string
		entries     int
		messages    int
		roles       map[string]int
		thinking    llm.ThinkingLevel
		model       session.ModelRef
		compactions int
	}{
		{
			// No compaction: every message entry reaches the context.
			name: pifixtures.LargeSession, entries: 1018, messages: 914,
			roles:    map[string]int{"user": 88, "assistant": 453, "toolResult": 373},
			thinking: "off", model: session.ModelRef{Provider: "anthropic", ModelID: "claude-sonnet-4-5"},
		},
		{
			// Two compactions; the later one (line 629) keeps from
			// firstKeptEntryIndex 551, a user message: its summary, the 77
			// entries from 551 to the compaction and the 374 after it
			// give 446 messages.
			name: pifixtures.BeforeCompaction, entries: 1002, messages: 446,
			roles:    map[string]int{"compactionSummary": 1, "user": 31, "assistant": 219, "toolResult": 192, "bashExecution": 3},
			thinking: "off", compactions: 2,
			model: session.ModelRef{Provider: "anthropic", ModelID: "claude-opus-4-5"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := pifixtures.Path(t, tt.name)
			s, err := session.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if s.FileVersion() != 1 || s.Header().Version != 3 {
				t.Errorf("versions: file %d, migrated %d", s.FileVersion(), s.Header().Version)
			}
			if len(s.Warnings()) != 0 {
				t.Errorf("warnings: %v", s.Warnings())
			}
			if s.Len() != tt.entries {
				t.Errorf("entries = %d, want %d", s.Len(), tt.entries)
			}
			ctx, err := s.Context("")
			if err != nil {
				t.Fatal(err)
			}
			if len(ctx.Messages) != tt.messages {
				t.Errorf("messages = %d, want %d", len(ctx.Messages), tt.messages)
			}
			got := roleCounts(ctx.Messages)
			for r, n := range tt.roles {
				if got[r] != n {
					t.Errorf("role %s = %d, want %d (all: %v)", r, got[r], n, got)
				}
			}
			if ctx.ThinkingLevel != tt.thinking {
				t.Errorf("thinking = %q", ctx.ThinkingLevel)
			}
			if ctx.Model == nil || *ctx.Model != tt.model {
				t.Errorf("model = %+v, want %+v", ctx.Model, tt.model)
			}
			n := 0
			for _, e := range s.Entries() {
				if e.Type == session.TypeCompaction {
					n++
				}
			}
			if n != tt.compactions {
				t.Errorf("compactions = %d, want %d", n, tt.compactions)
			}
		})
	}
}

func TestPiFilesMigrate(t *testing.T) {
	for _, name := range []string{pifixtures.LargeSession, pifixtures.BeforeCompaction} {
		t.Run(name, func(t *testing.T) {
			orig, err := os.ReadFile(pifixtures.Path(t, name))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), name)
			if err := os.WriteFile(path, orig, 0o600); err != nil {
				t.Fatal(err)
			}
			before, err := session.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := before.Context("")
			if err != nil {
				t.Fatal(err)
			}
			ok, err := session.Migrate(path)
			if err != nil || !ok {
				t.Fatalf("Migrate = %v, %v", ok, err)
			}
			bak, err := os.ReadFile(path + ".bak")
			if err != nil || !bytes.Equal(bak, orig) {
				t.Fatalf("backup differs from the original (%v)", err)
			}
			after, err := session.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if after.FileVersion() != 3 || len(after.Warnings()) != 0 {
				t.Errorf("after migration: version %d, warnings %v", after.FileVersion(), after.Warnings())
			}
			// Same ids, same bytes as the in-memory migration.
			if !bytes.Equal(bytesOf(t, after), bytesOf(t, before)) {
				t.Error("migrated file differs from the in-memory migration")
			}
			got, err := after.Context("")
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Messages) != len(want.Messages) {
				t.Errorf("context after migration: %d messages, want %d", len(got.Messages), len(want.Messages))
			}
			again, err := session.Migrate(path)
			if err != nil || again {
				t.Errorf("second Migrate = %v, %v; want no rewrite", again, err)
			}
		})
	}
}
