package sessiongen

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

func TestDeterministicAndExact(t *testing.T) {
	for _, o := range []Options{
		{Entries: 0, Seed: 1},
		{Entries: 1, Seed: 1},
		{Entries: 250, Seed: 7},
		{Entries: 250, Seed: 7, TrailingHugeResults: 2, KeepRecentTokens: 1000},
		{Entries: 500, Seed: 3, NoCompactions: true, BranchRate: -1, HugeRate: -1, ImageRate: -1},
		{Entries: 60, Seed: 3, SizeScale: 0.02},
	} {
		a, b := Bytes(o), Bytes(o)
		if !bytes.Equal(a, b) {
			t.Fatalf("%+v: not deterministic", o)
		}
		if n := bytes.Count(a, []byte("\n")); n != o.Entries+1 {
			t.Errorf("%+v: %d lines, want %d", o, n, o.Entries+1)
		}
	}
	if bytes.Equal(Bytes(Options{Entries: 50, Seed: 1}), Bytes(Options{Entries: 50, Seed: 2})) {
		t.Error("different seeds give the same session")
	}
}

// generated parses a generated session.
func generated(t *testing.T, o Options) *session.Session {
	t.Helper()
	s, err := session.Parse("gen", Bytes(o))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings()) > 0 {
		t.Fatalf("%+v: warnings %v", o, s.Warnings())
	}
	return s
}

// consistencyOptions are sessions of every shape the tests use.
var consistencyOptions = []Options{
	{Entries: 3000, Seed: 1, ContextWindow: 100_000},
	{Entries: 3000, Seed: 2, ContextWindow: 30_000, KeepRecentTokens: 4_000, ReserveTokens: 2_000, BranchRate: 0.1},
	{Entries: 1500, Seed: 3, HugeRate: 0.02, ImageRate: 0.1, ContextWindow: 80_000, TrailingHugeResults: 2},
	{Entries: 1500, Seed: 4, SizeScale: 0.2, ContextWindow: 20_000, KeepRecentTokens: 2_000},
	{Entries: 800, Seed: 5, SizeScale: 3, NoCompactions: true},
	{Entries: 3000, Seed: 6, ContextWindow: 60_000, BranchRate: 0.1, Pi16: true},
	{Entries: 1500, Seed: 7, SizeScale: 0.2, ContextWindow: 20_000, KeepRecentTokens: 2_000, Pi16: true},
}

// TestNoOrphanResults: every tool result answers a call of the assistant
// message it follows, and a failed turn has no calls.
func TestNoOrphanResults(t *testing.T) {
	for _, o := range consistencyOptions {
		s := generated(t, o)
		failed := 0
		for _, e := range s.Entries() {
			m, _ := session.ContextMessage(e)
			switch m := m.(type) {
			case *llm.AssistantMessage:
				if m.StopReason == llm.StopReasonError || m.StopReason == llm.StopReasonAborted {
					failed++
					if len(m.ToolCalls()) > 0 {
						t.Fatalf("seed %d: failed turn %s has tool calls", o.Seed, e.ID)
					}
				}
			case *llm.ToolResultMessage:
				a := callerOf(s, e)
				if a == nil || !hasCall(a, m.ToolCallID) {
					t.Fatalf("seed %d: tool result %s (%s) answers no call of the assistant before it", o.Seed, e.ID, m.ToolCallID)
				}
			}
		}
		if o.Entries >= 3000 && failed == 0 {
			t.Errorf("seed %d: no failed turns", o.Seed)
		}
	}
}

// callerOf is the nearest assistant message above e.
func callerOf(s *session.Session, e *session.Entry) *llm.AssistantMessage {
	for p := s.Entry(e.ParentID); p != nil; p = s.Entry(p.ParentID) {
		m, _ := session.ContextMessage(p)
		switch m := m.(type) {
		case *llm.AssistantMessage:
			return m
		case *llm.ToolResultMessage:
			continue
		}
		if m != nil {
			return nil
		}
	}
	return nil
}

func hasCall(a *llm.AssistantMessage, id string) bool {
	for _, c := range a.ToolCalls() {
		if c.ID == id {
			return true
		}
	}
	return false
}

// TestUsageMatchesContext: every usage reports as input (fresh, cache
// read and cache write) the system prompt plus the chars/4 estimate of the
// context the model was sent, and as output the message's own estimate;
// after a compaction the next usage measures the compacted context.
func TestUsageMatchesContext(t *testing.T) {
	for _, o := range consistencyOptions {
		s := generated(t, o)
		checked, afterCompaction := 0, 0
		for _, e := range s.Entries() {
			m, _ := session.ContextMessage(e)
			a, ok := m.(*llm.AssistantMessage)
			if !ok {
				continue
			}
			u, ok := session.ValidUsage(a)
			if !ok {
				if a.Usage.TotalTokens != 0 {
					t.Fatalf("seed %d: failed turn %s has usage", o.Seed, e.ID)
				}
				continue
			}
			ctx, err := session.BuildContext(s.Path(e.ParentID))
			if err != nil {
				t.Fatal(err)
			}
			// The prompt: the replayed system state (pi 1.6) or a fixed
			// size.
			want := SystemPromptTokens
			if sys := ctx.System(); sys != nil {
				want = session.EstimateTokens(sys)
			}
			for _, cm := range ctx.Messages {
				switch cm := cm.(type) {
				case *session.BashExecution:
					if cm.ExcludeFromContext {
						continue
					}
				case *session.SystemMessage:
					continue
				}
				want += session.EstimateTokens(cm)
			}
			if got := u.Input + u.CacheRead + u.CacheWrite; got != want {
				t.Fatalf("seed %d: %s: input %d, want the context's %d", o.Seed, e.ID, got, want)
			}
			if u.Output != session.EstimateTokens(a) || u.TotalTokens != want+u.Output {
				t.Fatalf("seed %d: %s: usage %+v, output want %d", o.Seed, e.ID, u, session.EstimateTokens(a))
			}
			if u.CacheRead > want || u.Input < 0 || u.CacheWrite < 0 {
				t.Fatalf("seed %d: %s: bad cache split %+v", o.Seed, e.ID, u)
			}
			checked++
			if len(ctx.Entries) > 0 && ctx.Entries[0].Type == session.TypeCompaction {
				p, _ := ctx.Entries[0].Payload()
				if before := p.(*session.CompactionEntry).TokensBefore; u.TotalTokens < before {
					afterCompaction++
				}
			}
		}
		if checked == 0 {
			t.Fatalf("seed %d: no usage", o.Seed)
		}
		if !o.NoCompactions && afterCompaction == 0 {
			t.Errorf("seed %d: no usage after a compaction is below its tokensBefore", o.Seed)
		}
	}
}

// TestConsistentTools: an edit's oldText is text of the file as a whole
// read shows it, a failed edit's is not; a failing test run reports its
// exit code; a compaction keeps an entry of its own path.
func TestConsistentTools(t *testing.T) {
	for _, o := range consistencyOptions {
		s := generated(t, o)
		contents := map[string]string{}
		type edit struct {
			path, old string
			failed    bool
		}
		calls := map[string]llm.ToolCall{}
		var edits []edit
		compactions := 0
		for _, e := range s.Entries() {
			if e.Type == session.TypeCompaction {
				compactions++
				if session.KeptStart(s.Path(e.ID), len(s.Path(e.ID))-1) < 0 {
					t.Fatalf("seed %d: compaction %s keeps an entry not on its path", o.Seed, e.ID)
				}
			}
			m, _ := session.ContextMessage(e)
			switch m := m.(type) {
			case *llm.AssistantMessage:
				for _, c := range m.ToolCalls() {
					calls[c.ID] = c
				}
			case *llm.ToolResultMessage:
				c := calls[m.ToolCallID]
				path, _ := c.Arguments.StringArg("path")
				switch c.Name {
				case "read":
					if _, windowed := c.Arguments.Get("offset"); !windowed && len(m.Content) == 1 && !m.IsError {
						contents[path] = m.Content[0].(llm.Text).Text
					}
				case "edit":
					old, _ := c.Arguments.StringArg("oldText")
					edits = append(edits, edit{path, old, m.IsError})
				case "bash":
					text := m.Content[0].(llm.Text).Text
					if m.IsError != strings.Contains(text, "\n\nCommand exited with code ") {
						t.Fatalf("seed %d: bash result error=%v but %q", o.Seed, m.IsError, text)
					}
				}
			}
		}
		checked := 0
		for _, ed := range edits {
			if text, ok := contents[ed.path]; ok {
				checked++
				if strings.Contains(text, ed.old) == ed.failed {
					t.Fatalf("seed %d: edit of %s (failed %v): oldText %q vs the file", o.Seed, ed.path, ed.failed, ed.old)
				}
			}
		}
		if checked == 0 {
			t.Errorf("seed %d: no edit of a file read whole", o.Seed)
		}
		if !o.NoCompactions && compactions == 0 {
			t.Errorf("seed %d: no compactions", o.Seed)
		}
	}
}

// TestReadableText: user and assistant texts start at a word (a capital,
// or code such as an identifier or a path), never inside one.
func TestReadableText(t *testing.T) {
	for _, o := range consistencyOptions {
		s := generated(t, o)
		for _, e := range s.Entries() {
			m, _ := session.ContextMessage(e)
			var texts []string
			switch m := m.(type) {
			case *llm.UserMessage:
				texts = textsOf(m.Content)
			case *llm.AssistantMessage:
				for _, c := range m.Content {
					switch c := c.(type) {
					case llm.Text:
						texts = append(texts, c.Text)
					case llm.Thinking:
						texts = append(texts, c.Thinking)
					}
				}
			}
			for _, text := range texts {
				if !startsAtWord(text) {
					t.Fatalf("seed %d: %s starts inside a word: %.80q", o.Seed, e.ID, text)
				}
			}
		}
	}
}

func textsOf(content []llm.Content) []string {
	var out []string
	for _, c := range content {
		if t, ok := c.(llm.Text); ok {
			out = append(out, t.Text)
		}
	}
	return out
}

func startsAtWord(text string) bool {
	r, _ := utf8.DecodeRuneInString(text)
	if !unicode.IsLower(r) {
		return unicode.IsUpper(r) || strings.ContainsRune("`\"", r) || unicode.IsDigit(r) || r >= 0x2E80
	}
	word, _, _ := strings.Cut(text, " ")
	return strings.ContainsAny(word, "/._ABCDEFGHIJKLMNOPQRSTUVWXYZ")
}

// TestVariety: a session has every kind of entry, content and text the
// tests of other packages rely on.
func TestVariety(t *testing.T) {
	data := Bytes(Options{Entries: 4000, Seed: 3, ContextWindow: 60_000, BranchRate: 0.05, HugeRate: 0.005, ImageRate: 0.02})
	s, err := session.Parse("gen", data)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	for _, e := range s.Entries() {
		types[e.Type]++
		if e.Type == session.TypeMessage {
			role, _ := e.MessageRole()
			types["message/"+role]++
		}
	}
	for _, want := range []string{session.TypeMessage, session.TypeCompaction, session.TypeBranchSummary, session.TypeModelChange,
		session.TypeThinkingLevelChange, session.TypeLabel, session.TypeSessionInfo, session.TypeCustom, session.TypeCustomMessage,
		"message/user", "message/assistant", "message/toolResult", "message/bashExecution"} {
		if types[want] == 0 {
			t.Errorf("no %s entries (have %v)", want, types)
		}
	}
	for name, re := range map[string]string{
		"CJK": `\p{Han}`, "emoji": `[\x{1F300}-\x{1FAFF}]`, "accents": `[éüãøí]`, "quotes": `\\"`, "backslashes": `\\\\`,
		"tags": `<th>|<table`, "tabs": `\\t`, "images": `"type":"image"`, "aborted": `"stopReason":"aborted"`,
		"errors": `"stopReason":"error"`, "excluded shell": `"excludeFromContext":true`, "failed tools": `"isError":true`,
		"thinking": `"type":"thinking"`, "openai": `"provider":"openai"`,
	} {
		if !regexp.MustCompile(re).Match(data) {
			t.Errorf("no %s", name)
		}
	}
	huge := false
	for _, line := range bytes.Split(data, []byte("\n")) {
		huge = huge || len(line) > 64<<10
	}
	if !huge {
		t.Error("no huge tool result")
	}
	var details struct {
		ReadFiles     []string `json:"readFiles"`
		ModifiedFiles []string `json:"modifiedFiles"`
	}
	for _, e := range s.Entries() {
		if e.Type == session.TypeCompaction {
			p, _ := e.Payload()
			if err := json.Unmarshal(p.(*session.CompactionEntry).Details, &details); err != nil || len(details.ReadFiles) == 0 {
				t.Errorf("compaction details %s: %v", p.(*session.CompactionEntry).Details, err)
			}
			break
		}
	}
}

// TestPi16Shapes: a session generated with Pi16 holds pi 1.6's shapes:
// the model, thinking level and system message first; patches that change
// and remove sections and add and remove tools; failed attempts of both
// kinds hidden by context edits (the reply and each of its results); and
// compactions carrying the system state the context had at their parent,
// stamped with their own time.
func TestPi16Shapes(t *testing.T) {
	s := generated(t, Options{Entries: 4000, Seed: 3, ContextWindow: 60_000, BranchRate: 0.05, Pi16: true})
	es := s.Entries()
	if es[0].Type != session.TypeModelChange || es[1].Type != session.TypeThinkingLevelChange {
		t.Fatalf("session starts with %s, %s", es[0].Type, es[1].Type)
	}
	first, err := es[2].Message()
	if err != nil {
		t.Fatal(err)
	}
	sys, ok := first.(*session.SystemMessage)
	if !ok || sys.Content != "" || len(sys.Sections) < 5 || len(sys.ToolsAdded) != 4 || !sys.ToolsAdded[0].Parameters.IsValid() {
		t.Fatalf("third entry %+v", first)
	}
	count := map[string]int{}
	hidden := map[string]bool{}
	for _, e := range es[3:] {
		switch e.Type {
		case session.TypeContextEdit:
			p, _ := e.Payload()
			edit := p.(*session.ContextEditEntry)
			if edit.Replacement != nil || s.Entry(edit.TargetID) == nil {
				t.Fatalf("edit %+v", edit)
			}
			hidden[edit.TargetID] = true
			count["edit"]++
		case session.TypeCompaction:
			p, _ := e.Payload()
			c := p.(*session.CompactionEntry)
			before, err := s.Context(e.ParentID)
			if err != nil {
				t.Fatal(err)
			}
			want := before.System()
			if c.SystemMessage == nil || c.SystemMessage.Prompt() != want.Prompt() || len(c.SystemMessage.ToolsAdded) != len(want.ToolsAdded) ||
				c.SystemMessage.Timestamp != e.Millis() {
				t.Fatalf("compaction %s carries %+v, want the state at its parent", e.ID, c.SystemMessage)
			}
			count["compaction"]++
		case session.TypeMessage:
			m, _ := e.Message()
			if p, ok := m.(*session.SystemMessage); ok {
				for _, sec := range p.Sections {
					if sec.Removed {
						count["section removed"]++
					} else {
						count["section changed"]++
					}
				}
				count["tool added"] += len(p.ToolsAdded)
				count["tool removed"] += len(p.ToolsRemoved)
			}
		}
	}
	for _, e := range es {
		if !hidden[e.ID] {
			continue
		}
		m, _ := e.Message()
		switch m := m.(type) {
		case *llm.AssistantMessage:
			count["hidden "+string(m.StopReason)]++
		case *llm.ToolResultMessage:
			count["hidden result"]++
		}
	}
	for _, want := range []string{"edit", "compaction", "section removed", "section changed", "tool added", "tool removed",
		"hidden error", "hidden length", "hidden result"} {
		if count[want] == 0 {
			t.Errorf("no %s (have %v)", want, count)
		}
	}
	// What the model sees at the end replays to a prompt and its tools.
	c, err := s.Context("")
	if err != nil {
		t.Fatal(err)
	}
	if c.System() == nil || !strings.Contains(c.System().Prompt(), "coding agent") || len(c.Tools()) < 4 {
		t.Errorf("final system state %+v", c.System())
	}
}

// BenchmarkGenerate measures the generator on the sessions benchmarks use.
func BenchmarkGenerate(b *testing.B) {
	for _, o := range []Options{{Entries: 10_000, Seed: 1}, {Entries: 10_000, Seed: 1, NoCompactions: true, BranchRate: -1}} {
		name := "10k"
		if o.NoCompactions {
			name += "-linear"
		}
		b.Run(name, func(b *testing.B) {
			var n int
			for b.Loop() {
				n = len(Bytes(o))
			}
			b.SetBytes(int64(n))
			b.ReportMetric(float64(n)/float64(o.Entries), "bytes/entry")
		})
	}
}

// TestEdgeCases: every hand-written session says what it is for and reads
// without a warning, each line a JSON object (they are pi's lines).
func TestEdgeCases(t *testing.T) {
	cases := EdgeCases()
	if len(cases) != len(edgeAbout) {
		t.Errorf("%d edge cases, %d described", len(cases), len(edgeAbout))
	}
	for _, c := range cases {
		if c.About == "" {
			t.Errorf("%s: not described", c.Name)
		}
		s, err := session.Parse(c.Name, c.Data)
		if err != nil || len(s.Warnings()) > 0 || s.Len() == 0 {
			t.Errorf("%s: %v, warnings %v", c.Name, err, s.Warnings())
			continue
		}
		for _, e := range s.Entries() {
			if _, err := s.Context(e.ID); err != nil {
				t.Errorf("%s: context at %s: %v", c.Name, e.ID, err)
			}
		}
	}
}
