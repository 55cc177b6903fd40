package session_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/session"
)

const (
	tolHeader = `{"type":"session","version":3,"id":"tol","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp"}`
	tolUser   = `{"type":"message","id":"u1","parentId":null,"timestamp":"2025-01-01T00:00:00.500Z","message":{"role":"user","content":"hello","timestamp":1}}`
)

// TestBadFieldReadAsPi: an entry with one field of the wrong type is read
// as pi reads it (coerced, with a warning naming the line and the field),
// or, when it cannot be, left out of the context with a warning; the
// session's context never fails because of it.
func TestBadFieldReadAsPi(t *testing.T) {
	tests := []struct {
		name, line string
		want       []string // the context's messages as texts lists them
		warn       string   // in the one warning, about line 3
	}{
		{"summary is a number",
			`{"type":"compaction","id":"c1","parentId":"u1","timestamp":"2025-01-01T00:00:01.000Z","summary":42,"firstKeptEntryId":"u1","tokensBefore":10}`,
			[]string{"compactionSummary:42", "user:hello"}, `entry c1: /summary: 42 is not text; read as "42"`},
		{"tokensBefore is a string",
			`{"type":"compaction","id":"c1","parentId":"u1","timestamp":"2025-01-01T00:00:01.000Z","summary":"s","firstKeptEntryId":"u1","tokensBefore":"10"}`,
			[]string{"compactionSummary:s", "user:hello"}, `/tokensBefore: "10" is not a number; read as 10`},
		{"a text block's text is a number",
			`{"type":"message","id":"c1","parentId":"u1","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":7}],"timestamp":1}}`,
			[]string{"user:hello", "user:7"}, `/message/content/0/text: 7 is not text; read as "7"`},
		{"a usage count is a string",
			`{"type":"message","id":"c1","parentId":"u1","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"api":"anthropic-messages","provider":"a","model":"m","usage":{"input":"5","output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":6},"stopReason":"stop","timestamp":1}}`,
			[]string{"user:hello", "assistant:hi"}, `/message/usage/input: "5" is not a number; read as 5`},
		{"fromHook is a string",
			`{"type":"branch_summary","id":"c1","parentId":"u1","timestamp":"2025-01-01T00:00:01.000Z","fromId":"u1","summary":"went back","fromHook":"yes"}`,
			[]string{"user:hello", "branchSummary:went back"}, `/fromHook: "yes" is not true or false; read as true`},
		{"a summary that is an object is left out",
			`{"type":"branch_summary","id":"c1","parentId":"u1","timestamp":"2025-01-01T00:00:01.000Z","fromId":"u1","summary":{"x":1}}`,
			[]string{"user:hello"}, `/summary: {"x":1} is of the wrong kind; left out`},
		{"content that cannot be read",
			`{"type":"message","id":"c1","parentId":"u1","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":{"x":1},"timestamp":1}}`,
			[]string{"user:hello"}, `entry c1 cannot be read, even as pi reads it (user message: `},
		{"a thinking level that is a number",
			`{"type":"thinking_level_change","id":"c1","parentId":"u1","timestamp":"2025-01-01T00:00:01.000Z","thinkingLevel":3}`,
			[]string{"user:hello"}, `/thinkingLevel: 3 is not text; read as "3"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(path, []byte(tolHeader+"\n"+tolUser+"\n"+tt.line+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := session.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			ctx, err := s.Context("")
			if err != nil {
				t.Fatalf("context: %v", err)
			}
			if got := strings.Join(texts(ctx.Messages), " | "); got != strings.Join(tt.want, " | ") {
				t.Errorf("context %q, want %q", got, strings.Join(tt.want, " | "))
			}
			ws := s.Warnings()
			if len(ws) != 1 || ws[0].Line != 3 || !strings.Contains(ws[0].Msg, tt.warn) {
				t.Errorf("warnings %v, want one about line 3 containing %q", ws, tt.warn)
			}
			// Check finds the same; Repair writes a file that needs no
			// coercion, keeping the original.
			cw, err := session.Check(path)
			if err != nil || len(cw) != 1 {
				t.Fatalf("Check = %v, %v", cw, err)
			}
			res, err := session.Repair(path)
			if err != nil {
				t.Fatal(err)
			}
			if ws[0].Kind == session.WarnUnreadable {
				if len(res.Fixes) != 0 || len(res.Left) != 1 {
					t.Errorf("repairing an unreadable entry: %+v", res)
				}
				return
			}
			if len(res.Fixes) != 1 || res.Fixes[0].Line != 3 || res.Backup != path+".bak" {
				t.Fatalf("Repair = %+v", res)
			}
			if b, _ := os.ReadFile(res.Backup); !bytes.Contains(b, []byte(tt.line)) {
				t.Error("the backup is not the original")
			}
			if cw, err := session.Check(path); err != nil || len(cw) != 0 {
				t.Errorf("after repair: %v %v", cw, err)
			}
			r, _ := session.Load(path)
			rctx, _ := r.Context("")
			if got := strings.Join(texts(rctx.Messages), " | "); got != strings.Join(tt.want, " | ") {
				t.Errorf("repaired context %q, want %q", got, strings.Join(tt.want, " | "))
			}
		})
	}
}

// TestRepairDropsUnreadableLines: malformed and torn lines, which every
// reader skips, are dropped; a whole last line without its newline gets
// one; a sound file is left alone, with no backup.
func TestRepairDropsUnreadableLines(t *testing.T) {
	dir := t.TempDir()
	sound := filepath.Join(dir, "sound.jsonl")
	if err := os.WriteFile(sound, []byte(tolHeader+"\n"+tolUser+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if res, err := session.Repair(sound); err != nil || len(res.Fixes) != 0 || res.Backup != "" {
		t.Fatalf("a sound file: %+v %v", res, err)
	}
	if _, err := os.Stat(sound + ".bak"); err == nil {
		t.Error("a backup of a sound file")
	}
	bad := filepath.Join(dir, "bad.jsonl")
	a := `{"type":"message","id":"a1","parentId":"u1","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"again","timestamp":2}}`
	if err := os.WriteFile(bad, []byte(tolHeader+"\n"+tolUser+"\n{not json\n"+a+"\n"+`{"type":"message","id":"x`), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := session.Repair(bad)
	if err != nil {
		t.Fatal(err)
	}
	var fixes []string
	for _, f := range res.Fixes {
		fixes = append(fixes, f.String())
	}
	got := strings.Join(fixes, "\n")
	if len(res.Fixes) != 2 || !strings.Contains(got, "line 3: dropped: malformed JSON") || !strings.Contains(got, "line 5: dropped: malformed JSON") {
		t.Errorf("fixes:\n%s", got)
	}
	b, _ := os.ReadFile(bad)
	if want := tolHeader + "\n" + tolUser + "\n" + a + "\n"; string(b) != want {
		t.Errorf("repaired file:\n%s\nwant\n%s", b, want)
	}
	if ws, _ := session.Check(bad); len(ws) != 0 {
		t.Errorf("after repair: %v", ws)
	}
}

// TestSecondHeaderWarned: a session header in the middle of a file (two
// files joined) is warned about, naming its line, and the model never sees
// it.
func TestSecondHeaderWarned(t *testing.T) {
	data := tolHeader + "\n" + tolUser + "\n" +
		`{"type":"session","version":3,"id":"other","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/x"}` + "\n" +
		`{"type":"message","id":"u2","parentId":"u1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":"more","timestamp":2}}` + "\n"
	path := filepath.Join(t.TempDir(), "joined.jsonl")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, open := range []func(string) (*session.Session, error){session.Load, session.Open} {
		s, err := open(path)
		if err != nil {
			t.Fatal(err)
		}
		ws := s.Warnings()
		if len(ws) != 1 || ws[0].Kind != session.WarnSecondHeader || ws[0].Line != 3 || !strings.Contains(ws[0].Msg, "a second session header (id other)") {
			t.Errorf("warnings %v", ws)
		}
		ctx, err := s.Context("")
		if err != nil || strings.Join(texts(ctx.Messages), " ") != "user:hello user:more" {
			t.Errorf("context %v %v", texts(ctx.Messages), err)
		}
		s.Close()
	}
}
