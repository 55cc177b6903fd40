package hook

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiontest"
)

// deep compares everything, unexported fields included (an entry's bytes).
// deep compares every field, unexported ones included, except that entries
// compare by what they hold (their common fields, line and bytes), not by
// their decode caches.
var deep = cmp.Options{
	cmp.Exporter(func(reflect.Type) bool { return true }),
	cmp.Transformer("entry", func(e *session.Entry) *entryView {
		if e == nil {
			return nil
		}
		line, err := e.Raw()
		if err != nil {
			line = []byte("unreadable: " + err.Error())
		}
		return &entryView{e.Type, e.ID, e.ParentID, e.Timestamp, e.Line, string(line)}
	}),
}

// entryView is what a session.Entry holds, for comparisons.
type entryView struct {
	Type, ID, ParentID, Timestamp string
	Line                          int
	Raw                           string
}

// beforeCompactEvent prepares a compaction of the test session's leaf.
func beforeCompactEvent(t *testing.T, s *memSession, keepRecent int) *BeforeCompactEvent {
	t.Helper()
	path := s.path(s.leaf)
	set := testCompactionSettings
	if keepRecent > 0 {
		set.KeepRecentTokens = keepRecent
	}
	prep, err := compaction.Prepare(path, set)
	if err != nil {
		t.Fatal(err)
	}
	return &BeforeCompactEvent{Preparation: prep, BranchEntries: path, Reason: ReasonManual}
}

func userMessage(text string) *llm.UserMessage {
	return &llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}, Timestamp: 1767607200000}
}

func texts(msgs []session.Message) []string {
	var out []string
	for _, m := range msgs {
		switch m := m.(type) {
		case *llm.UserMessage:
			out = append(out, "user:"+llm.TextOf(m.Content))
		default:
			out = append(out, m.Role())
		}
	}
	return out
}

func TestTransformsFoldInSequence(t *testing.T) {
	// The second request is long enough for a summary by code to be
	// smaller than what it replaces (a shorter span is nothing to compact).
	second := "second request: " + strings.Repeat("rename the handlers and keep the routes as they are; ", 20)
	s := testSession(t)
	ev := beforeCompactEvent(t, s, 0)
	original := *ev.Preparation
	var secondSaw []string
	r := New(nil, Options{Hooks: Compose(
		&Hooks{Name: "first", BeforeCompact: func(ctx context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error) {
			return &BeforeCompactResult{Preparation: &PreparationChange{
				MessagesToSummarize: []session.Message{userMessage("first request")},
			}}, nil
		}},
		&Hooks{Name: "second", BeforeCompact: func(ctx context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error) {
			secondSaw = texts(ev.Preparation.MessagesToSummarize)
			next := append(ev.Preparation.MessagesToSummarize, userMessage(second))
			return &BeforeCompactResult{Preparation: &PreparationChange{MessagesToSummarize: next}}, nil
		}},
		&Hooks{Name: "no answer", BeforeCompact: func(ctx context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error) {
			return &BeforeCompactResult{Preparation: &PreparationChange{}}, nil
		}},
	)})
	d, err := r.BeforeCompact(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"user:first request"}; !slices.Equal(secondSaw, want) {
		t.Errorf("the second handler saw %q, want %q", secondSaw, want)
	}
	if got, want := texts(d.Preparation.MessagesToSummarize), []string{"user:first request", "user:" + second}; !slices.Equal(got, want) {
		t.Errorf("final messages %q, want %q", got, want)
	}
	if !slices.Equal(d.TransformedBy, []string{"first", "second"}) || len(d.Reports) != 0 {
		t.Errorf("transformed by %q; reports %v", d.TransformedBy, d.Reports)
	}
	// Every other field is the preparation's, not recomputed.
	if diff := cmp.Diff(&original, d.Preparation, deep, cmpopts.IgnoreFields(compaction.Preparation{}, "MessagesToSummarize")); diff != "" {
		t.Errorf("other fields changed (-prepared +decided):\n%s", diff)
	}
	if diff := cmp.Diff(&original, ev.Preparation, deep); diff != "" {
		t.Errorf("the caller's preparation changed:\n%s", diff)
	}
	// Native compaction summarizes the final arrays.
	res, err := compaction.Compact(context.Background(), d.Preparation, compaction.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Summary, "second request") || strings.Contains(res.Summary, "--verbose") {
		t.Errorf("the summary is not of the transformed span:\n%s", res.Summary)
	}
}

func TestTransformsFoldAcrossKinds(t *testing.T) {
	// An in-process handler replaces the history, a command hook replaces
	// the turn prefix of a split turn, and a second command hook sees both.
	s := testSession(t)
	ev := beforeCompactEvent(t, s, 100)
	if !ev.Preparation.IsSplitTurn {
		t.Fatal("the test needs a split turn")
	}
	opts := compaction.TranscriptOptions{Reasoning: true, ToolBodies: 1}
	ev.Transcript = NewCompactTranscript(ev.Preparation, opts)
	prepared := *ev.Transcript
	if prepared.History == "" || prepared.TurnPrefix == "" {
		t.Fatalf("a split turn has two texts: %+v", prepared)
	}
	dir := t.TempDir()
	answer := filepath.Join(dir, "answer.json")
	if err := os.WriteFile(answer, []byte(`{"preparation": {"turnPrefixMessages": [{"role": "user", "content": "prefix from a command", "timestamp": 5}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	answerScript := writeScript(t, dir, "answer.sh", "#!/bin/sh\ncat > /dev/null\ncat \"$1\"\n")
	recordScript := writeScript(t, dir, "record.sh", "#!/bin/sh\ncat > \"$1\"\n")
	seen := filepath.Join(dir, "seen.json")
	st := loadSettings(t, map[string]any{"hooks": []map[string]any{
		{"event": EventBeforeCompact, "command": answerScript, "args": []string{answer}},
		{"event": EventBeforeCompact, "command": recordScript, "args": []string{seen}},
	}}, nil)
	var goSaw CompactTranscript
	r := New(st, Options{Hooks: &Hooks{Name: "go", BeforeCompact: func(ctx context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error) {
		goSaw = *ev.Transcript
		return &BeforeCompactResult{Preparation: &PreparationChange{MessagesToSummarize: []session.Message{userMessage("history from go")}}}, nil
	}}})
	d, err := r.BeforeCompact(context.Background(), ev)
	if err != nil || len(d.Reports) > 0 {
		t.Fatal(err, d.Reports)
	}
	data, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	var got BeforeCompactEvent
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if h, p := texts(got.Preparation.MessagesToSummarize), texts(got.Preparation.TurnPrefixMessages); !slices.Equal(h, []string{"user:history from go"}) ||
		!slices.Equal(p, []string{"user:prefix from a command"}) {
		t.Errorf("the last hook saw history %q, prefix %q", h, p)
	}
	if !got.Preparation.IsSplitTurn || got.Preparation.FirstKeptEntryID != "a4" {
		t.Errorf("metadata changed: split %v, first kept %s", got.Preparation.IsSplitTurn, got.Preparation.FirstKeptEntryID)
	}
	if len(d.TransformedBy) != 2 || d.TransformedBy[0] != "go" {
		t.Errorf("transformed by %q", d.TransformedBy)
	}
	// The transcript follows the arrays, with the caller's options: the
	// first handler saw the prepared texts, the last the texts of the
	// arrays it received; the caller's stays as it was.
	if goSaw != prepared {
		t.Errorf("the first handler saw %+v, want %+v", goSaw, prepared)
	}
	want := CompactTranscript{Options: opts, History: "[User]: history from go", TurnPrefix: "[User]: prefix from a command"}
	if got.Transcript == nil || *got.Transcript != want {
		t.Errorf("the last hook saw transcript %+v, want %+v", got.Transcript, want)
	}
	if *ev.Transcript != prepared {
		t.Errorf("the caller's transcript changed: %+v", ev.Transcript)
	}
}

// TestTranscriptFollowsAnEmptiedPrefix: a handler that empties a split
// turn's prefix leaves only the history to summarize, for Prime's summarizer
// and so in the texts later handlers get.
func TestTranscriptFollowsAnEmptiedPrefix(t *testing.T) {
	s := testSession(t)
	ev := beforeCompactEvent(t, s, 100)
	opts := compaction.TranscriptOptions{ToolBodies: compaction.DefaultToolBodies}
	ev.Transcript = NewCompactTranscript(ev.Preparation, opts)
	var later *CompactTranscript
	r := New(nil, Options{Hooks: Compose(
		&Hooks{Name: "empty the prefix", BeforeCompact: func(ctx context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error) {
			return &BeforeCompactResult{Preparation: &PreparationChange{TurnPrefixMessages: []session.Message{}}}, nil
		}},
		&Hooks{Name: "later", BeforeCompact: func(ctx context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error) {
			later = ev.Transcript
			return nil, nil
		}},
	)})
	d, err := r.BeforeCompact(context.Background(), ev)
	if err != nil || len(d.Reports) > 0 {
		t.Fatal(err, d.Reports)
	}
	history, prefix := d.Preparation.Transcripts(opts)
	if later == nil || later.TurnPrefix != "" || prefix != "" || later.History != history || ev.Transcript.TurnPrefix == "" {
		t.Errorf("later handler saw %+v; decided history %q", later, history)
	}
}

func TestHandlerMutatingItsInputChangesNothing(t *testing.T) {
	s := testSession(t)
	ev := beforeCompactEvent(t, s, 100)
	ev.Transcript = NewCompactTranscript(ev.Preparation, compaction.TranscriptOptions{ToolBodies: 3})
	before, err := ev.clone()
	if err != nil {
		t.Fatal(err)
	}
	callerPrep := ev.Preparation
	snapshot := *ev.Preparation
	var kept []session.Message
	vandal := func(ctx context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error) {
		p := ev.Preparation
		for _, m := range append(p.MessagesToSummarize, p.TurnPrefixMessages...) {
			switch m := m.(type) {
			case *llm.UserMessage:
				m.Content[0] = llm.Text{Text: "vandalized"}
			case *llm.AssistantMessage:
				m.Content = nil
				m.Usage.TotalTokens = -1
			case *llm.ToolResultMessage:
				m.ToolCallID = "x"
			}
		}
		p.MessagesToSummarize[0] = userMessage("replaced in place")
		p.FirstKeptEntryID, p.TokensBefore, p.IsSplitTurn = "nope", -5, false
		p.FileOps.Read = append(p.FileOps.Read[:0], "/etc/passwd")
		for _, e := range ev.BranchEntries {
			e.ID, e.ParentID = "gone", "gone"
			raw := sessiontest.Line(t, e)
			copy(raw, "XXXXXXXX")
		}
		ev.BranchEntries = ev.BranchEntries[:1]
		ev.Reason = "vandal"
		ev.Transcript.History, ev.Transcript.Options.ToolBodies = "vandalized", 99
		// It also answers with arrays it goes on changing afterwards.
		kept = []session.Message{userMessage("kept by the vandal")}
		return &BeforeCompactResult{Preparation: &PreparationChange{MessagesToSummarize: kept}}, nil
	}
	var witnessSaw *BeforeCompactEvent
	witness := func(ctx context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error) {
		kept[0].(*llm.UserMessage).Content[0] = llm.Text{Text: "changed after returning"}
		witnessSaw = ev
		return nil, nil
	}
	r := New(nil, Options{Hooks: Compose(&Hooks{Name: "vandal", BeforeCompact: vandal}, &Hooks{Name: "witness", BeforeCompact: witness})})
	d, err := r.BeforeCompact(context.Background(), ev)
	if err != nil || len(d.Reports) > 0 {
		t.Fatal(err, d.Reports)
	}
	// The caller's event, preparation and entries are as they were.
	if diff := cmp.Diff(before, ev, deep); diff != "" {
		t.Errorf("the caller's event changed (-before +after):\n%s", diff)
	}
	if ev.Preparation != callerPrep {
		t.Error("the caller's preparation pointer was replaced")
	}
	if diff := cmp.Diff(&snapshot, callerPrep, deep); diff != "" {
		t.Errorf("the caller's preparation changed:\n%s", diff)
	}
	for i, e := range s.entries {
		if strings.HasPrefix(string(sessiontest.Line(t, e)), "XXXX") || e.ID == "gone" {
			t.Errorf("session entry %d changed: %s", i, sessiontest.Line(t, e))
		}
	}
	// The next handler saw the session's data with the vandal's (copied)
	// answer, and the answer was not changed by the vandal's later write.
	want := *before
	wantPrep := *before.Preparation
	wantPrep.MessagesToSummarize = []session.Message{userMessage("kept by the vandal")}
	want.Preparation = &wantPrep
	want.Transcript = NewCompactTranscript(&wantPrep, before.Transcript.Options)
	if diff := cmp.Diff(&want, witnessSaw, deep, cmpopts.IgnoreFields(entryView{}, "Line")); diff != "" {
		t.Errorf("the witness saw (-want +got):\n%s", diff)
	}
	if got := texts(d.Preparation.MessagesToSummarize); !slices.Equal(got, []string{"user:kept by the vandal"}) {
		t.Errorf("decided messages %q", got)
	}
}

func TestCancelStopsDispatch(t *testing.T) {
	for _, kind := range handlerKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := testSession(t)
			r, log := kind.runner(t, behavior{name: "one"}, behavior{name: "two", compact: "cancel", tree: "cancel"}, behavior{name: "three", compact: "custom", tree: "summary"})
			d, err := r.BeforeCompact(context.Background(), beforeCompactEvent(t, s, 0))
			if err != nil {
				t.Fatal(err)
			}
			if !d.Cancelled || !named(d.CancelledBy, "two") || d.Compaction != nil {
				t.Errorf("decision %+v", d)
			}
			td, err := r.BeforeTree(context.Background(), &BeforeTreeEvent{Preparation: TreePreparation{TargetID: "b2", OldLeafID: "a5", UserWantsSummary: true}})
			if err != nil {
				t.Fatal(err)
			}
			if !td.Cancelled || !named(td.CancelledBy, "two") || td.Summary != nil {
				t.Errorf("tree decision %+v", td)
			}
			want := "one:session_before_compact two:session_before_compact one:session_before_tree two:session_before_tree"
			if got := sequence(log()); got != want {
				t.Errorf("events:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestLaterAnswersDoNotEraseACompaction(t *testing.T) {
	custom := func(name string, tokens int) *Hooks {
		return &Hooks{Name: name, BeforeCompact: func(ctx context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error) {
			return &BeforeCompactResult{Compaction: &CustomCompaction{Summary: "by " + name, FirstKeptEntryID: "u2", TokensBefore: tokens}}, nil
		}}
	}
	answer := func(name string, res *BeforeCompactResult) *Hooks {
		return &Hooks{Name: name, BeforeCompact: func(ctx context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error) { return res, nil }}
	}
	tests := []struct {
		name    string
		hooks   []*Hooks
		want    string // the stored summary, "" for native
		reports int
	}{
		{"an empty answer keeps it", []*Hooks{custom("a", 1), answer("b", &BeforeCompactResult{})}, "by a", 0},
		{"no answer keeps it", []*Hooks{custom("a", 1), answer("b", nil)}, "by a", 0},
		{"a transform keeps it", []*Hooks{custom("a", 1), answer("b", &BeforeCompactResult{Preparation: &PreparationChange{MessagesToSummarize: []session.Message{}}})}, "by a", 0},
		{"a later valid one replaces it", []*Hooks{custom("a", 1), custom("b", 2)}, "by b", 0},
		{"a later invalid one does not", []*Hooks{custom("a", 1), custom("b", -2)}, "by a", 1},
		{"an invalid one alone is not stored", []*Hooks{custom("a", -1)}, "", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := testSession(t)
			_, d, err := compactFlow(context.Background(), New(nil, Options{Hooks: Compose(tc.hooks...)}), s, compactOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if d.Compaction != nil {
				got = d.Compaction.Summary
			}
			if got != tc.want || len(d.Reports) != tc.reports {
				t.Errorf("stored %q with reports %v; want %q and %d reports", got, d.Reports, tc.want, tc.reports)
			}
		})
	}
}

// weirdMessage is a message type no session knows.
type weirdMessage struct{}

func (weirdMessage) Role() string { return "weird" }

func TestInvalidInProcessResults(t *testing.T) {
	ok := func() *CustomCompaction {
		return &CustomCompaction{Summary: "fine", FirstKeptEntryID: "u2", TokensBefore: 10}
	}
	tests := []struct {
		name   string
		change func(*BeforeCompactResult)
		detail string
	}{
		{"empty summary", func(r *BeforeCompactResult) { r.Compaction.Summary = " \n\t" }, "the summary is empty"},
		{"unknown first kept entry", func(r *BeforeCompactResult) { r.Compaction.FirstKeptEntryID = "zz" }, `firstKeptEntryId "zz" is not an entry on the current path`},
		{"first kept entry on another branch", func(r *BeforeCompactResult) { r.Compaction.FirstKeptEntryID = "b1" }, `"b1" is not an entry on the current path`},
		{"no first kept entry", func(r *BeforeCompactResult) { r.Compaction.FirstKeptEntryID = "" }, `firstKeptEntryId "" is not`},
		{"negative tokensBefore", func(r *BeforeCompactResult) { r.Compaction.TokensBefore = -1 }, "-1 is not a whole number"},
		{"huge tokensBefore", func(r *BeforeCompactResult) { r.Compaction.TokensBefore = 1 << 60 }, "is not a whole number from 0 to 2^53-1"},
		{"details that are not JSON", func(r *BeforeCompactResult) { r.Compaction.Details = []byte("{nope") }, "cannot be written as JSON"},
		{"summary that is not UTF-8", func(r *BeforeCompactResult) { r.Compaction.Summary = "bad \xff" }, "cannot be written as JSON"},
		{"a message of an unknown role", func(r *BeforeCompactResult) {
			r.Preparation = &PreparationChange{MessagesToSummarize: []session.Message{weirdMessage{}}}
		}, "preparation: messagesToSummarize: [0]: message has no role"},
		{"cancel with an invalid compaction", func(r *BeforeCompactResult) { r.Cancel = true; r.Compaction.Summary = "" }, "the summary is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := &BeforeCompactResult{Compaction: ok()}
			tc.change(res)
			r := New(nil, Options{Hooks: &Hooks{Name: "h", BeforeCompact: func(ctx context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error) { return res, nil }}})
			s := testSession(t)
			e, d, err := compactFlow(context.Background(), r, s, compactOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Cancelled || d.Compaction != nil || len(d.TransformedBy) > 0 {
				t.Errorf("the invalid answer was used: %+v", d)
			}
			if len(d.Reports) != 1 || d.Reports[0].Kind != Invalid || !strings.Contains(d.Reports[0].Detail, tc.detail) {
				t.Fatalf("reports %v; want one invalid result saying %q", d.Reports, tc.detail)
			}
			if p, _ := e.Payload(); p.(*session.CompactionEntry).FromHook {
				t.Error("a hook's entry was stored")
			}
		})
	}
}

func TestInProcessFailures(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	r := New(nil, Options{Hooks: Compose(
		&Hooks{Name: "panics", BeforeCompact: func(ctx context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error) {
			var m map[string]int
			m["x"]++ // nil map write
			return nil, nil
		}},
		&Hooks{Name: "hangs", Timeout: 20 * time.Millisecond, BeforeCompact: func(ctx context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error) {
			<-release // ignores its context
			return &BeforeCompactResult{Cancel: true}, nil
		}},
		&Hooks{Name: "respects its context", Timeout: 20 * time.Millisecond, BeforeCompact: func(ctx context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}},
		&Hooks{Name: "errs", BeforeCompact: func(ctx context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error) {
			return nil, errors.New("no model key")
		}},
		&Hooks{Name: "works", BeforeCompact: func(ctx context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error) {
			return &BeforeCompactResult{Compaction: &CustomCompaction{Summary: "ok", FirstKeptEntryID: ev.Preparation.FirstKeptEntryID}}, nil
		}},
	)})
	d, err := r.BeforeCompact(context.Background(), beforeCompactEvent(t, testSession(t), 0))
	if err != nil {
		t.Fatal(err)
	}
	if d.Cancelled || d.Compaction == nil || d.CompactionBy != "works" {
		t.Errorf("decision %+v", d)
	}
	want := []struct {
		kind    Kind
		handler string
		text    string
	}{
		{Panicked, "panics", "assignment to entry in nil map"},
		{TimedOut, "hangs", "did not return within 20ms"},
		{TimedOut, "respects its context", "did not return within 20ms"},
		{Failed, "errs", "returned an error: no model key"},
	}
	if len(d.Reports) != len(want) {
		t.Fatalf("reports: %v", d.Reports)
	}
	for i, w := range want {
		got := d.Reports[i]
		if got.Kind != w.kind || got.Handler != w.handler || got.Event != EventBeforeCompact || !strings.Contains(got.Error(), w.text) {
			t.Errorf("report %d = %v (%v); want %v by %s saying %q", i, got, got.Kind, w.kind, w.handler, w.text)
		}
	}
	if !strings.Contains(d.Reports[0].Output, "TestInProcessFailures") {
		t.Errorf("the panic report has no stack naming the handler:\n%s", d.Reports[0].Output)
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := false
	r := New(nil, Options{Hooks: Compose(
		&Hooks{Name: "user presses Ctrl-C", BeforeCompact: func(context.Context, *BeforeCompactEvent) (*BeforeCompactResult, error) {
			cancel()
			return nil, nil
		}},
		&Hooks{Name: "never runs", BeforeCompact: func(context.Context, *BeforeCompactEvent) (*BeforeCompactResult, error) {
			ran = true
			return nil, nil
		}},
	)})
	d, err := r.BeforeCompact(ctx, beforeCompactEvent(t, testSession(t), 0))
	if !errors.Is(err, context.Canceled) || d == nil || len(d.Reports) != 0 || ran {
		t.Fatalf("err %v, decision %+v, second ran %v", err, d, ran)
	}
}

func TestTreeFold(t *testing.T) {
	str := func(s string) *string { return &s }
	yes := true
	var saw TreePreparation
	r := New(nil, Options{Hooks: Compose(
		&Hooks{Name: "a", BeforeTree: func(ctx context.Context, ev *BeforeTreeEvent) (*BeforeTreeResult, error) {
			return &BeforeTreeResult{CustomInstructions: str("focus on the env var"), Label: str("env-var")}, nil
		}},
		&Hooks{Name: "b", BeforeTree: func(ctx context.Context, ev *BeforeTreeEvent) (*BeforeTreeResult, error) {
			saw = ev.Preparation
			return &BeforeTreeResult{ReplaceInstructions: &yes, Summary: &BranchSummary{Summary: "by b"}}, nil
		}},
		&Hooks{Name: "c", BeforeTree: func(ctx context.Context, ev *BeforeTreeEvent) (*BeforeTreeResult, error) {
			return &BeforeTreeResult{}, nil
		}},
		&Hooks{Name: "d", BeforeTree: func(ctx context.Context, ev *BeforeTreeEvent) (*BeforeTreeResult, error) {
			return &BeforeTreeResult{Summary: &BranchSummary{Summary: "  "}, Label: str("ignored with it")}, nil
		}},
	)})
	s := testSession(t)
	e, d, err := treeFlow(context.Background(), r, s, "b2", true)
	if err != nil {
		t.Fatal(err)
	}
	if saw.CustomInstructions != "focus on the env var" || saw.Label != "env-var" || saw.ReplaceInstructions {
		t.Errorf("b saw %+v", saw)
	}
	p := d.Preparation
	if p.CustomInstructions != "focus on the env var" || p.Label != "env-var" || !p.ReplaceInstructions || p.TargetID != "b2" || len(p.EntriesToSummarize) != 4 {
		t.Errorf("decided %+v", p)
	}
	if d.Summary == nil || d.Summary.Summary != "by b" || d.SummaryBy != "b" {
		t.Errorf("summary %+v by %q", d.Summary, d.SummaryBy)
	}
	if len(d.Reports) != 1 || d.Reports[0].Handler != "d" || d.Reports[0].Kind != Invalid {
		t.Errorf("reports %v", d.Reports)
	}
	if bs, _ := e.Payload(); bs.(*session.BranchSummaryEntry).Summary != "by b" {
		t.Errorf("stored %+v", bs)
	}
}

func TestCompose(t *testing.T) {
	var order []string
	h := func(name string) *Hooks {
		return &Hooks{Name: name, Compact: func(context.Context, *CompactEvent) error {
			order = append(order, name)
			if name == "b" {
				return errors.New("b failed")
			}
			return nil
		}}
	}
	transform := &Hooks{Name: "t", BeforeCompact: func(ctx context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error) {
		return &BeforeCompactResult{Preparation: &PreparationChange{TurnPrefixMessages: []session.Message{userMessage("p")}}}, nil
	}}
	custom := &Hooks{Name: "c", BeforeCompact: func(ctx context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error) {
		if len(ev.Preparation.TurnPrefixMessages) != 1 {
			return nil, errors.New("did not see the transform")
		}
		return &BeforeCompactResult{Compaction: &CustomCompaction{Summary: "s", FirstKeptEntryID: "u2", TokensBefore: 3}}, nil
	}}
	c := Compose(h("a"), nil, Compose(h("b"), transform), Compose(), h("c"), custom)
	if len(c.parts) != 5 || c.Name != "a+b+t+c+c" || c.BeforeTree != nil || c.Tree != nil {
		t.Fatalf("composed %d parts named %q", len(c.parts), c.Name)
	}

	// Through a runner, each part is reported on its own.
	reports := New(nil, Options{Hooks: c}).Compact(context.Background(), &CompactEvent{})
	if !slices.Equal(order, []string{"a", "b", "c"}) || len(reports) != 1 || reports[0].Handler != "b" {
		t.Errorf("order %q, reports %v", order, reports)
	}

	// Called directly, a composed func folds and joins the reports.
	order = nil
	if err := c.Compact(context.Background(), &CompactEvent{}); err == nil || !strings.Contains(err.Error(), "b failed") || len(order) != 3 {
		t.Errorf("composed Compact: %v after %q", err, order)
	}
	res, err := c.BeforeCompact(context.Background(), beforeCompactEvent(t, testSession(t), 0))
	if err != nil {
		t.Fatal(err)
	}
	if res.Cancel || res.Preparation == nil || texts(res.Preparation.TurnPrefixMessages)[0] != "user:p" ||
		res.Compaction == nil || res.Compaction.Summary != "s" || res.Compaction.TokensBefore != 3 {
		t.Errorf("folded result %+v", res)
	}
}

func TestNilRunner(t *testing.T) {
	var r *Runner
	ev := beforeCompactEvent(t, testSession(t), 0)
	d, err := r.BeforeCompact(context.Background(), ev)
	if err != nil || d.Cancelled || d.Compaction != nil || d.Preparation == ev.Preparation || !cmp.Equal(d.Preparation, ev.Preparation, deep) {
		t.Fatalf("nil runner: %v %+v", err, d)
	}
	if r.Handles(EventCompact) || r.Skipped() != nil || r.Handlers(EventCompact) != nil || r.WithEnv("A=b") != nil ||
		r.Compact(context.Background(), &CompactEvent{}) != nil {
		t.Fatal("a nil runner has handlers")
	}
	if _, err := New(nil, Options{}).BeforeCompact(context.Background(), &BeforeCompactEvent{}); err == nil {
		t.Fatal("no error for an event without a preparation")
	}
}
