package hook

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// testEvents are one event of each kind, from the test session.
func testEvents(t *testing.T) []json.MarshalerTo {
	s := testSession(t)
	before := beforeCompactEvent(t, s, 0)
	before.BranchEntries = before.BranchEntries[:2] // the shape, not the whole path
	before.Preparation.MessagesToSummarize = before.Preparation.MessagesToSummarize[:1]
	before.CustomInstructions = "keep the test names"
	before.Transcript = NewCompactTranscript(before.Preparation, compaction.TranscriptOptions{Reasoning: true, ToolBodies: compaction.DefaultToolBodies})
	compact := s.append(&session.CompactionEntry{Summary: "## Goal\nA --verbose flag.", FirstKeptEntryID: "u2", TokensBefore: 2320,
		Details: jsontext.Value(`{"readFiles":[],"modifiedFiles":["cmd/app/main.go"]}`)})
	s.leaf = "b2"
	summary := s.append(&session.BranchSummaryEntry{FromID: "a5", Summary: "The flag was added and tested.", FromHook: true})
	left := s.path("a5")[6:8]
	branch, err := compaction.PrepareBranch(left, 0)
	if err != nil {
		t.Fatal(err)
	}
	return []json.MarshalerTo{
		before,
		&CompactEvent{CompactionEntry: compact, Reason: ReasonThreshold},
		&CompactFailedEvent{Reason: ReasonOverflow, ErrorMessage: "compaction cancelled by ./guard.sh", Aborted: true, WillRetry: true, FromExtension: true},
		&BeforeTreeEvent{Preparation: TreePreparation{TargetID: "b2", OldLeafID: "a5", CommonAncestorID: "a3",
			EntriesToSummarize: left, UserWantsSummary: true, CustomInstructions: "only the test"},
			Transcript: NewBranchTranscript(branch, compaction.TranscriptOptionsFor(llm.Model{Provider: "anthropic", ID: "claude-sonnet-4-5"}))},
		&BeforeTreeEvent{Preparation: TreePreparation{TargetID: "u1", OldLeafID: "a5", CommonAncestorID: "u1", EntriesToSummarize: []*session.Entry{}}},
		&TreeEvent{NewLeafID: summary.ID, OldLeafID: "a5", SummaryEntry: summary, FromExtension: true},
		&TreeEvent{NewLeafID: "", OldLeafID: "a5"},
	}
}

// TestEventShapes pins the JSON every event is sent as
// (testdata/events.golden, one indented event after another; -update
// rewrites it).
func TestEventShapes(t *testing.T) {
	var got bytes.Buffer
	for _, ev := range testEvents(t) {
		b, err := encodeEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Count(b, []byte("\n")) != 1 || b[len(b)-1] != '\n' {
			t.Errorf("an event is not one line: %s", b)
		}
		v := jsontext.Value(b)
		if err := v.Indent(jsontext.WithIndent("  ")); err != nil {
			t.Fatal(err)
		}
		got.Write(v)
		got.WriteString("\n")
	}
	path := filepath.Join("testdata", "events.golden")
	if golden.Updating() {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got.String()); diff != "" {
		t.Errorf("event JSON changed (-golden +got; run with -update if intended):\n%s", diff)
	}
}

func TestEventRoundTrip(t *testing.T) {
	decoders := map[string]func() json.UnmarshalerFrom{
		EventBeforeCompact: func() json.UnmarshalerFrom { return new(BeforeCompactEvent) },
		EventCompact:       func() json.UnmarshalerFrom { return new(CompactEvent) },
		EventCompactFailed: func() json.UnmarshalerFrom { return new(CompactFailedEvent) },
		EventBeforeTree:    func() json.UnmarshalerFrom { return new(BeforeTreeEvent) },
		EventTree:          func() json.UnmarshalerFrom { return new(TreeEvent) },
	}
	for _, ev := range testEvents(t) {
		b, err := encodeEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(b, &head); err != nil {
			t.Fatal(err)
		}
		back := decoders[head.Type]()
		if err := json.Unmarshal(b, back); err != nil {
			t.Fatalf("%s: %v", head.Type, err)
		}
		if diff := cmp.Diff(ev, back, deep, cmpopts.IgnoreFields(entryView{}, "Line")); diff != "" {
			t.Errorf("%s does not survive its JSON (-sent +read):\n%s", head.Type, diff)
		}
		// The wrong type is refused.
		for other, dec := range decoders {
			if other != head.Type && json.Unmarshal(b, dec()) == nil {
				t.Errorf("a %s event decodes as %s", head.Type, other)
			}
		}
	}
}

func TestEventsReplaceInvalidUTF8(t *testing.T) {
	// pi files may hold lone surrogates; hooks get valid UTF-8.
	e, err := session.NewEntry([]byte(`{"type":"custom","id":"x","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","customType":"t","data":"a\ud800b` + "\xff" + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := encodeEvent(&CompactEvent{CompactionEntry: e})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"data":"a�b�"`) {
		t.Errorf("got %s", b)
	}
}

// FuzzBeforeCompactResult: any output decodes without panicking, and a
// result that decodes re-encodes to a fixed point.
func FuzzBeforeCompactResult(f *testing.F) {
	for _, s := range []string{
		``, `null`, `{}`, `{"cancel":true}`, `[]`, `{"cancel":"yes"}`,
		`{"compaction":{"summary":"s","firstKeptEntryId":"u2","tokensBefore":1e3,"details":{"a":[1,null]},"usage":{"input":1,"output":2,"totalTokens":3}}}`,
		`{"preparation":{"messagesToSummarize":[{"role":"user","content":"hi","timestamp":1}],"turnPrefixMessages":[]}}`,
		`{"preparation":{"turnPrefixMessages":[{"role":"assistant","content":[{"type":"toolCall","id":"1","name":"read","arguments":{"path":"p"}}]}]}}`,
		`{"preparation":{"messagesToSummarize":[{"role":"bashExecution","command":"ls","output":"","exitCode":null}]}}`,
		`{"compaction":{"summary":"s","firstKeptEntryId":"u2","tokensBefore":-1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fixedPoint[BeforeCompactResult](t, data)
	})
}

// FuzzBeforeTreeResult is FuzzBeforeCompactResult for session_before_tree.
func FuzzBeforeTreeResult(f *testing.F) {
	for _, s := range []string{
		``, `null`, `{}`, `{"cancel":true}`, `{"summary":{"summary":"s","details":[1]}}`,
		`{"customInstructions":"x","replaceInstructions":true,"label":null}`, `{"replaceInstructions":"no"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fixedPoint[BeforeTreeResult](t, data)
	})
}

func fixedPoint[R any, P interface {
	*R
	json.MarshalerTo
	json.UnmarshalerFrom
}](t *testing.T, data []byte) {
	r, err := decodeResult[R, P](data)
	if err != nil || r == nil {
		return
	}
	once, err := json.Marshal(P(r))
	if err != nil {
		t.Fatalf("a decoded result cannot be encoded: %v", err)
	}
	again, err := decodeResult[R, P](once)
	if err != nil {
		t.Fatalf("an encoded result does not decode: %v\n%s", err, once)
	}
	twice, err := json.Marshal(P(again))
	if err != nil || !bytes.Equal(once, twice) {
		t.Fatalf("not a fixed point:\n%s\n%s", once, twice)
	}
}
