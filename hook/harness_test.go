package hook

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
)

// memSession is a session tree in memory, read from testdata: enough of a
// session store to play the orchestration around the runner.
type memSession struct {
	t       testing.TB
	entries []*session.Entry
	byID    map[string]*session.Entry
	leaf    string
	seq     int
}

func loadSession(t testing.TB, file string) *memSession {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := &memSession{t: t, byID: map[string]*session.Entry{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		if n == 1 {
			continue // the header
		}
		e, err := session.NewEntry(sc.Bytes())
		if err != nil {
			t.Fatalf("%s:%d: %v", file, n, err)
		}
		e.Line = n
		s.entries = append(s.entries, e)
		s.byID[e.ID] = e
		s.leaf = e.ID
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}

// testSession is testdata/session.jsonl: u1 a1 r1 a2 r2 a3, then a branch
// b1 b2 from a3, then u2 a4 r4 a5 from a3 (the leaf).
func testSession(t testing.TB) *memSession {
	return loadSession(t, filepath.Join("testdata", "session.jsonl"))
}

// path returns the root→leaf path ending at id.
func (s *memSession) path(id string) []*session.Entry {
	var rev []*session.Entry
	for id != "" {
		e, ok := s.byID[id]
		if !ok {
			s.t.Fatalf("no entry %q", id)
		}
		rev = append(rev, e)
		id = e.ParentID
	}
	out := make([]*session.Entry, len(rev))
	for i, e := range rev {
		out[len(rev)-1-i] = e
	}
	return out
}

// append adds an entry as a child of the leaf and makes it the leaf.
func (s *memSession) append(p session.Payload) *session.Entry {
	s.seq++
	id := fmt.Sprintf("n%d", s.seq)
	line, err := session.EncodeEntry(id, s.leaf, session.FormatTime(time.Date(2026, 1, 5, 11, 0, s.seq, 0, time.UTC)), p)
	if err != nil {
		s.t.Fatal(err)
	}
	e, err := session.NewEntry(line)
	if err != nil {
		s.t.Fatal(err)
	}
	e.Line = len(s.entries) + 2
	s.entries = append(s.entries, e)
	s.byID[id] = e
	s.leaf = id
	return e
}

// testCompactionSettings cut testdata/session.jsonl at u2: the first turn
// is summarized, the second kept.
var testCompactionSettings = compaction.Settings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 130}

var errCompactionCancelled = errors.New("compaction cancelled")

type compactOptions struct {
	reason       Reason
	willRetry    bool
	instructions string
	keepRecent   int // 0: testCompactionSettings'
}

// compactFlow is the orchestration a compaction goes through, as package
// agent will do it: prepare, session_before_compact, the hook's summary or
// Prime's, append, session_compact; session_compact_failed when it stops.
func compactFlow(ctx context.Context, r *Runner, s *memSession, o compactOptions) (*session.Entry, *CompactDecision, error) {
	if o.reason == "" {
		o.reason = ReasonManual
	}
	path := s.path(s.leaf)
	set := testCompactionSettings
	if o.keepRecent > 0 {
		set.KeepRecentTokens = o.keepRecent
	}
	prep, err := compaction.Prepare(path, set)
	if err != nil {
		return nil, nil, err
	}
	d, err := r.BeforeCompact(ctx, &BeforeCompactEvent{
		Preparation: prep, BranchEntries: path, CustomInstructions: o.instructions,
		Reason: o.reason, WillRetry: o.willRetry,
	})
	failed := func(msg string, aborted, fromHook bool) {
		r.CompactFailed(context.WithoutCancel(ctx), &CompactFailedEvent{
			Reason: o.reason, ErrorMessage: msg, Aborted: aborted, WillRetry: o.willRetry, FromExtension: fromHook,
		})
	}
	if err != nil {
		failed(err.Error(), true, false)
		return nil, d, err
	}
	if d.Cancelled {
		failed("compaction cancelled by "+d.CancelledBy, true, true)
		return nil, d, errCompactionCancelled
	}
	payload := d.Compaction
	if payload == nil {
		res, err := compaction.Compact(ctx, d.Preparation, compaction.Options{CustomInstructions: o.instructions})
		if err != nil {
			failed(err.Error(), errors.Is(err, context.Canceled), false)
			return nil, d, err
		}
		payload = res.Entry()
	}
	e := s.append(payload)
	r.Compact(ctx, &CompactEvent{CompactionEntry: e, FromExtension: d.Compaction != nil, Reason: o.reason, WillRetry: o.willRetry})
	return e, d, nil
}

// treeFlow is the orchestration of a move to target: session_before_tree,
// the hook's summary or Prime's (offline), the move, session_tree.
func treeFlow(ctx context.Context, r *Runner, s *memSession, target string, summarize bool) (*session.Entry, *TreeDecision, error) {
	oldPath, targetPath := s.path(s.leaf), s.path(target)
	br := compaction.CollectBranch(oldPath, targetPath)
	d, err := r.BeforeTree(ctx, &BeforeTreeEvent{Preparation: TreePreparation{
		TargetID: target, OldLeafID: br.OldLeafID, CommonAncestorID: br.CommonAncestorID,
		EntriesToSummarize: br.Entries, UserWantsSummary: summarize,
	}})
	if err != nil {
		return nil, d, err
	}
	if d.Cancelled {
		return nil, d, nil
	}
	newLeaf, _, err := compaction.NewLeaf(s.byID[target])
	if err != nil {
		return nil, d, err
	}
	var payload *session.BranchSummaryEntry
	if d.Summary != nil {
		payload = d.Summary.Entry(br.OldLeafID)
	} else if summarize {
		bp, err := compaction.PrepareBranch(br.Entries, compaction.BranchBudget(llm.Model{}, 0))
		if err != nil {
			return nil, d, err
		}
		res, err := compaction.SummarizeBranch(ctx, bp, compaction.Options{
			CustomInstructions: d.Preparation.CustomInstructions, ReplaceInstructions: d.Preparation.ReplaceInstructions,
		})
		switch {
		case errors.Is(err, compaction.ErrNothingToSummarize):
		case err != nil:
			return nil, d, err
		default:
			payload = res.Entry(br.OldLeafID)
		}
	}
	s.leaf = newLeaf
	var e *session.Entry
	if payload != nil {
		e = s.append(payload)
	}
	r.Tree(ctx, &TreeEvent{NewLeafID: s.leaf, OldLeafID: br.OldLeafID, SummaryEntry: e, FromExtension: d.Summary != nil && e != nil})
	return e, d, nil
}

// behavior is what a test handler does; the same behaviour is built as
// in-process Hooks and as a command hook script.
type behavior struct {
	name string
	// compact is the answer to session_before_compact: "" (none),
	// "cancel", "custom" (a summary naming the handler, tokensBefore 999,
	// the preparation's firstKeptEntryId), "fail".
	compact string
	// tree is the answer to session_before_tree: "", "cancel", "summary".
	tree string
}

// logged is one event a test handler saw.
type logged struct {
	handler string
	event   map[string]any
}

func (l logged) typ() string { return l.event["type"].(string) }

// handlerKind builds test handlers of one kind.
type handlerKind struct {
	name string
	// runner returns a runner whose handlers behave as bs, in order, and a
	// function returning what they logged.
	runner func(t *testing.T, bs ...behavior) (*Runner, func() []logged)
}

var handlerKinds = []handlerKind{
	{name: "in-process", runner: goRunner},
	{name: "command", runner: commandRunner},
}

// goRunner builds in-process handlers.
func goRunner(t *testing.T, bs ...behavior) (*Runner, func() []logged) {
	var mu sync.Mutex
	var log []logged
	record := func(name string, ev json.MarshalerTo) {
		b, err := encodeEvent(ev)
		if err != nil {
			t.Errorf("encoding the event: %v", err)
			return
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Errorf("decoding the event: %v", err)
		}
		mu.Lock()
		log = append(log, logged{name, m})
		mu.Unlock()
	}
	var hs []*Hooks
	for _, b := range bs {
		hs = append(hs, &Hooks{
			Name: b.name,
			BeforeCompact: func(ctx context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error) {
				record(b.name, ev)
				switch b.compact {
				case "cancel":
					return &BeforeCompactResult{Cancel: true}, nil
				case "custom":
					return &BeforeCompactResult{Compaction: &CustomCompaction{
						Summary: "custom summary from " + b.name, FirstKeptEntryID: ev.Preparation.FirstKeptEntryID,
						TokensBefore: 999, Details: []byte(`{"by":"` + b.name + `"}`),
					}}, nil
				case "fail":
					return nil, errors.New("boom from " + b.name)
				}
				return nil, nil
			},
			Compact:       func(ctx context.Context, ev *CompactEvent) error { record(b.name, ev); return nil },
			CompactFailed: func(ctx context.Context, ev *CompactFailedEvent) error { record(b.name, ev); return nil },
			BeforeTree: func(ctx context.Context, ev *BeforeTreeEvent) (*BeforeTreeResult, error) {
				record(b.name, ev)
				switch b.tree {
				case "cancel":
					return &BeforeTreeResult{Cancel: true}, nil
				case "summary":
					return &BeforeTreeResult{Summary: &BranchSummary{Summary: "branch summary from " + b.name, Details: []byte(`{"by":"` + b.name + `"}`)}}, nil
				}
				return nil, nil
			},
			Tree: func(ctx context.Context, ev *TreeEvent) error { record(b.name, ev); return nil },
		})
	}
	return New(nil, Options{Hooks: Compose(hs...)}), func() []logged {
		mu.Lock()
		defer mu.Unlock()
		return append([]logged(nil), log...)
	}
}

// behaviorScript is the command hook version of a behavior: it logs
// "NAME<TAB>EVENT" to LOG and answers as ACTION says. The preparation's
// firstKeptEntryId is the first member of the preparation object.
const behaviorScript = `#!/bin/sh
# usage: behavior.sh NAME COMPACT-ACTION TREE-ACTION LOG
name=$1 compact=$2 tree=$3 log=$4
event=$(cat)
printf '%s\t%s\n' "$name" "$event" >> "$log"
case $event in
'{"type":"session_before_compact"'*)
	case $compact in
	cancel) echo '{"cancel": true}' ;;
	custom)
		first=$(printf '%s' "$event" | sed -n 's/^{"type":"session_before_compact","preparation":{"firstKeptEntryId":"\([^"]*\)".*/\1/p')
		printf '{"compaction": {"summary": "custom summary from %s", "firstKeptEntryId": "%s", "tokensBefore": 999, "details": {"by": "%s"}}}\n' "$name" "$first" "$name" ;;
	fail) echo "boom from $name" >&2; exit 3 ;;
	esac ;;
'{"type":"session_before_tree"'*)
	case $tree in
	cancel) echo '{"cancel": true}' ;;
	summary) printf '{"summary": {"summary": "branch summary from %s", "details": {"by": "%s"}}}\n' "$name" "$name" ;;
	esac ;;
esac
`

// commandRunner builds command hooks from a global settings file.
func commandRunner(t *testing.T, bs ...behavior) (*Runner, func() []logged) {
	dir := t.TempDir()
	script := writeScript(t, dir, "behavior.sh", behaviorScript)
	logFile := filepath.Join(dir, "events.log")
	var hooks []map[string]any
	for _, b := range bs {
		for _, ev := range Events() {
			hooks = append(hooks, map[string]any{"event": ev, "command": script, "args": []string{b.name, b.compact, b.tree, logFile}})
		}
	}
	s := loadSettings(t, map[string]any{"hooks": hooks}, nil)
	return New(s, Options{}), func() []logged {
		data, err := os.ReadFile(logFile)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		var out []logged
		for line := range strings.Lines(string(data)) {
			name, event, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
			if !ok {
				t.Fatalf("log line %q", line)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(event), &m); err != nil {
				t.Fatalf("a command hook received invalid JSON: %v\n%s", err, event)
			}
			out = append(out, logged{name, m})
		}
		return out
	}
}

// writeScript writes an executable file.
func writeScript(t testing.TB, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// loadSettings writes the global (and, when project is not nil, a project)
// settings file into temporary directories and loads them.
func loadSettings(t testing.TB, global, project map[string]any) *settings.Settings {
	t.Helper()
	agentDir := t.TempDir()
	writeJSON(t, filepath.Join(agentDir, "settings.json"), global)
	opts := settings.Options{AgentDir: agentDir}
	if project != nil {
		opts.ProjectDir = t.TempDir()
		writeJSON(t, filepath.Join(opts.ProjectDir, ".prime", "agent", "settings.json"), project)
	}
	s, err := settings.Load(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Problems(); len(p) > 0 {
		t.Fatalf("settings problems: %v", p)
	}
	return s
}

func writeJSON(t testing.TB, file string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sequence renders a log as "handler:event" items.
func sequence(log []logged) string {
	var b bytes.Buffer
	for i, l := range log {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(l.handler + ":" + l.typ())
	}
	return b.String()
}

// ofType returns the logged events of one type.
func ofType(log []logged, typ string) []logged {
	var out []logged
	for _, l := range log {
		if l.typ() == typ {
			out = append(out, l)
		}
	}
	return out
}
