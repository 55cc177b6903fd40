package tool

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/permission"
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
	// is truncated. Empty means Procs.Dir, else os.TempDir().
	TempDir string
	// Procs, when set, tracks the processes bash commands start, so that
	// an abort or the session's end kills all of them (see [Procs]).
	Procs *Procs
	// Timeout is how long a bash call that names no timeout may run;
	// 0 means as long as it needs (pi's default).
	Timeout time.Duration
	// Secrets says which of Prime's environment variables commands do
	// not inherit; the zero value removes API keys, tokens and other
	// secrets (see [permission.EnvPolicy]).
	Secrets permission.EnvPolicy
	// Sandbox, when set, confines the bash tool's commands (Linux:
	// Landlock and a network namespace, see [permission.Sandbox]); nil
	// runs them with the user's full rights. The user's own commands
	// (RunShell) are never confined.
	Sandbox *permission.Sandbox
	// WriteScope, when set, is where write and edit may change files
	// (sandbox mode), checked on the path with its links resolved; nil
	// lets them write anywhere the user can.
	WriteScope *permission.Scope
	// DenyRead, when set, are the paths (absolute, links resolved) read,
	// grep, find and ls do not read: a walk skips them, and a file that
	// turns out to be one when it is opened is refused.
	DenyRead []string
}

// confined returns e with the confinement the caller put in ctx (see
// [permission.WithConfinement]) in place of its own Sandbox, WriteScope
// and DenyRead.
func (e Env) confined(ctx context.Context) Env {
	if c, ok := permission.ConfinementOf(ctx); ok {
		e.Sandbox, e.WriteScope, e.DenyRead = c.Sandbox, c.Scope, c.DenyRead
	}
	return e
}

// checkWrite refuses a write or edit of target (the real path of shown)
// outside the write scope.
func (e Env) checkWrite(target, shown string) error {
	if e.WriteScope == nil {
		return nil
	}
	return e.WriteScope.Check(target, shown)
}

// recheckWrite checks, just before the file is written, that abs still
// leads where it did when it was checked (a link made meanwhile, by a
// command in the background, would lead the write elsewhere).
func (e Env) recheckWrite(abs, target, shown string) error {
	if e.WriteScope == nil {
		return nil
	}
	if now := canonical(abs); now != target {
		return fmt.Errorf("%s changed while it was being written (it now leads to %s); nothing was written", shown, now)
	}
	return nil
}

// environ is a command's environment: Prime's without the secrets the
// policy removes, then Environ's variables.
func (e Env) environ() []string {
	env, _ := e.Secrets.Filter(os.Environ())
	if e.Environ != nil {
		env = append(env, e.Environ()...)
	}
	return env
}

// tempDir is where the full output of commands goes.
func (e Env) tempDir() string {
	if e.TempDir == "" && e.Procs != nil {
		return e.Procs.Dir
	}
	return e.TempDir
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

// ResolvePath reads a path argument as the file tools do, relative to cwd
// (~, @, file:// and Unicode spaces included): abs is the clean absolute
// path, real where its symbolic links lead (as far as it exists).
func ResolvePath(cwd, p string) (abs, real string, err error) {
	abs, err = Env{CWD: cwd}.resolve(p)
	if err != nil {
		return "", "", err
	}
	return abs, canonical(abs), nil
}
