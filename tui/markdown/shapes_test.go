package markdown

import (
	"strings"
	"testing"
)

// shapes are inputs of the kinds goldmark parses in more than linear time,
// or that make much more output than input, each made to about n bytes.
var shapes = []struct {
	name string
	make func(n int) string
}{
	{"star-a-under", func(n int) string { return strings.Repeat("*a_", n/3) }},
	{"link-open", func(n int) string { return strings.Repeat("[a](", n/4) }},
	{"brackets", func(n int) string { return strings.Repeat("[", n) }},
	{"stars", func(n int) string { return "a" + strings.Repeat("*", n) }},
	{"code-runs", func(n int) string { return strings.Repeat("`a` ", n/4) }},
	{"backtick-runs", func(n int) string { return strings.Repeat("`a``", n/4) }},
	{"lt-a", func(n int) string { return strings.Repeat("<a", n/2) }},
	{"under-star", func(n int) string { return strings.Repeat("_*", n/2) }},
	{"image-open", func(n int) string { return strings.Repeat("![a](", n/5) }},
	{"link-ref", func(n int) string { return strings.Repeat("[a][", n/4) }},
	{"strike", func(n int) string { return strings.Repeat("~~a", n/3) }},
	{"www", func(n int) string { return strings.Repeat("www.a", n/5) }},
	{"quotes", func(n int) string { return strings.Repeat("> ", n/2) + "a" }},
	{"quote-lines", func(n int) string { return strings.Repeat(strings.Repeat("> ", 100)+"a\n", n/201) }},
	{"lists", func(n int) string { return strings.Repeat("- ", n/2) + "a" }},
	{"list-lines", func(n int) string {
		var b strings.Builder
		for d := 0; b.Len() < n; d++ {
			b.WriteString(strings.Repeat("  ", d%200) + "- a\n")
		}
		return b.String()
	}},
	{"table-rows", func(n int) string { return "| a | b |\n|---|---|\n" + strings.Repeat("| 1 | 2 |\n", n/10) }},
	{"table-wide", func(n int) string {
		return strings.Repeat("|a", n/8) + "|\n" + strings.Repeat("|-", n/8) + "|\n" + strings.Repeat("x\n", n/4)
	}},
}

func BenchmarkShapes(b *testing.B) {
	for _, s := range shapes {
		for _, kb := range []int{10, 30, 90} {
			src := s.make(kb << 10)
			b.Run(s.name+"/"+itoa(kb)+"KB", func(b *testing.B) {
				for range b.N {
					New(Theme{}).Render(src, 80)
				}
			})
		}
	}
}
