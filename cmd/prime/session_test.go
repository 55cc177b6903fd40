package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/internal/pifixtures"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
	"github.com/prime-agent/prime/settings"
)

// runPrime runs one prime invocation in-process.
func runPrime(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &app{
		stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return env[k] },
	})
	return code, out.String(), errb.String()
}

func genFile(t *testing.T, o sessiongen.Options) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, sessiongen.Bytes(o), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSessionContextJSON(t *testing.T) {
	path := genFile(t, sessiongen.Options{Entries: 600, Seed: 2, ContextWindow: 40_000, KeepRecentTokens: 6_000, ReserveTokens: 4_000})
	code, out, errOut := runPrime(t, nil, "session", "context", path, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Entries         *int            `json:"entries"`
		LeafID          *string         `json:"leafId"`
		Messages        *int            `json:"messages"`
		Roles           map[string]int  `json:"roles"`
		EstimatedTokens *int            `json:"estimatedTokens"`
		UsageTokens     *int            `json:"usageTokens"`
		TrailingTokens  *int            `json:"trailingTokens"`
		ThinkingLevel   *string         `json:"thinkingLevel"`
		Model           *map[string]any `json:"model"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Entries == nil || got.LeafID == nil || got.Messages == nil || got.Roles == nil || got.EstimatedTokens == nil ||
		got.UsageTokens == nil || got.TrailingTokens == nil || got.ThinkingLevel == nil || got.Model == nil {
		t.Fatalf("missing fields in %s", out)
	}
	s, _ := session.Load(path)
	c, _ := s.Context("")
	est := session.EstimateContextTokens(c.Messages)
	if *got.Entries != 600 || *got.LeafID != s.LeafID() || *got.Messages != len(c.Messages) || *got.EstimatedTokens != est.Tokens ||
		*got.UsageTokens+*got.TrailingTokens != *got.EstimatedTokens || got.Roles["compactionSummary"] != 1 {
		t.Errorf("context JSON disagrees with the session package: %s", out[:min(len(out), 600)])
	}

	// --leaf picks another point; an unknown id is bad input.
	first := s.Entries()[0].ID
	code, out, _ = runPrime(t, nil, "session", "context", path, "--leaf", first, "--json")
	if code != 0 || !strings.Contains(out, `"messages": 1`) {
		t.Errorf("--leaf %s: exit %d, %s", first, code, out[:min(200, len(out))])
	}
	if code, _, errOut := runPrime(t, nil, "session", "context", path, "--leaf", "nope"); code != 2 || !strings.Contains(errOut, "nope") {
		t.Errorf("unknown leaf: exit %d, %q", code, errOut)
	}
	// Human output: one line per message, then the totals.
	code, out, _ = runPrime(t, nil, "session", "context", path)
	if code != 0 || strings.Count(out, "\n") < len(c.Messages) || !strings.Contains(out, "compactionSummary") {
		t.Errorf("text output: exit %d\n%s", code, out)
	}
}

func TestSessionInfoAndTree(t *testing.T) {
	path := genFile(t, sessiongen.Options{Entries: 400, Seed: 5, BranchRate: 0.2})
	code, out, _ := runPrime(t, nil, "session", "info", path, "--json")
	if code != 0 {
		t.Fatal(out)
	}
	var info infoJSON
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatal(err)
	}
	s, _ := session.Load(path)
	if info.Entries != 400 || info.Version != 3 || info.LeafID != s.LeafID() || info.Leaves != len(s.Leaves()) || info.Leaves < 2 || info.Types["message"] == 0 || info.Roles["assistant"] == 0 {
		t.Errorf("info: %+v", info)
	}
	code, out, _ = runPrime(t, nil, "session", "info", path)
	for _, want := range []string{"session:", "entries:   400", "messages by role:", "branches:"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("info text lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runPrime(t, nil, "session", "tree", path)
	if code != 0 || strings.Count(out, "\n") != 400 || !strings.Contains(out, "<- leaf") || !strings.Contains(out, "├─") {
		t.Errorf("tree: exit %d\n%s", code, out[:min(len(out), 2000)])
	}
	code, out, _ = runPrime(t, nil, "session", "tree", path, "--json")
	var tree treeJSON
	if err := json.Unmarshal([]byte(out), &tree); err != nil || code != 0 || len(tree.Nodes) != 400 || tree.LeafID != s.LeafID() {
		t.Fatalf("tree json: %v", err)
	}
	active := 0
	for _, n := range tree.Nodes {
		if n.Active {
			active++
		}
	}
	if active != len(s.LeafPath()) {
		t.Errorf("%d active nodes, path has %d", active, len(s.LeafPath()))
	}
}

func TestSessionCommandsBadInput(t *testing.T) {
	dir := t.TempDir()
	notSession := filepath.Join(dir, "notes.jsonl")
	os.WriteFile(notSession, []byte(`{"hello":1}`+"\n"), 0o600)
	for _, args := range [][]string{
		{"session", "info", notSession},
		{"session", "context", filepath.Join(dir, "missing.jsonl")},
		{"session", "migrate", notSession},
		{"session", "info"},
		{"session", "info", "a", "b"},
		{"session", "tree", notSession, "--bogus"},
		{"session", "fork", notSession},
	} {
		code, _, errOut := runPrime(t, nil, args...)
		if code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	if got, _ := os.ReadFile(notSession); string(got) != `{"hello":1}`+"\n" {
		t.Error("a command changed a file that is not a session")
	}
}

func TestSessionMigrateCommand(t *testing.T) {
	path := pifixtures.Path(t, pifixtures.LargeSession)
	data, _ := os.ReadFile(path)
	p := filepath.Join(t.TempDir(), "large.jsonl")
	os.WriteFile(p, data, 0o600)
	code, out, errOut := runPrime(t, nil, "session", "info", p)
	if code != 0 || !strings.Contains(out, "version:   1 (read as 3") {
		t.Fatalf("exit %d %s %s", code, out, errOut)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(after, data) {
		t.Fatal("a read-only command wrote the file")
	}
	code, out, _ = runPrime(t, nil, "session", "migrate", p)
	if code != 0 || !strings.Contains(out, "migrated") {
		t.Fatalf("migrate: %d %s", code, out)
	}
	if bak, _ := os.ReadFile(p + ".bak"); !bytes.Equal(bak, data) {
		t.Error("no backup")
	}
	code, out, _ = runPrime(t, nil, "session", "migrate", p)
	if code != 0 || !strings.Contains(out, "already version 3") {
		t.Errorf("second migrate: %s", out)
	}
	code, out, _ = runPrime(t, nil, "session", "context", p, "--json")
	if code != 0 || !strings.Contains(out, `"messages": 914`) {
		t.Errorf("context after migrate: %s", out[:min(300, len(out))])
	}
}

func TestSessionForkCommand(t *testing.T) {
	path := genFile(t, sessiongen.Options{Entries: 500, Seed: 5})
	before, _ := os.ReadFile(path)
	s, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	// Fork the first leaf that is not the file's own.
	var leaf *session.Entry
	for _, l := range s.Leaves() {
		if l.ID != s.LeafID() {
			leaf = l
			break
		}
	}
	if leaf == nil {
		t.Fatal("generated session has one leaf")
	}
	out := t.TempDir()
	code, stdout, errOut := runPrime(t, nil, "session", "fork", path, "--leaf", leaf.ID, "--dir", out, "--id", "side-quest", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got forkJSON
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(path)
	if got.ID != "side-quest" || got.ParentSession != abs || filepath.Dir(got.File) != out || !strings.HasSuffix(got.File, "_side-quest.jsonl") {
		t.Errorf("output %+v", got)
	}
	f, err := session.Load(got.File)
	if err != nil || len(f.Warnings()) != 0 || f.Len() != got.Entries || len(f.Leaves()) != 1 {
		t.Fatalf("forked file: %v %v", err, f.Warnings())
	}
	want, _ := s.Context(leaf.ID)
	have, _ := f.Context("")
	if len(have.Messages) != len(want.Messages) {
		t.Errorf("fork shows %d messages, the original %d at %s", len(have.Messages), len(want.Messages), leaf.ID)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Error("fork changed the original file")
	}

	// Human output, into the original's directory by default.
	code, stdout, _ = runPrime(t, nil, "session", "fork", path)
	if code != 0 || !strings.Contains(stdout, filepath.Dir(path)) {
		t.Errorf("exit %d: %s", code, stdout)
	}
	// A malformed line is reported, with its number, and left behind.
	damaged := filepath.Join(t.TempDir(), "damaged.jsonl")
	lines := strings.SplitAfter(string(before), "\n")
	os.WriteFile(damaged, []byte(lines[0]+lines[1]+"{not json\n"+strings.Join(lines[2:], "")), 0o600)
	code, stdout, errOut = runPrime(t, nil, "session", "fork", damaged, "--dir", out, "--json")
	var warned forkJSON
	if err := json.Unmarshal([]byte(stdout), &warned); code != 0 || err != nil || len(warned.Warnings) != 1 || warned.Warnings[0].Line != 3 {
		t.Errorf("fork of a damaged file: exit %d, %v, %+v %s", code, err, warned, errOut)
	}

	// A directory that cannot be made: the command fails and says where.
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o600)
	if code, _, errOut := runPrime(t, nil, "session", "fork", path, "--dir", filepath.Join(blocker, "sub")); code != 1 || !strings.Contains(errOut, blocker) {
		t.Errorf("fork into an impossible directory: exit %d, stderr %q", code, errOut)
	}
	for _, args := range [][]string{
		{"session", "fork", path, "--leaf", "nope"},
		{"session", "fork", path, "--id", "-bad id-"},
	} {
		if code, _, errOut := runPrime(t, nil, args...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

func TestSessionsCommand(t *testing.T) {
	agent := t.TempDir()
	cwd, _ := os.Getwd()
	dir := settings.SessionsDir(agent, cwd)
	os.MkdirAll(dir, 0o700)
	for i, seed := range []uint64{1, 2} {
		os.WriteFile(filepath.Join(dir, []string{"a.jsonl", "b.jsonl"}[i]), sessiongen.Bytes(sessiongen.Options{Entries: 50, Seed: seed}), 0o600)
	}
	env := map[string]string{settings.AgentDirEnv: agent}
	code, out, _ := runPrime(t, env, "sessions", "--json")
	var infos []session.Info
	if err := json.Unmarshal([]byte(out), &infos); err != nil || code != 0 || len(infos) != 2 {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
	if !infos[0].Modified.After(infos[1].Modified) && !infos[0].Modified.Equal(infos[1].Modified) {
		t.Error("not newest first")
	}
	code, out, _ = runPrime(t, nil, "sessions", "--dir", dir)
	if code != 0 || strings.Count(out, "\n") != 2 {
		t.Errorf("text: %s", out)
	}
	code, out, _ = runPrime(t, nil, "sessions", "--dir", filepath.Join(agent, "none"))
	if code != 0 || !strings.Contains(out, "no sessions") {
		t.Errorf("empty: %s", out)
	}
}

func TestDevCommands(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "gen.jsonl")
	code, _, errOut := runPrime(t, nil, "dev", "gen-session", "--entries", "300", "--seed", "9", "--out", p)
	if code != 0 {
		t.Fatal(errOut)
	}
	want := sessiongen.Bytes(sessiongen.Options{Entries: 300, Seed: 9})
	if got, _ := os.ReadFile(p); !bytes.Equal(got, want) {
		t.Error("gen-session output differs from sessiongen")
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	code, out, _ := runPrime(t, nil, "dev", "gen-session", "--entries", "20", "--seed", "9")
	if code != 0 || strings.Count(out, "\n") != 21 {
		t.Errorf("stdout: %d lines", strings.Count(out, "\n"))
	}
	code, out, _ = runPrime(t, nil, "dev", "bench", p, "--runs", "1", "--json")
	var b benchJSON
	if err := json.Unmarshal([]byte(out), &b); err != nil || code != 0 || b.Entries != 300 || b.OpenNs <= 0 || b.Messages == 0 {
		t.Errorf("bench: %v %s", err, out)
	}
	if code, _, _ := runPrime(t, nil, "dev", "gen-session", "--entries", "x"); code != 2 {
		t.Errorf("bad flag: exit %d", code)
	}
}

// TestBinary builds prime and runs the README's commands as a user would.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "prime")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	p := filepath.Join(t.TempDir(), "demo.jsonl")
	if out, err := exec.Command(bin, "dev", "gen-session", "--entries", "500", "--seed", "1", "--out", p).CombinedOutput(); err != nil {
		t.Fatalf("gen-session: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "session", "info", p).Output()
	if err != nil || !strings.Contains(string(out), "entries:   500") {
		t.Fatalf("session info: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "session", "info", filepath.Join(t.TempDir(), "missing.jsonl"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "missing.jsonl") {
		t.Errorf("missing file: %v, %q", err, stderr.String())
	}
}

// FuzzClip checks clip, which reads a text only as far as its preview,
// against what it must equal: the text's words joined by single spaces,
// cut to width-1 runes and an ellipsis when longer than width runes.
func FuzzClip(f *testing.F) {
	for _, s := range []string{"", "a", "  lead and  trail  ", "exactly ten", "exactly te n", "tab\tnew\nline", "ünïcödé wörds hère", "\u00a0nbsp\u2003em space\u0085"} {
		f.Add(s, uint8(10))
	}
	f.Fuzz(func(t *testing.T, s string, w uint8) {
		if !utf8.ValidString(s) {
			return
		}
		width := int(w%40) + 1
		want := strings.Join(strings.Fields(s), " ")
		if r := []rune(want); len(r) > width {
			want = string(r[:width-1]) + "…"
		}
		if got := clip(s, width); got != want {
			t.Fatalf("clip(%q, %d) = %q, want %q", s, width, got, want)
		}
	})
}
