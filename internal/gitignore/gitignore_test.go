package gitignore

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// files maps an ignore file's directory ("" for the root) to its contents.
type files map[string]string

type check struct {
	path  string
	isDir bool
	want  bool
}

var cases = []struct {
	name   string
	files  files
	checks []check
}{
	{"basename at any depth", files{"": "*.log\n"}, []check{
		{"a.log", false, true},
		{"deep/er/b.log", false, true},
		{"a.log.txt", false, false},
		{"logs", true, false},
	}},
	{"comments blanks and escapes", files{"": "# comment\n\n\\#hash\n\\!bang\n"}, []check{
		{"# comment", false, false},
		{"#hash", false, true},
		{"!bang", false, true},
	}},
	{"trailing spaces", files{"": "trail   \nkeep\\ \n"}, []check{
		{"trail", false, true},
		{"keep ", false, true},
		{"keep", false, false},
	}},
	{"CRLF lines", files{"": "a.tmp\r\nb.tmp\r\n"}, []check{
		{"a.tmp", false, true},
		{"b.tmp", false, true},
	}},
	{"directory only", files{"": "build/\n"}, []check{
		{"build", true, true},
		{"build", false, false},
		{"sub/build", true, true},
	}},
	{"anchored by a leading slash", files{"": "/todo\n"}, []check{
		{"todo", false, true},
		{"sub/todo", false, false},
	}},
	{"anchored by a middle slash", files{"": "doc/frotz\n"}, []check{
		{"doc/frotz", false, true},
		{"a/doc/frotz", false, false},
	}},
	{"negation, last rule wins", files{"": "*.txt\n!keep.txt\n"}, []check{
		{"x.txt", false, true},
		{"keep.txt", false, false},
		{"sub/keep.txt", false, false},
	}},
	{"negation then exclusion", files{"": "!a.txt\n*.txt\n"}, []check{
		{"a.txt", false, true},
	}},
	{"leading globstar", files{"": "**/foo\n"}, []check{
		{"foo", false, true},
		{"x/y/foo", true, true},
	}},
	{"trailing globstar", files{"": "abc/**\n"}, []check{
		{"abc", true, false},
		{"abc/x", false, true},
		{"abc/y/z", false, true},
	}},
	{"middle globstar", files{"": "a/**/b\n"}, []check{
		{"a/b", false, true},
		{"a/x/b", false, true},
		{"a/x/y/b", false, true},
		{"x/a/b", false, false},
	}},
	{"nested file relative to its directory", files{"": "*.o\n", "sub": "/local\n!keep.o\n"}, []check{
		{"sub/local", false, true},
		{"local", false, false},
		{"sub/x/local", false, false},
		{"sub/keep.o", false, false},
		{"keep.o", false, true},
		{"other/keep.o", false, true},
	}},
	{"deeper file overrides", files{"": "!*.gen\n", "pkg": "*.gen\n"}, []check{
		{"pkg/a.gen", false, true},
		{"a.gen", false, false},
	}},
	{"character classes", files{"": "*.[oa]\nfile[0-9]\n"}, []check{
		{"x.o", false, true},
		{"x.a", false, true},
		{"x.c", false, false},
		{"file7", false, true},
		{"filex", false, false},
	}},
	{"question mark", files{"": "?.md\n"}, []check{
		{"a.md", false, true},
		{"ab.md", false, false},
	}},
	{"invalid line skipped", files{"": "[oops\nok\n"}, []check{
		{"[oops", false, false},
		{"ok", false, true},
	}},
	{"byte order mark", files{"": "\ufeffbom\n"}, []check{
		{"bom", false, true},
	}},
	{"star does not cross slash when anchored", files{"": "a/*.c\n"}, []check{
		{"a/x.c", false, true},
		{"a/b/x.c", false, false},
	}},
}

// matcherFor builds the matcher for a path's directory, adding the files
// from the root down as a walk does.
func matcherFor(fs files, p string) *Matcher {
	var m *Matcher
	m = m.Child("", []byte(fs[""]))
	dir := ""
	parts := strings.Split(p, "/")
	for _, part := range parts[:len(parts)-1] {
		if dir == "" {
			dir = part
		} else {
			dir += "/" + part
		}
		if data, ok := fs[dir]; ok {
			m = m.Child(dir, []byte(data))
		}
	}
	return m
}

func TestIgnored(t *testing.T) {
	for _, tc := range cases {
		for _, c := range tc.checks {
			if got := matcherFor(tc.files, c.path).Ignored(c.path, c.isDir); got != c.want {
				t.Errorf("%s: Ignored(%q, dir=%v) = %v, want %v", tc.name, c.path, c.isDir, got, c.want)
			}
		}
	}
}

// TestAgainstGit checks the table's expectations with git itself, so the
// table says what git does and not what we believe it does.
func TestAgainstGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	for _, tc := range cases {
		dir := t.TempDir()
		run(t, dir, "init", "-q")
		for d, data := range tc.files {
			if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, d, ".gitignore"), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range tc.checks {
			full := filepath.Join(dir, c.path)
			if c.isDir {
				if err := os.MkdirAll(full, 0o755); err != nil {
					t.Fatal(err)
				}
			} else {
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// No trailing slash: git sees that a directory is one on disk.
			arg := c.path
			cmd := exec.Command("git", "-c", "core.excludesFile=/dev/null", "check-ignore", "-q", "--no-index", "--", arg)
			cmd.Dir = dir
			err := cmd.Run()
			gitSays := err == nil
			if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
				t.Fatalf("git check-ignore: %v", err)
			}
			if gitSays != c.want {
				t.Errorf("%s: git says %q ignored=%v, the table says %v", tc.name, c.path, gitSays, c.want)
			}
			if c.isDir {
				os.RemoveAll(full)
			}
		}
	}
}

func run(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out.String())
	}
}

func TestNilMatcher(t *testing.T) {
	var m *Matcher
	if m.Ignored("x", false) {
		t.Error("nil matcher ignored a path")
	}
	if got := m.Child("", []byte("# only a comment\n\n")); got != nil {
		t.Error("a file without rules made a new matcher")
	}
}

func FuzzParse(f *testing.F) {
	f.Add("*.log\n!keep.log\n/build/\na/**/b\n", "a/b/keep.log", false)
	f.Fuzz(func(t *testing.T, data, p string, isDir bool) {
		var m *Matcher
		m = m.Child("", []byte(data))
		got := m.Ignored(p, isDir)
		// Appending a rule that re-includes everything always wins.
		if m.Child("", []byte("\n!*\n!**\n")).Ignored(p, isDir) && got {
			t.Fatalf("re-including everything left %q ignored", p)
		}
	})
}
