package markdown

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/prime-agent/prime/internal/mdguard"
)

// Each shape goldmark would parse in superlinear time, at 90 KB: its
// letters and digits all show, blocks nest and tables grow no more than
// the guard's bounds, the inline parsers are offered no more than MaxMarks
// × its length of work, and rendering allocates about 3 times what the
// shape at 30 KB does (linear), finished or streaming.
func TestShapesBounded(t *testing.T) {
	small := mdguard.Shapes(30 << 10)
	for i, s := range mdguard.Shapes(90 << 10) {
		t.Run(s.Name, func(t *testing.T) {
			defer mdguard.Backstop("rendering "+s.Name, 2*time.Minute)() // only a backstop: the bounds are counted
			r := New(Theme{})
			var m mdguard.Meter
			r.md.Parser().AddOptions(m.Option())
			p := r.parse(s.Text)
			if w, most := m.Work(p.src), mdguard.MaxMarks*len(s.Text); w > most {
				t.Errorf("inline work %d, more than %d", w, most)
			}
			out := ansi.Strip(r.renderDoc(p, 80))
			for c, n := range mdguard.Letters(s.Text) {
				if got := strings.Count(out, string(c)); got < n {
					t.Errorf("%d of the %d %q show", got, n, c)
				}
			}
			if depth, cells := mdguard.Shape(p.doc); depth > mdguard.MaxNest+3 || cells > mdguard.TableFactor*len(s.Text)+mdguard.TableSlack {
				t.Errorf("blocks nest %d deep, %d table cells", depth, cells)
			}
			allocs := func(src string) float64 {
				return testing.AllocsPerRun(1, func() { New(Theme{}).Render(src, 80); New(Theme{}).RenderPartial(src, 80) })
			}
			if big, small := allocs(s.Text), allocs(small[i].Text); big > 4*small+1000 {
				t.Errorf("rendering allocates %.0f times at 90 KB, %.0f at 30 KB", big, small)
			}
		})
	}
}

// BenchmarkShapes times each shape at 10, 30 and 90 KB.
func BenchmarkShapes(b *testing.B) {
	for _, kb := range []int{10, 30, 90} {
		for _, s := range mdguard.Shapes(kb << 10) {
			b.Run(s.Name+"/"+itoa(kb)+"KB", func(b *testing.B) {
				for range b.N {
					New(Theme{}).Render(s.Text, 80)
				}
			})
		}
	}
}
