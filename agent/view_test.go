package agent_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// chat appends payloads one after another and names the entries.
type chat struct {
	t   *testing.T
	s   *session.Session
	ids map[string]string
}

func newChat(t *testing.T) *chat {
	t.Helper()
	s, err := session.Create("", session.Options{CWD: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	return &chat{t: t, s: s, ids: map[string]string{}}
}

func (c *chat) add(name string, p session.Payload) {
	c.t.Helper()
	e, err := c.s.Append(p)
	if err != nil {
		c.t.Fatal(err)
	}
	c.ids[name] = e.ID
}

func (c *chat) user(name, text string) {
	c.add(name, &session.MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}, Timestamp: 1}})
}

func (c *chat) reply(name, text string) {
	c.add(name, &session.MessageEntry{Message: &llm.AssistantMessage{Content: []llm.Content{llm.Text{Text: text}}, StopReason: llm.StopReasonStop, Timestamp: 1}})
}

func (c *chat) agent() *agent.Agent {
	ag := agent.New(c.s, agent.Config{})
	c.t.Cleanup(func() { ag.Close() })
	return ag
}

// words is a transcript as short lines: "user: text", "[compaction: summary]" …
func words(tr agent.Transcript) []string {
	var out []string
	for _, it := range tr.Items {
		switch it.Kind {
		case agent.TranscriptUser:
			out = append(out, "user: "+llm.TextOf(it.Message.(*llm.UserMessage).Content))
		case agent.TranscriptAssistant:
			out = append(out, "assistant: "+it.Message.(*llm.AssistantMessage).Text())
		case agent.TranscriptToolResult:
			out = append(out, "result: "+llm.TextOf(it.Message.(*llm.ToolResultMessage).Content))
		case agent.TranscriptBash:
			out = append(out, "bash: "+it.Bash.Command)
		case agent.TranscriptCustom:
			out = append(out, it.CustomType+": "+llm.TextOf(it.Content))
		case agent.TranscriptCompaction:
			out = append(out, "[compaction: "+it.Compaction.Summary+"]")
		case agent.TranscriptBranchSummary:
			out = append(out, "[branch: "+it.Summary+"]")
		default:
			out = append(out, "?")
		}
	}
	return out
}

// TestTranscript: the transcript holds what the model's context is built
// from — after a compaction its block, the messages it kept, then what
// followed; older compactions folded in; entries a context edit hides left
// out, an edit that replaces content showing the message as written — and
// the user's shell commands and displayed custom messages besides.
func TestTranscript(t *testing.T) {
	hide := func(c *chat, target string) {
		c.add("edit-"+target, &session.ContextEditEntry{TargetID: c.ids[target]})
	}
	for _, tc := range []struct {
		name        string
		build       func(c *chat)
		want        []string
		compactions int
	}{
		{"plain", func(c *chat) {
			c.user("u1", "one")
			c.reply("a1", "first")
		}, []string{"user: one", "assistant: first"}, 0},
		{"context edit hides", func(c *chat) {
			c.user("u1", "one")
			c.reply("a1", "failed try")
			hide(c, "a1")
			c.reply("a2", "second try")
		}, []string{"user: one", "assistant: second try"}, 0},
		{"context edit replaces", func(c *chat) {
			c.user("u1", "one")
			c.reply("a1", "long answer")
			c.add("r", &session.ContextEditEntry{TargetID: c.ids["a1"], Replacement: &session.ContextReplacement{Content: []llm.Content{llm.Text{Text: "short"}}}})
		}, []string{"user: one", "assistant: long answer"}, 0},
		{"compaction keeps from its first kept entry", func(c *chat) {
			c.user("u1", "one")
			c.reply("a1", "first")
			c.user("u2", "two")
			c.reply("a2", "second")
			c.add("c1", &session.CompactionEntry{Summary: "S1", FirstKeptEntryID: c.ids["u2"], TokensBefore: 100})
			c.user("u3", "three")
		}, []string{"[compaction: S1]", "user: two", "assistant: second", "user: three"}, 1},
		{"first kept entry not on the path", func(c *chat) {
			c.user("u1", "one")
			c.add("c1", &session.CompactionEntry{Summary: "S1", FirstKeptEntryID: "00000000", TokensBefore: 100})
			c.user("u2", "two")
		}, []string{"[compaction: S1]", "user: two"}, 1},
		{"two compactions: the latest folds the older in", func(c *chat) {
			c.user("u1", "one")
			c.reply("a1", "first")
			c.add("c1", &session.CompactionEntry{Summary: "S1", FirstKeptEntryID: c.ids["u1"], TokensBefore: 100})
			c.user("u2", "two")
			c.add("c2", &session.CompactionEntry{Summary: "S2", FirstKeptEntryID: c.ids["u1"], TokensBefore: 200})
			c.user("u3", "three")
		}, []string{"[compaction: S2]", "user: one", "assistant: first", "user: two", "user: three"}, 2},
		{"shell, custom and branch blocks", func(c *chat) {
			c.user("u1", "one")
			c.add("b", &session.MessageEntry{Message: &session.BashExecution{Command: "ls", ExcludeFromContext: true}})
			c.add("cm", &session.CustomMessageEntry{CustomType: "ext", Content: []llm.Content{llm.Text{Text: "shown"}}, Display: true})
			c.add("ch", &session.CustomMessageEntry{CustomType: "ext", Content: []llm.Content{llm.Text{Text: "hidden"}}})
			c.add("bs", &session.BranchSummaryEntry{Summary: "left behind", FromID: c.ids["u1"]})
			c.add("l", &session.LabelEntry{TargetID: c.ids["u1"], Label: "x"})
		}, []string{"user: one", "bash: ls", "ext: shown", "[branch: left behind]"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newChat(t)
			tc.build(c)
			tr := c.agent().Transcript()
			if got := words(tr); !slices.Equal(got, tc.want) {
				t.Errorf("transcript\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if tr.Compactions != tc.compactions {
				t.Errorf("compactions %d, want %d", tr.Compactions, tc.compactions)
			}
		})
	}
}

// TestTreeView: the tree is the session's, with labels and their times,
// the current path, lines as stored, and each entry worded.
func TestTreeView(t *testing.T) {
	c := newChat(t)
	c.user("u1", "one")
	c.reply("a1", "first")
	c.add("l", &session.LabelEntry{TargetID: c.ids["u1"], Label: "start"})
	ag := c.agent()
	if err := ag.SetLabel(c.ids["a1"], "answer"); err != nil {
		t.Fatal(err)
	}
	tree, err := ag.Tree(agent.TreeOptions{Lines: true, Describe: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Roots) != 1 || tree.LeafID == "" || !tree.Path[c.ids["u1"]] {
		t.Fatalf("tree %+v", tree)
	}
	u := tree.Roots[0]
	if u.Label != "start" || u.LabelTime == "" || u.Description.Text != "user: one" || !u.Description.User {
		t.Errorf("root %+v", u)
	}
	if !strings.Contains(string(u.Line), `"text":"one"`) {
		t.Errorf("root line %s", u.Line)
	}
	if len(u.Children) != 1 || u.Children[0].Label != "answer" || u.Children[0].Description.Text != "assistant: first" {
		t.Errorf("child %+v", u.Children)
	}
	if bare, err := ag.Tree(agent.TreeOptions{}); err != nil || bare.Roots[0].Line != nil || bare.Roots[0].Description.Text != "" {
		t.Errorf("a tree without lines or words: %v %+v", err, bare.Roots[0])
	}
}

// TestForkPoints: every user message with text, in file order, on the
// current path or not (pi's get_fork_messages and fork selector).
func TestForkPoints(t *testing.T) {
	c := newChat(t)
	c.user("u1", "one")
	c.reply("a1", "first")
	c.user("u2", "two")
	c.add("img", &session.MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Image{MIMEType: "image/png", Data: "AAAA"}}}})
	if err := c.s.SetLeaf(c.ids["a1"]); err != nil {
		t.Fatal(err)
	}
	c.user("u3", "three")
	got := c.agent().ForkPoints()
	want := []agent.ForkPoint{{EntryID: c.ids["u1"], Text: "one"}, {EntryID: c.ids["u2"], Text: "two"}, {EntryID: c.ids["u3"], Text: "three"}}
	if !slices.Equal(got, want) {
		t.Errorf("fork points %+v, want %+v", got, want)
	}
}

// TestEntryLines: the lines in file order after since; an unknown since
// is ErrEntryNotFound.
func TestEntryLines(t *testing.T) {
	c := newChat(t)
	c.user("u1", "one")
	c.reply("a1", "first")
	ag := c.agent()
	lines, leaf, err := ag.EntryLines(c.ids["u1"])
	if err != nil || len(lines) != 1 || leaf != c.ids["a1"] || !strings.Contains(string(lines[0]), "first") {
		t.Errorf("after u1: %v %q %s", err, leaf, lines)
	}
	if all, _, err := ag.EntryLines(""); err != nil || len(all) != 2 {
		t.Errorf("all: %v %d", err, len(all))
	}
	if _, _, err := ag.EntryLines("nope"); !errors.Is(err, agent.ErrEntryNotFound) {
		t.Errorf("unknown since: %v", err)
	}
}

// TestTranscriptUnreadableEntry: an entry that cannot be read, even as pi
// reads it, is left out of the transcript as of the context; the rest shows.
func TestTranscriptUnreadableEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	lines := []string{
		`{"type":"session","version":3,"id":"0197a000-0000-7000-8000-000000000001","timestamp":"2025-12-03T14:00:00.000Z","cwd":"/p"}`,
		`{"type":"message","id":"1a2b3c4d","parentId":null,"timestamp":"2025-12-03T14:00:01.000Z","message":{"role":"user","content":"one","timestamp":1}}`,
		`{"type":"message","id":"2a2b3c4d","parentId":"1a2b3c4d","timestamp":"2025-12-03T14:00:02.000Z","message":{"role":"assistant","content":7,"timestamp":1}}`,
		`{"type":"message","id":"3a2b3c4d","parentId":"2a2b3c4d","timestamp":"2025-12-03T14:00:03.000Z","message":{"role":"user","content":"two","timestamp":1}}`,
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ag, err := agent.Load(path, agent.Config{Getenv: func(string) string { return "" }, NoContextFiles: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ag.Close()
	if got, want := words(ag.Transcript()), []string{"user: one", "user: two"}; !slices.Equal(got, want) {
		t.Errorf("transcript %q, want %q", got, want)
	}
	tree, err := ag.Tree(agent.TreeOptions{Describe: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := tree.Roots[0].Children[0].Description.Text; d != "[message]" {
		t.Errorf("the unreadable entry is worded %q", d)
	}
}

// TestListAllSessions: every folder's sessions under the root, newest
// first; a root that does not exist holds none.
func TestListAllSessions(t *testing.T) {
	root := t.TempDir()
	for i, dir := range []string{"--a--", "--b--"} {
		s, err := session.Create(filepath.Join(root, dir, "s.jsonl"), session.Options{CWD: "/" + dir})
		if err != nil {
			t.Fatal(err)
		}
		msg := &llm.UserMessage{Content: []llm.Content{llm.Text{Text: dir}}, Timestamp: int64(1_700_000_000_000 + i*1000)}
		if _, err := s.Append(&session.MessageEntry{Message: msg}); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	infos, err := agent.ListAllSessions(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 || infos[0].FirstMessage != "--b--" || infos[1].FirstMessage != "--a--" {
		t.Errorf("listing %+v", infos)
	}
	if one, err := agent.ListSessions(filepath.Join(root, "--a--")); err != nil || len(one) != 1 {
		t.Errorf("one folder: %v %+v", err, one)
	}
	if none, err := agent.ListAllSessions(filepath.Join(root, "nope")); err != nil || len(none) != 0 {
		t.Errorf("missing root: %v %+v", err, none)
	}
}
