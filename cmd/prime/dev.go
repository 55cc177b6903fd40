package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/internal/atomicfile"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
)

// devCommands are tools for developing Prime.
func devCommands() []*command {
	return []*command{
		{name: "dev gen-session", usage: "--entries N [--seed S] [--out FILE] [options]", summary: "generate a realistic session file", run: runGenSession},
		{name: "dev bench", usage: "FILE [--runs N] [--json] [--cold]", summary: "time opening a session (whole and from its persistent index), its path, context, estimate and compaction; memory; --cold: a first open and the next, phase by phase", run: runBench},
	}
}

func runGenSession(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("dev gen-session", flag.ContinueOnError)
	var o sessiongen.Options
	fs.IntVar(&o.Entries, "entries", 1000, "number of entries after the header")
	seed := fs.Uint64("seed", 1, "the seed; the same seed gives the same file")
	out := fs.String("out", "", "write to FILE (created 0600; default standard output)")
	fs.IntVar(&o.ContextWindow, "window", 0, "simulated context window in tokens (default 200000)")
	fs.BoolVar(&o.NoCompactions, "no-compactions", false, "never compact")
	fs.Float64Var(&o.BranchRate, "branch-rate", 0, "chance a user turn starts a branch (default 0.02; negative: none)")
	fs.Float64Var(&o.HugeRate, "huge-rate", 0, "chance a tool result is 64-256 KiB (default 0.001; negative: none)")
	fs.Float64Var(&o.ImageRate, "image-rate", 0, "chance of an image in a prompt or result (default 0.01; negative: none)")
	fs.Float64Var(&o.SizeScale, "scale", 0, "multiply text sizes (default 1)")
	fs.IntVar(&o.TrailingHugeResults, "trailing-huge", 0, "end with N tool results each larger than the keep-recent budget")
	fs.BoolVar(&o.Pi16, "pi16", false, "write pi 1.6's transcript: system messages and patches, failed attempts hidden by context edits")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("unexpected arguments: %s", strings.Join(pos, " "))
	}
	if o.Entries < 0 {
		return usageErrorf("--entries must not be negative")
	}
	o.Seed = *seed
	if *out == "" {
		w := bufio.NewWriterSize(a.stdout, 1<<20)
		if err := sessiongen.Generate(w, o); err != nil {
			return err
		}
		return w.Flush()
	}
	var n int64
	err = atomicfile.Write(*out, 0o600, func(f io.Writer) error {
		w := bufio.NewWriterSize(&countingWriter{w: f, n: &n}, 1<<20)
		if err := sessiongen.Generate(w, o); err != nil {
			return err
		}
		return w.Flush()
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "wrote %s: %d entries, %.1f MB\n", *out, o.Entries, float64(n)/1e6)
	return nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n *int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	k, err := c.w.Write(p)
	*c.n += int64(k)
	return k, err
}

// benchJSON is the output of "prime dev bench --json"; times are the best
// of the runs, in nanoseconds.
type benchJSON struct {
	File       string `json:"file"`
	Bytes      int64  `json:"bytes"`
	Entries    int    `json:"entries"`
	PathLength int    `json:"pathLength"`
	Messages   int    `json:"messages"`
	Tokens     int    `json:"tokens"`
	// OpenNs is opening the session by indexing the whole file,
	// OpenIndexNs from its persistent index (kept in a temporary
	// directory for the bench; IndexFrom says how it was used, IndexBytes
	// is its size; 0 for a file too small to keep one).
	OpenNs      int64  `json:"openNs"`
	OpenIndexNs int64  `json:"openIndexNs"`
	IndexFrom   string `json:"indexFrom"`
	IndexBytes  int64  `json:"indexBytes"`
	// PathNs is the leaf's path from the index (session.PathView),
	// PathEntriesNs with an Entry made for each of its entries
	// (Session.LeafPath); ContextNs the leaf's context (Session.Context,
	// which makes only the entries it needs).
	PathNs        int64 `json:"pathNs"`
	PathEntriesNs int64 `json:"pathEntriesNs"`
	ContextNs     int64 `json:"contextNs"`
	EstimateNs    int64 `json:"estimateNs"`
	// PrepareNs is preparing a compaction of the leaf's context (default
	// settings) after building it; Compactable says whether there was
	// anything to compact.
	PrepareNs   int64   `json:"prepareNs"`
	Compactable bool    `json:"compactable"`
	OpenMBps    float64 `json:"openMBps"`
	// HeapIndexBytes is the heap live with the session open (its index);
	// HeapContextBytes with its leaf context and a preparation too.
	HeapIndexBytes   uint64 `json:"heapIndexBytes"`
	HeapContextBytes uint64 `json:"heapContextBytes"`
	PeakRSSBytes     int64  `json:"peakRssBytes"`
}

// benchArgs parses the arguments of a dev bench command with fs, which
// holds the command's own flags: FILE, --runs N and --json.
func benchArgs(fs *flag.FlagSet, args []string) (path string, runs int, asJSON bool, err error) {
	fs.IntVar(&runs, "runs", 3, "repeat `N` times; the best time is reported")
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	if path, err = oneFile(fs, args); err != nil {
		return "", 0, false, err
	}
	if runs < 1 {
		return "", 0, false, usageErrorf("--runs must be at least 1")
	}
	return path, runs, asJSON, nil
}

// best keeps in *dst the shortest of the durations it is given, in
// nanoseconds.
func best(dst *int64, d time.Duration) {
	if *dst == 0 || int64(d) < *dst {
		*dst = int64(d)
	}
}

// liveHeap returns the heap in use after a collection.
func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// runBench is "prime dev bench FILE": how long opening a session takes
// (with and without its index), and the path, context, token estimate and
// compaction preparation at its leaf; --cold hands over to runColdBench.
func runBench(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("dev bench", flag.ContinueOnError)
	cold := fs.Bool("cold", false, "time a first open (no persistent index) and the open after it, phase by phase")
	path, runs, asJSON, err := benchArgs(fs, args)
	if err != nil {
		return err
	}
	if *cold {
		return runColdBench(ctx, a, path, runs, asJSON)
	}
	indexDir, err := os.MkdirTemp("", "prime-bench-index-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(indexDir)
	withIndex := session.ReadOptions{IndexDir: indexDir}
	// The index is written by the first open and trusted or checked by
	// the next ones.
	if s, err := benchLoad(path, withIndex); err != nil {
		return err
	} else {
		s.Close()
	}
	out := benchJSON{File: path}
	base := liveHeap()
	var s *session.Session
	for range runs {
		if s != nil {
			s.Close()
		}
		if s, err = benchOnce(path, withIndex, base, &out); err != nil {
			return err
		}
	}
	if fi, err := os.Stat(path); err == nil {
		out.Bytes = fi.Size()
	}
	if names, _ := os.ReadDir(indexDir); len(names) == 1 {
		if fi, err := names[0].Info(); err == nil {
			out.IndexBytes = fi.Size()
		}
	}
	out.Entries = s.Len()
	out.OpenMBps = float64(out.Bytes) / 1e6 / (float64(out.OpenNs) / 1e9)
	runtime.KeepAlive(s)
	s.Close()
	out.PeakRSSBytes = peakRSS()
	if asJSON {
		return writeJSON(a.stdout, out)
	}
	printBench(a.stdout, &out, runs)
	return nil
}

// benchLoad opens the session file at path.
func benchLoad(path string, opts session.ReadOptions) (*session.Session, error) {
	s, err := session.LoadWith(path, opts)
	if err != nil {
		return nil, sessionFileErr(err)
	}
	return s, nil
}

// benchOnce makes one run of runBench's measures, keeping the best times
// and the first heap sizes in out, and returns the session it opened
// without an index, still open (its caller closes it).
func benchOnce(path string, withIndex session.ReadOptions, base uint64, out *benchJSON) (*session.Session, error) {
	runtime.GC()
	t := time.Now()
	s, err := benchLoad(path, withIndex)
	if err != nil {
		return nil, err
	}
	best(&out.OpenIndexNs, time.Since(t))
	out.IndexFrom = s.ReadFrom().String()
	s.Close()

	runtime.GC()
	t = time.Now()
	if s, err = benchLoad(path, session.ReadOptions{}); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	best(&out.OpenNs, time.Since(t))
	if out.HeapIndexBytes == 0 {
		out.HeapIndexBytes = liveHeap() - min(base, liveHeap())
	}

	t = time.Now()
	out.PathLength = s.LeafView().Len()
	best(&out.PathNs, time.Since(t))

	t = time.Now()
	c, err := s.Context("")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	best(&out.ContextNs, time.Since(t))
	out.Messages = len(c.Messages)

	t = time.Now()
	est := session.EstimateContextTokens(c.Messages)
	best(&out.EstimateNs, time.Since(t))
	out.Tokens = est.Tokens

	t = time.Now()
	prep, err := compaction.PrepareContext(c, compaction.PinsOf(s.LeafView()), compaction.DefaultSettings())
	var nc *compaction.NotCompactableError
	if err != nil && !errors.As(err, &nc) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	best(&out.PrepareNs, time.Since(t))
	out.Compactable = err == nil
	if out.HeapContextBytes == 0 {
		out.HeapContextBytes = liveHeap() - min(base, liveHeap())
	}
	runtime.KeepAlive(c)
	runtime.KeepAlive(prep)

	t = time.Now()
	entries := s.LeafPath()
	best(&out.PathEntriesNs, time.Since(t))
	runtime.KeepAlive(entries)
	ok = true
	return s, nil
}

// printBench writes runBench's measures for a reader.
func printBench(w io.Writer, out *benchJSON, runs int) {
	mb := func(n uint64) float64 { return float64(n) / 1e6 }
	fmt.Fprintf(w, "%s: %.1f MB, %d entries (best of %d runs)\n", out.File, float64(out.Bytes)/1e6, out.Entries, runs)
	fmt.Fprintf(w, "open      %10s  (indexing the whole file, %.0f MB/s)\n", time.Duration(out.OpenNs), out.OpenMBps)
	if out.IndexBytes > 0 {
		fmt.Fprintf(w, "open      %10s  (%s, %.1f MB)\n", time.Duration(out.OpenIndexNs), out.IndexFrom, float64(out.IndexBytes)/1e6)
	}
	fmt.Fprintf(w, "path      %10s  (%d entries, root to leaf, from the index)\n", time.Duration(out.PathNs), out.PathLength)
	fmt.Fprintf(w, "context   %10s  (%d messages)\n", time.Duration(out.ContextNs), out.Messages)
	fmt.Fprintf(w, "estimate  %10s  (%d tokens)\n", time.Duration(out.EstimateNs), out.Tokens)
	fmt.Fprintf(w, "prepare   %10s  (compaction at the leaf%s)\n", time.Duration(out.PrepareNs), map[bool]string{true: "", false: ": nothing to compact"}[out.Compactable])
	fmt.Fprintf(w, "entries   %10s  (an Entry for each entry of the path)\n", time.Duration(out.PathEntriesNs))
	fmt.Fprintf(w, "heap live %7.1f MB with the session open, %.1f MB with its context and preparation\n", mb(out.HeapIndexBytes), mb(out.HeapContextBytes))
	if out.PeakRSSBytes > 0 {
		fmt.Fprintf(w, "peak RSS  %7.1f MB (whole process, all runs)\n", float64(out.PeakRSSBytes)/1e6)
	}
}

// peakRSS returns the process's peak resident set size (VmHWM on Linux), or
// 0 where it is not known.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}
