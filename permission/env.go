package permission

import (
	"path"
	"strings"
)

// DefaultSecretPatterns are the variables a tool's command does not inherit
// unless a setting includes them again: API keys, tokens, secrets,
// passwords and the cloud credentials of AWS. Patterns are shell globs
// matched against the whole name, without regard to case.
var DefaultSecretPatterns = []string{
	"*_API_KEY", "*_APIKEY", "*_TOKEN", "*_SECRET", "*_SECRET_KEY", "*_PASSWORD", "*_PASSWD",
	"AWS_*", "*_ACCESS_KEY", "*_PRIVATE_KEY", "*_CREDENTIALS",
}

// EnvPolicy says which of Prime's environment variables the tools'
// commands inherit. The zero value removes [DefaultSecretPatterns].
type EnvPolicy struct {
	// Exclude are more patterns (globs) or names to remove: a setting's
	// and the variables the model registry reads keys from.
	Exclude []string
	// Include are patterns or names kept even though they match a secret
	// pattern (a user who wants GITHUB_TOKEN in their commands).
	Include []string
	// Inherit keeps every variable (the policy is off).
	Inherit bool
}

// Filter returns env (KEY=VALUE entries) without the variables the policy
// removes, and the names it removed.
func (p EnvPolicy) Filter(env []string) (kept, removed []string) {
	if p.Inherit {
		return env, nil
	}
	kept = make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if p.Secret(name) {
			removed = append(removed, name)
			continue
		}
		kept = append(kept, kv)
	}
	return kept, removed
}

// Secret reports whether the policy removes the variable name.
func (p EnvPolicy) Secret(name string) bool {
	if p.Inherit || matchAny(p.Include, name) {
		return false
	}
	return matchAny(DefaultSecretPatterns, name) || matchAny(p.Exclude, name)
}

// matchAny reports whether name matches one of the globs, ignoring case.
func matchAny(globs []string, name string) bool {
	up := strings.ToUpper(name)
	for _, g := range globs {
		g = strings.ToUpper(strings.TrimSpace(g))
		if g == "" {
			continue
		}
		if ok, err := path.Match(g, up); ok && err == nil {
			return true
		}
	}
	return false
}

// SplitList reads a setting's comma- or space-separated list.
func SplitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}
