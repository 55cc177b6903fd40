// Package htmlexport writes a session as one self-contained HTML page to
// read and share: the conversation of a branch (markdown rendered, code
// highlighted, tool calls folded with their arguments and bounded output,
// images inline, thinking folded), the session's tree beside it (a click
// shows that branch; labels, branch summaries and pins marked), every
// compaction as a block with its summary, instructions and receipt and a
// link to what it replaced, and a chart of the context over time drawn as
// SVG by Go: the context's size after every reply of the active path
// (measured where the provider reported usage, estimated where not), the
// threshold and the background mark, and a drop at each compaction.
//
// The page needs nothing but itself: styles and script inline, images as
// data, a content security policy that lets it load nothing. It stays
// usable for a session of 100,000 entries: the entries are data in the
// page and only those in view are made into elements (the conversation and
// the tree are virtual lists), so the browser never holds one giant
// document.
//
// Secrets are masked before anything is written (see redact.go), unless
// the caller turns that off.
//
// Rendering a message takes time linear in its size, whatever it holds:
// the markdown parser is bounded by internal/mdguard, whose rules keep all
// the text and drop only markup where goldmark would take quadratic time
// (a paragraph with more than 1,000 of the bytes * _ ~ [ ` < is shown as
// plain text; a quote or list more than 20 containers deep, or a table
// whose padded cells would far outnumber its bytes, as the text written).
//
// The package sits above session and compaction (it reads a session
// snapshot and uses compaction's history and receipt records) and below
// agent, through which front ends reach it.
package htmlexport

import (
	"bufio"
	"compress/gzip"
	"context"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/session"
)

// Source is the session an export shows: a snapshot that stays valid while
// the session goes on (entries are immutable).
type Source struct {
	Header *session.Header
	// File is the session's file, "" for one in memory.
	File string
	// Name is the session's name, "" when it has none.
	Name string
	// Roots is the session's tree ([session.Session.Tree]).
	Roots []*session.Node
	// LeafID is the active leaf: its path is the branch shown first and
	// the one the chart draws.
	LeafID string
}

// SourceOf takes the snapshot of s.
func SourceOf(s *session.Session) Source {
	return Source{Header: s.Header(), File: s.File(), Name: s.Name(), Roots: s.Tree(), LeafID: s.LeafID()}
}

// Options are the marks the chart draws and what the export masks.
type Options struct {
	// Window is the model's context window in tokens (the chart's top);
	// Threshold where automatic compaction starts; BackgroundMark where a
	// background summary starts (0: none).
	Window, Threshold, BackgroundMark int
	// NoRedact writes secrets as they are (the page then says so).
	NoRedact bool
}

// Stats are what an export wrote.
type Stats struct {
	// Entries is the number of entries; Redacted the values masked.
	Entries  int
	Redacted int
}

//go:embed page.css
var pageCSS string

//go:embed page.js
var pageJS string

// Write writes the page of src to w.
func Write(ctx context.Context, w io.Writer, src Source, opts Options) (Stats, error) {
	d, err := build(ctx, src, opts)
	if err != nil {
		return Stats{}, err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	title := src.Name
	if title == "" && src.Header != nil {
		title = "Session " + src.Header.ID
	}
	title = d.red.text(title)
	fmt.Fprintf(bw, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	bw.WriteString(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">` + "\n")
	bw.WriteString(`<meta name="viewport" content="width=device-width, initial-scale=1">` + "\n")
	fmt.Fprintf(bw, "<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n", html.EscapeString(title), pageCSS)
	d.writeBody(bw, title, src, opts)
	if err := writeData(bw, d.data); err != nil {
		return Stats{}, fmt.Errorf("writing the page's data: %w", err)
	}
	bw.WriteString("\n<script>\n")
	bw.WriteString(pageJS)
	bw.WriteString("</script>\n</body>\n</html>\n")
	if err := bw.Flush(); err != nil {
		return Stats{}, err
	}
	return Stats{Entries: len(d.data.IDs), Redacted: d.red.count()}, nil
}

// writeBody writes the page's frame: header, tree, chart, conversation.
func (d *document) writeBody(w *bufio.Writer, title string, src Source, opts Options) {
	w.WriteString(`<header id="top"><div class="title"><h1>` + html.EscapeString(title) + `</h1><div class="meta">`)
	var meta []string
	if src.Header != nil {
		meta = append(meta, "started "+html.EscapeString(shortTime(src.Header.Timestamp)), html.EscapeString(d.red.text(src.Header.CWD)))
	}
	meta = append(meta, fmt.Sprintf("%s entries, %d branches, %d compactions", commas(len(d.data.IDs)), d.leaves, d.compactions))
	if opts.NoRedact {
		meta = append(meta, `<span class="warn">not redacted: secrets are shown as they are</span>`)
	} else if d.red.count() > 0 {
		meta = append(meta, fmt.Sprintf("%s values masked as secrets", commas(d.red.count())))
	}
	w.WriteString(strings.Join(meta, " · "))
	w.WriteString(`</div></div><div class="tools"><button id="tog-tools" type="button">expand tools</button><button id="tog-think" type="button">expand thinking</button><button id="tog-chart" type="button">hide chart</button></div></header>` + "\n")
	w.WriteString(`<div id="app"><aside id="side"><div class="side-head">Tree <span id="tree-status"></span></div><div id="tree" tabindex="0"><div id="tree-inner"></div></div></aside>` + "\n")
	w.WriteString(`<main id="main"><section id="chart">`)
	if d.chartNote != "" {
		w.WriteString(`<div class="err">` + html.EscapeString(d.red.text(d.chartNote)) + `</div>`)
	}
	w.WriteString(d.chart)
	w.WriteString(`<div id="tip" hidden></div></section>` + "\n")
	w.WriteString(`<div id="branch-bar"></div><div id="conv" tabindex="0"><div id="conv-inner"></div></div></main></div>` + "\n")
}

// compressFrom is the size of the blocks from which the page holds its
// data compressed: a third of the size, and a browser parses a page's
// bytes far more slowly than it inflates them (a 100,000-entry session's
// page opens about three times faster so); a small page keeps its data as
// plain JSON.
const compressFrom = 256 << 10

// writeData writes the page's data as a script element: JSON, or, when it
// is large, the gzip in base64 (which the page inflates with the browser's
// DecompressionStream) of the JSON without the blocks on one line, then
// the blocks as one text, which the page cuts by their offsets only when
// it draws one (parsing 100,000 strings of JSON costs more). Either way it
// streams: the data's size is judged by its blocks before it is encoded.
func writeData(w io.Writer, data pageData) error {
	size := 0
	for i := range data.HTML {
		size += len(data.HTML[i]) + len(data.Tree[i]) + len(data.IDs[i])
	}
	opts := json.JoinOptions(jsontext.EscapeForHTML(true), jsontext.EscapeForJS(true), json.Deterministic(true))
	if size < compressFrom {
		if _, err := io.WriteString(w, `<script id="data" type="application/json">`); err != nil {
			return err
		}
		if err := json.MarshalWrite(w, data, opts); err != nil {
			return err
		}
		_, err := io.WriteString(w, "</script>")
		return err
	}
	if _, err := io.WriteString(w, `<script id="data" type="application/gzip-base64">`); err != nil {
		return err
	}
	b64 := base64.NewEncoder(base64.StdEncoding, w)
	z, err := gzip.NewWriterLevel(b64, gzip.BestSpeed)
	if err != nil {
		return err
	}
	bz := bufio.NewWriterSize(z, 1<<16)
	blocks := data.HTML
	data.HTML, data.Off = nil, make([]int64, 0, len(blocks)+1)
	var off int64
	for i := range blocks {
		blocks[i] = strings.ToValidUTF8(blocks[i], "\uFFFD")
		data.Off = append(data.Off, off)
		off += int64(utf16Len(blocks[i]))
	}
	data.Off = append(data.Off, off)
	if err := json.MarshalWrite(bz, data, opts); err != nil {
		return err
	}
	bz.WriteByte('\n')
	for _, b := range blocks {
		bz.WriteString(b)
	}
	if err := bz.Flush(); err != nil {
		return err
	}
	if err := z.Close(); err != nil {
		return err
	}
	if err := b64.Close(); err != nil {
		return err
	}
	_, err = io.WriteString(w, "</script>")
	return err
}

// utf16Len is the length of a valid UTF-8 string in UTF-16 units, as the
// page's script counts.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// history measures the context along the active path, for the chart.
func history(src Source, path []*session.Entry) (*compaction.History, error) {
	if src.LeafID == "" {
		return &compaction.History{}, nil
	}
	return compaction.ContextHistory(path)
}
