package tui

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/internal/numfmt"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

func TestNumbers(t *testing.T) {
	for _, c := range []struct {
		n             int
		tokens, comma string
	}{
		{0, "0", "0"}, {999, "999", "999"}, {1000, "1k", "1,000"}, {1234, "1.2k", "1,234"},
		{12_345, "12k", "12,345"}, {999_499, "999k", "999,499"}, {1_260_000, "1.3M", "1,260,000"},
		{12_000_000, "12M", "12,000,000"}, {-4200, "-4200", "-4,200"},
	} {
		if got := tokenCount(c.n); got != c.tokens {
			t.Errorf("tokenCount(%d) = %q, want %q", c.n, got, c.tokens)
		}
		if got := numfmt.Commas(c.n); got != c.comma {
			t.Errorf("numfmt.Commas(%d) = %q, want %q", c.n, got, c.comma)
		}
	}
}

func TestMeter(t *testing.T) {
	st := newStyles()
	for _, c := range []struct {
		usage agent.ContextUsage
		auto  bool
		text  string
		style string
	}{
		{agent.ContextUsage{Tokens: 0, Known: true, Window: 200000}, true, "0.0%/200k (auto)", "muted"},
		{agent.ContextUsage{Tokens: 150000, Known: true, Window: 200000, Percent: 75}, false, "75.0%/200k", "warning"},
		{agent.ContextUsage{Tokens: 190000, Known: true, Window: 200000, Percent: 95}, true, "95.0%/200k (auto)", "error"},
		{agent.ContextUsage{Window: 4000}, true, "?/4k (auto)", "muted"},
		{agent.ContextUsage{}, false, "?/?", "muted"},
	} {
		f := footer{usage: c.usage, auto: c.auto}
		if got := f.meter(); got != c.text {
			t.Errorf("meter of %+v = %q, want %q", c.usage, got, c.text)
		}
		want := map[string]any{"muted": st.muted.GetForeground(), "warning": st.warning.GetForeground(), "error": st.errorText.GetForeground()}[c.style]
		if got := f.meterStyle(&st).GetForeground(); got != want {
			t.Errorf("meter of %+v is coloured %v, want %s", c.usage, got, c.style)
		}
	}
}

func TestFooter(t *testing.T) {
	st := newStyles()
	m := &llm.Model{ID: "claude-test", Reasoning: true}
	f := footer{cwd: "/home/me/proj", home: "/home/me", branch: "main", name: "auth work", model: m, thinking: llm.ThinkingHigh,
		stats: agent.Stats{Tokens: llm.Usage{Input: 12_345, Output: 678, CacheRead: 2000}, Cost: 0.0421},
		usage: agent.ContextUsage{Tokens: 10, Known: true, Window: 200000, Percent: 5}, auto: true}
	got := ansi.Strip(f.render(&view{width: 70, st: &st}))
	want := "~/proj (main) • auth work\n" +
		"↑12k ↓678 R2k $0.042 5.0%/200k (auto)               claude-test • high"
	if got != want {
		t.Errorf("footer:\n%s\nwant:\n%s", got, want)
	}
	f.permission = "sandbox"
	if got := ansi.Strip(f.render(&view{width: 70, st: &st})); !strings.HasPrefix(got, "~/proj (main) • auth work • sandbox\n") {
		t.Errorf("a sandboxed session's footer:\n%s", got)
	}
	f.model.Reasoning = false
	if got := ansi.Strip(f.render(&view{width: 70, st: &st})); !strings.HasSuffix(got, " claude-test") {
		t.Errorf("a model that does not reason shows a level:\n%s", got)
	}
}

func TestParseCommand(t *testing.T) {
	for _, c := range []struct {
		in, name, args string
		ok             bool
	}{
		{"/compact", "compact", "", true},
		{"/compact  focus on X ", "compact", "focus on X", true},
		{"/tree", "tree", "", true},
		{"/usr/bin is where it lives", "", "", false},
		{"/unknown", "", "", false},
		{"compact", "", "", false},
		{"/name\nmy session", "name", "my session", true},
	} {
		name, args, ok := parseCommand(c.in)
		if name != c.name || args != c.args || ok != c.ok {
			t.Errorf("parseCommand(%q) = %q, %q, %v; want %q, %q, %v", c.in, name, args, ok, c.name, c.args, c.ok)
		}
	}
}

func TestToolTitles(t *testing.T) {
	for _, c := range []struct{ name, args, want string }{
		{"bash", `{"command":"go test ./...\n  -run X","timeout":30}`, "$ go test ./... -run X (timeout 30s)"},
		{"read", `{"path":"a.go","offset":10,"limit":5}`, "read a.go:10-14"},
		{"read", `{"path":"a.go","limit":5}`, "read a.go:1-5"},
		{"edit", `{"path":"a.go","edits":[]}`, "edit a.go"},
		{"grep", `{"pattern":"func .*","path":"tui","glob":"*.go"}`, "grep /func .*/ in tui (*.go)"},
		{"find", `{"pattern":"*.md"}`, "find *.md"},
		{"ls", `{}`, "ls ."},
		{"probe", `{"target":"./..."}`, `probe {"target":"./..."}`},
	} {
		a, err := llm.NewArguments([]byte(c.args))
		if err != nil {
			t.Fatal(err)
		}
		if got := (&toolItem{name: c.name, args: a}).title(); got != c.want {
			t.Errorf("%s %s: title %q, want %q", c.name, c.args, got, c.want)
		}
	}
	// While the arguments stream in, the title is read from what came.
	if got := (&toolItem{name: "read", rawArgs: `{"path":"b.go"}`}).title(); got != "read b.go" {
		t.Errorf("streamed title %q", got)
	}
}

func TestToolPreview(t *testing.T) {
	st := newStyles()
	var lines []string
	for i := 1; i <= 12; i++ {
		lines = append(lines, "line "+itoa(i))
	}
	bash := &toolItem{name: "bash", output: strings.Join(lines, "\n"), done: true, took: 1500 * time.Millisecond}
	collapsed := ansi.Strip(bash.render(&view{width: 60, st: &st}))
	if !strings.Contains(collapsed, "… (7 earlier lines, ctrl+o to expand)") || strings.Contains(collapsed, "line 7\n") || !strings.Contains(collapsed, "line 12") {
		t.Errorf("collapsed bash block:\n%s", collapsed)
	}
	if !strings.Contains(collapsed, "Took 1.5s") {
		t.Errorf("no duration:\n%s", collapsed)
	}
	expanded := ansi.Strip(bash.render(&view{width: 60, st: &st, expanded: true}))
	if !strings.Contains(expanded, "line 1\n") || strings.Contains(expanded, "earlier lines") {
		t.Errorf("expanded bash block:\n%s", expanded)
	}
	grep := &toolItem{name: "grep", output: strings.Join(lines, "\n"), done: true}
	if g := ansi.Strip(grep.render(&view{width: 60, st: &st})); !strings.Contains(g, "line 5\n") || !strings.Contains(g, "… (7 more lines, ctrl+o to expand)") {
		t.Errorf("collapsed grep block:\n%s", g)
	}
	edit := &toolItem{name: "edit", done: true, details: []byte(`{"diff":"  3 func main() {\n- 4 \tprintln(\"hi\")\n+ 4 \tprintln(\"hello\")\n  5 }"}`)}
	e := edit.render(&view{width: 60, st: &st})
	if !strings.Contains(e, st.diffAdd.Render(`+ 4     println("hello")`)) && !strings.Contains(ansi.Strip(e), `+ 4`) {
		t.Errorf("edit block:\n%s", e)
	}
	for _, want := range []string{`- 4`, `+ 4`, `println("hello")`} {
		if !strings.Contains(ansi.Strip(e), want) {
			t.Errorf("edit block lacks %q:\n%s", want, ansi.Strip(e))
		}
	}
	// The counts are of the output's lines, not of the rows they wrap to:
	// 200 short lines and a long one that wraps to 6 rows, 4 of them shown.
	long := &toolItem{name: "bash", output: strings.Join(lines[:10], "\n") + "\n" + strings.Repeat("x", 300) + "\ndone", done: true}
	if l := ansi.Strip(long.render(&view{width: 60, st: &st})); !strings.Contains(l, "… (11 earlier lines, ctrl+o to expand)") {
		t.Errorf("the hidden count is not of lines (10 whole, 1 cut):\n%s", l)
	}
	cut := &toolItem{name: "grep", output: "a\nb\nc\nd\n" + strings.Repeat("y", 300) + "\nz", done: true}
	if c := ansi.Strip(cut.render(&view{width: 60, st: &st})); !strings.Contains(c, "… (2 more lines, ctrl+o to expand)") {
		t.Errorf("the count of lines below is not of lines (1 cut, 1 whole):\n%s", c)
	}
	one := &toolItem{name: "grep", output: strings.Join(lines[:6], "\n"), done: true}
	if o := ansi.Strip(one.render(&view{width: 60, st: &st})); !strings.Contains(o, "… (1 more line, ctrl+o to expand)") {
		t.Errorf("one line below:\n%s", o)
	}
	failed := &toolItem{name: "read", output: "ENOENT: no such file", isError: true, done: true}
	if f := ansi.Strip(failed.render(&view{width: 60, st: &st})); !strings.Contains(f, "ENOENT: no such file") {
		t.Errorf("a failed read hides its error:\n%s", f)
	}
}

func TestSummaryMarkdown(t *testing.T) {
	in := "## Goal\nx\n\n<read-files>\na.go\nb.go\n</read-files>\n\n<modified-files>\nc.go\n</modified-files>"
	want := "## Goal\nx\n\n**Files read:** `a.go`, `b.go`\n\n**Files modified:** `c.go`"
	if got := summaryMarkdown(in); got != want {
		t.Errorf("summaryMarkdown:\n%s\nwant:\n%s", got, want)
	}
}

func TestFileSuggestions(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"main.go", "Makefile", "docs/a.md", ".env"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, p), "x")
	}
	texts := func(s []suggestion) []string {
		var out []string
		for _, x := range s {
			out = append(out, x.text)
		}
		return out
	}
	for _, c := range []struct {
		partial string
		want    []string
	}{
		{"", []string{"@Makefile", "@docs/", "@main.go"}},
		{"ma", []string{"@Makefile", "@main.go"}},
		{"docs/", []string{"@docs/a.md"}},
		{".e", []string{"@.env"}},
		{"nowhere/x", nil},
	} {
		if got := texts(fileSuggestions(dir, c.partial)); !slices.Equal(got, c.want) {
			t.Errorf("fileSuggestions(%q) = %q, want %q", c.partial, got, c.want)
		}
	}
}

func TestEditorCompletionAndHistory(t *testing.T) {
	e := newEditor()
	e.setWidth(40)
	e.setValue("look at @ma")
	e.suggestions = []suggestion{{text: "@main.go"}}
	e.accept()
	if got := e.value(); got != "look at @main.go " {
		t.Errorf("after accepting a file: %q", got)
	}
	e.remember("first")
	e.remember("second")
	e.remember("second")
	e.reset()
	e.setValue("draft")
	e.browse(-1)
	if e.value() != "second" {
		t.Errorf("one back: %q", e.value())
	}
	e.browse(-1)
	if e.value() != "first" {
		t.Errorf("two back: %q", e.value())
	}
	e.browse(1)
	e.browse(1)
	if e.value() != "draft" {
		t.Errorf("back to the draft: %q", e.value())
	}
}

func TestEventsNeverBlock(t *testing.T) {
	ev := NewEvents()
	// Nothing reads yet: Send returns at once all the same.
	for i := range 1000 {
		ev.Send(agent.Notice{Text: itoa(i)})
	}
	ctx, cancel := context.WithCancel(context.Background())
	var got []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		ev.Attach(ctx, func(m tea.Msg) {
			for _, e := range m.(eventsMsg) {
				got = append(got, e.(agent.Notice).Text)
				if len(got) == 1001 {
					cancel()
				}
			}
		})
	}()
	ev.Send(agent.Notice{Text: "last"})
	<-done
	if len(got) != 1001 || got[0] != "0" || got[999] != "999" || got[1000] != "last" {
		t.Fatalf("delivered %d events, out of order or lost: first %q, last %q", len(got), got[0], got[len(got)-1])
	}
	ev.Send(agent.Notice{Text: "after the end"}) // must not block
}

func TestAge(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		ago  time.Duration
		want string
	}{{10 * time.Second, "now"}, {5 * time.Minute, "5m ago"}, {3 * time.Hour, "3h ago"}, {50 * time.Hour, "2d ago"}, {40 * 24 * time.Hour, "2026-01-20"}} {
		if got := age(now, now.Add(-c.ago)); got != c.want {
			t.Errorf("age %s = %q, want %q", c.ago, got, c.want)
		}
	}
}

// treeSession builds a session with two branches from the first reply:
//
//	user A → assistant A → user B → assistant B
//	                     ↘ user C (labeled "idea") → tool-only reply → tool result
func treeSession(t *testing.T) (*session.Session, map[string]string) {
	t.Helper()
	s, err := session.Create("", session.Options{CWD: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	add := func(name, parent string, m llm.Message) {
		e, err := s.AppendAt(ids[parent], &session.MessageEntry{Message: m})
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = e.ID
	}
	user := func(text string) *llm.UserMessage {
		return &llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}}
	}
	reply := func(text string) *llm.AssistantMessage {
		return &llm.AssistantMessage{Content: []llm.Content{llm.Text{Text: text}}, StopReason: llm.StopReasonStop}
	}
	add("uA", "", user("first question"))
	add("aA", "uA", reply("first answer"))
	add("uB", "aA", user("second question"))
	add("aB", "uB", reply("second answer"))
	add("uC", "aA", user("other idea"))
	args, _ := llm.NewArguments([]byte(`{"path":"x.go"}`))
	add("aC", "uC", &llm.AssistantMessage{Content: []llm.Content{llm.ToolCall{ID: "t1", Name: "read", Arguments: args}}, StopReason: llm.StopReasonToolUse})
	add("rC", "aC", &llm.ToolResultMessage{ToolCallID: "t1", ToolName: "read", Content: []llm.Content{llm.Text{Text: "package x"}}})
	if _, err := s.AppendAt(ids["rC"], &session.LabelEntry{TargetID: ids["uC"], Label: "idea"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetLeaf(ids["aB"]); err != nil {
		t.Fatal(err)
	}
	return s, ids
}

func rowsOf(ts *treeSelector) []string {
	var out []string
	for i, r := range ts.rows {
		line := r.prefix
		if ts.active[r.node.id] {
			line += "• "
		}
		if r.node.label != "" {
			line += "[" + r.node.label + "] "
		}
		line += r.node.text
		if i == ts.sel {
			line = "› " + line
		}
		out = append(out, line)
	}
	return out
}

func TestTreeSelector(t *testing.T) {
	s, ids := treeSession(t)
	ag := agent.New(s, agent.Config{})
	t.Cleanup(func() { ag.Close() })
	tree, err := ag.Tree(agent.TreeOptions{Describe: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := newTreeSelector(tree)
	want := []string{
		"• user: first question",
		"• assistant: first answer",
		"├⊟ • user: second question",
		"›│  • assistant: second answer",
		"└⊟ [idea] user: other idea",
		"   [read: x.go]",
	}
	want[3] = "› │  • assistant: second answer"
	if got := rowsOf(ts); !slices.Equal(got, want) {
		t.Errorf("default rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	ts.setFilter(filterUser)
	if got := rowsOf(ts); !slices.Equal(got, []string{"• user: first question", "├─ › • user: second question", "└─ [idea] user: other idea"}) &&
		!slices.Equal(got, []string{"• user: first question", "› ├─ • user: second question", "└─ [idea] user: other idea"}) {
		t.Errorf("user-only rows:\n%s", strings.Join(got, "\n"))
	}
	ts.setFilter(filterUser) // again: back to the default
	if ts.filter != filterDefault {
		t.Errorf("the same filter twice leaves %v", ts.filter)
	}
	ts.setFilter(filterLabeled)
	if got := rowsOf(ts); len(got) != 1 || !strings.Contains(got[0], "[idea] user: other idea") {
		t.Errorf("labeled rows:\n%s", strings.Join(got, "\n"))
	}
	ts.setFilter(filterDefault)
	ts.search = "idea other"
	ts.layout()
	if got := rowsOf(ts); len(got) != 1 || !strings.Contains(got[0], "other idea") {
		t.Errorf("search rows:\n%s", strings.Join(got, "\n"))
	}
	ts.search = ""
	ts.selID = ids["uC"]
	ts.layout()
	ts.fold()
	if got := rowsOf(ts); len(got) != 5 || !strings.Contains(got[4], "└⊞") {
		t.Errorf("folded rows:\n%s", strings.Join(got, "\n"))
	}
	ts.unfold()
	if got := rowsOf(ts); len(got) != 6 {
		t.Errorf("unfolded rows:\n%s", strings.Join(got, "\n"))
	}
	// All shows the label entry; a reply that only calls tools stays
	// hidden (it is not the current leaf), as in pi.
	ts.setFilter(filterAll)
	got := strings.Join(rowsOf(ts), "\n")
	if strings.Contains(got, "(tool calls)") {
		t.Errorf("all rows show the tool-only reply:\n%s", got)
	}
	for _, w := range []string{"[label: idea]"} {
		if !strings.Contains(got, w) {
			t.Errorf("all rows lack %q:\n%s", w, got)
		}
	}
}

// The /tree help line fits on one line at any width, the keys to go and to
// close kept longest.
func TestTreeHelpFits(t *testing.T) {
	for _, w := range []int{200, 120, 80, 60, 40, 20} {
		got := treeHelp(w)
		if strings.Contains(got, "\n") || ansi.StringWidth(got) > w {
			t.Errorf("at %d columns the help line does not fit: %q", w, got)
		}
		if w >= 40 && !strings.Contains(got, "enter go") {
			t.Errorf("at %d columns the help line lost enter: %q", w, got)
		}
		if w >= 120 && !strings.Contains(got, "escape close") {
			t.Errorf("at %d columns the help line lost escape: %q", w, got)
		}
	}
}

// Program output and diffs fit the screen: tabs take 4 columns (a terminal
// would give them 8 that the width does not count), and long lines break
// at their spaces.
func TestToolOutputFits(t *testing.T) {
	st := newStyles()
	v := &view{width: 40, st: &st, md: &replies{}}
	out := &toolItem{name: "bash", done: true, output: "ok  \tgithub.com/devteam/orbit/internal/api\t0.012s\n" +
		strings.Repeat("word ", 12) + "\n\tindented by a tab"}
	edit := &toolItem{name: "edit", done: true, details: []byte(`{"diff":"- 108 \t\tslog.Debug(\"planned\", \"station\", st.ID, \"passes\", n)\n+ 108 \t\tslog.Debug(\"planned\")"}`)}
	for _, it := range []*toolItem{out, edit} {
		for _, l := range strings.Split(it.render(v), "\n") {
			if w := ansi.StringWidth(l); w > v.width || strings.Contains(l, "\t") {
				t.Errorf("%s: line %q is %d cells wide (or holds a tab)", it.name, ansi.Strip(l), w)
			}
		}
	}
	if got := ansi.Strip(out.render(v)); !strings.Contains(got, "\n  word word word word word word word\n") {
		t.Errorf("output not broken at spaces:\n%s", got)
	}
}

func TestCacheHit(t *testing.T) {
	for _, c := range []struct {
		u    llm.Usage
		want string
	}{
		{llm.Usage{Input: 100}, ""},
		{llm.Usage{Input: 100, CacheRead: 900}, "CH90.0%"},
		{llm.Usage{Input: 10, CacheWrite: 990}, "CH0.0%"},
		{llm.Usage{Input: 1, CacheRead: 2, CacheWrite: 1}, "CH50.0%"},
	} {
		if got := cacheHit(c.u); got != c.want {
			t.Errorf("cacheHit(%+v) = %q, want %q", c.u, got, c.want)
		}
	}
}
