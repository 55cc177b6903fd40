package tool

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/prime-agent/prime/internal/gitignore"
)

// walkEntry is one file or directory found by walkTree.
type walkEntry struct {
	rel   string // relative to the walk's root, "/"-separated
	abs   string
	name  string
	isDir bool // a directory, not a symbolic link to one
	link  bool // a symbolic link (never followed)
}

// errStopWalk ends a walk early without an error.
var errStopWalk = errors.New("stop walking")

// ignoreScope is the .gitignore rules in force in a directory, with how to
// name a walk path relative to the repository root they are written for.
type ignoreScope struct {
	m *gitignore.Matcher
	// prefix is the walk root's path inside a repository root above it,
	// with a trailing "/" ("" when the walk root is the repository root
	// or there is no repository).
	prefix string
	// strip is the walk path of a repository found inside the walk, with
	// a trailing "/" ("" outside such one).
	strip string
}

func (s ignoreScope) path(rel string) string {
	if s.strip != "" {
		return strings.TrimPrefix(rel, s.strip)
	}
	return s.prefix + rel
}

// dirPath names the directory rel for the rules of its .gitignore.
func (s ignoreScope) dirPath(rel string) string {
	if rel+"/" == s.strip || (s.strip == "" && rel == "") {
		return strings.TrimSuffix(s.prefix, "/")
	}
	return s.path(rel)
}

// walkTree visits every file and directory below root in sorted order,
// depth first, and hidden ones too. It skips .git and what .gitignore
// files exclude: those from root down, and those between root and the
// repository root above it (the nearest directory holding .git), with the
// repository's .git/info/exclude. A repository inside the walk starts its
// own rules. Symbolic links are reported, never followed. visit returns
// whether to enter a directory; errStopWalk ends the walk. Directories
// that cannot be read are skipped.
func walkTree(ctx context.Context, root string, visit func(walkEntry) (bool, error)) error {
	scope := outerScope(root)
	err := walkDir(ctx, root, "", scope, visit)
	if errors.Is(err, errStopWalk) {
		return nil
	}
	return err
}

// outerScope loads the rules that apply to root from the repository it is
// in, from the repository root down to root's parent.
func outerScope(root string) ignoreScope {
	repo := ""
	for dir := root; ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			repo = dir
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ignoreScope{}
		}
		dir = parent
	}
	rel, err := filepath.Rel(repo, root)
	if err != nil {
		return ignoreScope{}
	}
	var s ignoreScope
	s.m = withExclude(s.m, repo)
	if rel != "." {
		s.prefix = filepath.ToSlash(rel) + "/"
		dir, key := repo, ""
		for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
			s.m = withIgnoreFile(s.m, dir, key)
			dir = filepath.Join(dir, part)
			key = strings.TrimPrefix(key+"/"+part, "/")
		}
	}
	return s
}

func withExclude(m *gitignore.Matcher, repo string) *gitignore.Matcher {
	if data, err := os.ReadFile(filepath.Join(repo, ".git", "info", "exclude")); err == nil {
		return m.Child("", data)
	}
	return m
}

func withIgnoreFile(m *gitignore.Matcher, dir, key string) *gitignore.Matcher {
	if data, err := os.ReadFile(filepath.Join(dir, ".gitignore")); err == nil {
		return m.Child(key, data)
	}
	return m
}

func walkDir(ctx context.Context, abs, rel string, scope ignoreScope, visit func(walkEntry) (bool, error)) error {
	if err := aborted(ctx); err != nil {
		return err
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil // unreadable: nothing to see, as rg and fd carry on
	}
	if rel != "" && hasEntry(entries, ".git") {
		scope = ignoreScope{m: withExclude(nil, abs), strip: rel + "/"}
	}
	scope.m = withIgnoreFile(scope.m, abs, scope.dirPath(rel))
	for _, d := range entries {
		name := d.Name()
		if name == ".git" {
			continue
		}
		e := walkEntry{name: name, abs: filepath.Join(abs, name), rel: name}
		if rel != "" {
			e.rel = rel + "/" + name
		}
		e.link = d.Type()&fs.ModeSymlink != 0
		e.isDir = d.IsDir()
		if scope.m.Ignored(scope.path(e.rel), e.isDir) {
			continue
		}
		enter, err := visit(e)
		if err != nil {
			return err
		}
		if enter && e.isDir {
			if err := walkDir(ctx, e.abs, e.rel, scope, visit); err != nil {
				return err
			}
		}
	}
	return nil
}

func hasEntry(entries []os.DirEntry, name string) bool {
	for _, e := range entries {
		if e.Name() == name {
			return true
		}
	}
	return false
}
