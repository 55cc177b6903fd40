package session_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"

	"github.com/prime-agent/prime/internal/pioracle"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
)

// pi16Context is what the tests compare of a context with pi 1.6's answer:
// the message count, both estimates, and the replayed system state (its
// estimate, the UTF-16 length of its prompt and of its JSON, its tools).
type pi16Context struct {
	file                     string
	leaf                     int // entry position in file order
	messages                 int
	tokens, usage            int // EstimateContextTokens
	nextTokens, nextUsage    int // EstimateNext (pi's estimateProjectedContextTokens)
	sysTokens, prompt, sysJS int
	tools                    string
}

// edgeCase returns the named edge case of sessiongen, parsed.
func edgeCase(t *testing.T, name string) *session.Session {
	t.Helper()
	for _, c := range sessiongen.EdgeCases() {
		if c.Name == name {
			s, err := session.Parse(name+".jsonl", c.Data)
			if err != nil {
				t.Fatal(err)
			}
			if w := s.Warnings(); len(w) > 0 {
				t.Fatalf("%s: %v", name, w)
			}
			return s
		}
	}
	t.Fatalf("no edge case %s", name)
	return nil
}

// primeContext16 describes Prime's context at the file's leaf-th entry.
func primeContext16(t *testing.T, s *session.Session, file string, leaf int) pi16Context {
	t.Helper()
	c, err := s.Context(s.Entries()[leaf].ID)
	if err != nil {
		t.Fatal(err)
	}
	est, next := session.EstimateContextTokens(c.Messages), c.EstimateNext()
	got := pi16Context{file: file, leaf: leaf, messages: len(c.Messages), tokens: est.Tokens, usage: est.UsageTokens,
		nextTokens: next.Tokens, nextUsage: next.UsageTokens}
	if sys := c.System(); sys != nil {
		js, err := json.Marshal(sys)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range c.Tools() {
			names = append(names, tool.Name)
		}
		got.sysTokens, got.prompt, got.sysJS, got.tools = session.EstimateTokens(sys), llm.UTF16Len(sys.Prompt()), llm.UTF16Len(string(js)), strings.Join(names, ",")
	}
	return got
}

// TestPi16Recorded compares Prime's contexts of the edge cases that hold
// pi 1.6's transcript features (system messages, patches, context edits,
// compactions carrying the system state) with pi 1.6's answers at every
// entry, recorded with internal/pioracle/harness (context FILE --leaf #N) so that the
// comparison runs without node; TestPi16PiOracle checks the recording.
func TestPi16Recorded(t *testing.T) {
	for _, w := range pi16Contexts {
		s := edgeCase(t, w.file)
		if got := primeContext16(t, s, w.file, w.leaf); got != w {
			t.Errorf("%s #%d:\nPrime  %+v\npi 1.6 %+v", w.file, w.leaf, got, w)
		}
	}
}

var pi16Contexts = []pi16Context{
	{"pi16-compaction-system", 0, 1, 58, 0, 58, 0, 58, 28, 336, "read"},
	{"pi16-compaction-system", 1, 2, 264, 0, 264, 0, 58, 28, 336, "read"},
	{"pi16-compaction-system", 2, 3, 3000, 3000, 3000, 3000, 58, 28, 336, "read"},
	{"pi16-compaction-system", 3, 4, 3303, 3000, 3303, 3000, 58, 28, 336, "read"},
	{"pi16-compaction-system", 4, 5, 3600, 3600, 3600, 3600, 58, 28, 336, "read"},
	{"pi16-compaction-system", 5, 6, 3757, 3600, 3757, 3600, 58, 28, 336, "read"},
	{"pi16-compaction-system", 6, 7, 3836, 3600, 3836, 3600, 136, 28, 650, "read,edit"},
	{"pi16-compaction-system", 7, 8, 4000, 4000, 4000, 4000, 136, 28, 650, "read,edit"},
	{"pi16-compaction-system", 8, 9, 4001, 4000, 4001, 4000, 136, 28, 650, "read,edit"},
	{"pi16-compaction-system", 9, 5, 4001, 4000, 319, 0, 136, 28, 650, "read,edit"},
	{"pi16-compaction-system", 10, 6, 4133, 4000, 451, 0, 136, 28, 650, "read,edit"},
	{"pi16-compaction-system", 11, 7, 1500, 1500, 1500, 1500, 136, 28, 650, "read,edit"},
	{"pi16-compaction-system", 12, 8, 1504, 1500, 1504, 1500, 137, 32, 654, "read,edit"},
	{"pi16-compaction-system", 13, 9, 1583, 1500, 1583, 1500, 137, 32, 654, "read,edit"},
	{"pi16-compaction-system", 14, 10, 1800, 1800, 1800, 1800, 137, 32, 654, "read,edit"},
	{"pi16-compaction-system", 15, 6, 1800, 1800, 362, 0, 137, 32, 654, "read,edit"},
	{"pi16-compaction-system", 16, 7, 1802, 1800, 364, 0, 137, 32, 654, "read,edit"},
	{"pi16-system-edits", 0, 0, 0, 0, 0, 0, 0, 0, 0, ""},
	{"pi16-system-edits", 1, 0, 0, 0, 0, 0, 0, 0, 0, ""},
	{"pi16-system-edits", 2, 1, 122, 0, 122, 0, 122, 107, 603, "read,bash"},
	{"pi16-system-edits", 3, 2, 129, 0, 129, 0, 122, 107, 603, "read,bash"},
	{"pi16-system-edits", 4, 3, 3400, 3400, 3400, 3400, 122, 107, 603, "read,bash"},
	{"pi16-system-edits", 5, 4, 3403, 3400, 3403, 3400, 122, 107, 603, "read,bash"},
	{"pi16-system-edits", 6, 5, 3500, 3500, 3500, 3500, 122, 107, 603, "read,bash"},
	{"pi16-system-edits", 7, 6, 3585, 3500, 3585, 3500, 149, 82, 715, "read,edit"},
	{"pi16-system-edits", 8, 7, 3593, 3500, 3593, 3500, 149, 82, 715, "read,edit"},
	{"pi16-system-edits", 9, 8, 3593, 3500, 3593, 3500, 149, 82, 715, "read,edit"},
	{"pi16-system-edits", 10, 7, 3593, 3500, 184, 0, 149, 82, 715, "read,edit"},
	{"pi16-system-edits", 11, 8, 3700, 3700, 3700, 3700, 149, 82, 715, "read,edit"},
	{"pi16-system-edits", 12, 9, 3807, 3700, 3807, 3700, 149, 82, 715, "read,edit"},
	{"pi16-system-edits", 13, 9, 3708, 3700, 210, 0, 149, 82, 715, "read,edit"},
	{"pi16-system-edits", 14, 9, 3708, 3700, 214, 0, 149, 82, 715, "read,edit"},
	{"pi16-system-edits", 15, 10, 3800, 3800, 3800, 3800, 149, 82, 715, "read,edit"},
	{"pi16-system-shapes", 0, 1, 1207, 0, 7, 0, 7, 26, 83, ""},
	{"pi16-system-shapes", 1, 2, 1209, 0, 9, 0, 7, 26, 83, ""},
	{"pi16-system-shapes", 2, 3, 1212, 0, 12, 0, 10, 44, 129, ""},
	{"pi16-system-shapes", 3, 4, 300, 300, 300, 300, 10, 44, 129, ""},
	{"pi16-system-shapes", 4, 5, 333, 300, 333, 300, 43, 60, 278, "zed"},
	{"pi16-system-shapes", 5, 6, 335, 300, 335, 300, 43, 60, 278, "zed"},
	{"pi16-system-untimed", 0, 1, 6, 0, 0, 0, 0, 0, 0, ""},
	{"pi16-system-untimed", 1, 2, 8, 0, 2, 0, 0, 0, 0, ""},
	{"pi16-system-untimed", 2, 3, 300, 300, 300, 300, 0, 0, 0, ""}, {"pi16-edits", 0, 1, 41, 0, 41, 0, 41, 14, 259, "read"},
	{"pi16-edits", 1, 2, 145, 0, 145, 0, 41, 14, 259, "read"},
	{"pi16-edits", 2, 3, 500, 500, 500, 500, 41, 14, 259, "read"},
	{"pi16-edits", 3, 3, 500, 500, 50, 0, 41, 14, 259, "read"},
	{"pi16-edits", 4, 4, 579, 500, 129, 0, 41, 14, 259, "read"},
	{"pi16-edits", 5, 5, 684, 500, 234, 0, 41, 14, 259, "read"},
	{"pi16-edits", 6, 6, 763, 500, 313, 0, 41, 14, 259, "read"},
	{"pi16-edits", 7, 7, 894, 500, 444, 0, 41, 14, 259, "read"},
	{"pi16-edits", 8, 8, 973, 500, 523, 0, 41, 14, 259, "read"},
	{"pi16-edits", 9, 9, 900, 900, 900, 900, 41, 14, 259, "read"},
	{"pi16-edits", 10, 10, 1203, 900, 1203, 900, 41, 14, 259, "read"},
	{"pi16-edits", 11, 10, 1203, 900, 759, 0, 41, 14, 259, "read"},
	{"pi16-edits", 12, 10, 1203, 900, 759, 0, 41, 14, 259, "read"},
	{"pi16-edits", 13, 10, 1203, 900, 684, 0, 41, 14, 259, "read"},
	{"pi16-edits", 14, 10, 904, 900, 385, 0, 41, 14, 259, "read"},
	{"pi16-edits", 15, 9, 904, 900, 254, 0, 41, 14, 259, "read"},
	{"pi16-edits", 16, 10, 700, 700, 700, 700, 41, 14, 259, "read"},
	{"pi16-edits", 17, 6, 700, 700, 143, 0, 41, 14, 259, "read"},
	{"pi16-edits", 18, 7, 829, 700, 272, 0, 41, 14, 259, "read"},
	{"pi16-edits", 19, 8, 400, 400, 400, 400, 41, 14, 259, "read"},
	{"pi16-edits", 20, 7, 400, 400, 196, 0, 41, 14, 259, "read"},
	{"pi16-edits", 21, 7, 400, 400, 196, 0, 41, 14, 259, "read"},
	{"pi16-edits", 22, 8, 454, 400, 250, 0, 41, 14, 259, "read"},
	{"pi16-hidden-compaction", 0, 1, 4, 0, 4, 0, 4, 14, 97, ""},
	{"pi16-hidden-compaction", 1, 2, 131, 0, 131, 0, 4, 14, 97, ""},
	{"pi16-hidden-compaction", 2, 3, 300, 300, 300, 300, 4, 14, 97, ""},
	{"pi16-hidden-compaction", 3, 4, 428, 300, 428, 300, 4, 14, 97, ""},
	{"pi16-hidden-compaction", 4, 5, 500, 500, 500, 500, 4, 14, 97, ""},
	{"pi16-hidden-compaction", 5, 4, 500, 500, 142, 0, 4, 14, 97, ""},
	{"pi16-hidden-compaction", 6, 2, 500, 500, 131, 0, 0, 0, 0, ""},
	{"pi16-hidden-compaction", 7, 3, 577, 500, 208, 0, 0, 0, 0, ""},
	{"pi16-hidden-compaction", 8, 4, 200, 200, 200, 200, 0, 0, 0, ""},
	{"pi16-retries", 0, 0, 0, 0, 0, 0, 0, 0, 0, ""},
	{"pi16-retries", 1, 0, 0, 0, 0, 0, 0, 0, 0, ""},
	{"pi16-retries", 2, 1, 86, 0, 86, 0, 86, 28, 449, "read,edit"},
	{"pi16-retries", 3, 2, 242, 0, 242, 0, 86, 28, 449, "read,edit"},
	{"pi16-retries", 4, 3, 242, 0, 242, 0, 86, 28, 449, "read,edit"},
	{"pi16-retries", 5, 2, 242, 0, 242, 0, 86, 28, 449, "read,edit"},
	{"pi16-retries", 6, 3, 900, 900, 900, 900, 86, 28, 449, "read,edit"},
	{"pi16-retries", 7, 4, 1279, 900, 1279, 900, 86, 28, 449, "read,edit"},
	{"pi16-retries", 8, 5, 1400, 1400, 1400, 1400, 86, 28, 449, "read,edit"},
	{"pi16-retries", 9, 6, 1419, 1400, 1419, 1400, 86, 28, 449, "read,edit"},
	{"pi16-retries", 10, 7, 1438, 1400, 1438, 1400, 86, 28, 449, "read,edit"},
	{"pi16-retries", 11, 6, 1317, 900, 671, 0, 86, 28, 449, "read,edit"},
	{"pi16-retries", 12, 5, 1298, 900, 652, 0, 86, 28, 449, "read,edit"},
	{"pi16-retries", 13, 4, 1279, 900, 633, 0, 86, 28, 449, "read,edit"},
	{"pi16-retries", 14, 5, 1500, 1500, 1500, 1500, 86, 28, 449, "read,edit"},
	{"pi16-retries", 15, 6, 1505, 1500, 1505, 1500, 86, 28, 449, "read,edit"},
	{"pi16-retries", 16, 7, 1600, 1600, 1600, 1600, 86, 28, 449, "read,edit"},
	{"pi16-retries", 17, 8, 1840, 1600, 1840, 1600, 86, 28, 449, "read,edit"},
	{"pi16-retries", 18, 9, 1840, 1600, 1840, 1600, 86, 28, 449, "read,edit"},
	{"pi16-retries", 19, 8, 1840, 1600, 911, 0, 86, 28, 449, "read,edit"},
}

// oracleContext is the part of the oracle's context answer compared here.
type oracleContext struct {
	Error    string `json:"error"`
	Messages int    `json:"messages"`
	Estimate struct {
		Tokens      int `json:"tokens"`
		UsageTokens int `json:"usageTokens"`
	} `json:"estimate"`
	Projected struct {
		Tokens      int `json:"tokens"`
		UsageTokens int `json:"usageTokens"`
	} `json:"projectedEstimate"`
	Items  []oracleItem `json:"items"`
	System *struct {
		Prompt string   `json:"prompt"`
		Tools  []string `json:"tools"`
		Tokens int      `json:"tokens"`
		JSON   string   `json:"json"`
	} `json:"system"`
}

// oracleItem is one message of a context: its role, estimate and the entry
// it came from (file order).
type oracleItem struct {
	Role   string `json:"role"`
	Tokens int    `json:"tokens"`
	Index  int    `json:"index"`
}

// primeItems lists a context's messages as the oracle's items: role,
// estimate, and the index in file order of the entry each came from.
func primeItems(s *session.Session, ctx session.Context) []oracleItem {
	index := map[*session.Entry]int{}
	for j, e := range s.Entries() {
		index[e] = j
	}
	items := []oracleItem{}
	for j, m := range ctx.Messages {
		items = append(items, oracleItem{m.Role(), session.EstimateTokens(m), index[ctx.Entries[j]]})
	}
	return items
}

// TestPi16PiOracle asks pi 1.6 (internal/pioracle/harness) for the context at every
// entry of every edge case and compares it with Prime's message by message
// (role, estimate, source entry), the replayed system state byte for byte
// (prompt and JSON), and with the recording TestPi16Recorded uses. It runs
// only when PRIME_PIORACLE names the oracle's wrapper.
func TestPi16PiOracle(t *testing.T) {
	bin := pioracle.Path(t)
	dir := t.TempDir()
	type req struct {
		Cmd  string `json:"cmd"`
		File string `json:"file"`
		Leaf string `json:"leaf"`
	}
	type pending struct {
		name string
		s    *session.Session
		leaf int
	}
	var in bytes.Buffer
	var cases []pending
	edges := 0
	for _, c := range sessiongen.EdgeCases() {
		if !strings.HasPrefix(c.Name, "pi16-") {
			continue // compaction's TestPiOracle compares the others
		}
		edges++
		path := filepath.Join(dir, c.Name+".jsonl")
		if err := os.WriteFile(path, c.Data, 0o600); err != nil {
			t.Fatal(err)
		}
		s := edgeCase(t, c.Name)
		for i := range s.Len() {
			b, _ := json.Marshal(req{"context", path, fmt.Sprintf("#%d", i)})
			in.Write(append(b, '\n'))
			cases = append(cases, pending{c.Name, s, i})
		}
	}
	cmd := exec.Command(bin, "batch")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pioracle batch: %v", err)
	}
	recorded := map[string]pi16Context{}
	for _, w := range pi16Contexts {
		recorded[fmt.Sprintf("%s#%d", w.file, w.leaf)] = w
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	n := 0
	for i := 0; sc.Scan(); i++ {
		c := cases[i]
		var pi oracleContext
		if err := json.Unmarshal(sc.Bytes(), &pi); err != nil || pi.Error != "" {
			t.Fatalf("%s #%d: %v %s", c.name, c.leaf, err, pi.Error)
		}
		where := fmt.Sprintf("%s #%d", c.name, c.leaf)
		want := pi16Context{file: c.name, leaf: c.leaf, messages: pi.Messages, tokens: pi.Estimate.Tokens, usage: pi.Estimate.UsageTokens,
			nextTokens: pi.Projected.Tokens, nextUsage: pi.Projected.UsageTokens}
		ctx, err := c.s.Context(c.s.Entries()[c.leaf].ID)
		if err != nil {
			t.Fatal(err)
		}
		items := primeItems(c.s, ctx)
		if pi.Items == nil {
			pi.Items = []oracleItem{}
		}
		if diff := cmp.Diff(pi.Items, items); diff != "" {
			t.Errorf("%s: messages (-pi +Prime):\n%s", where, diff)
		}
		if pi.System != nil {
			sys := ctx.System()
			if sys == nil {
				t.Errorf("%s: pi replays a system message, Prime none", where)
				continue
			}
			js, _ := json.Marshal(sys)
			if sys.Prompt() != pi.System.Prompt || string(js) != pi.System.JSON {
				t.Errorf("%s: system state\nPrime  %q\n       %s\npi 1.6 %q\n       %s", where, sys.Prompt(), js, pi.System.Prompt, pi.System.JSON)
			}
			want.sysTokens, want.prompt, want.sysJS, want.tools = pi.System.Tokens, llm.UTF16Len(pi.System.Prompt), llm.UTF16Len(pi.System.JSON), strings.Join(pi.System.Tools, ",")
		}
		if got := primeContext16(t, c.s, c.name, c.leaf); got != want {
			t.Errorf("%s:\nPrime  %+v\npi 1.6 %+v", where, got, want)
		}
		if rec, ok := recorded[fmt.Sprintf("%s#%d", c.name, c.leaf)]; !ok || rec != want {
			t.Errorf("%s: recorded %+v, pi 1.6 now answers %+v", where, rec, want)
		}
		n++
	}
	if n != len(cases) || n != len(pi16Contexts) {
		t.Errorf("%d answers, %d cases, %d recorded", n, len(cases), len(pi16Contexts))
	}
	t.Logf("%d contexts of %d edge cases identical to pi 1.6's", n, edges)
}

// TestPiReadsPrimeEntries writes a session with every pi 1.6 shape through
// Prime's own encoder (Session.Append): system messages made in Go (a
// declaration without parameters, one with constrainedSampling), a patch
// removing a section and a tool, tool-call arguments with a lone
// surrogate, context edits that hide and replace, a compaction carrying
// the replayed system state; then asks pi 1.6 for the context at every
// entry and compares it with Prime's message by message, and the system
// state byte for byte. It runs only when PRIME_PIORACLE names the
// oracle's wrapper.
func TestPiReadsPrimeEntries(t *testing.T) {
	bin := pioracle.Path(t)
	path := filepath.Join(t.TempDir(), "prime.jsonl")
	s, err := session.Create(path, session.Options{CWD: "/tmp/project", Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	appendAll := func(ps ...session.Payload) {
		t.Helper()
		for _, p := range ps {
			if _, err := s.Append(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	read := session.ToolDeclaration{Name: "read", Description: "Read a file.", Parameters: []byte(`{ "type": "object", "properties": {"path": {"type": "string"}} }`)}
	appendAll(
		&session.ModelChangeEntry{Provider: "anthropic", ModelID: "claude-sonnet-4-5"},
		&session.MessageEntry{Message: &session.SystemMessage{
			Sections:   []session.SystemSection{{Name: "preamble", Text: "You are Prime."}, {Name: "skills", Text: "Skills: none yet."}, {Name: "cwd", Text: "/tmp/project"}},
			ToolsAdded: []session.ToolDeclaration{read, {Name: "now", Description: "The time."}, {Name: "bash", Description: "Run a command.", ConstrainedSampling: []byte(`{"mode":"strict"}`)}},
			Timestamp:  testStart.UnixMilli(),
		}},
		user("Read a.go and b.go"),
	)
	call, err := llm.NewArguments([]byte(`{"path":"b\ud83d.go"}`))
	if err != nil {
		t.Fatal(err)
	}
	withCall := assistant("Reading.")
	withCall.Message.(*llm.AssistantMessage).Content = append(withCall.Message.(*llm.AssistantMessage).Content, llm.ToolCall{ID: "c1", Name: "read", Arguments: call})
	appendAll(withCall, toolResult(strings.Repeat("package b\n", 40)))
	failed := &llm.AssistantMessage{Provider: "anthropic", Model: "claude-sonnet-4-5", StopReason: llm.StopReasonError, ErrorMessage: "overloaded", Timestamp: 1}
	appendAll(&session.MessageEntry{Message: failed})
	failedID := s.LeafID()
	appendAll(hide(failedID), assistant("It declares package b."), &session.MessageEntry{Message: &session.SystemMessage{
		Sections: []session.SystemSection{{Name: "skills", Removed: true}, {Name: "cwd", Text: "/tmp/project/b"}}, ToolsRemoved: []string{"bash"}, Timestamp: 5,
	}})
	resultID := s.Entries()[4].ID
	appendAll(replace(resultID, "(long result elided)"), user("Summarize."), assistant("Done."))
	ctx, err := s.Context("")
	if err != nil {
		t.Fatal(err)
	}
	appendAll(&session.CompactionEntry{Summary: "Read a.go and b.go.", FirstKeptEntryID: s.Entries()[10].ID, TokensBefore: 100, SystemMessage: ctx.System()},
		user("Go on."))
	s.Close()
	if !bytes.Contains(mustRead(t, path), []byte(`{"path":"b\ud83d.go"}`)) {
		t.Error("the lone surrogate is not written as pi writes it")
	}

	r, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	for i := range r.Len() {
		fmt.Fprintf(&in, `{"cmd":"context","file":%q,"leaf":"#%d"}`+"\n", path, i)
	}
	cmd := exec.Command(bin, "batch")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pioracle batch: %v", err)
	}
	index := map[*session.Entry]int{}
	for i, e := range r.Entries() {
		index[e] = i
	}
	for i, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var pi oracleContext
		if err := json.Unmarshal(line, &pi); err != nil || pi.Error != "" {
			t.Fatalf("#%d: %v %s", i, err, pi.Error)
		}
		c, err := r.Context(r.Entries()[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		items := []oracleItem{}
		for j, m := range c.Messages {
			items = append(items, oracleItem{m.Role(), session.EstimateTokens(m), index[c.Entries[j]]})
		}
		if pi.Items == nil {
			pi.Items = []oracleItem{}
		}
		est, next := session.EstimateContextTokens(c.Messages), c.EstimateNext()
		if diff := cmp.Diff(pi.Items, items); diff != "" || est.Tokens != pi.Estimate.Tokens || next.Tokens != pi.Projected.Tokens {
			t.Errorf("#%d: estimates %d/%d, pi %d/%d; messages (-pi +Prime):\n%s", i, est.Tokens, next.Tokens, pi.Estimate.Tokens, pi.Projected.Tokens, diff)
		}
		if sys := c.System(); pi.System != nil {
			js, _ := json.Marshal(sys)
			if sys.Prompt() != pi.System.Prompt || string(js) != pi.System.JSON {
				t.Errorf("#%d: system state\nPrime  %s\npi 1.6 %s", i, js, pi.System.JSON)
			}
		} else if sys != nil {
			t.Errorf("#%d: Prime replays a system state, pi none", i)
		}
	}
	t.Logf("pi 1.6 read the %d entries Prime wrote as Prime does", r.Len())
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
