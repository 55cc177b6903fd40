package tool

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Env is what the built-in tools need to know about where they run.
type Env struct {
	// CWD is the directory relative paths are resolved against and commands
	// run in. Required, absolute.
	CWD string
	// Shell is the shell bash runs commands with, as <Shell> -c <command>.
	// Empty means /bin/bash if it exists, else bash on PATH, else sh.
	Shell string
	// Environ returns extra KEY=VALUE variables for bash commands, added
	// over the process's environment. It is called once per command; nil
	// means none.
	Environ func() []string
	// TempDir is where bash keeps the full output of commands whose output
	// is truncated. Empty means os.TempDir().
	TempDir string
}

// DefaultNames are the tools active when --tools is not given.
var DefaultNames = []string{"read", "bash", "edit", "write"}

// Builtins returns the built-in tools working in env, in the order read,
// bash, edit, write, grep, find, ls.
func Builtins(env Env) []Tool {
	return []Tool{
		&readTool{env}, &bashTool{env}, &editTool{env}, &writeTool{env},
		&grepTool{env}, &findTool{env}, &lsTool{env},
	}
}

// Select picks tools from all by a --tools list: comma-separated names (an
// allowlist, in its order), or only +name and -name entries that add to or
// remove from [DefaultNames]. An empty list means the defaults. Unknown
// names and lists mixing the two forms are errors naming the valid tools.
func Select(all []Tool, list string) ([]Tool, error) {
	byName := map[string]Tool{}
	var names []string
	for _, t := range all {
		n := t.Spec().Name
		byName[n] = t
		names = append(names, n)
	}
	known := func(name string) error {
		if _, ok := byName[name]; ok {
			return nil
		}
		return fmt.Errorf("unknown tool %q in the tool list %q; the tools are %s", name, list, strings.Join(names, ", "))
	}
	var entries []string
	modifiers := 0
	for e := range strings.SplitSeq(list, ",") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		if e[0] == '+' || e[0] == '-' {
			modifiers++
			if name := strings.TrimSpace(e[1:]); name == "" {
				return nil, fmt.Errorf("%q in the tool list %q names no tool", e, list)
			}
		}
		entries = append(entries, e)
	}
	if modifiers > 0 && modifiers < len(entries) {
		return nil, fmt.Errorf("the tool list %q mixes names with +name/-name entries; give either the tools to use (read,grep) or changes to the defaults (+grep,-bash)", list)
	}
	var selected []string
	if modifiers == 0 && len(entries) > 0 {
		for _, name := range entries {
			if err := known(name); err != nil {
				return nil, err
			}
			if !containsString(selected, name) {
				selected = append(selected, name)
			}
		}
	} else {
		for _, name := range DefaultNames {
			if _, ok := byName[name]; ok {
				selected = append(selected, name)
			}
		}
		for _, e := range entries {
			name := strings.TrimSpace(e[1:])
			if err := known(name); err != nil {
				return nil, err
			}
			i := indexString(selected, name)
			switch {
			case e[0] == '+' && i < 0:
				selected = append(selected, name)
			case e[0] == '-' && i >= 0:
				selected = append(selected[:i], selected[i+1:]...)
			}
		}
	}
	tools := make([]Tool, len(selected))
	for i, name := range selected {
		tools[i] = byName[name]
	}
	return tools, nil
}

func indexString(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

func containsString(list []string, s string) bool { return indexString(list, s) >= 0 }

// unicodeSpaces are the spaces that models and pasted paths carry in place
// of an ASCII space.
var unicodeSpaces = strings.NewReplacer(
	"\u00a0", " ", "\u2000", " ", "\u2001", " ", "\u2002", " ", "\u2003", " ",
	"\u2004", " ", "\u2005", " ", "\u2006", " ", "\u2007", " ", "\u2008", " ",
	"\u2009", " ", "\u200a", " ", "\u202f", " ", "\u205f", " ", "\u3000", " ",
)

// resolve turns a path from the model into a clean absolute path: Unicode
// spaces become ASCII spaces, a leading @ is dropped, ~ and ~/ name the home
// directory, a file:// URL names its path, and a relative path is taken
// relative to CWD.
func (e Env) resolve(p string) (string, error) {
	if !filepath.IsAbs(e.CWD) {
		return "", fmt.Errorf("the tools' working directory %q is not an absolute path", e.CWD)
	}
	p = unicodeSpaces.Replace(p)
	p = strings.TrimPrefix(p, "@")
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot expand ~ in %q: %w", p, err)
		}
		p = filepath.Join(home, p[1:])
	case strings.HasPrefix(p, "file://"):
		u, err := url.Parse(p)
		if err != nil {
			return "", fmt.Errorf("%q is not a valid file URL: %w", p, err)
		}
		if u.Host != "" && u.Host != "localhost" {
			return "", fmt.Errorf("%q names a file on another host (%s)", p, u.Host)
		}
		p = u.Path
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.CWD, p)
	}
	return filepath.Clean(p), nil
}

// canonical returns p with symbolic links resolved, as far as the path
// exists: for a file not yet created, its nearest existing directory is
// resolved and the rest kept.
func canonical(p string) string {
	rest := ""
	for dir := p; ; {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// pathOf returns the canonical path named by the "path" member of
// validated arguments, for [PathTool]; nil when there is none to resolve.
func (e Env) pathOf(args jsontext.Value, def string) []string {
	var a struct {
		Path *string `json:"path"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil
	}
	p := def
	if a.Path != nil {
		p = *a.Path
	}
	abs, err := e.resolve(p)
	if err != nil {
		return nil
	}
	return []string{canonical(abs)}
}

// ErrAborted is matched (errors.Is) by the error of a call stopped because
// its context was cancelled.
var ErrAborted = errors.New("aborted")

// abortedError is the error of a call stopped by its context: its text is
// what the model sees, and it matches ErrAborted and the context's error.
type abortedError struct {
	text  string
	cause error
}

func (e *abortedError) Error() string        { return e.text }
func (e *abortedError) Is(target error) bool { return target == ErrAborted }
func (e *abortedError) Unwrap() error        { return e.cause }

// abortedText is what a tool other than bash says when it is aborted.
const abortedText = "The operation was aborted."

// aborted returns the abort error for ctx if it is done.
func aborted(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return &abortedError{abortedText, err}
	}
	return nil
}

// decodeArgs reads validated arguments into a struct.
func decodeArgs(name string, args jsontext.Value, v any) error {
	if len(args) == 0 {
		args = jsontext.Value("{}")
	}
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("the arguments of the %s call cannot be read: %w", name, err)
	}
	return nil
}

// detailsOf marshals a tool's details.
func detailsOf(v any) jsontext.Value {
	b, err := json.Marshal(v)
	if err != nil {
		// Details are plain structs of strings and numbers.
		panic("tool: marshaling details: " + err.Error())
	}
	return b
}

// countArg turns an optional count argument (a limit) into an int: the
// default when absent, at least 1, fractions dropped.
func countArg(v *float64, def int) int {
	if v == nil {
		return def
	}
	if *v < 1 {
		return 1
	}
	if *v > 1e9 {
		return 1e9
	}
	return int(*v)
}
