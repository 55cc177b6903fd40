package main

import (
	"flag"
	"testing"
)

// TestFlagHelp: a one-letter flag is shown with one dash, as users type
// it, a long one with two; values and non-zero defaults follow.
func TestFlagHelp(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("o", "", "write the page to `OUT.html`")
	fs.Int("context-window", 0, "a window of `N` tokens")
	fs.Bool("json", false, "print JSON")
	fs.String("cwd", ".", "work in `DIR`")
	want := "  --context-window N\n      a window of N tokens\n" +
		"  --cwd DIR\n      work in DIR (default .)\n" +
		"  --json\n      print JSON\n" +
		"  -o OUT.html\n      write the page to OUT.html\n"
	if got := flagHelp(fs); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
