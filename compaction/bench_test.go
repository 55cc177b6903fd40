package compaction

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/prime-agent/prime/internal/pifixtures"
	"github.com/prime-agent/prime/internal/procmem"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
)

// benchPath builds a session of about n entries: user rounds of a request,
// two tool calls with results, an answer, and now and then a thinking-level
// change; with compactions, one every 2,000 entries but in the last tenth.
func benchPath(b *testing.B, n int, compactions bool) *builder {
	bl := newBuilder(b)
	for i := 0; len(bl.path) < n; i++ {
		bl.parse(fmt.Sprintf("u%d:200 a%d:120!read=f%d.go!edit=g%d.go r%da:800 r%db:300 a%dz:400@%d/500", i, i, i%50, i%20, i, i, i, 1000+i))
		if i%17 == 0 {
			bl.parse(fmt.Sprintf("m%d", i))
		}
		if compactions && len(bl.path) < n*9/10 && len(bl.path)%2000 < 8 && i > 0 {
			bl.compaction(fmt.Sprintf("C%d", i), fmt.Sprintf("u%d", i-3), "summary", `{"readFiles":["x"],"modifiedFiles":[]}`, false)
		}
	}
	return bl.parse("uEnd:200 aEnd:400")
}

// BenchmarkPrepare prepares a compaction of a path: "cold" decodes every
// message it needs (nothing else holds them: the garbage collector runs
// between iterations, outside the timing); "after-context" is what a
// running agent pays, its context built and held, so the messages decoded
// for it are shared. Without compactions the whole path is the span; with
// them only the tail after the last one.
func BenchmarkPrepare(b *testing.B) {
	for _, tc := range []struct {
		n           int
		compactions bool
	}{{10000, false}, {100000, false}, {100000, true}} {
		path := benchPath(b, tc.n, tc.compactions).path
		name := fmt.Sprintf("%dk-entries", tc.n/1000)
		if tc.compactions {
			name += "-compacted"
		}
		b.Run(name+"/cold", func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				runtime.GC()
				b.StartTimer()
				if _, err := Prepare(path, DefaultSettings()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/after-context", func(b *testing.B) {
			ctx, err := session.BuildContext(path)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := Prepare(path, DefaultSettings()); err != nil {
					b.Fatal(err)
				}
			}
			runtime.KeepAlive(ctx)
		})
	}
}

// BenchmarkProjection renders the transcript of every message a compaction
// of the whole session would summarize (no compaction entries: worst case).
func BenchmarkProjection(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		bl := newBuilder(b)
		for i := 0; len(bl.path) < n; i++ {
			bl.parse(fmt.Sprintf("u%d:200 a%d:120!read=f%d.go r%d:800 a%dz:400", i, i, i%50, i, i))
		}
		p, err := Prepare(bl.path, DefaultSettings())
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%dk-entries", n/1000), func(b *testing.B) {
			for b.Loop() {
				renderTranscript(p.MessagesToSummarize, TranscriptOptions{Reasoning: true, ToolBodies: DefaultToolBodies})
			}
		})
	}
}

// BenchmarkBuildContextFloor decodes the same path with session.BuildContext
// (cold, as BenchmarkPrepare): the floor for Prepare, which must decode
// every message it summarizes.
func BenchmarkBuildContextFloor(b *testing.B) {
	path := benchPath(b, 100000, false).path
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		b.StartTimer()
		if _, err := session.BuildContext(path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenContextPrepare is what compacting a session from disk costs:
// open the file, build the leaf's context and its estimate, prepare a
// compaction (default settings). The sessions are generated as
// "prime dev gen-session --entries N --seed 1" makes them (with compactions
// and branches), or with neither (--no-compactions --branch-rate -1: the
// whole file is the context, the worst case), and pi's large session
// repeated to 100,000 entries and migrated to version 3, so that
// "internal/pioracle/harness/pioracle bench" can time pi on the same files.
// peak-RSS-MB is how much the process's resident memory grows during one
// run (Linux only).
func BenchmarkOpenContextPrepare(b *testing.B) {
	for _, tc := range []struct {
		name string
		make func(b *testing.B, path string)
	}{
		{"gen-10k", genFile(sessiongen.Options{Entries: 10_000, Seed: 1})},
		{"gen-10k-linear", genFile(sessiongen.Options{Entries: 10_000, Seed: 1, NoCompactions: true, BranchRate: -1})},
		{"gen-100k", genFile(sessiongen.Options{Entries: 100_000, Seed: 1})},
		{"gen-100k-linear", genFile(sessiongen.Options{Entries: 100_000, Seed: 1, NoCompactions: true, BranchRate: -1})},
		{"pi-large-100k", piLargeFile(100_000)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), tc.name+".jsonl")
			tc.make(b, path)
			if fi, err := os.Stat(path); err == nil {
				b.SetBytes(fi.Size())
			}
			once := func() {
				s, err := session.Load(path)
				if err != nil {
					b.Fatal(err)
				}
				leaf := s.LeafPath()
				ctx, err := session.BuildContext(leaf)
				if err != nil {
					b.Fatal(err)
				}
				session.EstimateContextTokens(ctx.Messages)
				if _, err := Prepare(leaf, DefaultSettings()); err != nil {
					b.Fatal(err)
				}
				runtime.KeepAlive(ctx)
			}
			rss := procmem.PeakGrowthMB(once)
			b.ReportAllocs()
			for b.Loop() {
				once()
			}
			b.ReportMetric(rss, "peak-RSS-MB")
		})
	}
}

func genFile(o sessiongen.Options) func(b *testing.B, path string) {
	return func(b *testing.B, path string) {
		if err := os.WriteFile(path, sessiongen.Bytes(o), 0o600); err != nil {
			b.Fatal(err)
		}
	}
}

// piLargeFile writes pi's large session with its entries repeated until
// there are n, and migrates it to version 3 (pi 1.6 cannot read the
// version-1 file: its random migration ids collide at that size).
func piLargeFile(n int) func(b *testing.B, path string) {
	return func(b *testing.B, path string) {
		data, err := os.ReadFile(pifixtures.Path(b, pifixtures.LargeSession))
		if err != nil {
			b.Fatal(err)
		}
		lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
		out := append(bytes.Clone(lines[0]), '\n')
		for i := 0; i < n; i++ {
			out = append(append(out, lines[1+i%(len(lines)-1)]...), '\n')
		}
		if err := os.WriteFile(path, out, 0o600); err != nil {
			b.Fatal(err)
		}
		if _, err := session.Migrate(path); err != nil {
			b.Fatal(err)
		}
	}
}
