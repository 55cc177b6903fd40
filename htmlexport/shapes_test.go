package htmlexport

import (
	"html"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark/text"

	"github.com/prime-agent/prime/internal/mdguard"
)

var tag = regexp.MustCompile(`<[^>]*>`)

// Each shape goldmark would parse in superlinear time, at 90 KB: its
// letters and digits all show in the page's text, blocks nest and tables
// grow no more than the guard's bounds, the inline parsers are offered no
// more than MaxMarks × its length of work, and rendering it (as markdown,
// and as code highlighted) allocates about 3 times what the shape at 30 KB
// does (linear).
func TestShapesBounded(t *testing.T) {
	small := mdguard.Shapes(30 << 10)
	for i, s := range mdguard.Shapes(90 << 10) {
		t.Run(s.Name, func(t *testing.T) {
			defer mdguard.Backstop("rendering "+s.Name, 2*time.Minute)() // only a backstop: the bounds are counted
			md := newMarkdown()
			var m mdguard.Meter
			md.md.Parser().AddOptions(m.Option())
			out := md.render(s.Text)
			if w, most := m.Work([]byte(s.Text)), mdguard.MaxMarks*len(s.Text); w > most {
				t.Errorf("inline work %d, more than %d", w, most)
			}
			shown := html.UnescapeString(tag.ReplaceAllString(out, ""))
			for c, n := range mdguard.Letters(s.Text) {
				// An ordered list's numbers are the page's <ol>, not text: up
				// to MaxNest of them.
				if got := strings.Count(shown, string(c)); got < n-mdguard.MaxNest {
					t.Errorf("%d of the %d %q show", got, n, c)
				}
			}
			if depth, cells := mdguard.Shape(md.md.Parser().Parse(text.NewReader([]byte(s.Text)))); depth > mdguard.MaxNest+3 || cells > mdguard.TableFactor*len(s.Text)+mdguard.TableSlack {
				t.Errorf("blocks nest %d deep, %d table cells", depth, cells)
			}
			allocs := func(src string) float64 {
				return testing.AllocsPerRun(1, func() {
					newMarkdown().render(src)
					for _, lang := range []string{"go", "py", "html", "sql", "diff"} {
						highlight(src, lang)
					}
				})
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
			b.Run(s.Name+"/"+strconv.Itoa(kb)+"KB", func(b *testing.B) {
				for range b.N {
					newMarkdown().render(s.Text)
				}
			})
		}
	}
}

// BenchmarkHighlightShapes times highlighting each shape as code at 90 KB.
func BenchmarkHighlightShapes(b *testing.B) {
	for _, s := range mdguard.Shapes(90 << 10) {
		for _, lang := range []string{"go", "py", "js", "html", "sql", "diff", "rust"} {
			b.Run(s.Name+"/"+lang, func(b *testing.B) {
				for range b.N {
					highlight(s.Text, lang)
				}
			})
		}
	}
}
