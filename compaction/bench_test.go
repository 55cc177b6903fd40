package compaction

import (
	"fmt"
	"testing"

	"github.com/prime-agent/prime/session"
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

func BenchmarkPrepare(b *testing.B) {
	// Without compactions the whole path is the span: every entry is
	// decoded and estimated. With them only the tail after the last one is.
	for _, tc := range []struct {
		n           int
		compactions bool
	}{{10000, false}, {100000, false}, {100000, true}} {
		path := benchPath(b, tc.n, tc.compactions).path
		name := fmt.Sprintf("%dk-entries", tc.n/1000)
		if tc.compactions {
			name += "-compacted"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Prepare(path, DefaultSettings()); err != nil {
					b.Fatal(err)
				}
			}
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
				renderTranscript(p.MessagesToSummarize, transcriptOptions{reasoning: true, toolBodies: DefaultToolBodies})
			}
		})
	}
}

// BenchmarkBuildContextFloor decodes the same path with session.BuildContext:
// the floor for Prepare, which must decode every message it summarizes.
func BenchmarkBuildContextFloor(b *testing.B) {
	path := benchPath(b, 100000, false).path
	for b.Loop() {
		if _, err := session.BuildContext(path); err != nil {
			b.Fatal(err)
		}
	}
}
