package settings

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/atomicfile"
	"github.com/prime-agent/prime/internal/jsonedit"
	"github.com/prime-agent/prime/internal/lockdir"
	"github.com/prime-agent/prime/internal/smallfile"
)

// ErrBrokenFile reports a write refused because the settings file cannot
// be read, does not parse, or does not hold an object: Prime never
// replaces a file it cannot understand.
var ErrBrokenFile = errors.New("the settings file is broken")

// ErrInvalid reports a key Prime does not know or a value that key does not
// accept, given to Set, Unset or WithOverride.
var ErrInvalid = errors.New("invalid setting")

// invalidError is a message that matches ErrInvalid without repeating it.
type invalidError struct{ err error }

func (e *invalidError) Error() string        { return e.err.Error() }
func (e *invalidError) Unwrap() error        { return e.err }
func (e *invalidError) Is(target error) bool { return target == ErrInvalid }

// invalid wraps a message about bad input as ErrInvalid.
func invalid(format string, args ...any) error {
	return &invalidError{fmt.Errorf(format, args...)}
}

// lockWait bounds the wait for another writer's lock. A stale lock (its
// holder died) is broken after lockdir.Stale, so this is long enough to get
// past one.
const lockWait = lockdir.Stale + 5*time.Second

// Set writes key = value into the settings file of scope (Global or
// Project) and returns the settings read again. The value is written as on
// a command line (true, 20000, anthropic/claude-haiku-4-5) and checked
// like a value read from a file. Only that key's text changes: every other
// key, its order and layout stay as they were. The write holds the file's
// lock (pi's protocol) and replaces the file atomically; a file that does
// not parse is never written (the error wraps [ErrBrokenFile]).
func (s *Settings) Set(ctx context.Context, scope Scope, key, value string) (*Settings, error) {
	k, raw, err := parseSetting(key, value)
	if err != nil {
		return nil, err
	}
	file, err := s.file(scope)
	if err != nil {
		return nil, err
	}
	err = editFile(ctx, file, func(doc *jsonedit.Doc) ([]byte, error) {
		return doc.Set(k.path(), raw)
	})
	if err != nil {
		return nil, err
	}
	return s.reload(ctx)
}

// parseSetting checks a key and a value as typed on a command line.
func parseSetting(name, value string) (key, []byte, error) {
	k, err := parseKey(name)
	if err != nil {
		return k, nil, invalid("%w", err)
	}
	_, raw, err := k.parseValue(value)
	if err != nil {
		return k, nil, invalid("%w", err)
	}
	return k, raw, nil
}

// Unset removes key from the settings file of scope, so it falls back to
// the next layer, and reports whether the file had it. Like Set, it changes
// nothing else in the file.
func (s *Settings) Unset(ctx context.Context, scope Scope, key string) (*Settings, bool, error) {
	k, err := parseKey(key)
	if err != nil {
		return nil, false, invalid("%w", err)
	}
	file, err := s.file(scope)
	if err != nil {
		return nil, false, err
	}
	var found bool
	err = editFile(ctx, file, func(doc *jsonedit.Doc) ([]byte, error) {
		out, ok, err := doc.Delete(k.path())
		found = ok
		return out, err
	})
	if err != nil {
		return nil, false, err
	}
	ns, err := s.reload(ctx)
	return ns, found, err
}

// Trust records the project directory dir as trusted in the global
// settings file (trustedProjects), as an absolute path with symbolic links
// resolved, and returns the settings read again. Trusting a trusted
// project changes nothing.
func (s *Settings) Trust(ctx context.Context, dir string) (*Settings, error) {
	want := canonicalDir(dir)
	file, err := s.file(Global)
	if err != nil {
		return nil, err
	}
	err = editFile(ctx, file, func(doc *jsonedit.Doc) ([]byte, error) {
		elems, err := trustedElems(doc)
		if err != nil {
			return nil, err
		}
		for _, e := range elems {
			if e.dir != "" && canonicalDir(e.dir) == want {
				return doc.Source(), nil
			}
		}
		q, err := jsontext.AppendQuote(nil, want)
		if err != nil {
			return nil, fmt.Errorf("directory %q: %w", want, err)
		}
		return doc.Set([]string{trustedProjectsKey}, joinArray(elems, q))
	})
	if err != nil {
		return nil, err
	}
	return s.reload(ctx)
}

// Untrust removes the project directory dir from the trusted projects and
// reports whether it was there.
func (s *Settings) Untrust(ctx context.Context, dir string) (*Settings, bool, error) {
	want := canonicalDir(dir)
	file, err := s.file(Global)
	if err != nil {
		return nil, false, err
	}
	var found bool
	err = editFile(ctx, file, func(doc *jsonedit.Doc) ([]byte, error) {
		elems, err := trustedElems(doc)
		if err != nil {
			return nil, err
		}
		var keep []trustedElem
		for _, e := range elems {
			if e.dir != "" && (canonicalDir(e.dir) == want || filepath.Clean(e.dir) == filepath.Clean(dir)) {
				found = true
				continue
			}
			keep = append(keep, e)
		}
		if !found {
			return doc.Source(), nil
		}
		return doc.Set([]string{trustedProjectsKey}, joinArray(keep, nil))
	})
	if err != nil {
		return nil, false, err
	}
	ns, err := s.reload(ctx)
	return ns, found, err
}

// trustedElem is one element of trustedProjects as the file has it: its
// JSON text (kept as is, whatever it is) and, for a string, the directory.
type trustedElem struct {
	raw []byte
	dir string
}

func trustedElems(doc *jsonedit.Doc) ([]trustedElem, error) {
	n := doc.Lookup([]string{trustedProjectsKey})
	if n == nil || n.Kind == 'n' {
		return nil, nil
	}
	if n.Kind != '[' {
		return nil, fmt.Errorf("%s is %s, not a list; fix it by hand first", trustedProjectsKey, jsonedit.KindName(n.Kind))
	}
	elems := make([]trustedElem, len(n.Elems))
	for i, e := range n.Elems {
		elems[i].raw = doc.Raw(e)
		if e.Kind == '"' {
			unquote(elems[i].raw, &elems[i].dir)
		}
	}
	return elems, nil
}

// joinArray writes a JSON array of the elements, then extra if any.
func joinArray(elems []trustedElem, extra []byte) []byte {
	b := []byte{'['}
	for i, e := range elems {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e.raw...)
	}
	if extra != nil {
		if len(elems) > 0 {
			b = append(b, ',')
		}
		b = append(b, extra...)
	}
	return append(b, ']')
}

// file returns the settings file of a scope, for writing.
func (s *Settings) file(scope Scope) (string, error) {
	s = s.get()
	switch {
	case scope == Global && s.globalFile != "":
		return s.globalFile, nil
	case scope == Project && s.projectFile != "":
		return s.projectFile, nil
	case scope == Project && s.projectDir != "":
		return "", fmt.Errorf("%s has no project settings of its own: its %s is the agent directory", s.projectDir, projectSubdir)
	case scope == Project:
		return "", errors.New("no project directory")
	case scope == Global:
		return "", errors.New("these settings were not loaded from files")
	}
	return "", fmt.Errorf("cannot write %s settings to a file", scope)
}

// reload reads the files again after a write, keeping the run-time flags.
func (s *Settings) reload(ctx context.Context) (*Settings, error) {
	opts := s.opts
	opts.AgentDir, opts.ProjectDir = s.agentDir, s.projectDir
	ns, err := Load(ctx, opts)
	if err != nil {
		return nil, err
	}
	ns.flag = s.flag
	return ns, nil
}

// editFile changes a settings file under its lock: it reads the current
// text, refuses a file it cannot understand, lets change edit the text, and
// replaces the file atomically when the text changed.
func editFile(ctx context.Context, file string, change func(*jsonedit.Doc) ([]byte, error)) (err error) {
	target, err := writeTarget(file)
	if err != nil {
		return fmt.Errorf("not writing %s: %w", file, err)
	}
	if _, err := os.Stat(filepath.Dir(file)); errors.Is(err, fs.ErrNotExist) {
		// Nothing to lock yet. Create the directory only for a real change.
		empty, _ := jsonedit.Parse(nil)
		out, err := change(empty)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if len(out) == 0 {
			return nil
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
	}

	wctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	lk, err := lockdir.Acquire(wctx, file)
	if err != nil {
		if errors.Is(err, lockdir.ErrLocked) && ctx.Err() == nil {
			dir, _ := lockdir.Path(file)
			return fmt.Errorf("cannot write %s: another process has held its lock %s for %v; if no pi or prime is running, remove that directory", file, dir, lockWait)
		}
		return fmt.Errorf("cannot write %s: %w", file, err)
	}
	defer func() {
		if rerr := lk.Release(); rerr != nil && err == nil {
			err = fmt.Errorf("wrote %s, but %w; another writer may have written it meanwhile", file, rerr)
		}
	}()

	src, err := smallfile.Read(target, maxFileSize)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("not writing %s, %w: cannot read it: %v", file, ErrBrokenFile, unwrapPath(err))
	}
	doc, err := jsonedit.Parse(src)
	if err != nil {
		return fmt.Errorf("not writing %s, %w: %v; fix it by hand first", file, ErrBrokenFile, err)
	}
	if doc.Root != nil && doc.Root.Kind != '{' {
		return fmt.Errorf("not writing %s, %w: it holds %s, not an object; fix it by hand first", file, ErrBrokenFile, jsonedit.KindName(doc.Root.Kind))
	}
	out, err := change(doc)
	if err != nil {
		return fmt.Errorf("not writing %s: %w", file, err)
	}
	if bytes.Equal(out, src) {
		return nil
	}
	if err := lk.Err(); err != nil {
		return fmt.Errorf("not writing %s: %w", file, err)
	}
	if err := atomicfile.Replace(target, out, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", file, err)
	}
	return nil
}
