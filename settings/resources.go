package settings

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/prime-agent/prime/internal/jsonedit"
)

// The resource lists pi 1.6 keeps in settings: skill and prompt-template
// files or directories.
const (
	SkillsKey  = "skills"
	PromptsKey = "prompts"
)

// ResourcePath is one entry of a resource list.
type ResourcePath struct {
	// Path is the entry as written: absolute, "~/…" (the home directory)
	// or relative to Base.
	Path string
	// Base is the directory a relative Path is resolved against: the
	// directory of the settings file that lists it (the agent directory,
	// or the project's settings directory), as pi resolves them.
	Base   string
	Source Source
}

// Resolve returns the entry's path, a leading "~/" read as home.
func (p ResourcePath) Resolve(home string) string {
	switch {
	case p.Path == "~" && home != "":
		return home
	case strings.HasPrefix(p.Path, "~/") && home != "":
		return filepath.Join(home, p.Path[2:])
	case filepath.IsAbs(p.Path):
		return filepath.Clean(p.Path)
	}
	return filepath.Join(p.Base, p.Path)
}

// Resources returns the entries of the list key (SkillsKey or PromptsKey):
// the global file's, then the project's. Whether a project's entries may
// be used is the caller's decision ([Settings.Trusted]), as for hooks.
func (s *Settings) Resources(key string) []ResourcePath {
	s = s.get()
	var out []ResourcePath
	for _, l := range []*layer{s.global, s.project} {
		if l != nil {
			out = append(out, l.resources[key]...)
		}
	}
	return out
}

// readResources reads the resource lists of a file. pi's patterns ("!glob"
// to exclude, "-path" and "+path" for exact exclusion and inclusion) are
// reported and skipped, except "+path", which is the path.
func (r *reader) readResources(root *jsonedit.Node) {
	for _, key := range []string{SkillsKey, PromptsKey} {
		n := root.Get(key)
		if n == nil || n.Kind == 'n' {
			continue
		}
		if n.Kind != '[' {
			r.problem(n, key, fmt.Sprintf("%s is %s; want a list of paths", shown(r.doc.Raw(n)), jsonedit.KindName(n.Kind)))
			continue
		}
		for i, e := range n.Elems {
			name := fmt.Sprintf("%s[%d]", key, i)
			p, ok := r.str(e)
			switch {
			case !ok || strings.TrimSpace(p) == "":
				r.problem(e, name, fmt.Sprintf("%s is not a path", shown(r.doc.Raw(e))))
				continue
			case strings.HasPrefix(p, "!") || strings.HasPrefix(p, "-"):
				r.problem(e, name, fmt.Sprintf("%q: exclusions (!pattern, -path) are not supported; ignored", p))
				continue
			}
			if r.l.resources == nil {
				r.l.resources = map[string][]ResourcePath{}
			}
			r.l.resources[key] = append(r.l.resources[key], ResourcePath{Path: strings.TrimPrefix(p, "+"),
				Base: filepath.Dir(r.l.file), Source: r.src(name)})
		}
	}
}
