package compaction

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// FileOps are the files a stretch of conversation touched, by kind of
// access, each list sorted and without repeats. They come from the tool
// calls the model made (read, write and edit calls with a non-empty "path"
// argument) and from the file lists of earlier summaries, so they
// accumulate across compactions. Paths are kept exactly as they were
// written, an empty one in a summary's list included (pi 1.6 carries it).
type FileOps struct {
	Read    []string `json:"read"`
	Written []string `json:"written"`
	Edited  []string `json:"edited"`
}

// Lists returns the two lists a summary shows: the modified files (written
// or edited) and the files only read, both sorted. A file both read and
// modified is listed as modified only.
func (f FileOps) Lists() (readFiles, modifiedFiles []string) {
	var t fileTracker
	t.add(&f)
	return t.lists()
}

// fileTracker collects file operations as sets.
type fileTracker struct {
	read, written, edited map[string]struct{}
}

func addTo(set *map[string]struct{}, path string) {
	if *set == nil {
		*set = make(map[string]struct{})
	}
	(*set)[path] = struct{}{}
}

// add merges another set of operations.
func (t *fileTracker) add(f *FileOps) {
	for _, p := range f.Read {
		addTo(&t.read, p)
	}
	for _, p := range f.Written {
		addTo(&t.written, p)
	}
	for _, p := range f.Edited {
		addTo(&t.edited, p)
	}
}

// addDetails seeds the sets from an earlier summary's details: its read
// files count as read, its modified files as edited (pi's rule).
func (t *fileTracker) addDetails(d Details) {
	for _, p := range d.ReadFiles {
		addTo(&t.read, p)
	}
	for _, p := range d.ModifiedFiles {
		addTo(&t.edited, p)
	}
}

// addCall records one tool call: read, write and edit with a non-empty
// string "path" argument. Other tools and argument names are ignored, as in
// pi; so is whether the call succeeded.
func (t *fileTracker) addCall(name string, args llm.Arguments) {
	if set := t.callSet(name); set != nil {
		if p, ok := pathArg(args); ok && p != "" {
			addTo(set, p)
		}
	}
}

// addCallPath records a call of the named tool on path, an empty path
// being none.
func (t *fileTracker) addCallPath(name, path string) {
	if set := t.callSet(name); set != nil && path != "" {
		addTo(set, path)
	}
}

// callSet returns the set a call of the named tool adds its path to: read,
// write and edit have one, other tools none.
func (t *fileTracker) callSet(name string) *map[string]struct{} {
	switch name {
	case "read":
		return &t.read
	case "write":
		return &t.written
	case "edit":
		return &t.edited
	}
	return nil
}

// pathArg returns the "path" argument of a call (args.StringArg("path")),
// reading the common case, a first member with a plain ASCII value, without
// the tokenizer: a compaction reads the file calls of the whole span.
func pathArg(args llm.Arguments) (string, bool) {
	const prefix = `{"path":"`
	if v := args.Value(); len(v) > len(prefix) && string(v[:len(prefix)]) == prefix {
		rest := v[len(prefix):]
		for i, c := range rest {
			switch {
			case c == '"':
				return string(rest[:i]), true
			case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
				return args.StringArg("path")
			}
		}
	}
	return args.StringArg("path")
}

// addMessage records the file operations of one message: the tool calls of
// an assistant message, and the calls a tool made while it ran that its
// result records (see [fileTracker.addNested]).
func (t *fileTracker) addMessage(m session.Message) {
	switch m := m.(type) {
	case *llm.AssistantMessage:
		for _, c := range m.Content {
			if tc, ok := c.(llm.ToolCall); ok {
				t.addCall(tc.Name, tc.Arguments)
			}
		}
	case *llm.ToolResultMessage:
		t.addNested(m.NestedCalls)
	}
}

// addNested reads a tool result's nestedCalls, pi 1.6's record of the tools
// a script tool called ({"calls": [{"name", "arguments", ...}],
// "complete"}), as pi's extractFileOpsFromMessage does: each call with a
// read, write or edit name and a non-empty string "path" argument. A
// record of any other shape, or a call in one, is ignored (pi fails on
// some of them).
func (t *fileTracker) addNested(record jsontext.Value) {
	if len(record) == 0 || record.Kind() != '{' {
		return
	}
	var r struct {
		Calls []jsontext.Value `json:"calls"`
	}
	if json.Unmarshal(record, &r, jsonwire.ReadOptions) != nil {
		return
	}
	for _, raw := range r.Calls {
		var call struct {
			Name      jsontext.Value `json:"name"`
			Arguments jsontext.Value `json:"arguments"`
		}
		if raw.Kind() != '{' || json.Unmarshal(raw, &call, jsonwire.ReadOptions) != nil || call.Name.Kind() != '"' || call.Arguments.Kind() != '{' {
			continue
		}
		var name string
		if json.Unmarshal(call.Name, &name, jsonwire.ReadOptions) != nil {
			continue
		}
		var args struct {
			Path jsontext.Value `json:"path"`
		}
		var path string
		if json.Unmarshal(call.Arguments, &args, jsonwire.ReadOptions) != nil || args.Path.Kind() != '"' ||
			json.Unmarshal(args.Path, &path, jsonwire.ReadOptions) != nil {
			continue
		}
		t.addCallPath(name, path)
	}
}

// ops returns the sets as sorted lists.
func (t *fileTracker) ops() FileOps {
	return FileOps{Read: sortedKeys(t.read), Written: sortedKeys(t.written), Edited: sortedKeys(t.edited)}
}

// lists computes the summary's file lists: modified = written ∪ edited;
// read = read \ modified.
func (t *fileTracker) lists() (readFiles, modifiedFiles []string) {
	modified := make(map[string]struct{}, len(t.written)+len(t.edited))
	for p := range t.written {
		modified[p] = struct{}{}
	}
	for p := range t.edited {
		modified[p] = struct{}{}
	}
	readOnly := make(map[string]struct{}, len(t.read))
	for p := range t.read {
		if _, ok := modified[p]; !ok {
			readOnly[p] = struct{}{}
		}
	}
	return sortedKeys(readOnly), sortedKeys(modified)
}

// sortedKeys returns the set's members in JavaScript's default sort order
// (UTF-16 code units), never nil.
func sortedKeys(set map[string]struct{}) []string {
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	slices.SortFunc(out, compareUTF16)
	return out
}

// compareUTF16 orders strings by their UTF-16 code units, as JavaScript's
// Array.prototype.sort does. It differs from byte order only between
// characters above U+FFFF and those in U+E000–U+FFFF.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ua, ub := utf16Lead(ra), utf16Lead(rb)
			if ua != ub {
				return int(ua) - int(ub)
			}
			return int(ra) - int(rb) // same lead surrogate: the trail unit decides, in rune order
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

// utf16Lead returns the first UTF-16 code unit of r.
func utf16Lead(r rune) uint16 {
	if r > 0xFFFF {
		return uint16(0xD800 + ((r - 0x10000) >> 10))
	}
	return uint16(r)
}

// FormatFileLists renders the file lists appended to a summary, in pi's
// layout: nothing when both are empty, else a blank line and the non-empty
// <read-files> and <modified-files> blocks separated by a blank line. Prime
// appends it, with [FileOps.Lists] of the preparation's file operations, to
// every summary it writes; a hook writing its own summary can do the same.
func FormatFileLists(readFiles, modifiedFiles []string) string {
	if len(readFiles) == 0 && len(modifiedFiles) == 0 {
		return ""
	}
	var b strings.Builder
	if len(readFiles) > 0 {
		b.WriteString("\n\n<read-files>\n")
		b.WriteString(strings.Join(readFiles, "\n"))
		b.WriteString("\n</read-files>")
	}
	if len(modifiedFiles) > 0 {
		b.WriteString("\n\n<modified-files>\n")
		b.WriteString(strings.Join(modifiedFiles, "\n"))
		b.WriteString("\n</modified-files>")
	}
	return b.String()
}

// stripFileLists removes the <read-files> and <modified-files> blocks that
// code appended at the end of a summary, so they are not copied into a new
// one (code appends them again, recomputed). Blocks elsewhere are left.
func stripFileLists(summary string) string {
	for {
		trimmed := strings.TrimRight(summary, " \t\r\n")
		cut := -1
		for _, tag := range []string{"read-files", "modified-files"} {
			if strings.HasSuffix(trimmed, "</"+tag+">") {
				cut = strings.LastIndex(trimmed, "<"+tag+">")
			}
		}
		if cut < 0 {
			return trimmed
		}
		summary = trimmed[:cut]
	}
}

// Summarizer names stored in [Details].Summarizer.
const (
	// SummarizerDeterministic marks a summary that code built without a
	// model; the next compaction rewrites it with one.
	SummarizerDeterministic = "deterministic"
)

// Details is the "details" object Prime stores on the compaction and branch
// summary entries it writes. ReadFiles and ModifiedFiles are pi's fields
// (always present, possibly empty arrays) so pi reads Prime's files and
// carries the lists on. Summarizer and DeterministicReason are Prime's
// additions, present only on summaries built by code.
type Details struct {
	ReadFiles     []string `json:"readFiles"`
	ModifiedFiles []string `json:"modifiedFiles"`
	// Summarizer is SummarizerDeterministic when code built the summary.
	Summarizer string `json:"summarizer,omitzero"`
	// DeterministicReason says why no model wrote the summary.
	DeterministicReason string `json:"deterministicReason,omitzero"`
	// Ledger is what the next summary must keep ([Ledger]); LedgerCheck
	// what the check of this summary found and repaired; Receipt what the
	// compaction did. Prime's additions, which pi ignores.
	Ledger      *Ledger      `json:"ledger,omitzero"`
	LedgerCheck *LedgerCheck `json:"ledgerCheck,omitzero"`
	Receipt     *Receipt     `json:"receipt,omitzero"`
}

// Encode returns the details as JSON, never with null lists.
func (d Details) Encode() jsontext.Value {
	if d.ReadFiles == nil {
		d.ReadFiles = []string{}
	}
	if d.ModifiedFiles == nil {
		d.ModifiedFiles = []string{}
	}
	b, err := json.Marshal(d)
	if err != nil {
		panic("compaction: encoding details: " + err.Error()) // strings, numbers and their lists: cannot fail
	}
	return b
}

// ParseDetails reads the details of a compaction or branch summary entry as
// pi does: a field that is not an array of strings is ignored (as is any
// non-string member), unknown fields are ignored, and anything that is not
// a JSON object gives empty details. ok reports whether raw was an object.
func ParseDetails(raw jsontext.Value) (d Details, ok bool) {
	if len(raw) == 0 {
		return Details{}, false
	}
	dec := jsonwire.NewDecoder(raw)
	err := jsonwire.ReadObject(dec, func(name string) error {
		switch name {
		case "readFiles":
			d.ReadFiles = readStringArray(dec)
		case "modifiedFiles":
			d.ModifiedFiles = readStringArray(dec)
		case "summarizer":
			d.Summarizer = readOptString(dec)
		case "deterministicReason":
			d.DeterministicReason = readOptString(dec)
		case "ledger":
			d.Ledger = readOptObject[Ledger](dec)
		case "ledgerCheck":
			d.LedgerCheck = readOptObject[LedgerCheck](dec)
		case "receipt":
			d.Receipt = readOptObject[Receipt](dec)
		default:
			return dec.SkipValue()
		}
		return nil
	})
	if err != nil {
		return Details{}, false
	}
	return d, true
}

// readStringArray reads an array's string members; any other value, or a
// malformed one, reads as nothing. It always consumes one value.
func readStringArray(dec *jsontext.Decoder) []string {
	v, err := dec.ReadValue()
	if err != nil || v.Kind() != '[' {
		return nil
	}
	var items []jsontext.Value
	if json.Unmarshal(v, &items, jsonwire.ReadOptions) != nil {
		return nil
	}
	var out []string
	for _, it := range items {
		var s string
		if it.Kind() == '"' && json.Unmarshal(it, &s, jsonwire.ReadOptions) == nil {
			out = append(out, s)
		}
	}
	return out
}

// readOptObject reads one of Prime's objects; any other value, or one of
// the wrong shape, reads as nil. It always consumes one value.
func readOptObject[T any](dec *jsontext.Decoder) *T {
	v, err := dec.ReadValue()
	if err != nil || v.Kind() != '{' {
		return nil
	}
	out := new(T)
	if json.Unmarshal(v, out, jsonwire.ReadOptions) != nil {
		return nil
	}
	return out
}

func readOptString(dec *jsontext.Decoder) string {
	v, err := dec.ReadValue()
	if err != nil || v.Kind() != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s, jsonwire.ReadOptions) != nil {
		return ""
	}
	return s
}
