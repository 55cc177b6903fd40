package permission

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/prime-agent/prime/internal/smallfile"
)

// Protected are the paths in a project that a confined command sees
// read-only although the project is writable, because what is in them runs
// later outside the sandbox: git's hooks and configuration (a hook, or a
// program named by core.hooksPath, core.fsmonitor, core.pager or an alias,
// runs at the user's next git command) and the project's Prime settings
// (read again at the next prompt). Pin are the directories that hold them,
// kept where they are (a mount point cannot be renamed), so that a command
// cannot move them aside and make new ones.
type Protected struct {
	ReadOnly, Pin []string
}

// ProjectProtected returns what to protect in the project at root: the
// paths that exist now, with their symbolic links resolved. A worktree's
// .git file is followed to its git directory and the common one.
// .git/info/attributes stays writable: it only names filters and diff
// drivers that the configuration defines, and the project's own
// .gitattributes, writable anyway, can do as much.
func ProjectProtected(root string) Protected {
	var p Protected
	root = resolved(root)
	if root == "" {
		return p
	}
	p.Pin = append(p.Pin, root)
	p.ReadOnly = appendExisting(p.ReadOnly, filepath.Join(root, ".prime"))
	dotGit := filepath.Join(root, ".git")
	fi, err := os.Lstat(dotGit)
	switch {
	case err != nil:
	case fi.Mode().IsDir():
		p.protectGitDir(dotGit)
		p.protectGitlinks(root, dotGit)
	case fi.Mode().IsRegular():
		// A worktree or a submodule: the file names the git directory,
		// and the file itself must not be pointed elsewhere.
		p.ReadOnly = append(p.ReadOnly, dotGit)
		if dir := gitDirOf(dotGit); dir != "" {
			p.protectGitDir(dir)
			if r := resolved(dir); r != "" {
				p.protectGitlinks(root, r)
			}
		}
	}
	p.protectSubmodules(root, 0)
	return p
}

// protectGitlinks protects the .git of each submodule a git directory's
// index records, .gitmodules or not: git status runs git in each of them
// with the configuration its .git leads to.
func (p *Protected) protectGitlinks(worktree, gitDir string) {
	for _, rel := range gitlinks(filepath.Join(gitDir, "index")) {
		p.protectSubmodule(worktree, filepath.FromSlash(rel))
	}
}

// maxSubmoduleDepth bounds how deep submodules within submodules are
// followed (and the directories of .git/modules, whose submodule names may
// hold slashes).
const maxSubmoduleDepth = 8

// protectSubmodules protects the submodules that worktree's .gitmodules
// lists: git runs in each of them at the user's next "git status" in the
// project, with the submodule's configuration (its core.fsmonitor
// included), so the .git file that names a submodule's git directory is
// read-only, and a submodule's own .git directory is protected as the
// project's. Their git directories under .git/modules are protected by
// protectGitDir.
func (p *Protected) protectSubmodules(worktree string, depth int) {
	if depth >= maxSubmoduleDepth {
		return
	}
	for _, rel := range submodulePaths(filepath.Join(worktree, ".gitmodules")) {
		if sub := p.protectSubmodule(worktree, rel); sub != "" {
			p.protectSubmodules(sub, depth+1)
		}
	}
}

// protectSubmodule protects the .git of the submodule at rel in worktree
// and returns the submodule's directory, "" when there is none there.
func (p *Protected) protectSubmodule(worktree, rel string) string {
	sub := filepath.Join(worktree, rel)
	if !strings.HasPrefix(sub, worktree+string(filepath.Separator)) {
		return "" // a path out of the work tree is not git's either
	}
	dotGit := filepath.Join(sub, ".git")
	fi, err := os.Lstat(dotGit)
	switch {
	case err != nil:
		return ""
	case fi.Mode().IsRegular():
		if slices.Contains(p.ReadOnly, dotGit) {
			return ""
		}
		p.ReadOnly = appendExisting(p.ReadOnly, dotGit)
		if dir := gitDirOf(dotGit); dir != "" {
			p.protectGitDir(dir)
		}
	case fi.IsDir():
		p.protectGitDir(dotGit)
	default:
		return ""
	}
	return sub
}

// submodulePaths reads the "path = ..." entries of a .gitmodules file.
func submodulePaths(file string) []string {
	b, err := smallfile.Read(file, 1<<20)
	if err != nil {
		return nil
	}
	var out []string
	for line := range strings.SplitSeq(string(b), "\n") {
		key, value, ok := strings.Cut(strings.TrimSpace(line), "=")
		if ok && strings.TrimSpace(key) == "path" {
			if v := strings.Trim(strings.TrimSpace(value), `"`); v != "" {
				out = append(out, filepath.Clean(v))
			}
		}
	}
	return out
}

// protectGitDir adds a git directory's hooks and configuration, and, for a
// worktree's, the files that lead to the common directory and its own.
func (p *Protected) protectGitDir(dir string) {
	if dir = resolved(dir); dir == "" {
		return
	}
	if !slices.Contains(p.Pin, dir) {
		p.Pin = append(p.Pin, dir)
	}
	for _, name := range []string{"hooks", "config", "config.worktree", "commondir"} {
		p.ReadOnly = appendExisting(p.ReadOnly, filepath.Join(dir, name))
	}
	p.protectModules(filepath.Join(dir, "modules"), 0)
	b, err := smallfile.Read(filepath.Join(dir, "commondir"), 4096)
	if err != nil {
		return
	}
	common := strings.TrimSpace(string(b))
	if !filepath.IsAbs(common) {
		common = filepath.Join(dir, common)
	}
	if common = resolved(common); common != "" && common != dir {
		p.protectGitDir(common)
	}
}

// protectModules protects the submodules' git directories under a git
// directory's modules directory: each directory holding a HEAD is one (its
// own modules within it), the others are parts of a name with slashes.
func (p *Protected) protectModules(dir string, depth int) {
	if depth >= maxSubmoduleDepth {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if _, err := os.Lstat(filepath.Join(sub, "HEAD")); err == nil {
			p.protectGitDir(sub)
			continue
		}
		p.protectModules(sub, depth+1)
	}
}

// gitDirOf reads a .git file ("gitdir: path"); "" when it names none.
func gitDirOf(file string) string {
	b, err := smallfile.Read(file, 4096)
	if err != nil {
		return ""
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(file), dir)
	}
	return dir
}

// resolved is p with its links resolved, "" when it does not exist.
func resolved(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	if r, err = filepath.Abs(r); err != nil {
		return ""
	}
	return r
}

func appendExisting(list []string, p string) []string {
	if r := resolved(p); r != "" && !slices.Contains(list, r) {
		return append(list, r)
	}
	return list
}

// Planted returns what a command made, since before was taken (by
// [ProjectProtected] for the same project), that git or Prime will use
// outside the sandbox and that could not be mounted read-only because it
// was not there when the command started: a commondir or config.worktree
// in a git directory (git follows it to other configuration and hooks),
// a new .prime, and in a new repository the hooks that are not git's own
// samples.
func Planted(before, after Protected) []string {
	var out []string
	for _, p := range after.ReadOnly {
		if slices.Contains(before.ReadOnly, p) {
			continue
		}
		switch filepath.Base(p) {
		case "commondir", "config.worktree", ".prime", ".git":
			out = append(out, p)
		case "config":
			// A new submodule's configuration (git runs it at the
			// next git status); the project's own exists from the
			// start.
			if strings.Contains(p, string(filepath.Separator)+"modules"+string(filepath.Separator)) {
				out = append(out, p)
			}
		case "hooks":
			entries, _ := os.ReadDir(p)
			for _, e := range entries {
				if !strings.HasSuffix(e.Name(), ".sample") {
					out = append(out, filepath.Join(p, e.Name()))
				}
			}
		}
	}
	return out
}
