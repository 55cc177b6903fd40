package compaction

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/internal/pifixtures"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// lastValidUsage is pi's getLastAssistantUsage over a path.
func lastValidUsage(t *testing.T, path []*session.Entry) (llm.Usage, bool) {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type != session.TypeMessage {
			continue
		}
		m, err := path[i].Message()
		if err != nil {
			t.Fatal(err)
		}
		if u, ok := session.ValidUsage(m); ok {
			return u, true
		}
	}
	return llm.Usage{}, false
}

// TestPiUsageAndTrigger re-creates pi-reference §9.1 #1–7.
func TestPiUsageAndTrigger(t *testing.T) {
	if got := (llm.Usage{Input: 1000, Output: 500, CacheRead: 200, CacheWrite: 100, TotalTokens: 1800}).ContextTokens(); got != 1800 {
		t.Errorf("#1: %d", got)
	}
	if got := (llm.Usage{}).ContextTokens(); got != 0 {
		t.Errorf("#2: %d", got)
	}
	b := newBuilder(t).parse("u1 a1@100/50 u2 a2@200/100")
	if u, _ := lastValidUsage(t, b.path); u.Input != 200 {
		t.Errorf("#3: %+v", u)
	}
	b.add("a3", &session.MessageEntry{Message: &llm.AssistantMessage{Usage: llm.Usage{Input: 300, TotalTokens: 300}, StopReason: llm.StopReasonAborted}})
	if u, _ := lastValidUsage(t, b.path); u.Input != 200 {
		t.Errorf("#4: aborted usage taken: %+v", u)
	}
	if _, ok := lastValidUsage(t, newBuilder(t).parse("u1").path); ok {
		t.Error("#5: usage without an assistant")
	}
	s := Settings{Enabled: true, ReserveTokens: 10000, KeepRecentTokens: 20000}
	if !ShouldCompact(95000, 100000, s) || ShouldCompact(89000, 100000, s) || ShouldCompact(90000, 100000, s) {
		t.Error("#6")
	}
	s.Enabled = false
	if ShouldCompact(95000, 100000, s) {
		t.Error("#7")
	}
}

// TestPiCutPoints re-creates pi-reference §9.1 #8–11.
func TestPiCutPoints(t *testing.T) {
	t.Run("#8 ten pairs, keep 2500", func(t *testing.T) {
		b := newBuilder(t)
		for i := range 10 {
			b.parse(fmt.Sprintf("u%d:1000 a%d:1000", i, i))
		}
		p := mustPrepare(t, b.path, keep(2500))
		m, _ := b.byID[p.FirstKeptEntryID].Message()
		if r := m.Role(); r != llm.RoleUser && r != llm.RoleAssistant {
			t.Errorf("cut at %s", r)
		}
	})
	t.Run("#9 single assistant, keep 1000", func(t *testing.T) {
		proj, _ := projectPath(newBuilder(t).parse("a0:100").path)
		if c := findCut(proj, 0, 1000); c.first != 0 {
			t.Errorf("first kept = %d", c.first)
		}
	})
	t.Run("#10 everything fits, keep 50000", func(t *testing.T) {
		proj, _ := projectPath(newBuilder(t).parse("u0 a1 u2 a3").path)
		if c := findCut(proj, 0, 50000); c.first != 0 || c.split {
			t.Errorf("cut = %+v", c)
		}
	})
	t.Run("#11 split in a long turn", func(t *testing.T) {
		proj, _ := projectPath(newBuilder(t).parse("u0 a1 u2 a3:4000 a4:4000 a5:4000").path)
		c := findCut(proj, 0, 3000)
		if !c.split || c.turnStart != 2 || c.first != 3 {
			t.Errorf("cut = %+v", c)
		}
	})
}

// TestPiBuildContext re-creates pi-reference §9.1 #12–16 on the context the
// compaction decisions are measured against.
func TestPiBuildContext(t *testing.T) {
	check := func(name, spec string, want []string) *session.Context {
		t.Helper()
		ctx, err := session.BuildContext(newBuilder(t).parse(spec).path)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range ctx.Messages {
			if m.Role() == session.RoleCompactionSummary {
				got = append(got, "summary:"+m.(*session.CompactionSummaryMessage).Summary)
				continue
			}
			got = append(got, label(m))
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: context %v, want %v", name, got, want)
		}
		return &ctx
	}
	ctx := check("#12", "u1 a1 u2 a2", []string{"u1", "a1", "u2", "a2"})
	if ctx.ThinkingLevel != llm.ThinkingOff || ctx.Model == nil || ctx.Model.ModelID != "claude-sonnet-4-5" {
		t.Errorf("#12 settings: %v %+v", ctx.ThinkingLevel, ctx.Model)
	}
	check("#13", "u1 a1 u2 a2 C1(keep u2) u3 a3", []string{"summary:summary C1", "u2", "a2", "u3", "a3"})
	check("#14", "u1 a1 C1(keep u1) u2 a2 u3 a3 C2(keep u3) u4 a4", []string{"summary:summary C2", "u3", "a3", "u4", "a4"})
	check("#15", "u1 a1 C1(keep u1) u2 a2", []string{"summary:summary C1", "u1", "a1", "u2", "a2"})
	ctx = check("#16", "u1 M1 a1 m1", []string{"u1", "a1"})
	if ctx.Model.Provider != "anthropic" || ctx.ThinkingLevel != llm.ThinkingHigh {
		t.Errorf("#16: %+v %v", ctx.Model, ctx.ThinkingLevel)
	}
}

// loadV1 reads a version-1 pi session file as a linear path, assigning ids
// the way pi's v1→v2 migration does (a chain in file order; a compaction's
// firstKeptEntryIndex counts the header as line 0). The session package's
// loader will do this for real; this keeps the test independent of it.
func loadV1(t *testing.T, name string) []*session.Entry {
	f, err := os.Open(pifixtures.Path(t, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	var lines [][]byte
	for sc.Scan() {
		if len(strings.TrimSpace(sc.Text())) > 0 {
			lines = append(lines, append([]byte(nil), sc.Bytes()...))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var path []*session.Entry
	for i, line := range lines[1:] {
		id, parent := fmt.Sprintf("e%d", i+1), "null"
		if i > 0 {
			parent = fmt.Sprintf(`"e%d"`, i)
		}
		prefix := fmt.Sprintf(`{"id":"%s","parentId":%s,`, id, parent)
		var idx struct {
			FirstKeptEntryIndex *int `json:"firstKeptEntryIndex"`
		}
		if err := json.Unmarshal(line, &idx, jsonwire.ReadOptions); err == nil && idx.FirstKeptEntryIndex != nil {
			prefix += fmt.Sprintf(`"firstKeptEntryId":"e%d",`, *idx.FirstKeptEntryIndex)
		}
		e, err := session.NewEntry(append([]byte(prefix), line[1:]...))
		if err != nil {
			t.Fatalf("%s line %d: %v", name, i+2, err)
		}
		e.Line = i + 2
		path = append(path, e)
	}
	return path
}

// TestPiFixtures re-creates pi-reference §9.1 #17–21 on pi's own files, with
// the deterministic summarizer standing in for the live model.
func TestPiFixtures(t *testing.T) {
	for _, name := range []string{pifixtures.LargeSession, pifixtures.BeforeCompaction} {
		t.Run(name, func(t *testing.T) {
			path := loadV1(t, name)
			if len(path) < 100 {
				t.Fatalf("#17: %d entries", len(path))
			}
			p := mustPrepare(t, path, DefaultSettings())
			first := path[slicesIndex(path, p.FirstKeptEntryID)]
			m, err := first.Message()
			if err != nil {
				t.Fatalf("#18: cut on %s: %v", first.Type, err)
			}
			if r := m.Role(); r != llm.RoleUser && r != llm.RoleAssistant {
				t.Errorf("#18: cut on a %s message", r)
			}
			before, err := session.BuildContext(path)
			if err != nil || len(before.Messages) < 100 && name == pifixtures.LargeSession || before.Model == nil {
				t.Fatalf("#19: %d messages, model %v, %v", len(before.Messages), before.Model, err)
			}
			if p.TokensBefore <= 0 {
				t.Errorf("#20: tokensBefore %d", p.TokensBefore)
			}
			res, err := Compact(t.Context(), p, Options{})
			if err != nil || len(res.Summary) < 100 {
				t.Fatalf("#20: %v, %d chars", err, len(res.Summary))
			}
			compacted := appended(t, path, "cNew", res.Entry())
			after, err := session.BuildContext(compacted)
			if err != nil {
				t.Fatal(err)
			}
			if len(after.Messages) >= len(before.Messages) || after.Messages[0].(*session.CompactionSummaryMessage).Summary != res.Summary {
				t.Errorf("#21: %d messages after, %d before", len(after.Messages), len(before.Messages))
			}
			// (By chars/4: the kept part's last usage still measures the
			// context before the compaction, C5.)
			est := 0
			for _, m := range after.Messages {
				est += session.EstimateTokens(m)
			}
			if est >= p.TokensBefore {
				t.Errorf("context not smaller: %d after, %d before", est, p.TokensBefore)
			}
			t.Logf("%d entries: first kept %s, %d+%d messages summarized, split %v, %d tokens before, %d after",
				len(path), p.FirstKeptEntryID, len(p.MessagesToSummarize), len(p.TurnPrefixMessages), p.IsSplitTurn, p.TokensBefore, est)
			// Compacting again right away: already compacted.
			if _, err := Prepare(compacted, DefaultSettings()); !errors.Is(err, ErrAlreadyCompacted) {
				t.Errorf("second compaction: %v", err)
			}
		})
	}
}

func slicesIndex(path []*session.Entry, id string) int {
	for i, e := range path {
		if e.ID == id {
			return i
		}
	}
	return -1
}
