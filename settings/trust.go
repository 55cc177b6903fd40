package settings

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/prime-agent/prime/internal/safepath"
)

// Ignored is a value a settings file sets that does not apply, and why:
// a key that can run code or send data elsewhere, set by a project the
// user has not trusted, or any value of a project file found above the
// working directory outside the user's home and the git repository.
type Ignored struct {
	// Key is the setting, e.g. "shellPath".
	Key string
	// Value is what the file sets.
	Value any
	// Source is the file that sets it.
	Source Source
	// Reason says why the value does not apply, for display.
	Reason string
}

// Ignored lists the values the settings files set that do not apply, in
// key table order.
func (s *Settings) Ignored() []Ignored { return append([]Ignored(nil), s.get().ignored...) }

// ignoredValue returns the ignored value of key name, if any.
func (s *Settings) ignoredValue(name string) *Ignored {
	for i := range s.get().ignored {
		if s.ignored[i].Key == name {
			ig := s.ignored[i]
			return &ig
		}
	}
	return nil
}

// unsafeFile checks that no other user could change a settings file (git's
// safe.directory idea): a file that another user can write, or replace
// through a directory above it, is ignored whole.
func unsafeFile(scope Scope, file string) (Problem, bool) {
	err := safepath.Check(file)
	var ue *safepath.UnsafeError
	if !errors.As(err, &ue) {
		return Problem{}, false
	}
	fix := "chmod go-w " + ue.Path
	if strings.Contains(ue.Why, "owned by") {
		fix = "chown it to yourself, or move the settings elsewhere"
	}
	return Problem{Scope: scope, File: file, Unsafe: true, Msg: fmt.Sprintf(
		"is ignored whole: %v, so another user could choose what Prime runs (%s)", ue, fix)}, true
}

// applyTrust takes out of an untrusted project's layer what it may not
// set, recording each value as ignored with a problem that names the key:
// the keys the table marks trustedProject, and everything when the
// project was found in an ancestor of the working directory that is
// neither inside the user's home nor inside the working directory's git
// repository (a stranger's /tmp/.prime must not configure every checkout
// below it).
func (s *Settings) applyTrust(opts Options) {
	l := s.project
	if l == nil || s.Trusted(s.projectDir) {
		return
	}
	trustHint := fmt.Sprintf("if you trust it, run \"prime trust %s\"", s.projectDir)
	if why := s.foreignAncestor(opts); why != "" {
		reason := why + "; " + trustHint
		for _, d := range knownKeys {
			if v, ok := l.plain[d.name]; ok {
				s.ignored = append(s.ignored, Ignored{Key: d.name, Value: v.value, Source: v.src, Reason: reason})
			}
		}
		if len(l.plain) > 0 || l.overrides != nil || len(l.hooks) > 0 || len(l.resources) > 0 {
			s.problems = append(s.problems, Problem{Scope: Project, File: l.file, Msg: "is ignored whole: " + reason})
		}
		s.project = &layer{scope: Project, file: l.file, plain: map[string]setting{}}
		return
	}
	for _, d := range knownKeys {
		v, ok := l.plain[d.name]
		if !ok || d.project == anyProject || d.project == tighterProject && s.tighter(d, v) {
			continue
		}
		delete(l.plain, d.name)
		reason := fmt.Sprintf("the project %s is not trusted, and %s can run code or send data elsewhere; %s", s.projectDir, d.name, trustHint)
		if d.project == tighterProject {
			reason = fmt.Sprintf("the project %s is not trusted, and may only make %s stricter than %v; %s", s.projectDir, d.name, s.userValue(d), trustHint)
		}
		s.ignored = append(s.ignored, Ignored{Key: d.name, Value: v.value, Source: v.src, Reason: reason})
		s.problems = append(s.problems, Problem{Scope: Project, File: l.file, Line: v.line, Column: v.col, Key: d.name,
			Msg: fmt.Sprintf("%s: %s", quoteValue(v.value), reason)})
	}
	if l.overrides != nil && structuredRule(modelOverridesKeyPrefix) == trustedProject {
		l.overrides = nil
	}
}

// tighter reports whether a project's value v of the tighterProject key d
// is at least as strict as the user's.
func (s *Settings) tighter(d keyDef, v setting) bool {
	return slices.Index(d.values, fmt.Sprint(v.value)) >= slices.Index(d.values, fmt.Sprint(s.userValue(d)))
}

// userValue is the key's value in the global settings, else its default.
func (s *Settings) userValue(d keyDef) any {
	if s.global != nil {
		if g, ok := s.global.plain[d.name]; ok {
			return g.value
		}
	}
	return d.def
}

// structuredRule returns the project rule of a key that is not a plain
// value.
func structuredRule(name string) projectRule {
	for _, k := range structuredKeys {
		if k.name == name {
			return k.project
		}
	}
	return trustedProject
}

// foreignAncestor says why the project's settings do not apply without
// trust when they were found above the working directory outside both the
// user's home and the git repository the working directory is in; "" when
// they apply.
func (s *Settings) foreignAncestor(opts Options) string {
	if opts.WorkDir == "" {
		return ""
	}
	work := canonicalDir(opts.WorkDir)
	proj := canonicalDir(s.projectDir)
	if work == proj || !within(work, proj) {
		return ""
	}
	home := opts.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home != "" {
		if h := canonicalDir(home); proj != h && within(proj, h) {
			return ""
		}
	}
	if root := gitRoot(work); root != "" && within(proj, root) {
		return ""
	}
	return fmt.Sprintf("it was found in %s, above the working directory %s, outside your home directory and the git repository", proj, work)
}

// within reports whether dir is base or below it (both clean and absolute).
func within(dir, base string) bool {
	rel, err := filepath.Rel(base, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// gitRoot returns the nearest of dir and its ancestors that holds .git (a
// directory, or a file as in a worktree), or "".
func gitRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// quoteValue shows a value for a message: strings quoted, the rest as is.
func quoteValue(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}
