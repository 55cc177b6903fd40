package htmlexport_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/htmlexport"
	"github.com/prime-agent/prime/internal/cdp"
	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
)

// The browser tests open exports in a real headless Chromium (Debian's
// chromium package; .ci/run installs it). Without one they skip.

// browserPage starts a browser, opens the page file in a 1280×800 window
// and waits for its script to be ready.
func browserPage(tb testing.TB, ctx context.Context, file string) (*cdp.Browser, *cdp.Page) {
	tb.Helper()
	b, p := blankPage(tb, ctx)
	openPage(tb, ctx, p, file)
	return b, p
}

// blankPage starts a browser with a blank 1280×800 page.
func blankPage(tb testing.TB, ctx context.Context) (*cdp.Browser, *cdp.Page) {
	tb.Helper()
	bin, err := cdp.Find()
	if errors.Is(err, cdp.ErrNoBrowser) {
		tb.Skip("chromium is not installed: the browser tests are skipped (apt-get install chromium; .ci/run does)")
	}
	b, err := cdp.Launch(ctx, bin)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { b.Close() })
	p, err := b.NewPage(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	if err := p.SetViewport(ctx, 1280, 800); err != nil {
		tb.Fatal(err)
	}
	return b, p
}

// openPage opens the page file and waits for its script to be ready.
func openPage(tb testing.TB, ctx context.Context, p *cdp.Page, file string) {
	tb.Helper()
	if err := p.Navigate(ctx, "file://"+file); err != nil {
		tb.Fatal(err)
	}
	if err := p.WaitFor(ctx, "document.body.dataset.ready === '1'"); err != nil {
		tb.Fatal(err)
	}
}

func writePage(tb testing.TB, s *session.Session) string {
	tb.Helper()
	page, _ := export(tb, s, marks(demoOptions))
	file := filepath.Join(tb.TempDir(), "demo.html")
	if err := os.WriteFile(file, []byte(page), 0o600); err != nil {
		tb.Fatal(err)
	}
	return file
}

func TestBrowserDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s := demoSession(t, demoOptions)
	file := writePage(t, s)
	_, p := browserPage(t, ctx, file)

	if got := p.Requests(); len(got) != 1 || got[0] != "file://"+file {
		t.Errorf("the page requested %q, want only itself", got)
	}
	t.Run("layout", func(t *testing.T) { checkLayout(t, ctx, p) })
	t.Run("chart", func(t *testing.T) { checkDrops(t, ctx, p, s) })
	t.Run("tree", func(t *testing.T) { checkTreeClick(t, ctx, p, s) })
	t.Run("chart click", func(t *testing.T) { checkChartClick(t, ctx, p, s) })
	t.Run("replaced", func(t *testing.T) { checkReplacedLink(t, ctx, p) })
	if probs := p.Problems(); len(probs) > 0 {
		t.Errorf("the console reported:\n%s", strings.Join(probs, "\n"))
	}
}

// TestBrowserCompressed: a large page, its data gzipped, opens as well.
func TestBrowserCompressed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s := demoSession(t, bigOptions)
	page, _ := export(t, s, marks(bigOptions))
	file := filepath.Join(t.TempDir(), "big.html")
	if err := os.WriteFile(file, []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	_, p := browserPage(t, ctx, file)
	var got struct {
		Entries int `json:"entries"`
		Shown   int `json:"shown"`
	}
	if err := p.Eval(ctx, `({entries: primeExport.rowById.size, shown: document.querySelectorAll('#conv .item').length})`, &got); err != nil {
		t.Fatal(err)
	}
	if got.Entries != s.Len() || got.Shown == 0 {
		t.Errorf("the page knows %d entries and shows %d blocks, want %d and some", got.Entries, got.Shown, s.Len())
	}
	// The script cuts the blocks where Prime put them.
	var blocks []string
	if err := p.Eval(ctx, `Array.from({length: primeExport.rowById.size}, (_, r) => primeExport.html(r))`, &blocks); err != nil {
		t.Fatal(err)
	}
	want := dataOf(t, page).HTML
	for i := range want {
		if i >= len(blocks) || blocks[i] != want[i] {
			t.Fatalf("block %d differs in the browser", i)
		}
	}
	if probs := p.Problems(); len(probs) > 0 {
		t.Errorf("the console reported:\n%s", strings.Join(probs, "\n"))
	}
	if req := p.Requests(); len(req) != 1 {
		t.Errorf("the page requested %q, want only itself", req)
	}
}

// TestBrowserPlain: a small page, its data plain JSON, opens as well.
func TestBrowserPlain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	o := sessiongen.Options{Entries: 40, Seed: 3, ImageRate: 0.2}
	s := demoSession(t, o)
	page, _ := export(t, s, marks(sessiongen.Options{ContextWindow: 200_000, ReserveTokens: 16_384}))
	if !strings.Contains(page, `type="application/json"`) {
		t.Fatal("a small page's data is compressed")
	}
	file := filepath.Join(t.TempDir(), "small.html")
	if err := os.WriteFile(file, []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	_, p := browserPage(t, ctx, file)
	var shown int
	if err := p.Eval(ctx, `document.querySelectorAll('#conv .item').length`, &shown); err != nil {
		t.Fatal(err)
	}
	if shown == 0 {
		t.Error("the page shows no block")
	}
	if probs := p.Problems(); len(probs) > 0 {
		t.Errorf("the console reported:\n%s", strings.Join(probs, "\n"))
	}
}

// checkDrops: one drop per compaction of the active path, after the reply
// that came before it and before the one after it.
func checkDrops(t *testing.T, ctx context.Context, p *cdp.Page, s *session.Session) {
	h, err := compaction.ContextHistory(s.LeafPath())
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Drops) != 5 {
		t.Fatalf("the demo session has %d compactions on its path, want 5", len(h.Drops))
	}
	var drops []struct {
		ID      string  `json:"id"`
		Replies int     `json:"replies"`
		X       float64 `json:"x"`
	}
	if err := p.Eval(ctx, `[...document.querySelectorAll('#ctx-chart .drop')].map(g => ({id: primeExport.data.ids[+g.dataset.row], replies: +g.dataset.replies, x: +g.querySelector('line').getAttribute('x1')}))`, &drops); err != nil {
		t.Fatal(err)
	}
	var dots []float64
	if err := p.Eval(ctx, `[...document.querySelectorAll('#ctx-chart circle.pt')].map(c => +c.getAttribute('cx'))`, &dots); err != nil {
		t.Fatal(err)
	}
	if len(drops) != len(h.Drops) || len(dots) != len(h.Points) {
		t.Fatalf("%d drops and %d dots drawn, want %d and %d", len(drops), len(dots), len(h.Drops), len(h.Points))
	}
	for i, d := range drops {
		want := h.Drops[i]
		if d.ID != want.EntryID || d.Replies != want.Replies {
			t.Errorf("drop %d is compaction %s after %d replies, want %s after %d", i+1, d.ID, d.Replies, want.EntryID, want.Replies)
		}
		if k := want.Replies; k == 0 || k >= len(dots) || !(dots[k-1] < d.X && d.X < dots[k]) {
			t.Errorf("drop %d at x=%.1f is not between reply %d and the next", i+1, d.X, k)
		}
	}
}

// checkTreeClick clicks the tree row of an entry off the active path and
// expects the conversation to show its branch, scrolled to it.
func checkTreeClick(t *testing.T, ctx context.Context, p *cdp.Page, s *session.Session) {
	onPath := map[string]bool{}
	for _, e := range s.LeafPath() {
		onPath[e.ID] = true
	}
	var target *session.Node
	var walk func(ns []*session.Node)
	walk = func(ns []*session.Node) {
		for _, n := range ns {
			if target == nil && !onPath[n.Entry.ID] && n.Entry.Type == session.TypeMessage {
				if role, _ := n.Entry.MessageRole(); role == "user" {
					target = n
				}
			}
			walk(n.Children)
		}
	}
	walk(s.Tree())
	if target == nil {
		t.Fatal("the demo session has no branch off the active path")
	}
	leaf := target
	for len(leaf.Children) > 0 {
		leaf = leaf.Children[len(leaf.Children)-1]
	}
	var box cdp.Rect
	js := fmt.Sprintf(`(() => { const r = primeExport.rowById.get(%q); const t = document.getElementById('tree');
		t.scrollTop = r * 22 - 100; t.dispatchEvent(new Event('scroll'));
		return new Promise(ok => requestAnimationFrame(() => requestAnimationFrame(() => {
			const b = document.querySelector('.row[data-r="' + r + '"]').getBoundingClientRect();
			ok({x: b.x, y: b.y, width: b.width, height: b.height}); }))); })()`, target.Entry.ID)
	if err := p.Eval(ctx, js, &box); err != nil {
		t.Fatal(err)
	}
	if err := p.Click(ctx, box.X+40, box.Y+box.Height/2); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Path    []string `json:"path"`
		Visible bool     `json:"visible"`
		Bar     string   `json:"bar"`
	}
	if err := p.Eval(ctx, fmt.Sprintf(`(() => { const D = primeExport.data, st = primeExport.state;
		const el = document.querySelector('#conv .item[data-row="' + primeExport.rowById.get(%q) + '"]');
		const c = document.getElementById('conv').getBoundingClientRect(), b = el ? el.getBoundingClientRect() : null;
		return {path: st.path.map(r => D.ids[r]), visible: !!b && b.top < c.bottom && b.bottom > c.top, bar: document.getElementById('branch-bar').textContent}; })()`, target.Entry.ID), &got); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range s.Path(leaf.Entry.ID) {
		want = append(want, e.ID)
	}
	if strings.Join(got.Path, " ") != strings.Join(want, " ") {
		t.Errorf("after the click the page shows a path of %d entries ending at %s, want the %d to %s", len(got.Path), last(got.Path), len(want), leaf.Entry.ID)
	}
	if !got.Visible {
		t.Errorf("the clicked entry %s is not in view", target.Entry.ID)
	}
	if !strings.Contains(got.Bar, "Branch ending at "+leaf.Entry.ID) {
		t.Errorf("the branch bar says %q", got.Bar)
	}
	// Back to the active branch for what follows.
	if err := p.Eval(ctx, `document.getElementById('back').click()`, nil); err != nil {
		t.Fatal(err)
	}
}

// inView reports whether the block of entry id is in the conversation's
// view.
const inView = `(id) => { const el = document.querySelector('#conv .item[data-row="' + primeExport.rowById.get(id) + '"]');
	const c = document.getElementById('conv').getBoundingClientRect(), b = el ? el.getBoundingClientRect() : null;
	return !!b && b.top < c.bottom && b.bottom > c.top; }`

// checkChartClick clicks the chart's point of a reply early in the active
// branch: that reply comes into view.
func checkChartClick(t *testing.T, ctx context.Context, p *cdp.Page, s *session.Session) {
	h, err := compaction.ContextHistory(s.LeafPath())
	if err != nil {
		t.Fatal(err)
	}
	k := 3
	var box cdp.Rect
	if err := p.Eval(ctx, fmt.Sprintf(`(() => { const b = document.querySelectorAll('#ctx-chart circle.pt')[%d].getBoundingClientRect();
		return {x: b.x, y: b.y, width: b.width, height: b.height}; })()`, k), &box); err != nil {
		t.Fatal(err)
	}
	if err := p.Click(ctx, box.X+box.Width/2, box.Y+box.Height/2); err != nil {
		t.Fatal(err)
	}
	var tip string
	var visible bool
	if err := p.Eval(ctx, `document.getElementById('tip').textContent`, &tip); err != nil {
		t.Fatal(err)
	}
	if err := p.Eval(ctx, fmt.Sprintf(`(%s)(%q)`, inView, h.Points[k].EntryID), &visible); err != nil {
		t.Fatal(err)
	}
	if !visible {
		t.Errorf("after a click on the chart's reply %d, its entry %s is not in view", k+1, h.Points[k].EntryID)
	}
	if !strings.HasPrefix(tip, fmt.Sprintf("reply %d: ", k+1)) {
		t.Errorf("the chart's tip says %q", tip)
	}
}

// checkReplacedLink follows the first compaction's link to what it
// replaced: the first replaced entry comes into view, marked as
// summarized.
func checkReplacedLink(t *testing.T, ctx context.Context, p *cdp.Page) {
	var box cdp.Rect
	var from string
	if err := p.Eval(ctx, `(async () => { const st = primeExport.state, D = primeExport.data;
		const r = st.path.find(r => D.comp[r]); primeExport.showRow(r);
		await new Promise(ok => requestAnimationFrame(() => requestAnimationFrame(ok)));
		const a = document.querySelector('#conv .item[data-row="' + r + '"] .replaced a');
		const b = a.getBoundingClientRect(); return {x: b.x, y: b.y, width: b.width, height: b.height}; })()`, &box); err != nil {
		t.Fatal(err)
	}
	if err := p.Click(ctx, box.X+box.Width/2, box.Y+box.Height/2); err != nil {
		t.Fatal(err)
	}
	if err := p.Eval(ctx, `(() => { const D = primeExport.data, st = primeExport.state;
		const r = st.path.find(r => D.comp[r]); return D.ids[D.comp[r].from]; })()`, &from); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Visible bool   `json:"visible"`
		Gone    string `json:"gone"`
	}
	if err := p.Eval(ctx, fmt.Sprintf(`(() => { const el = document.querySelector('#conv .item[data-row="' + primeExport.rowById.get(%q) + '"]');
		return {visible: (%s)(%q), gone: el ? el.dataset.gone || '' : ''}; })()`, from, inView, from), &got); err != nil {
		t.Fatal(err)
	}
	if !got.Visible || got.Gone != "summarized by compaction #1" {
		t.Errorf("after the link to what compaction #1 replaced: entry %s in view %v, marked %q", from, got.Visible, got.Gone)
	}
}

func last(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

// checkLayout: the parts where they belong at 1280×800, and a screenshot
// compared loosely (coarse brightness of a grid of cells) with the one
// kept in testdata. -update writes it and the README's chart picture.
func checkLayout(t *testing.T, ctx context.Context, p *cdp.Page) {
	var r map[string]cdp.Rect
	if err := p.Eval(ctx, `Object.fromEntries(['top','side','chart','conv'].map(id => { const b = document.getElementById(id).getBoundingClientRect(); return [id, {x: b.x, y: b.y, width: b.width, height: b.height}]; }))`, &r); err != nil {
		t.Fatal(err)
	}
	side, chart, conv, top := r["side"], r["chart"], r["conv"], r["top"]
	switch {
	case side.X != 0 || side.Width < 250 || side.Width > 400 || side.Y != top.Height:
		t.Errorf("the tree is at %+v, want a column at the left under the header (%+v)", side, top)
	case chart.X < side.Width || chart.Y != top.Height || chart.Height < 150:
		t.Errorf("the chart is at %+v, want above the conversation right of the tree", chart)
	case conv.Y < chart.Y+chart.Height || conv.Y+conv.Height < 790 || conv.X < side.Width:
		t.Errorf("the conversation is at %+v, want below the chart to the bottom", conv)
	}
	shot, err := p.Screenshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	artifact(t, "htmlexport-1280x800.png", shot)
	chartShot, err := p.Screenshot(ctx, &chart)
	if err != nil {
		t.Fatal(err)
	}
	if golden.Updating() {
		for name, b := range map[string][]byte{"testdata/layout-1280x800.png": shot, "../docs/context-chart.png": chartShot} {
			if err := os.WriteFile(name, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	want, err := os.ReadFile("testdata/layout-1280x800.png")
	if err != nil {
		t.Fatal(err)
	}
	d := layoutDistance(t, shot, want)
	t.Logf("distance from testdata/layout-1280x800.png: %.4f", d)
	if d > 0.08 {
		t.Errorf("the screenshot differs from testdata/layout-1280x800.png by %.3f (more than 0.08): the layout changed (run with -update if meant)", d)
	}
}

// artifact keeps a test's output in $PRIME_ARTIFACTS (default: a
// directory in the temp dir) and logs where.
func artifact(t *testing.T, name string, b []byte) {
	dir := os.Getenv("PRIME_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "prime-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// layoutDistance compares two screenshots by the mean brightness of a
// 32×20 grid of cells: 0 for the same layout, 1 for black against white.
func layoutDistance(t *testing.T, a, b []byte) float64 {
	ia, err := png.Decode(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	ib, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if ia.Bounds() != ib.Bounds() {
		return 1
	}
	ga, gb := grid(ia), grid(ib)
	sum := 0.0
	for i := range ga {
		d := ga[i] - gb[i]
		if d < 0 {
			d = -d
		}
		sum += d
	}
	return sum / float64(len(ga))
}

func grid(img image.Image) []float64 {
	const cols, rows = 32, 20
	bd := img.Bounds()
	out := make([]float64, cols*rows)
	n := make([]int, cols*rows)
	for y := bd.Min.Y; y < bd.Max.Y; y += 2 {
		for x := bd.Min.X; x < bd.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			c := (y-bd.Min.Y)*rows/bd.Dy()*cols + (x-bd.Min.X)*cols/bd.Dx()
			out[c] += (0.3*float64(r) + 0.59*float64(g) + 0.11*float64(b)) / 65535
			n[c]++
		}
	}
	for i := range out {
		out[i] /= float64(max(n[i], 1))
	}
	return out
}

// BenchmarkBrowser100k opens the export of a 100,000-entry session in the
// browser and scrolls it: open-ms is from navigation to the page being
// ready (read, inflated, parsed, the active branch laid out, the end in
// view; the browser already started), scroll-ms
// the mean time of a jump to another place in the conversation with its
// blocks drawn, tree-ms of a click on a tree row of another branch;
// page-MB is the file's size.
func BenchmarkBrowser100k(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	o := sessiongen.Options{Entries: 100_000, Seed: 1}
	s := demoSession(b, o)
	file := filepath.Join(b.TempDir(), "big.html")
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := htmlexport.Write(ctx, w, htmlexport.SourceOf(s), marks(sessiongen.Options{ContextWindow: 200_000, ReserveTokens: 16_384})); err != nil {
		b.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	fi, _ := f.Stat()
	f.Close()
	s = nil
	b.ResetTimer()
	var open, scroll, tree time.Duration
	for range b.N {
		_, p := blankPage(b, ctx)
		start := time.Now()
		openPage(b, ctx, p, file)
		open += time.Since(start)
		var tm map[string]float64
		if err := p.Eval(ctx, `primeExport.timing`, &tm); err != nil {
			b.Fatal(err)
		}
		b.Logf("script started at %.0f ms; base64 %.0f ms, bytes %.0f ms, inflated %.0f ms, JSON %.0f ms; ready %.0f ms later",
			tm["start"], tm["atob"]-tm["start"], tm["bytes"]-tm["atob"], tm["inflated"]-tm["bytes"], tm["json"]-tm["inflated"], tm["ready"]-tm["parsed"])
		start = time.Now()
		const jumps = 10
		if err := p.Eval(ctx, fmt.Sprintf(`(async () => { const n = primeExport.state.items.length;
			for (let k = 0; k < %d; k++) { primeExport.jump(Math.floor(n * k / %d));
				await new Promise(ok => requestAnimationFrame(() => requestAnimationFrame(ok))); }
			return document.querySelectorAll('#conv .item').length; })()`, jumps, jumps), nil); err != nil {
			b.Fatal(err)
		}
		scroll += time.Since(start) / jumps
		start = time.Now()
		if err := p.Eval(ctx, `(async () => { const st = primeExport.state; let r = 0;
			while (st.onPath[r]) r++;
			primeExport.showRow(r, false);
			await new Promise(ok => requestAnimationFrame(() => requestAnimationFrame(ok)));
			return st.path.length; })()`, nil); err != nil {
			b.Fatal(err)
		}
		tree += time.Since(start)
		if probs := p.Problems(); len(probs) > 0 {
			b.Errorf("the console reported:\n%s", strings.Join(probs, "\n"))
		}
	}
	b.ReportMetric(float64(open.Milliseconds())/float64(b.N), "open-ms")
	b.ReportMetric(float64(scroll.Microseconds())/1000/float64(b.N), "scroll-ms")
	b.ReportMetric(float64(tree.Microseconds())/1000/float64(b.N), "tree-ms")
	b.ReportMetric(float64(fi.Size())/1e6, "page-MB")
}
