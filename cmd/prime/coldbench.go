package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/session"
)

// coldPhase is one phase of the cold bench: its name and its time in each
// round.
type coldPhase struct {
	Name  string  `json:"name"`
	MinNs int64   `json:"minNs"`
	MedNs int64   `json:"medianNs"`
	runs  []int64 // per round
}

// coldBenchJSON is the output of "prime dev bench --cold --json".
type coldBenchJSON struct {
	File    string `json:"file"`
	Bytes   int64  `json:"bytes"`
	Entries int    `json:"entries"`
	Rounds  int    `json:"rounds"`
	// First is the first open of the session with an empty agent
	// directory (what "prime session context FILE" does), Second the next
	// one (what "prime compact FILE --dry-run" then does): each phase of
	// reading the file, then building the context and the rest.
	First        []coldPhase `json:"first"`
	Second       []coldPhase `json:"second"`
	PeakRSSBytes int64       `json:"peakRssBytes"`
}

// runColdBench times, round by round with a fresh agent directory each
// time, the first open of a session (no persistent index: every line is
// indexed and the index written) and the open after it, phase by phase.
func runColdBench(ctx context.Context, a *app, path string, runs int, asJSON bool) error {
	out := coldBenchJSON{File: path, Rounds: runs}
	phases := map[string]*coldPhase{}
	var order [2][]string
	note := func(which int, name string, d time.Duration) {
		key := fmt.Sprint(which, name)
		p := phases[key]
		if p == nil {
			p = &coldPhase{Name: name}
			phases[key] = p
			order[which] = append(order[which], key)
		}
		p.runs = append(p.runs, int64(d))
	}
	for range runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		dir, err := os.MkdirTemp("", "prime-bench-cold-")
		if err != nil {
			return err
		}
		runtime.GC()
		err = coldRound(path, session.IndexDir(dir), note, &out)
		os.RemoveAll(dir)
		if err != nil {
			return err
		}
	}
	for which := range order {
		for _, key := range order[which] {
			p := phases[key]
			slices.Sort(p.runs)
			p.MinNs, p.MedNs = p.runs[0], p.runs[len(p.runs)/2]
			if which == 0 {
				out.First = append(out.First, *p)
			} else {
				out.Second = append(out.Second, *p)
			}
		}
	}
	if fi, err := os.Stat(path); err == nil {
		out.Bytes = fi.Size()
	}
	out.PeakRSSBytes = peakRSS()
	if asJSON {
		return writeJSON(a.stdout, out)
	}
	w := a.stdout
	fmt.Fprintf(w, "%s: %.1f MB, %d entries; %d rounds, each with a fresh agent directory (min, median)\n", path, float64(out.Bytes)/1e6, out.Entries, runs)
	for which, list := range [][]coldPhase{out.First, out.Second} {
		fmt.Fprintln(w, [...]string{"first open (no persistent index):", "second open (from the index the first wrote):"}[which])
		for _, p := range list {
			fmt.Fprintf(w, "  %-12s %10s %10s\n", p.Name, time.Duration(p.MinNs).Round(time.Microsecond), time.Duration(p.MedNs).Round(time.Microsecond))
		}
	}
	if out.PeakRSSBytes > 0 {
		fmt.Fprintf(w, "peak RSS  %7.1f MB (whole process, all rounds)\n", float64(out.PeakRSSBytes)/1e6)
	}
	return nil
}

// coldRound is one round of the cold bench: a first open with indexDir
// empty, its context and estimate, then a second open, its context and a
// compaction's preparation.
func coldRound(path, indexDir string, note func(int, string, time.Duration), out *coldBenchJSON) error {
	for which := range 2 {
		start := time.Now()
		opts := session.ReadOptions{IndexDir: indexDir, IndexLater: true, Phases: func(p string, d time.Duration) { note(which, p, d) }}
		s, err := session.LoadWith(path, opts)
		if err != nil {
			return sessionFileErr(err)
		}
		out.Entries = s.Len()
		t := time.Now()
		c, err := s.Context("")
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		note(which, "context", time.Since(t))
		t = time.Now()
		if which == 0 {
			c.EstimateNext()
			note(which, "estimate", time.Since(t))
		} else {
			if _, err := compaction.PrepareContext(c, compaction.PinsOf(s.LeafView()), compaction.DefaultSettings()); err != nil {
				if _, ok := err.(*compaction.NotCompactableError); !ok {
					return fmt.Errorf("%s: %w", path, err)
				}
			}
			note(which, "prepare", time.Since(t))
		}
		t = time.Now()
		s.Close()
		note(which, "close", time.Since(t))
		note(which, "total", time.Since(start))
	}
	return nil
}
