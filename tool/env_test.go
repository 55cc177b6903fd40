package tool

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/internal/golden"
)

func names(tools []Tool) string {
	var n []string
	for _, t := range tools {
		n = append(n, t.Spec().Name)
	}
	return strings.Join(n, ",")
}

func TestSelect(t *testing.T) {
	all := Builtins(Env{CWD: "/work"})
	tests := []struct{ list, want string }{
		{"", "read,bash,edit,write"},
		{" , ", "read,bash,edit,write"},
		{"read", "read"},
		{"ls, read,grep", "ls,read,grep"},
		{"read,read,bash", "read,bash"},
		{"+grep", "read,bash,edit,write,grep"},
		{"+grep,+find,-bash", "read,edit,write,grep,find"},
		{"-read,-bash,-edit,-write", ""},
		{"+read", "read,bash,edit,write"},
		{"-ls", "read,bash,edit,write"},
		{"+ls,-ls,+ls", "read,bash,edit,write,ls"},
	}
	for _, tt := range tests {
		got, err := Select(all, tt.list)
		if err != nil {
			t.Errorf("Select(%q): %v", tt.list, err)
			continue
		}
		if names(got) != tt.want {
			t.Errorf("Select(%q) = %s, want %s", tt.list, names(got), tt.want)
		}
	}
	var b strings.Builder
	for _, list := range []string{"read,+grep", "nope", "+nope", "read,Grep", "+", "-,read"} {
		_, err := Select(all, list)
		if err == nil {
			t.Errorf("Select(%q): no error", list)
			continue
		}
		b.WriteString(list + "\n" + err.Error() + "\n\n")
	}
	golden.Check(t, "select-errors.golden", b.String())
}

func TestResolve(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	env := Env{CWD: "/work/proj"}
	tests := []struct{ in, want string }{
		{"a.go", "/work/proj/a.go"},
		{"./sub/../b.go", "/work/proj/b.go"},
		{"/etc/hosts", "/etc/hosts"},
		{"@src/x.go", "/work/proj/src/x.go"},
		{"@/abs", "/abs"},
		{"~", home},
		{"~/notes.md", filepath.Join(home, "notes.md")},
		{"~user/x", "/work/proj/~user/x"},
		{"my\u00a0file\u202f.txt", "/work/proj/my file .txt"},
		{"file:///tmp/a%20b.txt", "/tmp/a b.txt"},
		{"file://localhost/tmp/x", "/tmp/x"},
		{"", "/work/proj"},
		{"..", "/work"},
	}
	for _, tt := range tests {
		got, err := env.resolve(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("resolve(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"file://other/x", "file://%zz"} {
		if _, err := env.resolve(in); err == nil {
			t.Errorf("resolve(%q): no error", in)
		}
	}
	if _, err := (Env{CWD: "rel"}).resolve("a"); err == nil {
		t.Error("a relative CWD was accepted")
	}
}

func TestCanonical(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	realDir, _ := filepath.EvalSymlinks(real)
	if got := canonical(filepath.Join(dir, "link", "new", "file.txt")); got != filepath.Join(realDir, "new", "file.txt") {
		t.Errorf("canonical through a link = %s", got)
	}
	env := Env{CWD: dir}
	for _, name := range []string{"read", "write", "edit"} {
		pt, ok := toolNamed(t, env, name).(PathTool)
		if !ok {
			t.Fatalf("%s is no PathTool", name)
		}
		a := pt.Paths([]byte(`{"path":"link/f.txt"}`))
		b := pt.Paths([]byte(`{"path":"real/./f.txt"}`))
		if len(a) != 1 || len(b) != 1 || a[0] != b[0] || a[0] != filepath.Join(realDir, "f.txt") {
			t.Errorf("%s: Paths %v and %v, want both %s", name, a, b, filepath.Join(realDir, "f.txt"))
		}
		if got := pt.Paths([]byte(`not json`)); got != nil {
			t.Errorf("%s: Paths of bad arguments = %v", name, got)
		}
	}
}

func TestAbortedError(t *testing.T) {
	err := &abortedError{abortedText, errors.New("cause")}
	if !errors.Is(err, ErrAborted) || err.Error() != abortedText || errors.Unwrap(err).Error() != "cause" {
		t.Errorf("abortedError: %v", err)
	}
}
