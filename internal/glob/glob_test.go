package glob

import (
	"errors"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern string
		opt     Options
		path    string
		want    bool
	}{
		{"*.go", Options{}, "main.go", true},
		{"*.go", Options{}, "main.gox", false},
		{"*.go", Options{}, "dir/main.go", false}, // * never crosses /
		{"*", Options{}, ".hidden", true},         // * matches a leading dot
		{"?.go", Options{}, "a.go", true},
		{"?.go", Options{}, "ab.go", false},
		{"?", Options{}, "é", true}, // ? is one character, not one byte
		{"a*b*c", Options{}, "axxbyyc", true},
		{"a*b*c", Options{}, "axxbyy", false},
		{"a*", Options{}, "a", true},
		{"*a", Options{}, "bba", true},
		{"*a*", Options{}, "xyz", false},
		{"[abc].txt", Options{}, "b.txt", true},
		{"[abc].txt", Options{}, "d.txt", false},
		{"[!abc].txt", Options{}, "d.txt", true},
		{"[^abc].txt", Options{}, "a.txt", false},
		{"[a-c]x", Options{}, "bx", true},
		{"[a-c]x", Options{}, "dx", false},
		{"[]]", Options{}, "]", true},
		{"[!]]", Options{}, "a", true},
		{"[a-]", Options{}, "-", true},
		{`\*`, Options{}, "*", true},
		{`\*`, Options{}, "a", false},
		{`a\?`, Options{}, "a?", true},
		{"src/*.ts", Options{}, "src/a.ts", true},
		{"src/*.ts", Options{}, "pkg/src/a.ts", false},
		{"**/src/*.ts", Options{}, "pkg/src/a.ts", true},
		{"**/src/*.ts", Options{}, "src/a.ts", true},
		{"**/*.ts", Options{}, "a/b/c/d.ts", true},
		{"a/**/b", Options{}, "a/b", true},
		{"a/**/b", Options{}, "a/x/y/b", true},
		{"a/**/b", Options{}, "a/x/y/c", false},
		{"src/**", Options{}, "src", false}, // a trailing ** needs something inside
		{"src/**", Options{}, "src/a", true},
		{"src/**", Options{}, "src/a/b/c", true},
		{"**", Options{}, "anything/at/all", true},
		{"a**b", Options{}, "axxb", true}, // ** inside a segment is *
		{"a**b", Options{}, "ax/xb", false},
		{"**/**/x", Options{}, "x", true},
		{"*.{ts,tsx}", Options{Braces: true}, "a.tsx", true},
		{"*.{ts,tsx}", Options{Braces: true}, "a.ts", true},
		{"*.{ts,tsx}", Options{Braces: true}, "a.js", false},
		{"*.{ts,tsx}", Options{}, "a.ts", false}, // braces are literal without the option
		{"*.{ts,tsx}", Options{}, "a.{ts,tsx}", true},
		{"{src,lib}/**/*.go", Options{Braces: true}, "lib/x/y.go", true},
		{"{a,{b,c}}d", Options{Braces: true}, "cd", true},
		{"{a}", Options{Braces: true}, "{a}", true},   // no comma: literal
		{"{a,b", Options{Braces: true}, "{a,b", true}, // unclosed: literal
		{`\{a,b}`, Options{Braces: true}, "{a,b}", true},
		{"README*", Options{FoldCase: true}, "readme.md", true},
		{"readme*", Options{FoldCase: true}, "README.md", true},
		{"readme*", Options{}, "README.md", false},
		{"[a-c]*", Options{FoldCase: true}, "Bob", true},
		{"ǅ", Options{FoldCase: true}, "ǆ", true}, // a fold orbit of three
		{"", Options{}, "", true},
	}
	for _, tt := range tests {
		p, err := Compile(tt.pattern, tt.opt)
		if err != nil {
			t.Errorf("Compile(%q): %v", tt.pattern, err)
			continue
		}
		if got := p.Match(tt.path); got != tt.want {
			t.Errorf("Compile(%q, %+v).Match(%q) = %v, want %v", tt.pattern, tt.opt, tt.path, got, tt.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for _, pattern := range []string{"[abc", `abc\`, "a/[!", `[a\`} {
		if _, err := Compile(pattern, Options{}); !errors.Is(err, ErrSyntax) {
			t.Errorf("Compile(%q) error = %v, want ErrSyntax", pattern, err)
		}
	}
	many := ""
	for range 11 {
		many += "{a,b}"
	}
	if _, err := Compile(many, Options{Braces: true}); !errors.Is(err, ErrSyntax) {
		t.Errorf("2^11 alternatives: error = %v, want ErrSyntax", err)
	}
}

func TestNilPattern(t *testing.T) {
	var p *Pattern
	if p.Match("x") {
		t.Error("nil pattern matched")
	}
}

// Many **s against a deep path match, in one pass: trying every split of
// every ** (referenceMatch, too slow to run on the first four) was
// exponential.
func TestManyGlobstars(t *testing.T) {
	deep := strings.TrimSuffix(strings.Repeat("a/", 60), "/")
	for _, c := range []struct {
		pattern, path string
		want          bool
	}{
		{strings.Repeat("**/a/", 7) + "b", deep, false},
		{strings.Repeat("**/a/", 7) + "b", deep + "/b", true},
		{strings.Repeat("**/a/", 7) + "**", deep, true},
		{strings.Repeat("**/a/", 61) + "**", deep, false},
		{"**/a/**", "b/a", false},
		{"**/a/**", "a/x", true},
		{"x/**/**/y/**", "x/y/z", true},
		{"x/**/**/y/**", "x/y", false},
	} {
		p, err := Compile(c.pattern, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Match(c.path); got != c.want || strings.Count(c.pattern, "**") < 4 && got != referenceMatch(p, c.path) {
			t.Errorf("%q vs %q: %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
}

// referenceMatch matches by trying every split of every **: slow, plainly
// right, the oracle for FuzzMatch.
func referenceMatch(p *Pattern, path string) bool {
	var match func(segs []segment, parts []string) bool
	match = func(segs []segment, parts []string) bool {
		if len(segs) == 0 {
			return len(parts) == 0
		}
		if !segs[0].globstar {
			return len(parts) > 0 && p.matchSegment(segs[0].toks, parts[0]) && match(segs[1:], parts[1:])
		}
		rest := segs[1:]
		if len(rest) == 0 {
			return len(parts) > 0 // a trailing ** needs something
		}
		for skip := 0; skip <= len(parts); skip++ {
			if match(rest, parts[skip:]) {
				return true
			}
		}
		return false
	}
	for _, segs := range p.alts {
		if match(segs, strings.Split(path, "/")) {
			return true
		}
	}
	return false
}

func FuzzMatch(f *testing.F) {
	f.Add("*.{go,ts}", "a/b.go", true)
	f.Add("a/**/[!x]?", "a/b/cd", false)
	f.Add("**/a/**/**/b/**", "a/a/b/b", false)
	f.Fuzz(func(t *testing.T, pattern, path string, braces bool) {
		p, err := Compile(pattern, Options{Braces: braces})
		if err != nil {
			return
		}
		got := p.Match(path)
		// The oracle is exponential in the **s: only where that is small.
		small := strings.Count(pattern, "**") <= 3 && strings.Count(path, "/") < 32 && len(p.alts) <= 16
		if small && got != referenceMatch(p, path) {
			t.Fatalf("%q vs %q: %v, trying every split says %v", pattern, path, got, !got)
		}
		// A pattern without metacharacters matches exactly itself.
		if !HasMeta(pattern) && got != (pattern == path) {
			t.Fatalf("literal %q vs %q: %v", pattern, path, got)
		}
		// Case folding only adds matches.
		q, err := Compile(pattern, Options{Braces: braces, FoldCase: true})
		if err != nil {
			t.Fatalf("compiles without folding but not with: %v", err)
		}
		if got && !q.Match(path) {
			t.Fatalf("%q matches %q but not with FoldCase", pattern, path)
		}
	})
}
