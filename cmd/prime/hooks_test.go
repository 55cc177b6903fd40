package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/internal/mdblocks"
	"github.com/prime-agent/prime/internal/proctest"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/permission"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
)

// hookScript is the command hook the tests declare: it logs
// "NAME<TAB>PRIME_SESSION_FILE<TAB>EVENT" to LOG and answers as ACTION says.
// The preparation's firstKeptEntryId is the first member of the
// preparation object.
const hookScript = `#!/bin/sh
# usage: hook.sh NAME ACTION LOG
name=$1 action=$2 log=$3
event=$(cat)
printf '%s\t%s\t%s\n' "$name" "$PRIME_SESSION_FILE" "$event" >> "$log"
case $event in
'{"type":"session_before_compact"'*)
	case $action in
	cancel) echo '{"cancel": true}' ;;
	custom)
		first=$(printf '%s' "$event" | sed -n 's/^{"type":"session_before_compact","preparation":{"firstKeptEntryId":"\([^"]*\)".*/\1/p')
		printf '{"compaction": {"summary": "custom summary from %s", "firstKeptEntryId": "%s", "tokensBefore": 999, "details": {"by": "%s"}}}\n' "$name" "$first" "$name" ;;
	crash) echo "boom from $name" >&2; exit 3 ;;
	invalid) echo '{"compaction": {"summary": "from a hook that does not know the session", "firstKeptEntryId": "nowhere", "tokensBefore": 1}}' ;;
	hang) sleep 60 ;;
	esac ;;
'{"type":"session_before_tree"'*)
	case $action in
	cancel) echo '{"cancel": true}' ;;
	summary) printf '{"summary": {"summary": "branch summary from %s", "details": {"by": "%s"}}}\n' "$name" "$name" ;;
	label) echo '{"label": "from the hook"}' ;;
	esac ;;
esac
`

// hookSetup is an agent directory (PRIME_CODING_AGENT_DIR) and a project
// directory, each with a settings file, and the hook script they declare.
type hookSetup struct {
	agentDir, project string
	script, log       string
	env               map[string]string
}

// newHookSetup writes the directories, with a models.json for srv (if not
// nil).
func newHookSetup(t *testing.T, srv *llmtest.Server) *hookSetup {
	t.Helper()
	h := &hookSetup{agentDir: t.TempDir(), project: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(h.project, ".prime", "agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	if srv != nil {
		if err := writeFakeModels(filepath.Join(h.agentDir, "models.json"), srv.API(), srv.Model().BaseURL, 0); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	h.script, h.log = filepath.Join(dir, "hook.sh"), filepath.Join(dir, "events.log")
	if err := os.WriteFile(h.script, []byte(hookScript), 0o755); err != nil {
		t.Fatal(err)
	}
	h.env = map[string]string{settings.AgentDirEnv: h.agentDir}
	return h
}

// hook declares the script as NAME doing ACTION for each event.
func (h *hookSetup) hook(name, action string, events ...string) []map[string]any {
	var out []map[string]any
	for _, ev := range events {
		out = append(out, map[string]any{"event": ev, "command": h.script, "args": []string{name, action, h.log}})
	}
	return out
}

// global and project write the settings files; the project is trusted
// when trusted is set.
func (h *hookSetup) global(t *testing.T, trusted bool, hooks ...[]map[string]any) {
	t.Helper()
	doc := map[string]any{"hooks": flatten(hooks)}
	if trusted {
		doc["trustedProjects"] = []string{h.project}
	}
	writeSettingsFile(t, filepath.Join(h.agentDir, "settings.json"), doc)
}

func (h *hookSetup) projectHooks(t *testing.T, hooks ...[]map[string]any) {
	t.Helper()
	writeSettingsFile(t, filepath.Join(h.project, ".prime", "agent", "settings.json"), map[string]any{"hooks": flatten(hooks)})
}

func flatten(hs [][]map[string]any) []map[string]any {
	out := []map[string]any{}
	for _, h := range hs {
		out = append(out, h...)
	}
	return out
}

func writeSettingsFile(t *testing.T, path string, doc any) {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// run runs prime in-process in the project.
func (h *hookSetup) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runPrime(t, h.env, append(args, "--cwd", h.project)...)
}

// hookEvent is one event the script logged.
type hookEvent struct {
	name, sessionFile string
	ev                map[string]any
}

func (e hookEvent) String() string { return e.name + ":" + e.ev["type"].(string) }

// logged returns what the script logged, in order.
func (h *hookSetup) logged(t *testing.T) []hookEvent {
	t.Helper()
	data, err := os.ReadFile(h.log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []hookEvent
	for line := range strings.Lines(string(data)) {
		parts := strings.SplitN(strings.TrimSuffix(line, "\n"), "\t", 3)
		if len(parts) != 3 {
			t.Fatalf("log line %q", line)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(parts[2]), &m); err != nil {
			t.Fatalf("the hook received invalid JSON: %v\n%s", err, parts[2])
		}
		out = append(out, hookEvent{parts[0], parts[1], m})
	}
	return out
}

// sequence renders events as "name:type ...".
func sequence(evs []hookEvent) string {
	s := make([]string, len(evs))
	for i, e := range evs {
		s[i] = e.String()
	}
	return strings.Join(s, " ")
}

// hookSession copies the hook package's test session (u1 a1 r1 a2 r2 a3,
// a branch b1 b2 from a3, and u2 a4 r4 a5 from a3, the leaf) into a
// temporary file. Its model is anthropic/claude-sonnet-4-5, for which the
// tests set no key.
func hookSession(t *testing.T) (string, []byte) {
	t.Helper()
	return copySession(t, filepath.Join("..", "..", "hook", "testdata", "session.jsonl"))
}

// copySession copies the session file src into a temporary file and
// returns its path and contents.
func copySession(t *testing.T, src string) (string, []byte) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, data
}

// compactedEntry returns the payload of the file's leaf, which must be a
// compaction appended as its only new line.
func compactedEntry(t *testing.T, path string, before []byte) (*session.Entry, *session.CompactionEntry) {
	t.Helper()
	s, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	checkCompactedFile(t, path, before, s.LeafID())
	p, err := s.Leaf().Payload()
	if err != nil {
		t.Fatal(err)
	}
	return s.Leaf(), p.(*session.CompactionEntry)
}

// reportsOf returns the hookReports of a command's JSON output.
func reportsOf(t *testing.T, out string) []map[string]any {
	t.Helper()
	var j struct {
		HookReports *[]map[string]any `json:"hookReports"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil || j.HookReports == nil {
		t.Fatalf("no hookReports (%v) in %s", err, out)
	}
	return *j.HookReports
}

var compactEvents = []string{"session_before_compact", "session_compact", "session_compact_failed"}

// TestCompactHooks re-creates pi's compaction-extensions tests through "prime compact" with command hooks, and adds a hook
// that answers invalidly and one that hangs.
func TestCompactHooks(t *testing.T) {
	compact := func(t *testing.T, h *hookSetup, path string, extra ...string) (int, compactJSON, []map[string]any, string) {
		t.Helper()
		code, out, errOut := h.run(t, append([]string{"compact", path, "--offline", "--keep-recent-tokens", "130", "--json"}, extra...)...)
		var res compactJSON
		var reports []map[string]any
		if code == 0 {
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			reports = reportsOf(t, out)
		}
		return code, res, reports, errOut
	}

	t.Run("39 42 45 the events", func(t *testing.T) {
		h := newHookSetup(t, nil)
		h.global(t, false, h.hook("a", "none", compactEvents...))
		path, before := hookSession(t)
		code, res, reports, errOut := compact(t, h, path)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		evs := h.logged(t)
		if sequence(evs) != "a:session_before_compact a:session_compact" {
			t.Fatalf("events %s", sequence(evs))
		}
		prep := evs[0].ev["preparation"].(map[string]any)
		msgs, ok1 := prep["messagesToSummarize"].([]any)
		_, ok2 := prep["turnPrefixMessages"].([]any)
		_, ok3 := prep["isSplitTurn"].(bool)
		tokens, ok4 := prep["tokensBefore"].(float64)
		if !ok1 || !ok2 || !ok3 || !ok4 || len(msgs) != 6 || tokens <= 0 || prep["firstKeptEntryId"] != "u2" {
			t.Errorf("preparation %v", prep)
		}
		if entries, ok := evs[0].ev["branchEntries"].([]any); !ok || len(entries) != 10 || evs[0].ev["reason"] != "manual" || evs[0].ev["willRetry"] != false {
			t.Errorf("event %v", evs[0].ev)
		}
		if evs[0].sessionFile != path {
			t.Errorf("PRIME_SESSION_FILE = %q, want %q", evs[0].sessionFile, path)
		}
		// 42: the compaction in the event is the one in the file.
		entry, c := compactedEntry(t, path, before)
		after := evs[1].ev
		ce := after["compactionEntry"].(map[string]any)
		if after["fromExtension"] != false || ce["id"] != entry.ID || ce["id"] != res.EntryID || ce["summary"] != c.Summary || c.FromHook || res.FromHook {
			t.Errorf("session_compact %v; entry %s", after, entry.ID)
		}
		if len(reports) != 0 {
			t.Errorf("reports %v", reports)
		}
	})

	t.Run("40 cancel", func(t *testing.T) {
		h := newHookSetup(t, nil)
		h.global(t, false, h.hook("a", "cancel", compactEvents...))
		path, before := hookSession(t)
		code, _, _, errOut := compact(t, h, path)
		if code != 1 || !strings.Contains(errOut, `prime compact: compaction cancelled by hook "`+h.script+` a cancel `) || !strings.Contains(errOut, "nothing written") {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
		unchanged(t, path, before)
		evs := h.logged(t)
		if sequence(evs) != "a:session_before_compact a:session_compact_failed" {
			t.Fatalf("events %s", sequence(evs))
		}
		if f := evs[1].ev; f["aborted"] != true || f["fromExtension"] != true || !strings.Contains(f["errorMessage"].(string), "cancelled by hook") {
			t.Errorf("session_compact_failed %v", f)
		}
	})

	t.Run("41 46 custom compaction", func(t *testing.T) {
		h := newHookSetup(t, nil)
		h.global(t, false, h.hook("a", "custom", compactEvents...))
		path, before := hookSession(t)
		// No --offline: the session's model has no key, and a hook's
		// compaction needs none.
		code, out, errOut := h.run(t, "compact", path, "--keep-recent-tokens", "130", "--json", "--instructions", "keep it short")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var res compactJSON
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if !res.FromHook || !strings.HasPrefix(res.Hook, h.script+" a custom") || res.Summary != "custom summary from a" || res.TokensBefore != 999 ||
			res.Model != nil || res.Deterministic || !strings.Contains(string(res.Details), `"by": "a"`) || res.CustomInstructions != "keep it short" {
			t.Errorf("result %s", out)
		}
		_, c := compactedEntry(t, path, before)
		if !c.FromHook || c.Summary != "custom summary from a" || c.TokensBefore != 999 || c.FirstKeptEntryID != "u2" || c.CustomInstructions != "keep it short" {
			t.Errorf("entry %+v", c)
		}
		evs := h.logged(t)
		if sequence(evs) != "a:session_before_compact a:session_compact" || evs[1].ev["fromExtension"] != true {
			t.Errorf("events %s %v", sequence(evs), evs)
		}
	})

	t.Run("43 a crashing hook", func(t *testing.T) {
		h := newHookSetup(t, nil)
		h.global(t, false, h.hook("a", "crash", compactEvents...))
		path, before := hookSession(t)
		code, res, reports, errOut := compact(t, h, path)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if res.FromHook || len(reports) != 1 {
			t.Fatalf("result %+v", res)
		}
		if r := reports[0]; r["kind"] != "failed" || r["exitCode"] != 3.0 || r["output"] != "boom from a" || r["event"] != "session_before_compact" || r["key"] != "hooks[0]" {
			t.Errorf("report %v", r)
		}
		if !strings.Contains(errOut, `session_before_compact: hook "`+h.script+` a crash `) || !strings.Contains(errOut, "exited with status 3\n    boom from a") {
			t.Errorf("stderr %q", errOut)
		}
		if _, c := compactedEntry(t, path, before); c.FromHook {
			t.Error("fromHook")
		}
	})

	t.Run("44 two hooks in order", func(t *testing.T) {
		h := newHookSetup(t, nil)
		h.global(t, true, h.hook("a", "none", compactEvents...))
		h.projectHooks(t, h.hook("b", "none", compactEvents...))
		path, before := hookSession(t)
		if code, _, _, errOut := compact(t, h, path); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if got := sequence(h.logged(t)); got != "a:session_before_compact b:session_before_compact a:session_compact b:session_compact" {
			t.Errorf("events %s", got)
		}
		compactedEntry(t, path, before)
	})

	t.Run("invalid custom result", func(t *testing.T) {
		h := newHookSetup(t, nil)
		h.global(t, false, h.hook("a", "invalid", compactEvents...))
		path, before := hookSession(t)
		code, res, reports, errOut := compact(t, h, path)
		if code != 0 || res.FromHook || len(reports) != 1 || reports[0]["kind"] != "invalid result" {
			t.Fatalf("exit %d %s: %v", code, errOut, reports)
		}
		if !strings.Contains(errOut, `firstKeptEntryId "nowhere" is not an entry on the current path`) {
			t.Errorf("stderr %q", errOut)
		}
		if _, c := compactedEntry(t, path, before); c.FromHook || strings.Contains(c.Summary, "does not know") {
			t.Errorf("entry %+v", c)
		}
	})

	t.Run("a hook past its timeout", func(t *testing.T) {
		h := newHookSetup(t, nil)
		decl := h.hook("a", "hang", "session_before_compact")
		decl[0]["timeoutMs"] = 300
		h.global(t, false, decl)
		path, before := hookSession(t)
		code, res, reports, errOut := compact(t, h, path)
		if code != 0 || res.FromHook || len(reports) != 1 || reports[0]["kind"] != "timed out" {
			t.Fatalf("exit %d %s: %v", code, errOut, reports)
		}
		if !strings.Contains(errOut, "timed out after 300ms and was killed with its process group") {
			t.Errorf("stderr %q", errOut)
		}
		compactedEntry(t, path, before)
	})
}

// TestHookTrust: a project's hooks are skipped, with the reason and the
// command that changes it, until "prime trust"; then they run.
func TestHookTrust(t *testing.T) {
	h := newHookSetup(t, nil)
	h.global(t, false)
	h.projectHooks(t, h.hook("p", "none", "session_before_compact", "session_compact"), h.hook("p", "none", "session_tree"))
	path, before := hookSession(t)
	code, out, errOut := h.run(t, "compact", path, "--offline", "--keep-recent-tokens", "130", "--json")
	want := fmt.Sprintf("prime compact: skipped 2 hooks from %s: project not trusted (run 'prime trust %s')\n",
		filepath.Join(h.project, ".prime", "agent", "settings.json"), h.project)
	if code != 0 || !strings.Contains(errOut, want) || h.logged(t) != nil {
		t.Fatalf("exit %d, stderr %q, want %q; events %s", code, errOut, want, sequence(h.logged(t)))
	}
	if reps := reportsOf(t, out); len(reps) != 2 || reps[0]["kind"] != "skipped" || reps[0]["skip"] != "untrusted" || reps[1]["event"] != "session_compact" {
		t.Errorf("reports %v", reps)
	}
	compactedEntry(t, path, before)

	if code, _, errOut := runPrime(t, h.env, "trust", h.project); code != 0 {
		t.Fatalf("prime trust: exit %d %s", code, errOut)
	}
	path, _ = hookSession(t)
	code, _, errOut = h.run(t, "compact", path, "--offline", "--keep-recent-tokens", "130")
	if code != 0 || strings.Contains(errOut, "skipped") || sequence(h.logged(t)) != "p:session_before_compact p:session_compact" {
		t.Errorf("trusted: exit %d, stderr %q, events %s", code, errOut, sequence(h.logged(t)))
	}
}

// TestNoHooks: --no-hooks runs no command hook and says so; a dry run runs
// none either, and names those a real run would call.
func TestNoHooks(t *testing.T) {
	h := newHookSetup(t, nil)
	h.global(t, false, h.hook("a", "cancel", "session_before_compact"))
	path, before := hookSession(t)
	code, out, errOut := h.run(t, "compact", path, "--dry-run", "--offline", "--keep-recent-tokens", "130")
	if want := `  hooks:            not run in a dry run; a real run calls session_before_compact: "` + h.script + " a cancel " + h.log + `"`; code != 0 || !strings.Contains(out, want) {
		t.Errorf("dry run: exit %d %s\n%s\nwant %q", code, errOut, out, want)
	}
	unchanged(t, path, before)
	code, _, errOut = h.run(t, "compact", path, "--no-hooks", "--offline", "--keep-recent-tokens", "130")
	want := "prime compact: skipped 1 hook from " + filepath.Join(h.agentDir, "settings.json") + ": hooks are disabled (--no-hooks)\n"
	if code != 0 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stderr %q, want %q", code, errOut, want)
	}
	if h.logged(t) != nil {
		t.Errorf("a hook ran: %s", sequence(h.logged(t)))
	}
	compactedEntry(t, path, before)

	// The help says what --dry-run and --no-hooks do.
	for _, name := range []string{"compact", "branch"} {
		code, out, _ := runPrime(t, nil, name, "--help")
		for _, want := range []string{"Usage: prime " + name + " FILE", "decide and report; ask no model, run no hooks, write nothing", "-no-hooks\n"} {
			if code != 0 || !strings.Contains(out, want) {
				t.Errorf("prime %s --help: exit %d, no %q in\n%s", name, code, want, out)
			}
		}
	}
}

// TestBranchHooks: session_before_tree through "prime branch": a cancel
// changes nothing (pi's #178), a summary is used only when one was asked
// for, and a label a hook gives is appended.
func TestBranchHooks(t *testing.T) {
	treeEvents := []string{"session_before_tree", "session_tree"}

	t.Run("178 cancel", func(t *testing.T) {
		h := newHookSetup(t, nil)
		h.global(t, false, h.hook("a", "cancel", treeEvents...))
		path, before := hookSession(t)
		code, _, errOut := h.run(t, "branch", path, "--to", "b2")
		if code != 1 || !strings.Contains(errOut, `prime branch: navigation cancelled by hook "`+h.script) {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
		code, _, errOut = h.run(t, "branch", path, "--to", "b2", "--summarize", "--offline", "--json")
		if code != 1 || !strings.Contains(errOut, `prime branch: branch summary cancelled by hook "`+h.script) {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
		if got := sequence(h.logged(t)); got != "a:session_before_tree a:session_before_tree" {
			t.Errorf("events %s", got)
		}
		unchanged(t, path, before)
	})

	t.Run("a hook's summary", func(t *testing.T) {
		h := newHookSetup(t, nil)
		h.global(t, false, h.hook("a", "summary", treeEvents...))
		path, before := hookSession(t)
		// Not asked for: fired, ignored, nothing written.
		code, out, errOut := h.run(t, "branch", path, "--to", "b2", "--json")
		if code != 0 || !strings.Contains(out, `"written": false`) || !strings.Contains(out, `"fromHook": false`) {
			t.Fatalf("exit %d %s: %s", code, errOut, out)
		}
		evs := h.logged(t)
		if sequence(evs) != "a:session_before_tree a:session_tree" || evs[0].ev["preparation"].(map[string]any)["userWantsSummary"] != false {
			t.Fatalf("events %v", evs)
		}
		unchanged(t, path, before)

		// Asked for, without a key for the session's model: the hook's
		// summary is stored.
		code, out, errOut = h.run(t, "branch", path, "--to", "b2", "--summarize", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var res branchJSON
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if !res.Written || !res.FromHook || !strings.HasPrefix(res.Hook, h.script+" a summary") || res.Summary == nil || *res.Summary != "branch summary from a" ||
			res.LeafID == nil || *res.LeafID != *res.SummaryEntryID {
			t.Fatalf("result %s", out)
		}
		s, _ := session.Load(path)
		p, _ := s.Leaf().Payload()
		b := p.(*session.BranchSummaryEntry)
		if s.LeafID() != *res.SummaryEntryID || s.Leaf().ParentID != "b2" || !b.FromHook || b.FromID != "a5" || string(b.Details) != `{"by":"a"}` {
			t.Errorf("stored %+v under %s", b, s.Leaf().ParentID)
		}
		evs = h.logged(t)[2:]
		if sequence(evs) != "a:session_before_tree a:session_tree" || evs[1].ev["fromExtension"] != true ||
			evs[1].ev["summaryEntry"].(map[string]any)["id"] != *res.SummaryEntryID || evs[1].ev["newLeafId"] != *res.SummaryEntryID {
			t.Errorf("events %v", evs)
		}
	})

	t.Run("a hook's label", func(t *testing.T) {
		h := newHookSetup(t, nil)
		h.global(t, false, h.hook("a", "label", "session_before_tree"))
		path, before := hookSession(t)
		code, out, errOut := h.run(t, "branch", path, "--to", "b2")
		if code != 0 || !strings.Contains(out, `label "from the hook" appended for b2`) {
			t.Fatalf("exit %d %s\n%s", code, errOut, out)
		}
		s, _ := session.Load(path)
		if s.Label("b2") != "from the hook" || s.Leaf().ParentID != "b2" || s.Leaf().Type != session.TypeLabel {
			t.Errorf("leaf %s %s, label %q", s.LeafID(), s.Leaf().Type, s.Label("b2"))
		}
		after, _ := os.ReadFile(path)
		if !bytes.HasPrefix(after, before) || bytes.Count(after[len(before):], []byte("\n")) != 1 {
			t.Error("not exactly one line appended")
		}
	})
}

// binDir holds the binary the tests build; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	// In-process runs of prime (runPrime) confine commands with this test
	// binary as the trampoline, as the real binary's main does.
	permission.Trampoline()
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// primeBinary builds the prime binary once for the tests that run it.
var primeBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "prime-test-")
	if err != nil {
		return "", err
	}
	binDir = dir
	bin := filepath.Join(dir, "prime")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("build: %v\n%s", err, out)
	}
	return bin, nil
})

func buildPrime(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin, err := primeBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestHooksBinary runs the built binary: the example hooks of docs/hooks.md
// exactly as documented (the user's requests, offline and with a model that
// must not be asked; another model over a fake OpenAI-compatible server,
// sent Prime's own conversation text), and Ctrl-C while a hook runs.
func TestHooksBinary(t *testing.T) {
	bin := buildPrime(t)
	command := func(h *hookSetup, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = h.project
		cmd.Env = append(os.Environ(), settings.AgentDirEnv+"="+h.agentDir)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		return cmd, &out, &errOut
	}

	t.Run("docs example", func(t *testing.T) {
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("python3 is not installed; the documented example is a Python script")
		}
		blocks, err := mdblocks.Tested(filepath.Join("..", "..", "docs", "hooks.md"))
		if err != nil {
			t.Fatal(err)
		}
		srv := llmtest.NewAnthropic(t)
		srv.Handle(summaryReply)
		h := newHookSetup(t, srv)
		// As the documentation says: the script in hooks/ of the agent
		// directory, made executable, and the settings shown.
		if err := os.MkdirAll(filepath.Join(h.agentDir, "hooks"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(h.agentDir, "hooks", "user-requests.py"), []byte(blocks["user-requests.py"]), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(h.agentDir, "settings.json"), []byte(blocks["settings.json"]), 0o644); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(blocks["summary"], "\n")
		for _, mode := range [][]string{{"--offline"}, {"--model", "fake/fake-model"}} {
			path, before := hookSession(t)
			cmd, out, errOut := command(h, append([]string{"compact", path, "--keep-recent-tokens", "100"}, mode...)...)
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v: %v\n%s", mode, err, errOut)
			}
			_, c := compactedEntry(t, path, before)
			if c.Summary != want || !c.FromHook || string(c.Details) != `{"summarizer":"user-requests.py","requests":2}` {
				t.Errorf("%v: stored %+v\nwant the summary docs/hooks.md shows:\n%s", mode, c, want)
			}
			if !strings.Contains(out.String(), `summary by hook "./hooks/user-requests.py"`) || strings.Contains(errOut.String(), "settings hooks[") {
				t.Errorf("%v: stdout %q, stderr %q", mode, out, errOut)
			}
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("the model was asked %d times; the hook wrote the summary", n)
		}
	})

	t.Run("docs example: another model", func(t *testing.T) {
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("python3 is not installed; the documented example is a Python script")
		}
		blocks, err := mdblocks.Tested(filepath.Join("..", "..", "docs", "hooks.md"))
		if err != nil {
			t.Fatal(err)
		}
		// Prime's own summarizer, which must not be asked while the hook
		// writes the summary, and the other model the hook asks.
		prime := llmtest.NewOpenAI(t)
		prime.Handle(summaryReply)
		other := llmtest.NewOpenAI(t, llmtest.FlavorOllama)
		const historyAnswer, prefixAnswer = "## Goal\nFix coupon and tax order.", "## Turn\nA regression test was asked for and written."
		other.Handle(func(r *llmtest.Request) llmtest.Reply {
			if strings.Contains(r.LastUserText(), "first part of a turn") {
				return llmtest.Stream(llmtest.Text(prefixAnswer))
			}
			return llmtest.Stream(llmtest.Text(historyAnswer))
		})
		h := newHookSetup(t, prime)
		if err := os.MkdirAll(filepath.Join(h.agentDir, "hooks"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(h.agentDir, "hooks", "other-model.py"), []byte(blocks["other-model.py"]), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(h.agentDir, "settings.json"), []byte(blocks["other-model-settings.json"]), 0o644); err != nil {
			t.Fatal(err)
		}
		compact := func(path string, extra ...string) *bytes.Buffer {
			t.Helper()
			cmd, out, errOut := command(h, append([]string{"compact", path, "--model", "fake/fake-model", "--keep-recent-tokens", "1"}, extra...)...)
			cmd.Env = append(cmd.Env, "SUMMARY_BASE_URL="+other.Model().BaseURL, "SUMMARY_MODEL=small-model", "SUMMARY_API_KEY=other-key")
			if err := cmd.Run(); err != nil {
				t.Fatalf("prime %v: %v\n%s", extra, err, errOut)
			}
			return out
		}

		// Prime's own compaction of the session, for the texts and the
		// file lists to compare with.
		own, ownBefore := transcriptSession(t)
		compact(own, "--no-hooks")
		_, ownEntry := compactedEntry(t, own, ownBefore)
		primeReqs := prime.Requests()
		if len(primeReqs) != 2 {
			t.Fatalf("Prime's summarizer got %d requests, want 2", len(primeReqs))
		}
		lists := ownEntry.Summary[strings.Index(ownEntry.Summary, "\n\n<modified-files>"):]

		path, before := transcriptSession(t)
		out := compact(path)
		_, c := compactedEntry(t, path, before)
		if n := len(prime.Requests()); n != 2 {
			t.Errorf("Prime's summarizer was asked %d more times; the hook wrote the summary", n-2)
		}
		reqs := other.Requests()
		if len(reqs) != 2 {
			t.Fatalf("the other model got %d requests, want the history's and the turn prefix's", len(reqs))
		}
		for i, r := range reqs {
			// The conversation it was sent is Prime's, byte for byte.
			if got, want := llmtest.Conversation(t, r), llmtest.Conversation(t, primeReqs[i]); got != want {
				t.Errorf("request %d: the hook sent\n%s\n\nPrime sent\n%s", i, got, want)
			}
			if r.Model() != "small-model" || r.Header.Get("Authorization") != "Bearer other-key" || r.JSON["stream"] != nil {
				t.Errorf("request %d: model %q, auth %q, stream %v", i, r.Model(), r.Header.Get("Authorization"), r.JSON["stream"])
			}
		}
		want := historyAnswer + "\n\n## Earlier in this turn\n\n" + prefixAnswer + lists
		if !c.FromHook || c.Summary != want || lists != "\n\n<modified-files>\nshop/price.go\nshop/price_regress_test.go\n</modified-files>" ||
			string(c.Details) != `{"readFiles":[],"modifiedFiles":["shop/price.go","shop/price_regress_test.go"],"summarizer":"small-model"}` {
			t.Errorf("stored %+v (details %s)\nwant the summary\n%s", c, c.Details, want)
		}
		if !strings.Contains(out.String(), `summary by hook "./hooks/other-model.py"`) {
			t.Errorf("stdout %q", out)
		}

		// The next compaction updates that summary: the hook sends it as the
		// previous summary, without its file lists, and lists the files of
		// both (Prime does not carry a hook's lists; the hook does).
		s, err := session.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []session.Message{userMessage("Now read the README."),
			&llm.AssistantMessage{Content: []llm.Content{readCall("call_9", "README.md")}, StopReason: llm.StopReasonToolUse, Timestamp: 9},
			&llm.ToolResultMessage{ToolCallID: "call_9", ToolName: "read", Content: []llm.Content{llm.Text{Text: "# Shop"}}, Timestamp: 10},
			&llm.AssistantMessage{Content: []llm.Content{llm.Text{Text: "It says: Shop."}}, StopReason: llm.StopReasonStop, Timestamp: 11},
		} {
			if _, err := s.Append(&session.MessageEntry{Message: m}); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		before, _ = os.ReadFile(path)
		compact(path)
		_, c2 := compactedEntry(t, path, before)
		reqs = other.Requests()
		if len(reqs) != 4 {
			t.Fatalf("the other model got %d requests, want 4", len(reqs))
		}
		if text := reqs[2].LastUserText(); !strings.Contains(text, "<previous-summary>\n"+strings.TrimSuffix(c.Summary, lists)+"\n</previous-summary>\n\nThe conversation above continues") {
			t.Errorf("the update request:\n%s", text)
		}
		if !strings.HasSuffix(c2.Summary, "\n\n<read-files>\nREADME.md\n</read-files>\n\n<modified-files>\nshop/price.go\nshop/price_regress_test.go\n</modified-files>") {
			t.Errorf("second summary:\n%s\nrequests: %s\n---\n%s", c2.Summary, reqs[2].LastUserText(), reqs[3].LastUserText())
		}
	})

	t.Run("Ctrl-C while a hook runs", func(t *testing.T) {
		h := newHookSetup(t, nil)
		pidFile := filepath.Join(t.TempDir(), "child.pid")
		script := filepath.Join(t.TempDir(), "slow.sh")
		if err := os.WriteFile(script, []byte("#!/bin/sh\ncat > /dev/null\nsleep 300 &\necho $! > \""+pidFile+"\"\nwait\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		h.global(t, false, []map[string]any{{"event": "session_before_compact", "command": script}})
		path, before := hookSession(t)
		cmd, _, errOut := command(h, "compact", path, "--offline", "--keep-recent-tokens", "130")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		child := readChildPID(t, pidFile, cmd)
		cmd.Process.Signal(syscall.SIGINT)
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted || !strings.Contains(errOut.String(), "prime compact: compaction cancelled, nothing written") {
			t.Errorf("%v, stderr %q", err, errOut)
		}
		unchanged(t, path, before)
		// The hook's process group died with it: its child is gone.
		proctest.WaitGone(t, child)
	})
}

// readChildPID waits for the hook to write its child's process id.
func readChildPID(t *testing.T, file string, cmd *exec.Cmd) int {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(file)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	cmd.Process.Kill()
	t.Fatalf("the hook wrote no pid to %s", file)
	return 0
}
