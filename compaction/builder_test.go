package compaction

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// builder makes root→leaf paths of real session entries (encoded with
// session.EncodeEntry and read back with session.NewEntry).
type builder struct {
	t       testing.TB
	path    []*session.Entry
	byID    map[string]*session.Entry
	clock   time.Time
	pending []string // tool call ids without a result yet, oldest first
}

func newBuilder(t testing.TB) *builder {
	return &builder{t: t, byID: map[string]*session.Entry{}, clock: time.Date(2025, 12, 3, 14, 0, 0, 0, time.UTC)}
}

// add appends an entry with the given payload as a child of the last one.
func (b *builder) add(id string, p session.Payload) *session.Entry {
	b.t.Helper()
	parent := ""
	if n := len(b.path); n > 0 {
		parent = b.path[n-1].ID
	}
	return b.addUnder(id, parent, p)
}

// addUnder appends an entry under parent (which must exist, or "" for a
// root) and makes the path run root→new entry.
func (b *builder) addUnder(id, parent string, p session.Payload) *session.Entry {
	b.t.Helper()
	b.clock = b.clock.Add(time.Second)
	line, err := session.EncodeEntry(id, parent, session.FormatTime(b.clock), p)
	if err != nil {
		b.t.Fatal(err)
	}
	e, err := session.NewEntry(line)
	if err != nil {
		b.t.Fatal(err)
	}
	b.byID[id] = e
	if n := len(b.path); n > 0 && b.path[n-1].ID == parent || n == 0 && parent == "" {
		b.path = append(b.path, e)
		return e
	}
	var path []*session.Entry
	for cur := e; cur != nil; cur = b.byID[cur.ParentID] {
		path = append(path, cur)
		if cur.ParentID == "" {
			break
		}
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	b.path = path
	return e
}

// appended returns path with an entry holding p appended as a child of its
// leaf, encoded and read back as a session stores it. path is not changed.
func appended(t testing.TB, path []*session.Entry, id string, p session.Payload) []*session.Entry {
	t.Helper()
	line, err := session.EncodeEntry(id, path[len(path)-1].ID, "2030-01-01T00:00:00.000Z", p)
	if err != nil {
		t.Fatal(err)
	}
	e, err := session.NewEntry(line)
	if err != nil {
		t.Fatal(err)
	}
	return append(slices.Clip(path), e)
}

func (b *builder) ms() int64 { return b.clock.Add(time.Second).UnixMilli() }

// text makes a text of n characters starting with the entry's id, so
// transcripts show where a text came from.
func text(id string, n int) string {
	if n <= len(id) {
		return id
	}
	return id + " " + strings.Repeat("x", n-len(id)-1)
}

func (b *builder) user(id, s string) *session.Entry {
	return b.add(id, &session.MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: s}}, Timestamp: b.ms()}})
}

func (b *builder) assistant(id string, content []llm.Content, usage llm.Usage) *session.Entry {
	return b.add(id, &session.MessageEntry{Message: &llm.AssistantMessage{
		Content: content, API: llm.APIAnthropicMessages, Provider: "anthropic", Model: "claude-sonnet-4-5",
		Usage: usage, StopReason: llm.StopReasonStop, Timestamp: b.ms(),
	}})
}

func (b *builder) toolResult(id, callID, name, body string, isError bool) *session.Entry {
	return b.add(id, &session.MessageEntry{Message: &llm.ToolResultMessage{
		ToolCallID: callID, ToolName: name, Content: []llm.Content{llm.Text{Text: body}}, IsError: isError, Timestamp: b.ms(),
	}})
}

func (b *builder) compaction(id, keep, summary string, details string, fromHook bool) *session.Entry {
	var d jsontext.Value
	if details != "" {
		d = jsontext.Value(details)
	}
	return b.add(id, &session.CompactionEntry{Summary: summary, FirstKeptEntryID: keep, TokensBefore: 1000, Details: d, FromHook: fromHook})
}

func call(id, name, args string) llm.ToolCall {
	a, err := llm.NewArguments([]byte(args))
	if err != nil {
		panic(err)
	}
	return llm.ToolCall{ID: id, Name: name, Arguments: a}
}

// dslToken matches one token of the path language (see parse).
var dslToken = regexp.MustCompile(`\S+\([^)]*\)|\S+`)

// parse appends entries described by a little language, one token each,
// the id first (its first letter gives the kind):
//
//	u1 u1:40          user message (of 40 characters)
//	a1 a1:40 a1@500/100  assistant text (with usage input/output)
//	a1:8!read=x.ts!edit=y.ts  assistant text and tool calls (ids call-a1-0, …)
//	r1 r1:400 r1:400:err  result of the oldest unanswered tool call
//	b1              bash execution          c1   custom_message
//	s1              branch summary          e1   empty branch summary
//	m1              thinking level change   M1   model change
//	l1              label                   x1   custom entry (extension state)
//	C1(keep u2)     compaction keeping from u2, summary "summary C1"
//	S1 S1:400       system message, one section (of 400 characters)
//	H1(a2)          context edit hiding a2
//	R1:40(a2)       context edit replacing a2's content (40 characters)
func (b *builder) parse(spec string) *builder {
	b.t.Helper()
	for _, tok := range dslToken.FindAllString(spec, -1) {
		b.token(tok)
	}
	return b
}

func (b *builder) token(tok string) {
	b.t.Helper()
	if strings.HasPrefix(tok, "C") {
		m := regexp.MustCompile(`^(C\w*)\(keep (\S+)\)$`).FindStringSubmatch(tok)
		if m == nil {
			b.t.Fatalf("bad compaction token %q", tok)
		}
		b.compaction(m[1], m[2], "summary "+m[1], `{"readFiles":[],"modifiedFiles":[]}`, false)
		return
	}
	if m := regexp.MustCompile(`^([HR]\w*?)(?::(\d+))?\((\S+)\)$`).FindStringSubmatch(tok); m != nil {
		edit := &session.ContextEditEntry{TargetID: m[3]}
		if m[1][0] == 'R' {
			n, _ := strconv.Atoi(m[2])
			edit.Replacement = &session.ContextReplacement{Content: []llm.Content{llm.Text{Text: text(m[1], n)}}}
		}
		b.add(m[1], edit)
		return
	}
	parts := strings.Split(tok, "!")
	head, calls := parts[0], parts[1:]
	var usage llm.Usage
	if i := strings.Index(head, "@"); i >= 0 {
		var in, out int
		if _, err := fmt.Sscanf(head[i+1:], "%d/%d", &in, &out); err != nil {
			b.t.Fatalf("bad usage in %q", tok)
		}
		usage = llm.Usage{Input: in, Output: out, TotalTokens: in + out}
		head = head[:i]
	}
	fields := strings.Split(head, ":")
	id := fields[0]
	size := 0
	if len(fields) > 1 {
		n, err := strconv.Atoi(fields[1])
		if err != nil {
			b.t.Fatalf("bad size in %q", tok)
		}
		size = n
	}
	isErr := len(fields) > 2 && fields[2] == "err"
	body := text(id, size)
	switch id[0] {
	case 'u':
		b.user(id, body)
	case 'a':
		content := []llm.Content{llm.Text{Text: body}}
		for i, c := range calls {
			name, path, _ := strings.Cut(c, "=")
			cid := fmt.Sprintf("call-%s-%d", id, i)
			content = append(content, call(cid, name, `{"path":"`+path+`"}`))
			b.pending = append(b.pending, cid+" "+name)
		}
		b.assistant(id, content, usage)
	case 'r':
		if len(b.pending) == 0 {
			b.t.Fatalf("%s: no tool call to answer", id)
		}
		cid, name, _ := strings.Cut(b.pending[0], " ")
		b.pending = b.pending[1:]
		b.toolResult(id, cid, name, body, isErr)
	case 'b':
		zero := 0
		b.add(id, &session.MessageEntry{Message: &session.BashExecution{Command: "ls " + id, Output: body, ExitCode: &zero, Timestamp: b.ms()}})
	case 'c':
		b.add(id, &session.CustomMessageEntry{CustomType: "note", Content: []llm.Content{llm.Text{Text: body}}, Display: true})
	case 's':
		b.add(id, &session.BranchSummaryEntry{FromID: "elsewhere", Summary: "branch " + body})
	case 'e':
		b.add(id, &session.BranchSummaryEntry{FromID: "elsewhere", Summary: ""})
	case 'm':
		b.add(id, &session.ThinkingLevelChangeEntry{ThinkingLevel: llm.ThinkingHigh})
	case 'M':
		b.add(id, &session.ModelChangeEntry{Provider: "openai", ModelID: "gpt-4"})
	case 'l':
		target := ""
		if n := len(b.path); n > 0 {
			target = b.path[n-1].ID
		}
		b.add(id, &session.LabelEntry{TargetID: target, Label: "mark"})
	case 'x':
		b.add(id, &session.CustomEntry{CustomType: "state", Data: jsontext.Value(`{"k":1}`)})
	case 'S':
		b.add(id, &session.MessageEntry{Message: &session.SystemMessage{Sections: []session.SystemSection{{Name: "prompt", Text: body}}, Timestamp: b.ms()}})
	default:
		b.t.Fatalf("unknown token %q", tok)
	}
}

// index returns the position of the entry with id on the path.
func (b *builder) index(id string) int {
	for i, e := range b.path {
		if e.ID == id {
			return i
		}
	}
	b.t.Fatalf("no entry %q on the path", id)
	return -1
}

// ids names the messages by the entry ids that produced them, matching
// message pointers against the path's decoded messages by their text.
func ids(t testing.TB, msgs []session.Message) []string {
	t.Helper()
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, label(m))
	}
	return out
}

// label returns the id a test message starts with (see text), or its role.
func label(m session.Message) string {
	first := func(s string) string {
		f, _, _ := strings.Cut(s, " ")
		return f
	}
	switch m := m.(type) {
	case *llm.UserMessage:
		return first(llm.TextOf(m.Content))
	case *llm.AssistantMessage:
		return first(m.Text())
	case *llm.ToolResultMessage:
		return first(llm.TextOf(m.Content))
	case *session.CustomMessage:
		return first(llm.TextOf(m.Content))
	case *session.BashExecution:
		return first(m.Output)
	case *session.BranchSummaryMessage:
		if m.Summary == "" {
			return "(empty)"
		}
		return first(strings.TrimPrefix(m.Summary, "branch "))
	}
	return m.Role()
}
