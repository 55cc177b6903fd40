package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.jsonl")
	if err := WriteFile(p, []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("two\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if string(got) != "two\n" || fi.Mode().Perm() != 0o640 {
		t.Errorf("got %q, mode %v", got, fi.Mode().Perm())
	}
	names, _ := os.ReadDir(dir)
	if len(names) != 1 {
		t.Errorf("temporary files left: %v", names)
	}
}

func TestWriteFileFailureLeavesOriginal(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("keep"), 0o600)
	// A directory where the file should go cannot be renamed over.
	target := filepath.Join(dir, "sub")
	os.Mkdir(target, 0o700)
	os.WriteFile(filepath.Join(target, "x"), nil, 0o600)
	if err := WriteFile(target, []byte("new"), 0o600); err == nil {
		t.Fatal("renamed a file over a non-empty directory")
	}
	names, _ := os.ReadDir(dir)
	if len(names) != 2 {
		t.Errorf("left behind: %v", names)
	}
	if err := WriteFile(filepath.Join(dir, "missing", "f"), nil, 0o600); err == nil {
		t.Error("wrote into a missing directory")
	}
}

// A write that fails midway leaves the old file and no temporary one.
func TestWriteFailsMidway(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("keep"), 0o600)
	err := Write(p, 0o600, func(w io.Writer) error {
		w.Write([]byte("half"))
		return errors.New("generator failed")
	})
	if err == nil {
		t.Fatal("a failed write succeeded")
	}
	got, _ := os.ReadFile(p)
	names, _ := os.ReadDir(dir)
	if string(got) != "keep" || len(names) != 1 {
		t.Errorf("after a failed write: %q, %d files", got, len(names))
	}
}

// Replace keeps the mode of the file it replaces and gives a new one perm.
func TestReplaceKeepsMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := Replace(p, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", fi.Mode().Perm())
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Replace(p, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if fi, _ := os.Stat(p); string(got) != "two" || fi.Mode().Perm() != 0o600 {
		t.Errorf("got %q, mode %v, want 0600 kept", got, fi.Mode().Perm())
	}
}
