package settings

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/prime-agent/prime/internal/jsonedit"
	"github.com/prime-agent/prime/internal/smallfile"
)

// maxFileSize bounds a settings file: a repository's settings.json that is
// a link to /dev/zero or a FIFO must neither fill Prime's memory nor hang
// it, and no real settings file comes near this.
const maxFileSize = 4 << 20

// layer is what one scope (a file, or the flags) contributes: only the
// values that passed validation; invalid ones are left out, so the key
// resolves as if this scope did not set it.
type layer struct {
	scope Scope
	file  string
	// unused are the keys the file sets that Prime does not read
	// (unused.go).
	unused []Problem
	// plain holds the known keys this scope sets, by name.
	plain map[string]setting
	// overrides is this scope's compaction.modelOverrides, or nil when it
	// sets none (one-level merge: the highest scope that has the map wins
	// it whole, as in pi).
	overrides *modelOverrides
	hooks     []Hook
	trusted   []string
	rules     permRules
	// resources are the skills and prompts lists (resources.go).
	resources map[string][]ResourcePath
}

// setting is one resolved value and where it came from.
type setting struct {
	value any
	src   Source
	// line and col place the value in its file (0 for defaults and flags).
	line, col int
}

// modelOverrides is one scope's compaction.modelOverrides map.
type modelOverrides struct {
	src    Source
	models []string                  // in file order
	fields map[string]map[string]int // model → field → value
}

// readLayer reads the settings file of a scope. A missing file is an empty
// layer. A file that cannot be read or parsed, or that does not hold an
// object, is reported as a broken-file problem and contributes nothing.
func readLayer(scope Scope, file string) (*layer, []Problem) {
	src, err := smallfile.Read(file, maxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return &layer{scope: scope, file: file, plain: map[string]setting{}}, nil
	}
	if why := smallfile.Why(err); why != "" {
		return &layer{scope: scope, file: file, plain: map[string]setting{}},
			[]Problem{{Scope: scope, File: file, Msg: "cannot be read: " + why, Broken: true}}
	}
	if err != nil {
		return &layer{scope: scope, file: file, plain: map[string]setting{}},
			[]Problem{{Scope: scope, File: file, Msg: "cannot be read: " + unwrapPath(err).Error(), Broken: true}}
	}
	if p, unsafe := unsafeFile(scope, file); unsafe {
		return &layer{scope: scope, file: file, plain: map[string]setting{}}, []Problem{p}
	}
	return parseLayer(scope, file, src)
}

// parseLayer validates the text of a settings file into a layer.
func parseLayer(scope Scope, file string, src []byte) (*layer, []Problem) {
	l := &layer{scope: scope, file: file, plain: map[string]setting{}}
	doc, err := jsonedit.Parse(src)
	if err != nil {
		var se *jsonedit.SyntaxError
		if !errors.As(err, &se) {
			return l, []Problem{{Scope: scope, File: file, Msg: "does not parse: " + err.Error(), Broken: true}}
		}
		return l, []Problem{{Scope: scope, File: file, Line: se.Line, Column: se.Column, Msg: "does not parse: " + se.Msg, Broken: true}}
	}
	r := &reader{l: l, doc: doc}
	r.read()
	return l, r.problems
}

// unwrapPath drops the *fs.PathError wrapper, whose path the message
// already names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// reader validates one parsed file into its layer.
type reader struct {
	l        *layer
	doc      *jsonedit.Doc
	problems []Problem
}

func (r *reader) problem(n *jsonedit.Node, key, msg string) {
	line, col := r.doc.Position(n.Start)
	r.problems = append(r.problems, Problem{Scope: r.l.scope, File: r.l.file, Line: line, Column: col, Key: key, Msg: msg})
}

func (r *reader) src(key string) Source {
	return Source{Scope: r.l.scope, File: r.l.file, Key: key}
}

// object returns n if it is an object; null and absence are nil without a
// problem, anything else is reported.
func (r *reader) object(n *jsonedit.Node, key string) *jsonedit.Node {
	switch {
	case n == nil || n.Kind == 'n':
		return nil
	case n.Kind != '{':
		r.problem(n, key, fmt.Sprintf("%s is %s; want an object", shown(r.doc.Raw(n)), jsonedit.KindName(n.Kind)))
		return nil
	}
	return n
}

func (r *reader) read() {
	root := r.doc.Root
	if root == nil {
		return // an empty file is {}
	}
	if root.Kind != '{' {
		line, col := r.doc.Position(root.Start)
		r.problems = append(r.problems, Problem{Scope: r.l.scope, File: r.l.file, Line: line, Column: col,
			Msg: fmt.Sprintf("holds %s, not an object", jsonedit.KindName(root.Kind)), Broken: true})
		return
	}
	sections := map[string]*jsonedit.Node{}
	for i := range knownKeys {
		d := &knownKeys[i]
		sec := root
		if name := d.section(); name != "" {
			var seen bool
			if sec, seen = sections[name]; !seen {
				sec = r.object(root.Get(name), name)
				sections[name] = sec
			}
		}
		n := sec.Get(d.field())
		if n == nil || n.Kind == 'n' {
			continue
		}
		v, msg := readValue(r.doc, n, d)
		if msg != "" {
			r.problem(n, d.name, msg)
			continue
		}
		line, col := r.doc.Position(n.Start)
		r.l.plain[d.name] = setting{value: v, src: r.src(d.name), line: line, col: col}
	}
	r.readOverrides(sections["compaction"])
	r.readHooks(root.Get(hooksKey))
	r.readRules(sections[permSection])
	r.readResources(root)
	r.readTrusted(root.Get(trustedProjectsKey))
	r.readUnused()
}

func (r *reader) readOverrides(compaction *jsonedit.Node) {
	m := r.object(compaction.Get(modelOverridesField), modelOverridesKeyPrefix)
	if m == nil {
		return
	}
	ov := &modelOverrides{src: r.src(modelOverridesKeyPrefix), fields: map[string]map[string]int{}}
	r.l.overrides = ov
	for _, mem := range m.Members {
		name := overrideEntryName(mem.Name)
		if !validModel(mem.Name) {
			r.problem(mem.Value, name, fmt.Sprintf("%q is not a model as \"provider/id\", so it never applies", mem.Name))
			continue
		}
		entry := r.object(mem.Value, name)
		if entry == nil {
			continue
		}
		fields := map[string]int{}
		for _, f := range overrideFields {
			n := entry.Get(f)
			if n == nil || n.Kind == 'n' {
				continue
			}
			v, msg := readValue(r.doc, n, &keyDef{kind: kindTokens})
			if msg != "" {
				r.problem(n, overrideKeyName(mem.Name, f), msg)
				continue
			}
			fields[f] = v.(int)
		}
		if _, dup := ov.fields[mem.Name]; !dup {
			ov.models = append(ov.models, mem.Name)
		}
		ov.fields[mem.Name] = fields // a repeated name: the last one wins, as in JSON.parse
	}
}

func (r *reader) readHooks(n *jsonedit.Node) {
	if n == nil || n.Kind == 'n' {
		return
	}
	if n.Kind != '[' {
		r.problem(n, hooksKey, fmt.Sprintf("%s is %s; want a list of {\"event\", \"command\", \"args\", \"timeoutMs\"}", shown(r.doc.Raw(n)), jsonedit.KindName(n.Kind)))
		return
	}
	for i, e := range n.Elems {
		key := fmt.Sprintf("%s[%d]", hooksKey, i)
		if h, ok := r.readHook(e, key); ok {
			r.l.hooks = append(r.l.hooks, h)
		}
	}
}

// readHook validates one hook declaration; a hook with any invalid field
// is left out whole rather than run half-configured.
func (r *reader) readHook(e *jsonedit.Node, key string) (Hook, bool) {
	if e.Kind != '{' {
		r.problem(e, key, fmt.Sprintf("%s is %s; want an object with \"event\" and \"command\"", shown(r.doc.Raw(e)), jsonedit.KindName(e.Kind)))
		return Hook{}, false
	}
	h := Hook{Source: r.src(key)}
	ok := true
	str := func(name string, dst *string) {
		n := e.Get(name)
		if n == nil || n.Kind == 'n' {
			r.problem(e, key, fmt.Sprintf("%q is missing", name))
			ok = false
			return
		}
		s, good := r.str(n)
		if !good || s == "" {
			r.problem(n, key+"."+name, fmt.Sprintf("%s is not a non-empty string", shown(r.doc.Raw(n))))
			ok = false
			return
		}
		*dst = s
	}
	str("event", &h.Event)
	str("command", &h.Command)
	if n := e.Get("args"); n != nil && n.Kind != 'n' {
		if n.Kind != '[' {
			r.problem(n, key+".args", fmt.Sprintf("%s is %s; want a list of strings", shown(r.doc.Raw(n)), jsonedit.KindName(n.Kind)))
			ok = false
		}
		for i, a := range n.Elems {
			s, good := r.str(a)
			if !good {
				r.problem(a, fmt.Sprintf("%s.args[%d]", key, i), fmt.Sprintf("%s is %s; want a string", shown(r.doc.Raw(a)), jsonedit.KindName(a.Kind)))
				ok = false
			}
			h.Args = append(h.Args, s)
		}
	}
	if n := e.Get("timeoutMs"); n != nil && n.Kind != 'n' {
		v, msg := readValue(r.doc, n, &keyDef{kind: kindMillis})
		switch {
		case msg != "":
			r.problem(n, key+".timeoutMs", msg)
			ok = false
		case v.(int) == 0:
			r.problem(n, key+".timeoutMs", "0 is not a timeout; want a whole number of milliseconds, 1 or more")
			ok = false
		default:
			h.TimeoutMs = v.(int)
		}
	}
	return h, ok
}

// str returns the text of a JSON string node.
func (r *reader) str(n *jsonedit.Node) (string, bool) {
	if n.Kind != '"' {
		return "", false
	}
	var s string
	if err := unquote(r.doc.Raw(n), &s); err != nil {
		return "", false
	}
	return s, true
}

func (r *reader) readTrusted(n *jsonedit.Node) {
	if n == nil || n.Kind == 'n' {
		return
	}
	if r.l.scope != Global {
		r.problem(n, trustedProjectsKey, "is read only from the global settings file; ignored here (a project cannot trust itself)")
		return
	}
	if n.Kind != '[' {
		r.problem(n, trustedProjectsKey, fmt.Sprintf("%s is %s; want a list of directories", shown(r.doc.Raw(n)), jsonedit.KindName(n.Kind)))
		return
	}
	for i, e := range n.Elems {
		s, ok := r.str(e)
		switch {
		case !ok:
			r.problem(e, fmt.Sprintf("%s[%d]", trustedProjectsKey, i), fmt.Sprintf("%s is %s; want a directory", shown(r.doc.Raw(e)), jsonedit.KindName(e.Kind)))
		case !filepath.IsAbs(s):
			r.problem(e, fmt.Sprintf("%s[%d]", trustedProjectsKey, i), fmt.Sprintf("%s is not an absolute path", shown(r.doc.Raw(e))))
		case !slices.Contains(r.l.trusted, s):
			r.l.trusted = append(r.l.trusted, s)
		}
	}
}
