package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/internal/numfmt"
)

// exportCommands are the commands that write a session for people to read.
func exportCommands() []*command {
	return []*command{
		{name: "export", usage: "FILE [-o OUT.html] [--no-redact] [--context-window N] [--cwd DIR]",
			summary: "write a session as one self-contained HTML page: the tree, the compactions and a chart of the context", run: runExport},
	}
}

// runExport is "prime export FILE": the HTML page of a session file.
func runExport(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	out := fs.String("o", "", "write the page to `OUT.html` (default: FILE with .html for .jsonl)")
	noRedact := fs.Bool("no-redact", false, "keep secrets (API keys, tokens, passwords) as they are instead of masking them")
	window := fs.Int("context-window", 0, "draw a context window of `N` tokens (default: the session's model's)")
	var sf settingsFlags
	sf.register(fs)
	s, path, err := loadArg(a, fs, args)
	if err != nil {
		return err
	}
	if *window < 0 {
		return usageErrorf("--context-window must not be negative")
	}
	st, err := loadSettings(ctx, a, sf)
	if err != nil {
		return err
	}
	dest := *out
	if dest == "" {
		dest = strings.TrimSuffix(path, filepath.Ext(path)) + ".html"
	}
	if filepath.Clean(dest) == filepath.Clean(path) {
		return usageErrorf("the page would replace the session file %s: give -o OUT.html", path)
	}
	ag := agent.New(s, agent.Config{Settings: st, Getenv: a.getenv})
	defer ag.Close()
	printWarnings(a, ag.Session())
	res, err := ag.ExportHTML(ctx, dest, agent.HTMLExportOptions{NoRedact: *noRedact, ContextWindow: *window})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	masked := "secrets masked: " + numfmt.Commas(res.Redacted)
	if *noRedact {
		masked = "not redacted"
	}
	fmt.Fprintf(a.stdout, "wrote %s: %s entries, %s bytes (%s)\n", res.Path, numfmt.Commas(res.Entries), numfmt.Commas(int(res.Bytes)), masked)
	return nil
}
