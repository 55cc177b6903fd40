package agent

import (
	"context"
	"errors"
	"io"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/htmlexport"
	"github.com/prime-agent/prime/internal/atomicfile"
	"github.com/prime-agent/prime/session"
)

// HTMLExportOptions say what ExportHTML masks and measures with.
type HTMLExportOptions struct {
	// NoRedact writes secrets as they are (the page says so).
	NoRedact bool
	// ContextWindow, when positive, replaces the model's window.
	ContextWindow int
}

// HTMLExported is what ExportHTML wrote.
type HTMLExported struct {
	// Path is the file written; Bytes its size.
	Path  string
	Bytes int64
	// Entries is the number of entries shown; Redacted the values masked
	// as secrets.
	Entries  int
	Redacted int
}

// ExportHTML writes the whole session as one self-contained HTML page to
// path (see package htmlexport): the tree, the branch at the leaf, every
// compaction with its receipt, and the chart of the context against the
// window, threshold and background mark that /context measures with.
// The file is replaced atomically.
func (a *Agent) ExportHTML(ctx context.Context, path string, o HTMLExportOptions) (*HTMLExported, error) {
	a.mu.Lock()
	src := htmlexport.SourceOf(a.s)
	a.mu.Unlock()
	if len(src.Roots) == 0 {
		return nil, errors.New("nothing to export: the session is empty")
	}
	opts := htmlexport.Options{NoRedact: o.NoRedact}
	// A context that cannot be built (an entry that cannot be read) leaves
	// the chart without its marks; the page says why.
	if b, err := a.ContextBreakdown(ctx, BreakdownRequest{LeafID: src.LeafID, ContextWindow: o.ContextWindow}); err == nil {
		opts.Window, opts.Threshold, opts.BackgroundMark = b.Window, b.Threshold, b.BackgroundMark
	} else if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	out := &HTMLExported{Path: path}
	err := atomicfile.Write(path, 0o600, func(w io.Writer) error {
		cw := &countWriter{w: w}
		st, err := htmlexport.Write(ctx, cw, src, opts)
		out.Bytes, out.Entries, out.Redacted = cw.n, st.Entries, st.Redacted
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ContextHistory measures the context along the current path, reply by
// reply, with each compaction's drop (/context's sparkline; the HTML
// export's chart).
func (a *Agent) ContextHistory(ctx context.Context) (*compaction.History, error) {
	a.mu.Lock()
	var path []*session.Entry
	if a.s.LeafID() != "" {
		path = a.s.LeafPath()
	}
	a.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return compaction.ContextHistory(path)
}

// countWriter counts what passes through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
