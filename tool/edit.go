package tool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/text/unicode/norm"
)

type editTool struct{ env Env }

const editSchema = `{"type":"object","required":["path","edits"],"properties":{` +
	`"path":{"type":"string","description":"The file to edit, absolute or relative to the working directory"},` +
	`"edits":{"type":"array","items":{"type":"object","required":["oldText","newText"],"properties":{` +
	`"oldText":{"type":"string","description":"Text to replace, exactly as it is in the file. It must occur once in the file and must not overlap another edit's oldText."},` +
	`"newText":{"type":"string","description":"The text to put in its place."}}},` +
	`"description":"The replacements to make. Each is matched against the file as it was before this call, not after the edits before it, so they must not overlap; merge changes to nearby lines into one edit."}}}`

func (t *editTool) Spec() Spec {
	return Spec{
		Name: "edit",
		Description: "Edit one file by replacing exact text. Each edits[].oldText must occur exactly once in the " +
			"file as it was before the call, and no two may overlap; to change neighbouring lines, use one edit " +
			"that covers them all. Keep each oldText short: only the lines that change and what makes them unique.",
		Parameters: jsontext.Value(editSchema),
		Snippet:    "Change a file by exact text replacement, several separate places in one call if needed",
		Guidelines: []string{
			"Use edit for targeted changes, and put all the changes to one file in a single call.",
			"Copy each oldText exactly from the file, unique and as short as possible; make edits that do not overlap, and merge nearby changes into one edit rather than spanning large unchanged regions.",
		},
	}
}

// Paths returns the file the call edits.
func (t *editTool) Paths(args jsontext.Value) []string { return t.env.pathOf(args, "") }

// PrepareArgs repairs the shapes of edit calls that models often send:
// edits as a JSON string, a single edit object instead of a list, and
// oldText/newText at the top level (the form of an older edit tool), which
// is added to the edits.
func (t *editTool) PrepareArgs(args jsontext.Value) jsontext.Value {
	n, err := parseNode(args)
	if err != nil || n.kind != '{' {
		return args
	}
	changed := false
	if edits, ok := n.get("edits"); ok {
		if edits.kind == '"' {
			if inner, err := parseNode([]byte(edits.str)); err == nil && (inner.kind == '[' || isEditObject(inner)) {
				*edits = inner
				changed = true
			}
		}
		if isEditObject(*edits) {
			*edits = node{kind: '[', arr: []node{*edits}}
			changed = true
		}
	}
	oldText, okOld := n.get("oldText")
	newText, okNew := n.get("newText")
	if okOld && okNew && oldText.kind == '"' && newText.kind == '"' {
		edit := node{kind: '{', obj: []member{{"oldText", *oldText}, {"newText", *newText}}}
		list := node{kind: '['}
		if edits, ok := n.get("edits"); ok && edits.kind == '[' {
			list.arr = slices.Clone(edits.arr)
		}
		list.arr = append(list.arr, edit)
		n.del("oldText")
		n.del("newText")
		n.set("edits", list)
		changed = true
	}
	if !changed {
		return args
	}
	return n.value()
}

// isEditObject reports whether n is one {oldText, newText} object.
func isEditObject(n node) bool {
	if n.kind != '{' {
		return false
	}
	o, okOld := n.get("oldText")
	w, okNew := n.get("newText")
	return okOld && okNew && o.kind == '"' && w.kind == '"'
}

type editArgs struct {
	Path  string `json:"path"`
	Edits []struct {
		OldText string `json:"oldText"`
		NewText string `json:"newText"`
	} `json:"edits"`
}

// editDetails are the details of a successful edit.
type editDetails struct {
	// Diff is for display: numbered lines with signs, and skip markers.
	Diff string `json:"diff"`
	// Patch is a unified diff of the change.
	Patch string `json:"patch"`
	// FirstChangedLine is the new file's first changed line, from 1.
	FirstChangedLine int `json:"firstChangedLine"`
}

const bom = "\ufeff"

func (t *editTool) Run(ctx context.Context, call Call) (Result, error) {
	var a editArgs
	if err := decodeArgs("edit", call.Args, &a); err != nil {
		return Result{}, err
	}
	if len(a.Edits) == 0 {
		return Result{}, errors.New("The edit call has no edits: edits must hold at least one {oldText, newText} pair.")
	}
	if err := aborted(ctx); err != nil {
		return Result{}, err
	}
	abs, err := t.env.resolve(a.Path)
	if err != nil {
		return Result{}, err
	}
	target := canonical(abs)
	if err := t.env.confined(ctx).checkWrite(target, a.Path); err != nil {
		return Result{}, err
	}
	raw, err := readForEdit(target)
	if err != nil {
		return Result{}, fmt.Errorf("Cannot edit %s: %w.", a.Path, err)
	}
	edits := make([]textEdit, len(a.Edits))
	for i, e := range a.Edits {
		edits[i] = textEdit{old: toLF(e.OldText), new: toLF(e.NewText)}
	}
	content, hadBOM := strings.CutPrefix(raw, bom)
	base := toLF(content)
	updated, reps, err := applyEdits(base, edits, a.Path)
	if err != nil {
		return Result{}, err
	}
	oldLines, newLines := splitLines(base), splitLines(updated)
	ops := diffLines(oldLines, newLines)
	width := len(strconv.Itoa(max(strings.Count(base, "\n"), strings.Count(updated, "\n")) + 1))
	display, first := displayDiff(oldLines, newLines, ops, width)
	details := editDetails{Diff: display, Patch: unifiedDiff(a.Path, oldLines, newLines, ops), FirstChangedLine: first}

	final := updated
	if content != base {
		final = spliceOriginal(content, reps)
	}
	if hadBOM {
		final = bom + final
	}
	if err := aborted(ctx); err != nil {
		return Result{}, err
	}
	if err := t.env.confined(ctx).recheckWrite(abs, target, a.Path); err != nil {
		return Result{}, err
	}
	if err := writeKeepingMode(target, []byte(final)); err != nil {
		return Result{}, fmt.Errorf("Cannot edit %s: %w.", a.Path, err)
	}
	return textResult(fmt.Sprintf("Edited %s: %d %s.", a.Path, len(edits), plural(len(edits), "replacement", "replacements")),
		detailsOf(details)), nil
}

// readForEdit reads a file that is to be rewritten, failing early when it
// is missing, a directory, or not writable.
func readForEdit(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", errors.New("it does not exist (create it with write)")
	case errors.Is(err, fs.ErrPermission):
		return "", errors.New("permission denied")
	case err != nil:
		if st, serr := os.Stat(path); serr == nil && st.IsDir() {
			return "", errors.New("it is a directory")
		}
		return "", unwrapPath(err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return "", unwrapPath(err)
	}
	return string(data), nil
}

// textEdit is one replacement with its texts normalised to LF.
type textEdit struct{ old, new string }

// replacement replaces base[start:end] with text; index is the edit's
// position in the call.
type replacement struct {
	start, end int
	text       string
	index      int
}

// toLF turns CRLF and lone CR line breaks into LF.
func toLF(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// fuzzyQuotes maps the typographic characters models and editors swap for
// ASCII ones.
var fuzzyQuotes = strings.NewReplacer(
	"\u2018", "'", "\u2019", "'", "\u201a", "'", "\u201b", "'",
	"\u201c", `"`, "\u201d", `"`, "\u201e", `"`, "\u201f", `"`,
	"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2015", "-", "\u2212", "-",
	"\u00a0", " ", "\u2002", " ", "\u2003", " ", "\u2004", " ", "\u2005", " ", "\u2006", " ",
	"\u2007", " ", "\u2008", " ", "\u2009", " ", "\u200a", " ", "\u202f", " ", "\u205f", " ", "\u3000", " ",
)

// fuzzy is the space edits are matched in when one does not match
// exactly: compatibility forms folded (NFKC), trailing whitespace of every
// line dropped, typographic quotes, dashes and spaces made ASCII. It keeps
// the number of lines.
func fuzzy(s string) string {
	s = norm.NFKC.String(s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	return fuzzyQuotes.Replace(strings.Join(lines, "\n"))
}

// applyEdits matches every edit against base (all against the original,
// none against another's result) and returns the new text with the
// replacements in base's coordinates, sorted. If any edit matches only in
// the fuzzy space, all are matched there and the lines they touch are
// rewritten from the fuzzy text.
func applyEdits(base string, edits []textEdit, path string) (string, []replacement, error) {
	several := len(edits) > 1
	name := func(i int) string {
		if several {
			return fmt.Sprintf("edits[%d].oldText", i)
		}
		return "oldText"
	}
	useFuzzy := false
	for i, e := range edits {
		if e.old == "" {
			return "", nil, fmt.Errorf("%s is empty; it must be the exact text to replace in %s.", name(i), path)
		}
		if !strings.Contains(base, e.old) {
			useFuzzy = true
		}
	}
	space := base
	if useFuzzy {
		space = fuzzy(base)
	}
	counted := fuzzy(space)
	reps := make([]replacement, len(edits))
	for i, e := range edits {
		start, length := strings.Index(space, e.old), len(e.old)
		if start < 0 {
			f := fuzzy(e.old)
			start, length = strings.Index(space, f), len(f)
		}
		if start < 0 {
			return "", nil, fmt.Errorf("%s was not found in %s. It must match the file exactly, including "+
				"whitespace, indentation and line breaks; read the file again if unsure.", name(i), path)
		}
		if n := strings.Count(counted, fuzzy(e.old)); n > 1 {
			each := "it"
			if several {
				each = "each oldText"
			}
			return "", nil, fmt.Errorf("%s occurs %d times in %s, but %s must occur exactly once. "+
				"Add surrounding lines to make it unique.", name(i), n, path, each)
		}
		reps[i] = replacement{start: start, end: start + length, text: e.new, index: i}
	}
	slices.SortFunc(reps, func(x, y replacement) int { return x.start - y.start })
	for i := 1; i < len(reps); i++ {
		if reps[i-1].end > reps[i].start {
			return "", nil, fmt.Errorf("edits[%d] and edits[%d] overlap in %s. Merge them into one edit, "+
				"or make them cover separate regions.", reps[i-1].index, reps[i].index, path)
		}
	}
	if useFuzzy {
		var err error
		if reps, err = widenToLines(base, space, reps); err != nil {
			return "", nil, err
		}
	}
	updated := splice(base, reps)
	if updated == base {
		if several {
			return "", nil, fmt.Errorf("The edits do not change %s: together they give the same content.", path)
		}
		return "", nil, fmt.Errorf("The edit does not change %s: newText gives the same content as oldText.", path)
	}
	return updated, reps, nil
}

// splice applies sorted, disjoint replacements to s.
func splice(s string, reps []replacement) string {
	var b strings.Builder
	pos := 0
	for _, r := range reps {
		b.WriteString(s[pos:r.start])
		b.WriteString(r.text)
		pos = r.end
	}
	b.WriteString(s[pos:])
	return b.String()
}

// lineSpans returns the [start, end) of every line of s, newline included.
func lineSpans(s string) [][2]int {
	var spans [][2]int
	for start := 0; start < len(s); {
		end := len(s)
		if i := strings.IndexByte(s[start:], '\n'); i >= 0 {
			end = start + i + 1
		}
		spans = append(spans, [2]int{start, end})
		start = end
	}
	return spans
}

// widenToLines turns replacements matched in fuzzy (the fuzzy form of
// base) into replacements of base: each group of lines that replacements
// touch is replaced by those lines of fuzzy with the replacements applied,
// and every other line keeps base's bytes.
func widenToLines(base, fuzzy string, reps []replacement) ([]replacement, error) {
	baseLines, fuzzyLines := lineSpans(base), lineSpans(fuzzy)
	if len(baseLines) != len(fuzzyLines) {
		return nil, fmt.Errorf("the text could not be matched line by line (%d lines, %d after normalising)", len(baseLines), len(fuzzyLines))
	}
	lineOf := func(offset int) int {
		i, _ := slices.BinarySearchFunc(fuzzyLines, offset, func(span [2]int, off int) int {
			switch {
			case span[1] <= off:
				return -1
			case span[0] > off:
				return 1
			}
			return 0
		})
		return i
	}
	var out []replacement
	for i := 0; i < len(reps); {
		first := lineOf(reps[i].start)
		last := lineOf(max(reps[i].end-1, reps[i].start))
		j := i + 1
		for j < len(reps) && lineOf(reps[j].start) <= last {
			last = max(last, lineOf(max(reps[j].end-1, reps[j].start)))
			j++
		}
		from, to := fuzzyLines[first][0], fuzzyLines[last][1]
		group := make([]replacement, j-i)
		for k, r := range reps[i:j] {
			group[k] = replacement{start: r.start - from, end: r.end - from, text: r.text, index: r.index}
		}
		out = append(out, replacement{
			start: baseLines[first][0], end: baseLines[last][1],
			text: splice(fuzzy[from:to], group), index: reps[i].index,
		})
		i = j
	}
	return out, nil
}

// spliceOriginal applies replacements found in toLF(orig) to orig itself,
// so the bytes outside them, line endings included, stay as they were.
// Line breaks in a replacement take the ending of the line where it
// starts. toLF of the result is the replacements applied to toLF(orig).
func spliceOriginal(orig string, reps []replacement) string {
	// Only a CRLF is shorter once normalised: the LF of the n-th CRLF
	// (counting from 0) at orig[p] is at p-n.
	var crlf []int // normalised offsets of the CRLF line breaks
	for i, n := 0, 0; ; n++ {
		j := strings.Index(orig[i:], "\r\n")
		if j < 0 {
			break
		}
		crlf = append(crlf, i+j-n)
		i += j + 2
	}
	toOrig := func(off int) int {
		n, _ := slices.BinarySearch(crlf, off) // CRLFs strictly before off
		return off + n
	}
	var b strings.Builder
	endsWithCR := false
	write := func(s string) {
		if s == "" {
			return
		}
		// A kept lone CR followed by an LF would read as one CRLF: make
		// the CR a line break of its own.
		if endsWithCR && s[0] == '\n' {
			b.WriteByte('\n')
		}
		b.WriteString(s)
		endsWithCR = s[len(s)-1] == '\r'
	}
	pos := 0
	for _, r := range reps {
		start := toOrig(r.start)
		write(orig[pos:start])
		text := r.text
		if ending := lineEndingAt(orig, start); ending != "\n" {
			text = strings.ReplaceAll(text, "\n", ending)
		}
		write(text)
		pos = toOrig(r.end)
	}
	write(orig[pos:])
	return b.String()
}

// lineEndingAt returns the line break of the line containing orig[off]:
// its own, or for a last line without one the previous line's. A lone CR
// counts only in a file without any LF (old Mac files); elsewhere it is a
// character inside a line.
func lineEndingAt(orig string, off int) string {
	lf := strings.IndexByte(orig[off:], '\n')
	if lf >= 0 {
		lf += off
	} else {
		lf = strings.LastIndexByte(orig[:off], '\n')
	}
	switch {
	case lf < 0 && strings.Contains(orig, "\r"):
		return "\r"
	case lf > 0 && orig[lf-1] == '\r':
		return "\r\n"
	}
	return "\n"
}
