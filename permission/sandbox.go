package permission

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// sandboxEnv names the variable that carries a confined command's
// [sandboxConfig] from Prime to the trampoline (see [Trampoline]).
const sandboxEnv = "PRIME_SANDBOX"

// Sandbox is the confinement of the commands the bash tool runs: they may
// read everywhere except DenyRead, write only in Write, and reach no
// network but their own loopback unless Network is set. Prime applies it
// in the child (see [Trampoline]); Prime itself is never confined.
type Sandbox struct {
	// Exe is the program that confines a command before running its shell:
	// Prime's own binary (os.Executable), whose main calls [Trampoline]
	// first.
	Exe string
	// Write are the directories commands may change (with what is in them).
	Write []string
	// DenyRead are files and directories commands may not read.
	DenyRead []string
	// Network lets commands use the network (no network namespace).
	Network bool
	// Project, when set, is the project whose git hooks and configuration
	// and Prime settings commands see read-only (see [ProjectProtected],
	// found again for each command), mounted so in the command's own
	// mount namespace.
	Project string
	// ReadOnly marks the sandbox of read-only mode (for the note on a
	// command it stopped).
	ReadOnly bool
}

// sandboxConfig is what the trampoline is told.
type sandboxConfig struct {
	Shell    string   `json:"shell"`
	Write    []string `json:"write"`
	DenyRead []string `json:"denyRead"`
	Network  bool     `json:"network"`
	// ReadOnly and Pin: see [Protected].
	ReadOnly []string `json:"readOnly,omitempty"`
	Pin      []string `json:"pin,omitempty"`
	// Probe: check that everything can be applied, then exit 0.
	Probe bool `json:"probe,omitzero"`
}

// DefaultDenyRead are the credentials under home a confined command may
// not read, with the agent directory's auth file, and the terminals: a
// command in Prime's session could otherwise read what the user types to
// Prime, or type into it (TIOCSTI) and run a command unconfined.
func DefaultDenyRead(home, agentDir string) []string {
	out := []string{"/dev/tty", "/dev/pts", "/dev/console"}
	if home != "" {
		for _, p := range []string{".ssh", ".aws", ".gnupg", ".config/gcloud", ".azure", ".kube", ".docker",
			".netrc", ".git-credentials", ".config/gh"} {
			out = append(out, filepath.Join(home, p))
		}
	}
	if agentDir != "" {
		out = append(out, filepath.Join(agentDir, "auth.json"))
	}
	return out
}

// DefaultWrite are the directories a confined command may write besides
// the project: the temporary directories and the devices every shell
// writes to.
func DefaultWrite() []string {
	out := []string{"/tmp", "/var/tmp", "/dev/shm", "/dev/null", "/dev/zero", "/dev/full"}
	if t := os.TempDir(); !containsPath(out, t) {
		out = append(out, t)
	}
	return out
}

// ExpandPaths reads a setting's list of paths: ~ is home, relative paths
// are under base.
func ExpandPaths(list, home, base string) []string {
	var out []string
	for _, p := range SplitList(list) {
		switch {
		case p == "~":
			p = home
		case strings.HasPrefix(p, "~/"):
			p = filepath.Join(home, p[2:])
		case !filepath.IsAbs(p):
			p = filepath.Join(base, p)
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}

// realPaths returns the paths that exist, symbolic links resolved.
func realPaths(paths []string) []string {
	var out []string
	for _, p := range paths {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			if r, err = filepath.Abs(r); err == nil && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

func containsPath(list []string, p string) bool {
	for _, q := range list {
		if filepath.Clean(q) == filepath.Clean(p) {
			return true
		}
	}
	return false
}

// within reports whether path is dir or inside it (both clean, absolute).
func within(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// deniedNote is added to the result of a confined command that failed in
// a way the sandbox may have caused, so the model can adapt.
const deniedNote = "The command ran in Prime's sandbox: it may write only in the project and temporary directories, " +
	"may not read credentials (~/.ssh, ~/.aws, ...), and has no network but its own loopback. "

// readOnlyNote is deniedNote for read-only mode.
const readOnlyNote = "The command ran in Prime's read-only sandbox: it may change no file, " +
	"may not read credentials (~/.ssh, ~/.aws, ...), and has no network but its own loopback. "

// Explain returns a note for the result of a confined command that failed,
// when its output shows a failure the sandbox causes (a denied path, a
// refused connection, no network); "" otherwise.
func (s *Sandbox) Explain(output string) string {
	var why []string
	if strings.Contains(output, "Permission denied") || strings.Contains(output, "Operation not permitted") ||
		s.ReadOnly && strings.Contains(output, "Read-only file system") || strings.Contains(output, "EACCES") || strings.Contains(output, "EPERM") {
		why = append(why, "\"Permission denied\" or \"Operation not permitted\" above is likely the sandbox refusing a path outside what it allows")
	}
	if !s.ReadOnly && s.Project != "" && (strings.Contains(output, "Read-only file system") ||
		strings.Contains(output, "Device or resource busy") || strings.Contains(output, "Invalid cross-device link") ||
		strings.Contains(output, "EROFS") || strings.Contains(output, "EBUSY") || strings.Contains(output, "EXDEV")) {
		why = append(why, "the project's .git hooks and configuration and its .prime settings are read-only in the sandbox "+
			"(\"Read-only file system\", or \"Device or resource busy\" for moving or removing them, \"Invalid cross-device link\" "+
			"for linking them), because git and Prime run what they hold outside it")
	}
	if !s.Network {
		for _, m := range []string{"Connection refused", "Network is unreachable", "Could not resolve", "Temporary failure in name resolution",
			"Name or service not known", "ECONNREFUSED", "ENETUNREACH", "getaddrinfo", "No route to host"} {
			if strings.Contains(output, m) {
				why = append(why, "the network failure above is the sandbox: commands have no network (even loopback servers outside the sandbox are unreachable)")
				break
			}
		}
	}
	if len(why) == 0 {
		return ""
	}
	if s.ReadOnly {
		return readOnlyNote + strings.Join(why, "; ") + ". Do not try to get around it; if the task needs changes, say so to the user, " +
			"who can leave read-only mode (/permissions)."
	}
	return deniedNote + strings.Join(why, "; ") + ". Do not try to get around it; if the task needs more, say so to the user, " +
		"who can run Prime with --permission-mode full or widen permissions.allowWrite / permissions.network."
}
