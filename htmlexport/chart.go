package htmlexport

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/internal/numfmt"
	"github.com/prime-agent/prime/session"
)

// The chart's drawing, in SVG user units.
const (
	chartW      = 1000
	chartH      = 230
	chartLeft   = 58
	chartRight  = 14
	chartTop    = 16
	chartBottom = 30
	// maxDots is the most replies drawn as dots; a longer path is drawn as
	// lines only (the page still finds the reply under the pointer).
	maxDots = 400
)

// chart is the drawn chart and what the page needs to point into it.
type chart struct {
	svg    string
	points [][5]int32
	width  int
}

// drawChart draws the history of the active path: the context after every
// reply (solid where the provider measured it, dashed where estimated),
// each compaction a marked drop, the threshold and the background mark as
// lines, the window as the top. The page's points are in tenths of units.
func drawChart(h *compaction.History, opts Options, comps map[int32]compInfo, rowOf map[*session.Entry]int32, path []*session.Entry) chart {
	n := len(h.Points)
	top := max(opts.Window, 1)
	for _, p := range h.Points {
		top = max(top, p.Tokens)
	}
	for _, d := range h.Drops {
		top = max(top, d.TokensBefore)
	}
	plotW, plotH := float64(chartW-chartLeft-chartRight), float64(chartH-chartTop-chartBottom)
	x := func(k float64) float64 { return chartLeft + k/float64(max(n, 1))*plotW }
	y := func(t int) float64 { return chartTop + plotH - float64(t)/float64(top)*plotH }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg id="ctx-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" role="img" aria-label="context tokens after each reply of the active path">`, chartW, chartH)
	b.WriteString(`<title>Context after each reply of the active path</title>`)
	axes(&b, top, n, x, y)
	hline := func(class string, t int, label string) {
		if t <= 0 {
			return
		}
		fmt.Fprintf(&b, `<g class="%s"><line x1="%d" x2="%d" y1="%s" y2="%s"/><text x="%d" y="%s">%s %s</text></g>`,
			class, chartLeft, chartW-chartRight, f1(y(t)), f1(y(t)), chartLeft+6, f1(y(t)-3), label, numfmt.Commas(t))
	}
	hline("window", opts.Window, "window")
	hline("threshold", opts.Threshold, "compaction threshold")
	hline("bgmark", opts.BackgroundMark, "background summary")
	var solid, dashed strings.Builder
	c := chart{width: chartW, points: make([][5]int32, 0, n)}
	prevX, prevY := -1.0, 0.0
	di := 0
	for k, p := range h.Points {
		for ; di < len(h.Drops) && h.Drops[di].Replies == k; di++ {
			d := h.Drops[di]
			xd := x(float64(k))
			if prevX >= 0 {
				fmt.Fprintf(&dashed, "M%s %sL%s %s", f1(prevX), f1(prevY), f1(xd), f1(y(d.TokensBefore)))
			}
			prevX, prevY = xd, y(d.TokensAfter)
			drop(&b, d, comps, rowOf, path, xd, y)
		}
		px, py := x(float64(k)+0.5), y(p.Tokens)
		seg := &dashed
		if p.Measured {
			seg = &solid
		}
		if prevX >= 0 {
			fmt.Fprintf(seg, "M%s %sL%s %s", f1(prevX), f1(prevY), f1(px), f1(py))
		}
		prevX, prevY = px, py
		row := rowOf[path[p.Index]]
		m := int32(0)
		if p.Measured {
			m = 1
		}
		c.points = append(c.points, [5]int32{row, int32(px * 10), int32(py * 10), m, int32(min(p.Tokens, 1<<31-1))})
	}
	for ; di < len(h.Drops); di++ {
		drop(&b, h.Drops[di], comps, rowOf, path, x(float64(n)), y)
	}
	fmt.Fprintf(&b, `<path class="ln measured" d="%s"/><path class="ln estimated" d="%s"/>`, solid.String(), dashed.String())
	if n <= maxDots {
		for k, p := range h.Points {
			class := "pt est"
			if p.Measured {
				class = "pt"
			}
			fmt.Fprintf(&b, `<circle class="%s" cx="%s" cy="%s" r="3" data-row="%d"><title>reply %d: %s tokens%s</title></circle>`,
				class, f1(float64(c.points[k][1])/10), f1(float64(c.points[k][2])/10), c.points[k][0], k+1, numfmt.Commas(p.Tokens), estNote(p.Measured))
		}
	}
	legend(&b)
	b.WriteString(`<line id="cursor" class="cursor" x1="0" x2="0" y1="` + strconv.Itoa(chartTop) + `" y2="` + strconv.Itoa(chartH-chartBottom) + `" visibility="hidden"/>`)
	b.WriteString(`</svg>`)
	c.svg = b.String()
	return c
}

// drop draws a compaction: a marked vertical fall from the tokens before
// to those after, numbered as in the conversation.
func drop(b *strings.Builder, d compaction.HistoryDrop, comps map[int32]compInfo, rowOf map[*session.Entry]int32, path []*session.Entry, xd float64, y func(int) float64) {
	row := rowOf[path[d.Index]]
	fmt.Fprintf(b, `<g class="drop" data-row="%d" data-replies="%d" data-before="%d" data-after="%d"><line x1="%s" x2="%s" y1="%s" y2="%s"/>`,
		row, d.Replies, d.TokensBefore, d.TokensAfter, f1(xd), f1(xd), f1(y(d.TokensBefore)), f1(y(d.TokensAfter)))
	fmt.Fprintf(b, `<path class="mark" d="M%s %sl-4 -7h8z"/><text x="%s" y="%s">#%d</text><title>compaction #%d: %s → %s tokens</title></g>`,
		f1(xd), f1(y(d.TokensBefore)-2), f1(xd), f1(y(d.TokensBefore)-11), comps[row].Num, comps[row].Num, numfmt.Commas(d.TokensBefore), numfmt.Commas(d.TokensAfter))
}

// axes draws the token scale and the reply count.
func axes(b *strings.Builder, top, n int, x func(float64) float64, y func(int) float64) {
	b.WriteString(`<g class="axes">`)
	for q := 0; q <= 4; q++ {
		t := top * q / 4
		fmt.Fprintf(b, `<line class="grid" x1="%d" x2="%d" y1="%s" y2="%s"/><text class="yl" x="%d" y="%s">%s</text>`,
			chartLeft, chartW-chartRight, f1(y(t)), f1(y(t)), chartLeft-6, f1(y(t)+4), kilo(t))
	}
	step := max(1, niceStep(n))
	for k := 0; k <= n; k += step {
		fmt.Fprintf(b, `<text class="xl" x="%s" y="%d">%d</text>`, f1(x(float64(k))), chartH-chartBottom+14, k)
	}
	fmt.Fprintf(b, `<text class="xt" x="%d" y="%d">replies on the active path (%s)</text></g>`, chartLeft, chartH-4, numfmt.Commas(n))
}

// legend explains the two kinds of line.
func legend(b *strings.Builder) {
	fmt.Fprintf(b, `<g class="legend"><line class="ln measured" x1="%d" x2="%d" y1="%d" y2="%d"/><text x="%d" y="%d">usage reported</text>`,
		chartW-330, chartW-310, chartH-8, chartH-8, chartW-306, chartH-4)
	fmt.Fprintf(b, `<line class="ln estimated" x1="%d" x2="%d" y1="%d" y2="%d"/><text x="%d" y="%d">estimated (chars/4)</text></g>`,
		chartW-200, chartW-180, chartH-8, chartH-8, chartW-176, chartH-4)
}

func estNote(measured bool) string {
	if measured {
		return ""
	}
	return " (estimated)"
}

// niceStep is a round tick step for n replies (about eight ticks).
func niceStep(n int) int {
	for _, s := range []int{1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000, 20000, 50000} {
		if n/s <= 8 {
			return s
		}
	}
	return n/8 + 1
}

// kilo writes tokens as 0, 950, 12k, 1.2M.
func kilo(t int) string {
	switch {
	case t >= 1_000_000:
		return strconv.FormatFloat(float64(t)/1e6, 'f', 1, 64) + "M"
	case t >= 10_000:
		return strconv.Itoa(t/1000) + "k"
	case t >= 1000:
		return strconv.FormatFloat(float64(t)/1000, 'f', 1, 64) + "k"
	}
	return strconv.Itoa(t)
}

// f1 writes a coordinate with one decimal.
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func commas(n int) string { return numfmt.Commas(n) }

// clock is an entry's time of day; shortTime its date and time.
func clock(ts string) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return ts
	}
	return t.UTC().Format("15:04:05")
}

func shortTime(ts string) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return ts
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}
