// Package gitignore decides which paths .gitignore files exclude, following
// gitignore(5): blank lines and # comments are skipped, trailing spaces are
// dropped unless escaped, ! re-includes, a trailing / matches directories
// only, a pattern with a / at its start or in its middle is anchored to the
// directory of its file while one without matches a name at any depth
// below it, and ** matches across directories. The last matching rule
// wins, rules of deeper files override those of shallower ones.
//
// What git does not allow is left to the caller walking the tree: a path
// inside an excluded directory is excluded even if a rule re-includes it,
// because the walk never enters that directory.
package gitignore

import (
	"bytes"
	"path"
	"strings"

	"github.com/prime-agent/prime/internal/glob"
)

// Matcher holds the rules of the .gitignore files from a root directory
// down to one directory. It is immutable: [Matcher.Child] makes the matcher
// for a subdirectory. A nil *Matcher ignores nothing.
type Matcher struct {
	parent *Matcher
	rules  []rule
}

type rule struct {
	base     string // directory of the file, relative to the root; "" for the root
	pattern  *glob.Pattern
	negate   bool
	dirOnly  bool
	anchored bool
}

// Child returns a matcher with the rules of the ignore file contents data,
// found in dir (relative to the root, "/"-separated, "" for the root), added
// after m's. It returns m itself when data holds no rules.
func (m *Matcher) Child(dir string, data []byte) *Matcher {
	rules := parse(dir, data)
	if len(rules) == 0 {
		return m
	}
	return &Matcher{parent: m, rules: rules}
}

// parse reads the rules of one ignore file found in dir. Lines that are not
// valid patterns (an unterminated [ class) are skipped, as git skips them.
func parse(dir string, data []byte) []rule {
	var rules []rule
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	for line := range strings.SplitSeq(string(data), "\n") {
		if r, ok := parseLine(dir, strings.TrimSuffix(line, "\r")); ok {
			rules = append(rules, r)
		}
	}
	return rules
}

func parseLine(dir, line string) (rule, bool) {
	line = trimTrailingSpaces(line)
	if line == "" || line[0] == '#' {
		return rule{}, false
	}
	r := rule{base: dir}
	if line[0] == '!' {
		r.negate = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return rule{}, false
	}
	if strings.HasPrefix(line, "/") {
		r.anchored = true
		line = strings.TrimLeft(line, "/")
	} else if strings.Contains(line, "/") {
		r.anchored = true
	}
	if strings.HasPrefix(line, "**/") {
		// "**/x" matches x at any depth, which is what an unanchored
		// pattern does; keeping it anchored gives the same result.
		r.anchored = true
	}
	p, err := glob.Compile(line, glob.Options{})
	if err != nil {
		return rule{}, false
	}
	r.pattern = p
	return r, true
}

// trimTrailingSpaces drops trailing spaces that are not escaped with a
// backslash; an escaped one is kept with its backslash, which the glob
// reads as a literal space.
func trimTrailingSpaces(line string) string {
	for strings.HasSuffix(line, " ") {
		rest := line[:len(line)-1]
		if backslashesAtEnd(rest)%2 == 1 {
			return line
		}
		line = rest
	}
	return line
}

func backslashesAtEnd(s string) int {
	n := 0
	for n < len(s) && s[len(s)-1-n] == '\\' {
		n++
	}
	return n
}

// Ignored reports whether the path (relative to the root, "/"-separated)
// is excluded. isDir says whether it names a directory.
func (m *Matcher) Ignored(p string, isDir bool) bool {
	for level := m; level != nil; level = level.parent {
		for i := len(level.rules) - 1; i >= 0; i-- {
			if r := &level.rules[i]; r.matches(p, isDir) {
				return !r.negate
			}
		}
	}
	return false
}

func (r *rule) matches(p string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	rel := p
	if r.base != "" {
		if !strings.HasPrefix(p, r.base+"/") {
			return false
		}
		rel = p[len(r.base)+1:]
	}
	if r.anchored {
		return r.pattern.Match(rel)
	}
	return r.pattern.Match(path.Base(rel))
}
