package htmlexport

import (
	"regexp"
	"strings"
)

// Secrets never leave in an export: every text that goes into the page
// passes a redactor first, which masks what looks like a credential — a
// provider's API key by its shape, a private key block, a bearer token, a
// JSON Web Token, a password in a URL, the value assigned to a name like
// API_KEY, SECRET, TOKEN or PASSWORD. Masked values read "[redacted]"; a
// key keeps the few characters that say what kind it was.

// pemPattern is a private key block; linePatterns the shapes masked
// within a line, as one expression: keep, when present, is the part kept
// before the mask (a key's kind, a variable's name and its "=").
const (
	pemPattern   = `-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)`
	linePatterns = `(?P<keep>sk-ant-|sk-proj-|sk-|gh[pousr]_|github_pat_|glpat-|xox[abprs]-|AIza|hf_|npm_|AKIA)(?:[A-Za-z0-9_\-]{16,})` +
		`|(?P<jwt>eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})` +
		`|(?P<keep>(?i:authorization|x-api-key|api-key)["']?\s*[:=]\s*["']?(?i:bearer\s+|basic\s+|token\s+)?)[A-Za-z0-9._~+/=\-]{8,}` +
		`|(?P<keep>(?i:bearer)\s+)[A-Za-z0-9._~+/=\-]{16,}` +
		`|(?P<keep>[a-z][a-z0-9+.\-]*://[^\s:/@"']+:)[^\s@/"']+@` +
		`|(?P<keep>(?i:api[_\-]?key|secret|token|passw(?:or)?d|access[_\-]?key|private[_\-]?key)[A-Za-z0-9_]*["']?\s*[:=]\s*["']?)[^\s"',;&]{8,}`
)

// mask is what replaces a secret.
const mask = "[redacted]"

// redactor masks secrets in texts and counts them.
type redactor struct {
	pem, line *regexp.Regexp
	// off turns masking off (--no-redact).
	off bool
	// seen holds the values masked so far (a value met twice, in a block
	// and in its tree row, counts once).
	seen map[string]bool
}

// count is the number of distinct values masked.
func (r *redactor) count() int { return len(r.seen) }

func (r *redactor) saw(v string) {
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	r.seen[v] = true
}

func newRedactor(off bool) *redactor {
	r := &redactor{off: off}
	if !off {
		r.pem = regexp.MustCompile(pemPattern)
		r.line = regexp.MustCompile(linePatterns)
	}
	return r
}

// text returns s with its secrets masked. Only the lines that hold one of
// the patterns' fixed parts meet the expression.
func (r *redactor) text(s string) string {
	if r.off || !mayHoldSecret(s) {
		return s
	}
	if strings.Contains(s, "-----BEGIN") {
		s = r.pem.ReplaceAllStringFunc(s, func(v string) string { r.saw(v); return mask })
	}
	var b strings.Builder
	rest := s
	for rest != "" {
		line, after, found := strings.Cut(rest, "\n")
		if mayHoldSecret(line) {
			line = r.replace(line)
		}
		b.WriteString(line)
		if found {
			b.WriteByte('\n')
		}
		rest = after
	}
	return b.String()
}

// replace masks the secrets of one line.
func (r *redactor) replace(line string) string {
	names := r.line.SubexpNames()
	return r.line.ReplaceAllStringFunc(line, func(match string) string {
		sub := r.line.FindStringSubmatchIndex(match)
		for g := 1; g < len(names); g++ {
			if names[g] != "keep" || sub[2*g] < 0 {
				continue
			}
			kept := match[:sub[2*g+1]]
			r.saw(strings.TrimSuffix(match[len(kept):], "@"))
			if strings.HasSuffix(match, "@") && strings.Contains(kept, "://") {
				return kept + mask + "@"
			}
			return kept + mask
		}
		r.saw(match)
		return mask
	})
}

// mayHoldSecret is a cheap test that lets most texts skip the expression:
// every pattern holds one of the shapes' fixed parts, and those that
// assign a value a ":" or "=".
func mayHoldSecret(s string) bool {
	for _, hint := range []string{"sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "_pat_", "glpat-", "xox", "AIza", "hf_", "npm_", "AKIA", "eyJ", "://", "-----BEGIN", "earer", "EARER"} {
		if strings.Contains(s, hint) {
			return true
		}
	}
	if !strings.ContainsAny(s, ":=") {
		return false
	}
	for _, hint := range []string{"uthorization", "UTHORIZATION", "pi-key", "PI-KEY", "pi_key", "PI_KEY", "pikey", "PIKEY", "piKey", "PiKey",
		"ecret", "ECRET", "oken", "OKEN", "assw", "ASSW", "ccess", "CCESS", "rivate", "RIVATE"} {
		if strings.Contains(s, hint) {
			return true
		}
	}
	return false
}
