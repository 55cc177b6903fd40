package permission

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// TestGitlinks reads the submodules of indexes git writes, in each index
// version, among ordinary files whose paths share prefixes (version 4
// compresses them).
func TestGitlinks(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for _, version := range []int{2, 3, 4} {
		t.Run(strconv.Itoa(version), func(t *testing.T) {
			dir := t.TempDir()
			git := func(args ...string) {
				t.Helper()
				cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
			git("init", "-q")
			for _, name := range []string{"a/file.go", "a/file_test.go", "b.txt"} {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
				os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644)
			}
			git("add", ".")
			git("commit", "-q", "-m", "one")
			sha := "0123456789abcdef0123456789abcdef01234567"
			git("update-index", "--add", "--cacheinfo", "160000,"+sha+",a/sub")
			git("update-index", "--add", "--cacheinfo", "160000,"+sha+",deep/er/sub two")
			git("update-index", "--index-version", strconv.Itoa(version))
			if version == 3 {
				git("update-index", "--skip-worktree", "b.txt") // an extended flag
			}
			got := gitlinks(filepath.Join(dir, ".git", "index"))
			if want := []string{"a/sub", "deep/er/sub two"}; !slices.Equal(got, want) {
				t.Errorf("gitlinks = %q, want %q", got, want)
			}
		})
	}
}

func FuzzGitlinks(f *testing.F) {
	f.Add([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x01" + string(make([]byte, 62)) + "a\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte("DIRC\x00\x00\x00\x04\x00\x00\x00\x02" + string(make([]byte, 62)) + "\x00ab\x00" + string(make([]byte, 62)) + "\x81\x01c\x00"))
	f.Add([]byte("DIRC\x00\x00\x00\x03\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, _ := readGitlinks(bufio.NewReader(bytes.NewReader(data)))
		if len(out) > maxGitlinks {
			t.Fatalf("%d gitlinks", len(out))
		}
		for _, p := range out {
			if p == "" {
				t.Fatal("an empty path")
			}
		}
	})
}
