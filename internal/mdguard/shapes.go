package mdguard

import (
	"strings"
	"time"
)

// A Text is a named markdown text.
type Text struct {
	Name, Text string
}

// Shapes are texts of about n bytes of each shape goldmark parses in more
// than linear time, or that would make much more work than text, without
// the guard; for tests and benchmarks of the renderers. Each holds the
// letter a or x (what a test can count in its output).
func Shapes(n int) []Text {
	rep := func(s string) string { return strings.Repeat(s, max(n/len(s), 1)) }
	limit := strings.Repeat("[a](", MaxMarks) // as many marks as a block may have
	var listLines strings.Builder
	for d := 0; listLines.Len() < n; d++ {
		listLines.WriteString(strings.Repeat("  ", d%200) + "- a\n")
	}
	return []Text{
		{"star-a-under", rep("*a_")},
		{"link-open", rep("[a](")},
		{"brackets", "a" + rep("[")},
		{"stars", "a" + rep("*")},
		{"code-runs", rep("`a` ")},
		{"backtick-runs", rep("`a``")},
		{"lt-a", rep("<a")},
		{"under-star", "a" + rep("_*")},
		{"image-open", rep("![a](")},
		{"link-ref", rep("[a][")},
		{"strike", rep("~~a")},
		{"www", rep("www.a")},
		{"heading", "# " + rep("*a_")},
		{"cell", "| a |\n|---|\n| " + rep("*a_") + " |\n"},
		{"at-limit", strings.Repeat(limit+"\n\n", max(n/(len(limit)+2), 1))},
		{"spread", strings.Repeat("[a]( "+strings.Repeat("x", max(n/MaxMarks, 1))+" ", MaxMarks)},
		{"quotes", rep("> ") + "a"},
		{"quote-lines", strings.Repeat(strings.Repeat("> ", 100)+"a\n", max(n/201, 1))},
		{"lists", rep("- ") + "a"},
		{"ordered", rep("1. ") + "a"},
		{"mixed", rep("> - ") + "a"},
		{"list-lines", listLines.String()},
		{"table-rows", "| a | b |\n|---|---|\n" + rep("| 1 | 2 |\n")},
		{"table-wide", strings.Repeat("|a", n/8) + "|\n" + strings.Repeat("|-", n/8) + "|\n" + strings.Repeat("x\n", n/4)},
		{"table-header", "| " + strings.Repeat("a", n/2) + " | b |\n|---|---|\n" + strings.Repeat("|x|\n", n/8)},
	}
}

// Letters counts the letters and digits of s, by byte: what a renderer
// must show of a shape, whatever markup it drops.
func Letters(s string) map[byte]int {
	n := map[byte]int{}
	for i := range len(s) {
		if c := s[i]; 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			n[c]++
		}
	}
	return n
}

// Backstop panics, naming what, when stop has not been called within d:
// for a test whose bounds are counted, so that a renderer that runs away
// still ends the test. Call stop when the work is done.
func Backstop(what string, d time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(d):
			panic(what + " has not ended in " + d.String())
		}
	}()
	return func() { close(done) }
}
