package settings

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/prime-agent/prime/internal/agentdir"
)

// AgentDirEnv is the environment variable that moves Prime's agent
// directory (pi's is PI_CODING_AGENT_DIR).
const AgentDirEnv = agentdir.Env

// DefaultAgentDir returns Prime's agent directory: $PRIME_CODING_AGENT_DIR
// when set (a leading ~ is the home directory), else ~/.prime/agent. The
// home directory is $HOME, or the system's idea of it when HOME is unset.
func DefaultAgentDir(getenv func(string) string) (string, error) {
	return agentdir.Find(getenv)
}

// SessionsDir returns the directory holding the sessions started in cwd:
// agentDir/sessions/--<cwd encoded>--. cwd should be absolute.
func SessionsDir(agentDir, cwd string) string {
	return filepath.Join(agentDir, "sessions", EncodeCWD(cwd))
}

// EncodeCWD turns a working directory into the name of its sessions
// directory, as pi does: one leading slash or backslash dropped, every
// other slash, backslash and colon replaced by '-', and the result wrapped
// in "--". /home/ann/proj gives --home-ann-proj--; C:\a\b gives --C--a-b--.
func EncodeCWD(cwd string) string {
	cwd = strings.TrimPrefix(cwd, "/")
	if len(cwd) == len(strings.TrimPrefix(cwd, `\`))+1 {
		cwd = cwd[1:]
	}
	return "--" + strings.NewReplacer("/", "-", `\`, "-", ":", "-").Replace(cwd) + "--"
}

// FindProject returns the project directory for a command started in dir:
// the nearest of dir and its ancestors that holds a .prime/agent
// directory, or dir itself when none does (so a first project setting is
// written where the user stands). The agent directory's own parent (the
// home directory, normally) is never taken for a project, since its
// .prime/agent holds the global settings.
func FindProject(dir, agentDir string) (string, error) {
	start, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := start; ; {
		cand := filepath.Join(d, projectSubdir)
		if fi, err := os.Stat(cand); err == nil && fi.IsDir() && !sameDir(cand, agentDir) {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return start, nil
		}
		d = parent
	}
}

// sameDir reports whether a and b are the same directory: the same file
// when both exist, else the same cleaned absolute path.
func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	return canonicalDir(a) == canonicalDir(b)
}

// canonicalDir makes dir absolute and clean and resolves its symbolic
// links, as far as it exists.
func canonicalDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// writeTarget returns the file a write to path should replace: path
// itself, or, when path is a symbolic link (a settings file kept with the
// user's dotfiles), the file it points to, so the link survives the write.
func writeTarget(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return path, nil
	}
	target, err := filepath.EvalSymlinks(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%s is a symbolic link to a missing file", path)
	}
	return target, err
}
