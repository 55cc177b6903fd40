package session_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prime-agent/prime/internal/procmem"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
)

// benchFiles holds the generated sessions the benchmarks share, by size.
var benchFiles = struct {
	sync.Mutex
	dir   string
	paths map[int]string
}{paths: map[int]string{}}

var benchSizes = []int{1_000, 10_000, 100_000}

// benchFile returns a generated session of n entries, made once per run.
func benchFile(b *testing.B, n int) string {
	b.Helper()
	benchFiles.Lock()
	defer benchFiles.Unlock()
	if p, ok := benchFiles.paths[n]; ok {
		return p
	}
	if benchFiles.dir == "" {
		dir, err := os.MkdirTemp("", "prime-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchFiles.dir = dir
	}
	p := filepath.Join(benchFiles.dir, fmt.Sprintf("%d.jsonl", n))
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := sessiongen.Generate(w, sessiongen.Options{Entries: n, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		b.Fatal(err)
	}
	benchFiles.paths[n] = p
	return p
}

func removeBenchFiles() {
	if benchFiles.dir != "" {
		os.RemoveAll(benchFiles.dir)
	}
}

func sizeName(n int) string { return strconv.Itoa(n/1000) + "k" }

// liveMB returns the heap in use after a collection, in MB.
func liveMB() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20)
}

// BenchmarkOpen loads a session file: read, validate every line, index,
// build the tree. peak-RSS-MB is the whole test process's peak while
// loading; live-MB the heap held by one loaded session.
func BenchmarkOpen(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			path := benchFile(b, n)
			fi, _ := os.Stat(path)
			b.SetBytes(fi.Size())
			b.ReportAllocs()
			// Memory for one load, measured on its own: in the timed
			// loop the previous session is still alive.
			base := liveMB()
			var s *session.Session
			rss := procmem.PeakGrowthMB(func() {
				var err error
				if s, err = session.Load(path); err != nil {
					b.Fatal(err)
				}
			})
			live := liveMB() - base
			runtime.KeepAlive(s)
			s = nil
			for b.Loop() {
				var err error
				if s, err = session.Load(path); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(rss, "peak-RSS-MB")
			b.ReportMetric(live, "live-MB")
			runtime.KeepAlive(s)
		})
	}
}

// BenchmarkIndexPass is the index pass alone (validate every line, read
// its common members, on every core), from the page cache, in MB/s, up to
// the 1.3 GB session of a million entries.
func BenchmarkIndexPass(b *testing.B) {
	for _, n := range append(benchSizes, 1_000_000) {
		b.Run(sizeName(n), func(b *testing.B) {
			path := benchFile(b, n)
			fi, _ := os.Stat(path)
			b.SetBytes(fi.Size())
			cpu := cpuTime()
			for b.Loop() {
				if got, err := session.IndexPass(path); err != nil || got < n/2 {
					b.Fatal(got, err)
				}
			}
			// The process's CPU time per pass: what a loaded machine
			// distorts least.
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}

// BenchmarkReopen opens a session from its persistent index, trusted on
// the file's stamp: what every open after the first costs.
func BenchmarkReopen(b *testing.B) {
	for _, n := range benchSizes[1:] {
		b.Run(sizeName(n), func(b *testing.B) {
			path := benchFile(b, n)
			opts := session.ReadOptions{IndexDir: b.TempDir()}
			// The stamp vouches for a file that changed last well before
			// the index was made: one just written is checked instead.
			time.Sleep(50 * time.Millisecond)
			s, err := session.LoadWith(path, opts)
			if err != nil {
				b.Fatal(err)
			}
			s.Close()
			for b.Loop() {
				s, err := session.LoadWith(path, opts)
				if err != nil || session.FromIndex(s) != "trusted" {
					b.Fatal(err, session.FromIndex(s))
				}
				s.Close()
			}
		})
	}
}

// BenchmarkReopenChecked opens a session from its persistent index when
// the file's stamp cannot vouch for it (its times changed since): every
// line of the indexed part is read to check the index, which is then
// written again.
func BenchmarkReopenChecked(b *testing.B) {
	path := benchFile(b, 100_000)
	opts := session.ReadOptions{IndexDir: b.TempDir()}
	s, err := session.LoadWith(path, opts)
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
	cpu := cpuTime()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		t := time.Unix(1_700_000_000+int64(i), 0)
		if err := os.Chtimes(path, t, t); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		s, err := session.LoadWith(path, opts)
		if err != nil || s.ReadFrom() != session.ReadIndexChecked {
			b.Fatal(err, s.ReadFrom())
		}
		s.Close()
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}

func loadBench(b *testing.B, n int) *session.Session {
	s, err := session.Load(benchFile(b, n))
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkPath walks from the leaf to the root.
func BenchmarkPath(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			s := loadBench(b, n)
			// Alternate between the leaf and the first entry so that every
			// iteration walks the whole path (the last path is remembered).
			first := s.Entries()[0].ID
			leaf := s.LeafID()
			b.ReportAllocs()
			var p []*session.Entry
			for b.Loop() {
				p = s.Path(leaf)
				s.Path(first)
			}
			b.ReportMetric(float64(len(p)), "entries/path")
		})
	}
}

// BenchmarkColdPath is the leaf's path of a session just opened: its
// entries are made from the index as the path is walked.
func BenchmarkColdPath(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			s := loadBench(b, n)
			leaf := s.LeafID()
			first := strings.Clone(s.Path(leaf)[0].ID)
			b.ReportAllocs()
			var length int
			for b.Loop() {
				b.StopTimer()
				s.Path(first) // forget the leaf's path
				runtime.GC()  // and let its entries go
				b.StartTimer()
				length = len(s.Path(leaf))
			}
			b.ReportMetric(float64(length), "entries/path")
		})
	}
}

// BenchmarkLeafPathAppend is the agent's case: the leaf's path asked for
// after each append at the leaf, extended rather than walked again.
func BenchmarkLeafPathAppend(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			src, err := session.Parse("bench", sessiongen.Bytes(sessiongen.Options{Entries: n, Seed: 1}))
			if err != nil {
				b.Fatal(err)
			}
			s, err := src.Fork("", src.LeafID(), session.Options{}) // in memory, appendable
			if err != nil {
				b.Fatal(err)
			}
			s.LeafPath()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Append(&session.CustomEntry{CustomType: "bench"}); err != nil {
					b.Fatal(err)
				}
				s.LeafPath()
			}
		})
	}
}

// BenchmarkBuildContext builds what the model sees at the leaf: decoding
// every message on the path after the latest compaction's kept start.
func BenchmarkBuildContext(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			s := loadBench(b, n)
			path := s.LeafPath()
			b.ReportAllocs()
			var c session.Context
			rss := procmem.PeakGrowthMB(func() {
				var err error
				if c, err = session.BuildContext(path); err != nil {
					b.Fatal(err)
				}
			})
			for b.Loop() {
				var err error
				if c, err = session.BuildContext(path); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(c.Messages)), "messages")
			b.ReportMetric(rss, "peak-RSS-MB")
		})
	}
}

// BenchmarkContextEstimate estimates the size of the leaf's context.
func BenchmarkContextEstimate(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			c, err := loadBench(b, n).Context("")
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var est session.ContextEstimate
			for b.Loop() {
				est = session.EstimateContextTokens(c.Messages)
			}
			b.ReportMetric(float64(est.Tokens), "tokens")
		})
	}
}

// BenchmarkOpenToContext is what "prime session context" does: open, take
// the leaf's path, build the context, estimate it.
func BenchmarkOpenToContext(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			path := benchFile(b, n)
			fi, _ := os.Stat(path)
			b.SetBytes(fi.Size())
			once := func() {
				s, err := session.Load(path)
				if err != nil {
					b.Fatal(err)
				}
				c, err := session.BuildContext(s.LeafPath())
				if err != nil {
					b.Fatal(err)
				}
				session.EstimateContextTokens(c.Messages)
			}
			rss := procmem.PeakGrowthMB(once)
			for b.Loop() {
				once()
			}
			b.ReportMetric(rss, "peak-RSS-MB")
		})
	}
}

// BenchmarkAppend appends a user message to a copy of the session file:
// one locked write, independent of the file's size.
func BenchmarkAppend(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			data, err := os.ReadFile(benchFile(b, n))
			if err != nil {
				b.Fatal(err)
			}
			path := filepath.Join(b.TempDir(), "append.jsonl")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				b.Fatal(err)
			}
			s, err := session.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			msg := &session.MessageEntry{Message: &llm.UserMessage{
				Content:   []llm.Content{llm.Text{Text: strings.Repeat("Please look at the planner tests again. ", 8)}},
				Timestamp: 1764770400000,
			}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Append(msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFork forks a loaded session at its leaf into a new file: the
// path, re-chained around its labels, written in runs of whole lines.
func BenchmarkFork(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			s := loadBench(b, n)
			dir := b.TempDir()
			b.ReportAllocs()
			for b.Loop() {
				f, err := s.ForkIn(dir, s.LeafID(), session.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if err := f.Flush(); err != nil {
					b.Fatal(err)
				}
				f.Close()
				os.Remove(f.File())
			}
		})
	}
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
