package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/prime-agent/prime/internal/atomicfile"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
)

// devCommands are tools for developing Prime.
func devCommands() []*command {
	return []*command{
		{name: "dev gen-session", usage: "--entries N [--seed S] [--out FILE] [options]", summary: "generate a realistic session file", run: runGenSession},
		{name: "dev bench", usage: "FILE [--runs N] [--json]", summary: "time opening a session, its path, context and estimate; peak memory", run: runBench},
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
	var b bytes.Buffer
	if err := sessiongen.Generate(&b, o); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(*out, b.Bytes(), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "wrote %s: %d entries, %.1f MB\n", *out, o.Entries, float64(b.Len())/1e6)
	return nil
}

// benchJSON is the output of "prime dev bench --json"; times are the best
// of the runs, in nanoseconds.
type benchJSON struct {
	File          string  `json:"file"`
	Bytes         int64   `json:"bytes"`
	Entries       int     `json:"entries"`
	PathLength    int     `json:"pathLength"`
	Messages      int     `json:"messages"`
	Tokens        int     `json:"tokens"`
	OpenNs        int64   `json:"openNs"`
	PathNs        int64   `json:"pathNs"`
	ContextNs     int64   `json:"contextNs"`
	EstimateNs    int64   `json:"estimateNs"`
	OpenMBps      float64 `json:"openMBps"`
	PeakRSSBytes  int64   `json:"peakRssBytes"`
	HeapLiveBytes uint64  `json:"heapLiveBytes"`
}

// benchArgs parses the arguments of a dev bench command: FILE, --runs N
// and --json.
func benchArgs(name string, args []string) (path string, runs int, asJSON bool, err error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.IntVar(&runs, "runs", 3, "repetitions; the best time is reported")
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

func runBench(ctx context.Context, a *app, args []string) error {
	path, runs, asJSON, err := benchArgs("dev bench", args)
	if err != nil {
		return err
	}
	out := benchJSON{File: path}
	var s *session.Session
	for range runs {
		s = nil
		runtime.GC()
		t := time.Now()
		s, err = loadSession(a, path)
		if err != nil {
			return err
		}
		best(&out.OpenNs, time.Since(t))

		t = time.Now()
		p := s.LeafPath()
		best(&out.PathNs, time.Since(t))
		out.PathLength = len(p)

		t = time.Now()
		c, err := session.BuildContext(p)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		best(&out.ContextNs, time.Since(t))
		out.Messages = len(c.Messages)

		t = time.Now()
		est := session.EstimateContextTokens(c.Messages)
		best(&out.EstimateNs, time.Since(t))
		out.Tokens = est.Tokens
	}
	if fi, err := os.Stat(path); err == nil {
		out.Bytes = fi.Size()
	}
	out.Entries = s.Len()
	out.OpenMBps = float64(out.Bytes) / 1e6 / (float64(out.OpenNs) / 1e9)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	out.HeapLiveBytes = ms.HeapAlloc
	runtime.KeepAlive(s)
	out.PeakRSSBytes = peakRSS()
	if asJSON {
		return writeJSON(a.stdout, out)
	}
	w := a.stdout
	fmt.Fprintf(w, "%s: %.1f MB, %d entries (best of %d runs)\n", path, float64(out.Bytes)/1e6, out.Entries, runs)
	fmt.Fprintf(w, "open      %10s  (%.0f MB/s)\n", time.Duration(out.OpenNs), out.OpenMBps)
	fmt.Fprintf(w, "path      %10s  (%d entries, root to leaf)\n", time.Duration(out.PathNs), out.PathLength)
	fmt.Fprintf(w, "context   %10s  (%d messages)\n", time.Duration(out.ContextNs), out.Messages)
	fmt.Fprintf(w, "estimate  %10s  (%d tokens)\n", time.Duration(out.EstimateNs), out.Tokens)
	fmt.Fprintf(w, "heap live %7.1f MB after opening\n", float64(out.HeapLiveBytes)/1e6)
	if out.PeakRSSBytes > 0 {
		fmt.Fprintf(w, "peak RSS  %7.1f MB (whole process)\n", float64(out.PeakRSSBytes)/1e6)
	}
	return nil
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
