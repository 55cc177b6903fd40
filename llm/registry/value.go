package registry

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// A value of models.json (an apiKey, a header) or of auth.json is read as
// pi 1.6 reads it:
//
//   - "!command" is the output of the command run by sh;
//   - otherwise "$NAME" and "${NAME}" anywhere in the text are the named
//     environment variable's value ("Bearer ${TOKEN}"), "$$" is a literal
//     "$" and "$!" a literal "!"; a "$" before anything else is itself;
//   - the rest is literal text.
//
// Before 1.6, pi read a bare variable name ("OPENAI_API_KEY") as that
// variable, and pi 1.6 sends such a value as the key itself, which no
// server takes. So that such a file still works, a value that is only a
// name in capitals with an underscore in it reads that variable. Without
// an underscore it is literal, as in 1.6: vLLM's and Ollama's dummy keys
// ("EMPTY", "NONE") stay what they say.

// valuePart is one piece of a parsed value: literal text, or the name of an
// environment variable (env true).
type valuePart struct {
	text string
	env  bool
}

// capitalsName matches a name in capitals.
var capitalsName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`) })

// legacyName reports whether a value is read as a variable's name (see
// above).
func legacyName(spec string) bool {
	return capitalsName().MatchString(spec) && strings.Contains(spec, "_")
}

// varName matches an environment variable's name, as pi 1.6 takes it.
var varName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*`) })

// parseValue splits a value that is not a command into its parts.
func parseValue(spec string) []valuePart {
	var parts []valuePart
	lit := func(s string) {
		if s == "" {
			return
		}
		if n := len(parts); n > 0 && !parts[n-1].env {
			parts[n-1].text += s
			return
		}
		parts = append(parts, valuePart{text: s})
	}
	for spec != "" {
		i := strings.IndexByte(spec, '$')
		if i < 0 {
			lit(spec)
			break
		}
		lit(spec[:i])
		rest := spec[i+1:]
		switch {
		case strings.HasPrefix(rest, "$"), strings.HasPrefix(rest, "!"):
			lit(rest[:1])
			spec = rest[1:]
		case strings.HasPrefix(rest, "{"):
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				lit("$")
				spec = rest
				continue
			}
			if name := rest[1:end]; varName().FindString(name) == name && name != "" {
				parts = append(parts, valuePart{text: name, env: true})
			} else {
				lit("$" + rest[:end+1])
			}
			spec = rest[end+1:]
		default:
			name := varName().FindString(rest)
			if name == "" {
				lit("$")
				spec = rest
				continue
			}
			parts = append(parts, valuePart{text: name, env: true})
			spec = rest[len(name):]
		}
	}
	return parts
}

// valueVars returns the environment variables a value reads, in order,
// each once; a bare name in capitals counts (see above).
func valueVars(spec string) []string {
	if spec == "" || spec[0] == '!' {
		return nil
	}
	if legacyName(spec) {
		return []string{spec}
	}
	var names []string
	for _, p := range parseValue(spec) {
		if p.env && !slices.Contains(names, p.text) {
			names = append(names, p.text)
		}
	}
	return names
}

// onlyVar returns the variable a value is made of alone ("$NAME",
// "${NAME}" or a bare name in capitals), or "".
func onlyVar(spec string) string {
	if spec == "" || spec[0] == '!' {
		return ""
	}
	if legacyName(spec) {
		return spec
	}
	if parts := parseValue(spec); len(parts) == 1 && parts[0].env {
		return parts[0].text
	}
	return ""
}

// MissingVarsError is a value that reads environment variables that are
// not set: pi 1.6 leaves such a value unresolved rather than send a
// partial key.
type MissingVarsError struct {
	// What names the value ("provider ollama apiKey").
	What string
	// Vars are the variables not set.
	Vars []string
}

func (e *MissingVarsError) Error() string {
	return fmt.Sprintf("%s: set %s", e.What, strings.Join(e.Vars, ", "))
}

// expandValue resolves a value that is not a command against getenv.
func expandValue(what, spec string, getenv func(string) string) (string, error) {
	if legacyName(spec) {
		return getenv(spec), nil
	}
	var b strings.Builder
	var missing []string
	for _, p := range parseValue(spec) {
		if !p.env {
			b.WriteString(p.text)
			continue
		}
		v := getenv(p.text)
		if v == "" {
			if !slices.Contains(missing, p.text) {
				missing = append(missing, p.text)
			}
			continue
		}
		b.WriteString(v)
	}
	if len(missing) > 0 {
		return "", &MissingVarsError{What: what, Vars: missing}
	}
	return b.String(), nil
}
