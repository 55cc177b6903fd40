package settings

import (
	"context"
	"fmt"
	"slices"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonedit"
)

// The lists of permission rules: permissions.allow, permissions.deny and
// permissions.allowUnconfined, and in the global file the same lists for
// one project under permissions.projects["/dir"].
const (
	permSection        = "permissions"
	RuleAllow          = "allow"
	RuleDeny           = "deny"
	RuleAllowUnconfine = "allowUnconfined"
	permProjectsField  = "projects"
)

var ruleLists = [...]string{RuleAllow, RuleDeny, RuleAllowUnconfine}

// permRules are one file's rules, list by list.
type permRules struct {
	lists map[string][]string
	// projects are the global file's rules for one project, by directory.
	projects map[string]map[string][]string
}

// readRules reads the rule lists of the permissions section.
func (r *reader) readRules(sec *jsonedit.Node) {
	if sec == nil {
		return
	}
	r.l.rules.lists = r.ruleLists(sec, permSection)
	ps := r.object(sec.Get(permProjectsField), permSection+"."+permProjectsField)
	if ps == nil {
		return
	}
	if r.l.scope != Global {
		r.problem(ps, permSection+"."+permProjectsField, "is read only from the global settings file; ignored here")
		return
	}
	r.l.rules.projects = map[string]map[string][]string{}
	for _, m := range ps.Members {
		key := fmt.Sprintf("%s.%s[%q]", permSection, permProjectsField, m.Name)
		if o := r.object(m.Value, key); o != nil {
			r.l.rules.projects[canonicalDir(m.Name)] = r.ruleLists(o, key)
		}
	}
}

func (r *reader) ruleLists(sec *jsonedit.Node, prefix string) map[string][]string {
	out := map[string][]string{}
	for _, name := range ruleLists {
		n := sec.Get(name)
		if n == nil || n.Kind == 'n' {
			continue
		}
		key := prefix + "." + name
		if n.Kind != '[' {
			r.problem(n, key, fmt.Sprintf("%s is %s; want a list of rules such as \"Bash(npm test:*)\"", shown(r.doc.Raw(n)), jsonedit.KindName(n.Kind)))
			continue
		}
		for i, e := range n.Elems {
			var s string
			if e.Kind != '"' || unquote(r.doc.Raw(e), &s) != nil || s == "" {
				r.problem(e, fmt.Sprintf("%s[%d]", key, i), fmt.Sprintf("%s is not a rule (want a string such as \"Edit(src/**)\")", shown(r.doc.Raw(e))))
				continue
			}
			out[name] = append(out[name], s)
		}
	}
	return out
}

// PermissionRules are the permission rules in force, as written.
type PermissionRules struct {
	// Allow, Deny and AllowUnconfined hold the global file's rules, the
	// global file's rules for this project, then the project file's (its
	// deny rules always; the others only once the project is trusted).
	Allow, Deny, AllowUnconfined []string
	// IgnoredAllow are the project file's allow and allowUnconfined rules
	// that do not apply because the project is not trusted.
	IgnoredAllow []string
}

// PermissionRules returns the permission rules in force.
func (s *Settings) PermissionRules() PermissionRules {
	s = s.get()
	var out PermissionRules
	add := func(lists map[string][]string) {
		out.Allow = append(out.Allow, lists[RuleAllow]...)
		out.Deny = append(out.Deny, lists[RuleDeny]...)
		out.AllowUnconfined = append(out.AllowUnconfined, lists[RuleAllowUnconfine]...)
	}
	if s.global != nil {
		add(s.global.rules.lists)
		if dir := s.rulesProject(); dir != "" {
			add(s.global.rules.projects[canonicalDir(dir)])
		}
	}
	if s.project != nil {
		if s.Trusted(s.projectDir) {
			add(s.project.rules.lists)
		} else {
			out.Deny = append(out.Deny, s.project.rules.lists[RuleDeny]...)
			out.IgnoredAllow = append(slices.Clone(s.project.rules.lists[RuleAllow]), s.project.rules.lists[RuleAllowUnconfine]...)
		}
	}
	return out
}

// rulesProject is the directory the global file's per-project rules are
// kept under: the project's, else the working directory.
func (s *Settings) rulesProject() string {
	if s.projectDir != "" {
		return s.projectDir
	}
	return s.opts.WorkDir
}

// AddPermissionRule adds rule to the list (RuleAllow, RuleDeny or
// RuleAllowUnconfine) where an "always" answer belongs: the project's
// settings file when the project is trusted, else the global file under
// permissions.projects[the project's directory]. It returns the settings
// read again and the scope written. A rule already there is not added
// twice.
func (s *Settings) AddPermissionRule(ctx context.Context, list, rule string) (*Settings, Scope, error) {
	if !slices.Contains(ruleLists[:], list) {
		return nil, 0, invalid("%q is not a list of permission rules (want allow, deny or allowUnconfined)", list)
	}
	s = s.get()
	scope, path := Project, []string{permSection, list}
	if s.projectFile == "" || !s.Trusted(s.projectDir) {
		dir := s.rulesProject()
		if dir == "" {
			return nil, 0, fmt.Errorf("no project directory to keep the rule %s for", rule)
		}
		scope, path = Global, []string{permSection, permProjectsField, canonicalDir(dir), list}
	}
	file, err := s.file(scope)
	if err != nil {
		return nil, 0, err
	}
	err = editFile(ctx, file, func(doc *jsonedit.Doc) ([]byte, error) {
		var elems []trustedElem
		if n := doc.Lookup(path); n != nil && n.Kind != 'n' {
			if n.Kind != '[' {
				return nil, fmt.Errorf("%s is %s, not a list; fix it by hand first", list, jsonedit.KindName(n.Kind))
			}
			for _, e := range n.Elems {
				var have string
				if e.Kind == '"' && unquote(doc.Raw(e), &have) == nil && have == rule {
					return doc.Source(), nil
				}
				elems = append(elems, trustedElem{raw: doc.Raw(e)})
			}
		}
		q, err := jsontext.AppendQuote(nil, rule)
		if err != nil {
			return nil, fmt.Errorf("rule %q: %w", rule, err)
		}
		return doc.Set(path, joinArray(elems, q))
	})
	if err != nil {
		return nil, 0, err
	}
	ns, err := s.reload(ctx)
	return ns, scope, err
}
