// Package glob matches "/"-separated relative paths against shell-style
// glob patterns, the dialect .gitignore files and the find and grep tools
// share: * and ? never match "/", [...] is a character class ([!...] or
// [^...] negated), \ escapes the next character, and a segment that is
// exactly ** matches any number of directories. Brace alternatives
// ({a,b}) are expanded when [Options].Braces is set.
//
// A pattern is matched against a whole path, segment by segment. A leading
// or inner ** matches zero or more segments; a trailing ** matches one or
// more, so "src/**" matches what is inside src but not src itself (as git
// and fd read it). A ** inside a longer segment ("a**b") is an ordinary *.
package glob

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Options change how a pattern is read.
type Options struct {
	// Braces expands {a,b,c} into alternatives (nested braces allowed).
	Braces bool
	// FoldCase matches letters regardless of case.
	FoldCase bool
}

// maxAlternatives bounds brace expansion, so that a pattern like
// {a,b}{a,b}... cannot make compilation take all memory.
const maxAlternatives = 1024

// Pattern is a compiled glob. Its zero value matches nothing.
type Pattern struct {
	alts [][]segment
	fold bool
}

// segment is one "/"-separated part of a pattern.
type segment struct {
	globstar bool
	toks     []token
}

type tokenKind uint8

const (
	tokLiteral tokenKind = iota // r
	tokAny                      // ?
	tokStar                     // *
	tokClass                    // [...]
)

type token struct {
	kind   tokenKind
	r      rune
	negate bool
	ranges []runeRange
}

type runeRange struct{ lo, hi rune }

// ErrSyntax is wrapped by the errors Compile returns for malformed patterns.
var ErrSyntax = errors.New("invalid glob pattern")

// Compile reads a pattern. It fails on an unterminated character class or
// a trailing backslash, and on brace expansion past a thousand alternatives.
func Compile(pattern string, opt Options) (*Pattern, error) {
	alts := []string{pattern}
	if opt.Braces {
		var err error
		if alts, err = expandBraces(pattern); err != nil {
			return nil, err
		}
	}
	p := &Pattern{fold: opt.FoldCase}
	for _, alt := range alts {
		segs, err := compileSegments(alt)
		if err != nil {
			return nil, err
		}
		p.alts = append(p.alts, segs)
	}
	return p, nil
}

// Match reports whether path, "/"-separated and relative, matches the whole
// pattern.
func (p *Pattern) Match(path string) bool {
	if p == nil {
		return false
	}
	parts := strings.Split(path, "/")
	for _, segs := range p.alts {
		if p.matchSegments(segs, parts) {
			return true
		}
	}
	return false
}

// matchSegments matches path segments as matchSegment matches characters:
// ** is the star, any other segment matches one part, and on a mismatch the
// last ** takes one more part. Trying every split of every ** instead was
// exponential in the number of **s ("**/a/**/a/**/a/**/a/**/a/**/a/**/a/b"
// against a path 60 deep took 15 s). A trailing ** is one any-part then a
// star: it needs something to match.
func (p *Pattern) matchSegments(segs []segment, parts []string) bool {
	si, pi := 0, 0
	starSeg, starPart := -1, 0
	for {
		switch {
		case si < len(segs) && segs[si].globstar:
			for si < len(segs) && segs[si].globstar { // runs of ** act as one
				si++
			}
			if si < len(segs) {
				starSeg, starPart = si, pi
				continue
			}
			if pi < len(parts) {
				return true
			}
		case si == len(segs):
			if pi == len(parts) {
				return true
			}
		case pi < len(parts) && p.matchSegment(segs[si].toks, parts[pi]):
			si, pi = si+1, pi+1
			continue
		}
		if starSeg < 0 || starPart >= len(parts) {
			return false
		}
		starPart++
		si, pi = starSeg, starPart
	}
}

// matchSegment matches one path segment with the classic two-pointer
// algorithm: on a mismatch, the last * takes one more character.
func (p *Pattern) matchSegment(toks []token, name string) bool {
	ti, ni := 0, 0
	starTok, starName := -1, 0
	for ni < len(name) {
		r, size := decodeRune(name[ni:])
		if ti < len(toks) {
			t := toks[ti]
			switch {
			case t.kind == tokStar:
				starTok, starName = ti, ni
				ti++
				continue
			case t.kind == tokAny,
				t.kind == tokLiteral && p.runeEqual(t.r, r),
				t.kind == tokClass && p.classMatch(t, r):
				ti++
				ni += size
				continue
			}
		}
		if starTok < 0 {
			return false
		}
		_, size = decodeRune(name[starName:])
		starName += size
		ti, ni = starTok+1, starName
	}
	for ti < len(toks) && toks[ti].kind == tokStar {
		ti++
	}
	return ti == len(toks)
}

func (p *Pattern) runeEqual(a, b rune) bool {
	if a == b {
		return true
	}
	if !p.fold {
		return false
	}
	for f := unicode.SimpleFold(a); f != a; f = unicode.SimpleFold(f) {
		if f == b {
			return true
		}
	}
	return false
}

func (p *Pattern) classMatch(t token, r rune) bool {
	in := inRanges(t.ranges, r)
	if !in && p.fold {
		for f := unicode.SimpleFold(r); f != r && !in; f = unicode.SimpleFold(f) {
			in = inRanges(t.ranges, f)
		}
	}
	return in != t.negate
}

func inRanges(ranges []runeRange, r rune) bool {
	for _, rg := range ranges {
		if rg.lo <= r && r <= rg.hi {
			return true
		}
	}
	return false
}

func compileSegments(pattern string) ([]segment, error) {
	var segs []segment
	for part := range strings.SplitSeq(pattern, "/") {
		if part == "**" {
			segs = append(segs, segment{globstar: true})
			continue
		}
		toks, err := compileTokens(part)
		if err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrSyntax, pattern, err)
		}
		segs = append(segs, segment{toks: toks})
	}
	return segs, nil
}

func compileTokens(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		r, size := decodeRune(s[i:])
		switch r {
		case '*':
			i += size
			// ** inside a segment is an ordinary *; runs collapse.
			if len(toks) == 0 || toks[len(toks)-1].kind != tokStar {
				toks = append(toks, token{kind: tokStar})
			}
			continue
		case '?':
			toks = append(toks, token{kind: tokAny})
		case '\\':
			if i+size >= len(s) {
				return nil, errors.New("trailing backslash")
			}
			r, size2 := decodeRune(s[i+size:])
			toks = append(toks, token{kind: tokLiteral, r: r})
			i += size + size2
			continue
		case '[':
			t, n, err := compileClass(s[i:])
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i += n
			continue
		default:
			toks = append(toks, token{kind: tokLiteral, r: r})
		}
		i += size
	}
	return toks, nil
}

// compileClass reads a [...] class at the start of s and returns it with
// the number of bytes it took. A ] right after [ or [! is a member.
func compileClass(s string) (token, int, error) {
	t := token{kind: tokClass}
	i := 1
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		t.negate = true
		i++
	}
	first := true
	for {
		if i >= len(s) {
			return token{}, 0, errors.New("unterminated character class")
		}
		if s[i] == ']' && !first {
			return t, i + 1, nil
		}
		first = false
		lo, n, err := classRune(s[i:])
		if err != nil {
			return token{}, 0, err
		}
		i += n
		hi := lo
		if i+1 < len(s) && s[i] == '-' && s[i+1] != ']' {
			hi, n, err = classRune(s[i+1:])
			if err != nil {
				return token{}, 0, err
			}
			i += 1 + n
		}
		if lo <= hi {
			t.ranges = append(t.ranges, runeRange{lo, hi})
		}
	}
}

func classRune(s string) (rune, int, error) {
	if s[0] == '\\' {
		if len(s) < 2 {
			return 0, 0, errors.New("unterminated character class")
		}
		r, size := decodeRune(s[1:])
		return r, 1 + size, nil
	}
	r, size := decodeRune(s)
	return r, size, nil
}

// expandBraces turns a{b,c}d into abd and acd, recursively. A brace without
// a matching close, or without a comma at its level, is literal.
func expandBraces(pattern string) ([]string, error) {
	open, close, commas := findBraces(pattern)
	if open < 0 {
		return []string{pattern}, nil
	}
	prefix, suffix := pattern[:open], pattern[close+1:]
	var choices []string
	start := open + 1
	for _, c := range append(commas, close) {
		choices = append(choices, pattern[start:c])
		start = c + 1
	}
	rests, err := expandBraces(suffix)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, choice := range choices {
		heads, err := expandBraces(prefix + choice)
		if err != nil {
			return nil, err
		}
		for _, h := range heads {
			for _, r := range rests {
				if len(out) >= maxAlternatives {
					return nil, fmt.Errorf("%w %q: more than %d brace alternatives", ErrSyntax, pattern, maxAlternatives)
				}
				out = append(out, h+r)
			}
		}
	}
	return out, nil
}

// findBraces finds the first brace group with at least one comma at its
// own level, skipping escaped characters and character classes.
func findBraces(s string) (open, close int, commas []int) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			if _, n, err := compileClass(s[i:]); err == nil {
				i += n - 1
			}
		case '{':
			if close, commas := braceGroup(s, i); close >= 0 {
				return i, close, commas
			}
		}
	}
	return -1, -1, nil
}

// braceGroup returns the index of the } closing the { at s[open] and the
// commas at its level, or -1 when it is unclosed or has no comma.
func braceGroup(s string, open int) (int, []int) {
	depth := 0
	var commas []int
	for j := open; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				if len(commas) == 0 {
					return -1, nil
				}
				return j, commas
			}
		case ',':
			if depth == 1 {
				commas = append(commas, j)
			}
		}
	}
	return -1, nil
}

// HasMeta reports whether s contains a character that makes it a pattern
// rather than a literal name.
func HasMeta(s string) bool {
	return strings.ContainsAny(s, `*?[\{`)
}

// decodeRune is utf8.DecodeRuneInString except that each invalid byte
// decodes to a distinct negative value, so that names that are not UTF-8
// match byte for byte.
func decodeRune(s string) (rune, int) {
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size == 1 {
		return -1 - rune(s[0]), 1
	}
	return r, size
}
