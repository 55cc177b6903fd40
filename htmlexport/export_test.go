package htmlexport_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/htmlexport"
	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/internal/pifixtures"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
)

// demoOptions make a session with branches, images and five compactions on
// the active path.
var demoOptions = sessiongen.Options{Entries: 700, Seed: 1, ContextWindow: 30_000, ReserveTokens: 5000, KeepRecentTokens: 5000,
	BranchRate: 0.08, ImageRate: 0.05, HugeRate: -1}

func demoSession(tb testing.TB, o sessiongen.Options) *session.Session {
	tb.Helper()
	s, err := session.Parse("demo.jsonl", sessiongen.Bytes(o))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// marks are the chart's lines for a generated session: its window, the
// threshold and a background mark at 70 %.
func marks(o sessiongen.Options) htmlexport.Options {
	th := o.ContextWindow - o.ReserveTokens
	return htmlexport.Options{Window: o.ContextWindow, Threshold: th, BackgroundMark: th * 70 / 100}
}

func export(tb testing.TB, s *session.Session, opts htmlexport.Options) (string, htmlexport.Stats) {
	tb.Helper()
	var buf bytes.Buffer
	st, err := htmlexport.Write(context.Background(), &buf, htmlexport.SourceOf(s), opts)
	if err != nil {
		tb.Fatal(err)
	}
	return buf.String(), st
}

var svgRE = regexp.MustCompile(`(?s)<svg id="ctx-chart".*?</svg>`)

// TestChartGolden pins the chart of a small session with two compactions.
func TestChartGolden(t *testing.T) {
	o := sessiongen.Options{Entries: 160, Seed: 4, ContextWindow: 16_000, ReserveTokens: 3000, KeepRecentTokens: 3000, HugeRate: -1, ImageRate: -1}
	s := demoSession(t, o)
	h, err := compaction.ContextHistory(s.LeafPath())
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Drops) < 2 {
		t.Fatalf("the golden session has %d compactions on its path, want 2 or more", len(h.Drops))
	}
	page, _ := export(t, s, marks(o))
	svg := svgRE.FindString(page)
	if svg == "" {
		t.Fatal("no chart in the page")
	}
	if n := strings.Count(svg, `<g class="drop"`); n != len(h.Drops) {
		t.Errorf("%d drops drawn, want %d", n, len(h.Drops))
	}
	golden.Check(t, "chart-small.svg", strings.ReplaceAll(svg, "><", ">\n<"))
}

// TestPageSelfContained checks what the page holds and never holds.
func TestPageSelfContained(t *testing.T) {
	s := demoSession(t, demoOptions)
	page, st := export(t, s, marks(demoOptions))
	blocks := strings.Join(dataOf(t, page).HTML, "\n")
	if st.Entries != s.Len() {
		t.Errorf("%d entries exported, want %d", st.Entries, s.Len())
	}
	for _, bad := range []string{"http://", "https://", "<link", "src=\"http", "@import", "url("} {
		if i := strings.Index(page, bad); i >= 0 && !allowedURL(page, i) {
			t.Errorf("the page holds %q: %s", bad, page[max(i-80, 0):min(i+80, len(page))])
		}
	}
	for _, want := range []string{`http-equiv="Content-Security-Policy"`, "default-src 'none'", `<img class="img" alt="image" src="data:image/`, `<details class="think">`, `<details class="tool"`, `class="blk k-c"`} {
		if !strings.Contains(page, want) && !strings.Contains(blocks, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "</script") && strings.Count(page, "</script>") != 2 {
		t.Errorf("%d script ends: the data must not close its script element", strings.Count(page, "</script>"))
	}
}

// allowedURL reports an address that is the SVG namespace or text the
// session itself holds (escaped inside the data, never loaded).
func allowedURL(page string, i int) bool {
	return strings.HasPrefix(page[i:], "http://www.w3.org/2000/svg") || strings.Contains(page[max(i-200, 0):i], `<script id="data"`) || inData(page, i)
}

func inData(page string, i int) bool {
	start := strings.Index(page, `<script id="data"`)
	end := strings.Index(page[start:], "</script>")
	return start >= 0 && i > start && i < start+end
}

// dataOf decodes the page's data.
func dataOf(tb testing.TB, page string) (d struct {
	IDs  []string `json:"ids"`
	HTML []string `json:"html"`
	Tree []string `json:"tree"`
}) {
	tb.Helper()
	plain, zipped := `<script id="data" type="application/json">`, `<script id="data" type="application/gzip-base64">`
	i, open := strings.Index(page, plain), plain
	if i < 0 {
		i, open = strings.Index(page, zipped), zipped
	}
	if i < 0 {
		tb.Fatal("no data in the page")
	}
	body := page[i+len(open):]
	body = body[:strings.Index(body, "</script>")]
	data := []byte(body)
	if open == zipped {
		z, err := gzip.NewReader(base64.NewDecoder(base64.StdEncoding, strings.NewReader(body)))
		if err != nil {
			tb.Fatal(err)
		}
		if data, err = io.ReadAll(z); err != nil {
			tb.Fatal(err)
		}
	}
	if open == plain {
		if err := json.Unmarshal(data, &d); err != nil {
			tb.Fatal(err)
		}
		return d
	}
	head, blocks, _ := bytes.Cut(data, []byte("\n"))
	var z struct {
		IDs  []string `json:"ids"`
		Tree []string `json:"tree"`
		Off  []int    `json:"off"`
	}
	if err := json.Unmarshal(head, &z); err != nil {
		tb.Fatal(err)
	}
	d.IDs, d.Tree = z.IDs, z.Tree
	units := utf16.Encode([]rune(string(blocks)))
	for i := 0; i+1 < len(z.Off); i++ {
		d.HTML = append(d.HTML, string(utf16.Decode(units[z.Off[i]:z.Off[i+1]])))
	}
	return d
}

// TestLargePageCompressed: a page past 256 KiB of blocks holds its data
// gzipped, and it inflates to every entry.
func TestLargePageCompressed(t *testing.T) {
	s := demoSession(t, bigOptions)
	page, _ := export(t, s, marks(bigOptions))
	if !strings.Contains(page, `type="application/gzip-base64"`) {
		t.Fatal("the data of a large page is not compressed")
	}
	if d := dataOf(t, page); len(d.IDs) != s.Len() || len(d.HTML) != s.Len() {
		t.Errorf("the data holds %d ids and %d blocks, want %d", len(d.IDs), len(d.HTML), s.Len())
	}
	d := dataOf(t, page)
	astral := 0
	for i, h := range d.HTML {
		if h != "" && (!strings.HasPrefix(h, `<div class="`) || !strings.HasSuffix(h, "</div>")) {
			t.Fatalf("block %d is cut wrong: %.80q … %.80q", i, h, h[max(len(h)-80, 0):])
		}
		for _, r := range h {
			if r >= 0x10000 {
				astral++
			}
		}
	}
	if astral == 0 {
		t.Error("no character outside the BMP in the blocks: the offsets are not put to the test")
	}
	if again, _ := export(t, s, marks(bigOptions)); again != page {
		t.Error("two exports of one session differ")
	}
}

// bigOptions make a session whose page data passes 2 MiB, compressed to
// well under it.
var bigOptions = sessiongen.Options{Entries: 2500, Seed: 2, ContextWindow: 60_000, ReserveTokens: 8000, KeepRecentTokens: 8000, BranchRate: 0.05}

func TestRedactedInPage(t *testing.T) {
	s, err := session.Parse("secret.jsonl", []byte(`{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"use ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz please","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"env | grep KEY"}}],"stopReason":"toolUse","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15},"timestamp":2}}
{"type":"message","id":"a3","parentId":"a2","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"OPENAI_API_KEY=sk-proj-0123456789abcdefghijklmn\nGITHUB_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"}],"isError":false,"timestamp":3}}
`))
	if err != nil {
		t.Fatal(err)
	}
	page, st := export(t, s, htmlexport.Options{})
	for _, secret := range []string{"abcdefghijklmnopqrstuvwxyz please", "0123456789abcdefghijklmn", "ghp_0123"} {
		if strings.Contains(page, secret) {
			t.Errorf("the page holds the secret %q", secret)
		}
	}
	if st.Redacted != 3 {
		t.Errorf("%d values masked, want 3", st.Redacted)
	}
	open, _ := export(t, s, htmlexport.Options{NoRedact: true})
	if !strings.Contains(open, "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB") || !strings.Contains(open, "not redacted") {
		t.Error("with NoRedact the page must hold the values and say it is not redacted")
	}
}

func BenchmarkWrite(b *testing.B) {
	s := demoSession(b, sessiongen.Options{Entries: 10_000, Seed: 3})
	src := htmlexport.SourceOf(s)
	opts := marks(sessiongen.Options{ContextWindow: 200_000, ReserveTokens: 16_384})
	b.ResetTimer()
	for range b.N {
		var buf bytes.Buffer
		if _, err := htmlexport.Write(context.Background(), &buf, src, opts); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(buf.Len()))
	}
}

// TestEveryShape exports the hand-written edge cases, a pi 1.6 style
// session and pi's own files (when there): each writes a page holding
// every entry.
func TestEveryShape(t *testing.T) {
	files := map[string][]byte{"pi16": sessiongen.Bytes(sessiongen.Options{Entries: 400, Seed: 5, Pi16: true, ContextWindow: 20_000, ReserveTokens: 4000, KeepRecentTokens: 4000})}
	for _, c := range sessiongen.EdgeCases() {
		files[c.Name] = c.Data
	}
	if _, ok := pifixtures.Dir(); ok {
		for name, data := range pifixtures.ReadAll(t) {
			files["pi/"+name] = data
		}
	}
	for name, data := range files {
		s, err := session.Parse(name, data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		page, st := export(t, s, htmlexport.Options{Window: 20_000, Threshold: 16_000})
		if d := dataOf(t, page); st.Entries != s.Len() || len(d.IDs) != s.Len() {
			t.Errorf("%s: %d entries exported, %d in the data, want %d", name, st.Entries, len(d.IDs), s.Len())
		}
	}
}

func TestEmptySession(t *testing.T) {
	s, err := session.Parse("empty.jsonl", []byte(`{"type":"session","version":3,"id":"e","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	page, st := export(t, s, htmlexport.Options{})
	if st.Entries != 0 || !strings.Contains(page, `<svg id="ctx-chart"`) {
		t.Errorf("an empty session's page: %d entries, chart drawn %v", st.Entries, strings.Contains(page, "ctx-chart"))
	}
}

// TestUnreadableEntry: an entry that cannot be decoded is shown as an
// error in its place; the page, the other entries and the tree stay.
func TestUnreadableEntry(t *testing.T) {
	s, err := session.Parse("bad.jsonl", []byte(`{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"first question","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":42,"timestamp":2}}
{"type":"message","id":"a3","parentId":"a2","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"still here","timestamp":3}}
`))
	if err != nil {
		t.Fatal(err)
	}
	page, st := export(t, s, htmlexport.Options{Window: 1000})
	d := dataOf(t, page)
	all := strings.Join(d.HTML, "\n")
	if st.Entries != 3 || !strings.Contains(all, "first question") || !strings.Contains(all, "still here") || !strings.Contains(all, "a2 (line 3) cannot be read") {
		t.Errorf("entries %d, blocks:\n%s", st.Entries, all)
	}
	if !strings.Contains(page, "The context could not be measured") {
		t.Error("the page does not say why the chart is empty")
	}
}

// TestCompactionBlock: a compaction Prime made shows its receipt, its
// instructions, the ledger's check and the link to what it replaced.
func TestCompactionBlock(t *testing.T) {
	s, err := session.Create(filepath.Join(t.TempDir(), "c.jsonl"), session.Options{CWD: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	add := func(p session.Payload) *session.Entry {
		e, err := s.Append(p)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	user := func(text string) *session.Entry {
		return add(&session.MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}, Timestamp: 1}})
	}
	first := user("the first question")
	add(&session.MessageEntry{Message: &llm.AssistantMessage{Content: []llm.Content{llm.Text{Text: "an answer"}}, StopReason: llm.StopReasonStop, Timestamp: 2}})
	kept := user("the question kept")
	details := compaction.Details{
		Receipt:     &compaction.Receipt{Reason: "manual", Model: "anthropic/claude-test", TokensBefore: 12_000, TokensAfter: 3_000, Messages: 2, DurationMs: 2500},
		LedgerCheck: &compaction.LedgerCheck{Checked: 4, Kept: 3, Repaired: []compaction.LedgerItem{{}}},
	}
	add(&session.CompactionEntry{Summary: "## Goal\nthe **summary**", FirstKeptEntryID: kept.ID, TokensBefore: 12_000, Details: details.Encode(), CustomInstructions: "keep the lexer"})
	page, _ := export(t, s, htmlexport.Options{Window: 20_000})
	var block string
	for _, h := range dataOf(t, page).HTML {
		if strings.Contains(h, `class="blk k-c"`) {
			block = h
		}
	}
	for _, want := range []string{"12,000 → 3,000", "messages summarized</th><td>2", "reason</th><td>manual", "anthropic/claude-test", "2.5 s",
		"3 of 4 items, 1 written back", "<b>Instructions:</b> keep the lexer", "the 2 entries it replaced", "<strong>summary</strong>", ">" + kept.ID + "</a>"} {
		if !strings.Contains(block, want) {
			t.Errorf("the compaction block lacks %q:\n%s", want, block)
		}
	}
	if !strings.Contains(block, fmt.Sprintf(`data-jump="%d"`, 0)) {
		t.Errorf("the link does not lead to the first replaced entry (%s, row 0):\n%s", first.ID, block)
	}
}
