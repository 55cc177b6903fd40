package tool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/glob"
)

type grepTool struct{ env Env }

const grepSchema = `{"type":"object","required":["pattern"],"properties":{` +
	`"pattern":{"type":"string","description":"What to look for: a regular expression, or plain text with literal"},` +
	`"path":{"type":"string","description":"The directory or file to search (default: the working directory)"},` +
	`"glob":{"type":"string","description":"Only search files matching this glob, e.g. '*.go' (a name at any depth) or 'cmd/**/*.go' (a path from the searched directory); a leading ! excludes instead"},` +
	`"ignoreCase":{"type":"boolean","description":"Match letters in any case (default: false)"},` +
	`"literal":{"type":"boolean","description":"Take the pattern as plain text, not a regular expression (default: false)"},` +
	`"context":{"type":"number","description":"Lines to show before and after each matching line (default: 0)"},` +
	`"limit":{"type":"number","description":"The most matching lines to return (default: 100)"}}}`

const grepDefaultLimit = 100

// lineCutMarker ends a line grep shortened.
const lineCutMarker = " [… line cut]"

func (t *grepTool) Spec() Spec {
	return Spec{
		Name: "grep",
		Description: fmt.Sprintf("Search the contents of files for a pattern. Each matching line is returned with its "+
			"file's path and line number. Files that .gitignore excludes, .git and binary files are skipped; hidden "+
			"files are searched. At most %d matches (or the limit) and %s are returned, and lines longer than %d "+
			"characters are cut.", grepDefaultLimit, FormatSize(MaxBytes), maxLineRunes),
		Parameters: jsontext.Value(grepSchema),
		Snippet:    "Search file contents by regular expression (skips what .gitignore excludes)",
	}
}

type grepArgs struct {
	Pattern    string   `json:"pattern"`
	Path       *string  `json:"path"`
	Glob       *string  `json:"glob"`
	IgnoreCase *bool    `json:"ignoreCase"`
	Literal    *bool    `json:"literal"`
	Context    *float64 `json:"context"`
	Limit      *float64 `json:"limit"`
}

func (t *grepTool) Run(ctx context.Context, call Call) (Result, error) {
	var a grepArgs
	if err := decodeArgs("grep", call.Args, &a); err != nil {
		return Result{}, err
	}
	if err := aborted(ctx); err != nil {
		return Result{}, err
	}
	env := t.env.confined(ctx)
	root, err := env.resolve(deref(a.Path, "."))
	if err != nil {
		return Result{}, err
	}
	st, err := os.Stat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return Result{}, fmt.Errorf("%s does not exist", root)
	} else if err != nil {
		return Result{}, fmt.Errorf("cannot search %s: %w", root, unwrapPath(err))
	}
	s, err := newGrepSearch(a)
	if err != nil {
		return Result{}, err
	}
	s.env = env
	if !st.IsDir() {
		binary, err := s.file(ctx, root, filepath.Base(root))
		if err != nil {
			return Result{}, err
		}
		if binary {
			return textResult(fmt.Sprintf("%s is a binary file; grep searches text files only.", root), nil), nil
		}
		return s.result(), nil
	}
	filter, err := newGlobFilter(deref(a.Glob, ""))
	if err != nil {
		return Result{}, err
	}
	err = walkTree(ctx, root, env.skipHidden(root, func(e walkEntry) (bool, error) {
		if e.isDir {
			return !filter.excludes(e.rel, e.name), nil
		}
		if e.link || !filter.includes(e.rel, e.name) {
			return false, nil
		}
		if _, err := s.file(ctx, e.abs, e.rel); err != nil && !errors.As(err, new(*ReadDeniedError)) {
			return false, err
		}
		if s.finished {
			return false, errStopWalk
		}
		return false, nil
	}))
	if err != nil {
		return Result{}, err
	}
	return s.result(), nil
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// globFilter is grep's glob argument: files to search, or with a leading
// ! files and directories to leave out. A pattern with a / is matched
// against the path from the searched directory, else against names.
type globFilter struct {
	p      *glob.Pattern
	negate bool
	path   bool
}

func newGlobFilter(pattern string) (globFilter, error) {
	if pattern == "" {
		return globFilter{}, nil
	}
	var f globFilter
	if rest, ok := strings.CutPrefix(pattern, "!"); ok {
		f.negate, pattern = true, rest
	}
	for strings.HasPrefix(pattern, "./") {
		pattern = pattern[2:]
	}
	f.path = strings.Contains(pattern, "/")
	p, err := glob.Compile(pattern, glob.Options{Braces: true})
	if err != nil {
		return globFilter{}, err
	}
	f.p = p
	return f, nil
}

func (f globFilter) matches(rel, name string) bool {
	if f.path {
		return f.p.Match(rel)
	}
	return f.p.Match(name)
}

func (f globFilter) includes(rel, name string) bool {
	if f.p == nil {
		return true
	}
	return f.matches(rel, name) != f.negate
}

func (f globFilter) excludes(rel, name string) bool {
	return f.p != nil && f.negate && f.matches(rel, name)
}

// grepSearch is one grep call's state across the files it searches.
type grepSearch struct {
	re        *regexp.Regexp
	pre       *regexp.Regexp // matches every block holding a matching line; nil: none known
	context   int
	limit     int
	matches   int
	limitHit  bool // limit matches found; looking for one more to say so
	more      bool // a match past the limit exists
	finished  bool
	cutLines  bool
	longLines int      // lines searched only in their first maxSearchLine bytes
	lines     []string // output lines, kept while within the byte limit
	outBytes  int      // size of all output lines with a newline each
	lineCount int
	buf       []byte // the read buffer, reused from file to file
	env       Env    // for the files it may not read
}

func newGrepSearch(a grepArgs) (*grepSearch, error) {
	pattern := a.Pattern
	literal := deref(a.Literal, false)
	if literal {
		pattern = regexp.QuoteMeta(pattern)
	}
	if deref(a.IgnoreCase, false) {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%q is not a valid regular expression (%s: %s)", a.Pattern, se.Code, se.Expr)
		}
		return nil, fmt.Errorf("%q is not a valid regular expression: %w", a.Pattern, err)
	}
	s := &grepSearch{re: re, limit: countArg(a.Limit, grepDefaultLimit)}
	if a.Context != nil && *a.Context > 0 && !math.IsNaN(*a.Context) {
		s.context = int(min(*a.Context, 1e6))
	}
	// In a block of lines, (?m) makes ^ and $ match at every line, so the
	// block holds a match if one of its lines does. \A, \z and flag groups
	// could break that: such patterns are matched line by line only.
	if literal || !strings.Contains(a.Pattern, `\A`) && !strings.Contains(a.Pattern, `\z`) && !strings.Contains(a.Pattern, "(?") {
		s.pre, _ = regexp.Compile("(?m)" + pattern)
	}
	return s, nil
}

// blockSize is how much of a file grep reads at once.
const blockSize = 256 * 1024

// maxSearchLine bounds the memory one line may take: a longer line is
// searched in its first maxSearchLine bytes and the rest of it skipped, so
// a file of one huge line costs no more than this.
const maxSearchLine = 4 << 20

// keepLineBytes is how much of a line is kept to be shown later (as
// context): more than cutLine shows of it.
const keepLineBytes = 4 * (maxLineRunes + 1)

// skipLine reads f up to the end of the current line, into buf's space,
// and returns what follows the newline; skipped is false when the file
// ended (or failed) first.
func skipLine(f io.Reader, buf []byte) (rest []byte, skipped bool) {
	for {
		n, err := f.Read(buf[:cap(buf)])
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			rest := copy(buf, buf[i+1:n])
			return buf[:rest], true
		}
		if err != nil {
			return buf[:0], false
		}
	}
}

// file searches one file, shown as name; it reports whether the file was
// skipped as binary.
func (s *grepSearch) file(ctx context.Context, path, name string) (bool, error) {
	if err := aborted(ctx); err != nil {
		return false, err
	}
	f, err := os.Open(path)
	if err != nil {
		return false, nil // unreadable files are skipped, as rg does
	}
	defer f.Close()
	if err := s.env.checkOpened(f, path); err != nil {
		return false, err
	}
	search := fileSearch{s: s, name: name}
	if s.buf == nil {
		s.buf = make([]byte, 0, blockSize)
	}
	buf := s.buf[:0]
	defer func() { s.buf = buf[:0] }() // keep a buffer grown for a long line
	first := true
	for {
		n, err := io.ReadFull(f, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		atEOF := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !atEOF {
			return false, nil
		}
		if first {
			first = false
			if bytes.IndexByte(buf[:min(len(buf), sniffSize)], 0) >= 0 {
				return true, nil
			}
		}
		end := len(buf)
		if !atEOF {
			end = bytes.LastIndexByte(buf, '\n') + 1
			if end == 0 && len(buf) < maxSearchLine { // one line longer than the buffer: read more of it
				buf = append(buf, make([]byte, min(len(buf), maxSearchLine-len(buf)))...)[:len(buf)]
				continue
			}
			if end == 0 {
				// A line too long to hold: search its start, skip the rest.
				s.longLines++
				search.block(buf)
				var skipped bool
				if buf, skipped = skipLine(f, buf[:0]); !skipped || s.finished {
					return false, nil
				}
				continue
			}
		}
		search.block(buf[:end])
		if s.finished || atEOF {
			return false, nil
		}
		if err := aborted(ctx); err != nil {
			return false, err
		}
		rest := copy(buf, buf[end:])
		buf = buf[:rest]
	}
}

// fileSearch is the state of searching one file.
type fileSearch struct {
	s          *grepSearch
	name       string
	line       int      // number of the last line seen
	before     []string // lines before the next match, for context
	after      int      // context lines still to show after a match
	printed    int      // number of the last line output
	trailingTo int      // after the limit: the last line of the last match's context
}

// block searches whole lines (the last may lack its newline at the end of
// the file).
func (fs *fileSearch) block(b []byte) {
	s := fs.s
	if fs.after == 0 && fs.trailingTo == 0 && s.pre != nil && !s.pre.Match(b) {
		// No line matches and no context is pending: count the lines
		// and keep the last ones as context for a match to come.
		fs.line += bytes.Count(b, []byte{'\n'})
		if len(b) > 0 && b[len(b)-1] != '\n' {
			fs.line++
		}
		if s.context > 0 && !s.limitHit {
			fs.before = append(fs.before, lastLines(b, s.context)...)
			fs.before = fs.before[max(0, len(fs.before)-s.context):]
		}
		return
	}
	for len(b) > 0 && !s.finished {
		i := bytes.IndexByte(b, '\n')
		var text []byte
		if i < 0 {
			text, b = b, nil
		} else {
			text, b = b[:i], b[i+1:]
		}
		fs.line++
		fs.lineOf(text)
	}
}

// lastLines returns up to n of the last lines of b.
func lastLines(b []byte, n int) []string {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	var out []string
	for len(out) < n && len(b) > 0 {
		i := bytes.LastIndexByte(b, '\n')
		line := b[i+1:]
		out = append(out, string(line[:min(len(line), keepLineBytes)]))
		if i < 0 {
			break
		}
		b = b[:i]
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func (fs *fileSearch) lineOf(text []byte) {
	s := fs.s
	match := s.re.Match(text)
	if s.limitHit {
		inTrailing := fs.trailingTo > 0 && fs.line <= fs.trailingTo
		if inTrailing {
			fs.emit(fs.line, text, false) // the last match's context, even if it matches
		}
		if match {
			s.more = true
		}
		if !inTrailing {
			fs.trailingTo = 0
		}
		if s.more && !(inTrailing && fs.line < fs.trailingTo) {
			s.finished = true
		}
		return
	}
	if !match {
		if fs.after > 0 {
			fs.emit(fs.line, text, false)
			fs.after--
			return
		}
		if s.context > 0 {
			if len(fs.before) == s.context {
				fs.before = append(fs.before[:0], fs.before[1:]...)
			}
			fs.before = append(fs.before, string(text[:min(len(text), keepLineBytes)]))
		}
		return
	}
	for k, l := range fs.before {
		if n := fs.line - len(fs.before) + k; n > fs.printed {
			fs.emit(n, []byte(l), false)
		}
	}
	fs.before = fs.before[:0]
	fs.emit(fs.line, text, true)
	fs.after = s.context
	s.matches++
	if s.matches >= s.limit {
		s.limitHit = true
		fs.after = 0
		if s.context > 0 {
			fs.trailingTo = fs.line + s.context
		}
	}
}

func (fs *fileSearch) emit(n int, text []byte, match bool) {
	fs.printed = n
	line := strings.ToValidUTF8(string(bytes.TrimSuffix(text, []byte{'\r'})), "\ufffd")
	line, cut := cutLine(line)
	if cut {
		fs.s.cutLines = true
	}
	sep := "-"
	if match {
		sep = ":"
	}
	out := fs.name + sep + strconv.Itoa(n) + sep + " " + line
	s := fs.s
	if s.outBytes-1 <= MaxBytes {
		s.lines = append(s.lines, out)
	}
	s.outBytes += len(out) + 1
	s.lineCount++
}

type grepDetails struct {
	MatchLimitReached int         `json:"matchLimitReached,omitzero"`
	Truncation        *Truncation `json:"truncation,omitzero"`
	LinesTruncated    bool        `json:"linesTruncated,omitzero"`
}

func (s *grepSearch) result() Result {
	long := ""
	if s.longLines > 0 {
		long = fmt.Sprintf("%d %s longer than %s %s searched only in %s first %s.", s.longLines,
			plural(s.longLines, "line", "lines"), FormatSize(maxSearchLine), plural(s.longLines, "was", "were"),
			plural(s.longLines, "its", "their"), FormatSize(maxSearchLine))
	}
	if s.matches == 0 {
		if long != "" {
			return textResult("No matches.\n\n["+long+"]", nil)
		}
		return textResult("No matches.", nil)
	}
	text, t := TruncateHead(strings.Join(s.lines, "\n"), math.MaxInt, MaxBytes)
	t.TotalLines, t.TotalBytes = s.lineCount, s.outBytes-1
	t.MaxLines = 0 // the match limit bounds the lines
	var d grepDetails
	var notices []string
	if s.more {
		d.MatchLimitReached = s.limit
		notices = append(notices, fmt.Sprintf("%d %s shown, the limit: use limit=%d for more, or narrow the pattern.",
			s.limit, plural(s.limit, "match", "matches"), 2*s.limit))
	}
	if t.Truncated {
		d.Truncation = &t
		notices = append(notices, fmt.Sprintf("Output cut at %s.", FormatSize(MaxBytes)))
	}
	if s.cutLines {
		d.LinesTruncated = true
		notices = append(notices, fmt.Sprintf("Lines longer than %d characters were cut: read the file to see them whole.", maxLineRunes))
	}
	if long != "" {
		notices = append(notices, long)
	}
	if len(notices) == 0 {
		return textResult(text, nil)
	}
	return textResult(text+"\n\n["+strings.Join(notices, " ")+"]", detailsOf(d))
}
