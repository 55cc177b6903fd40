package rpc_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiontest"
)

func user(text string) *session.MessageEntry {
	return &session.MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}, Timestamp: 1}}
}

func appendAll(t *testing.T, s *session.Session, ps ...session.Payload) []*session.Entry {
	t.Helper()
	var out []*session.Entry
	for _, p := range ps {
		e, err := s.Append(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// shape is a tree node as the test compares it: the entry's id, its label
// and label time, and its children.
type shape struct {
	ID, Label, LabelTime string
	Children             []shape
}

func shapes(t *testing.T, nodes []any) []shape {
	t.Helper()
	var out []shape
	for _, n := range nodes {
		m := n.(map[string]any)
		e := m["entry"].(map[string]any)
		sh := shape{ID: e["id"].(string)}
		sh.Label, _ = m["label"].(string)
		sh.LabelTime, _ = m["labelTimestamp"].(string)
		sh.Children = shapes(t, m["children"].([]any))
		out = append(out, sh)
	}
	return out
}

// TestTreeAndEntries: get_tree is pi's tree (children in time order, labels
// and their times), get_entries the file's entries after since, both with
// the leaf.
func TestTreeAndEntries(t *testing.T) {
	s, err := session.Create(filepath.Join(t.TempDir(), "s.jsonl"), session.Options{CWD: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	a := appendAll(t, s, user("one"), user("two"))
	if err := s.SetLeaf(a[0].ID); err != nil {
		t.Fatal(err)
	}
	b := appendAll(t, s, user("two, again"),
		&session.LabelEntry{TargetID: a[0].ID, Label: "start"},
		&session.LabelEntry{TargetID: a[1].ID, Label: "gone"},
		&session.LabelEntry{TargetID: a[1].ID})
	srv := llmtest.NewAnthropic(t)
	h := startOn(t, s, srv, settingsFor(t))
	h.send(`{"id":"t","type":"get_tree"}`)
	d := h.response("t").data()
	leaf := b[3].ID
	if d["leafId"] != leaf {
		t.Errorf("leafId %v, want %s", d["leafId"], leaf)
	}
	want := []shape{{ID: a[0].ID, Label: "start", LabelTime: b[1].Timestamp, Children: []shape{
		{ID: a[1].ID},
		{ID: b[0].ID, Children: []shape{{ID: b[1].ID, Children: []shape{{ID: b[2].ID, Children: []shape{{ID: b[3].ID}}}}}}},
	}}}
	if diff := cmp.Diff(want, shapes(t, d["tree"].([]any))); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}

	h.send(fmt.Sprintf(`{"id":"e","type":"get_entries","since":%q}`, b[1].ID), `{"id":"all","type":"get_entries"}`)
	d = h.response("e").data()
	var ids []string
	for _, e := range d["entries"].([]any) {
		ids = append(ids, e.(map[string]any)["id"].(string))
	}
	if want := []string{b[2].ID, b[3].ID}; !cmp.Equal(ids, want) || d["leafId"] != leaf {
		t.Errorf("entries since %s: %v (leaf %v), want %v", b[1].ID, ids, d["leafId"], want)
	}
	// The entries are the file's lines, as they are.
	all := h.response("all")
	for _, e := range s.Entries() {
		if !strings.Contains(all.raw, string(sessiontest.Line(t, e))) {
			t.Errorf("entry %s not sent as stored", e.ID)
		}
	}
}

// TestDeepTree: a long session is a chain as deep as it is long; get_tree
// sends it whole although no JSON encoder (nor this test's decoder) nests
// that deep, so the line is compared with the chain built by hand.
func TestDeepTree(t *testing.T) {
	s, err := session.Create("", session.Options{CWD: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	const n = 15000
	ps := make([]session.Payload, n)
	for i := range ps {
		ps[i] = user(fmt.Sprint("message ", i))
	}
	entries := appendAll(t, s, ps...)
	srv := llmtest.NewAnthropic(t)
	h := startOn(t, s, srv, settingsFor(t))
	h.send(`{"id":"t","type":"get_tree"}`)
	var want strings.Builder
	want.WriteString(`{"id":"t","type":"response","command":"get_tree","success":true,"data":{"tree":[`)
	for _, e := range entries {
		want.WriteString(`{"entry":` + string(sessiontest.Line(t, e)) + `,"children":[`)
	}
	want.WriteString(strings.Repeat("]}", n) + `],"leafId":"` + entries[n-1].ID + `"}}`)
	if got := h.out.nextRaw(t); got != want.String() {
		t.Errorf("get_tree of a %d-entry chain: %d bytes, want %d", n, len(got), want.Len())
	}
}
