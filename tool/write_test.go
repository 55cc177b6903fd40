package tool

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/prime-agent/prime/internal/golden"
)

func TestWrite(t *testing.T) {
	env := testEnv(t)
	writeFile(t, env.CWD, "old.txt", "old content that is longer\n")
	if err := os.Chmod(filepath.Join(env.CWD, "old.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(env.CWD, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, env.CWD, "afile", "x")
	tests := []struct{ label, args, path, want string }{
		{"a new file", `{"path":"new.txt","content":"hello\n"}`, "new.txt", "hello\n"},
		{"parent directories made", `{"path":"a/b/c.txt","content":"deep"}`, "a/b/c.txt", "deep"},
		{"replacing a file", `{"path":"old.txt","content":"new"}`, "old.txt", "new"},
		{"empty content", `{"path":"empty.txt","content":""}`, "empty.txt", ""},
		{"a multi-byte character", `{"path":"one.txt","content":"é"}`, "one.txt", "é"},
		{"a directory", `{"path":"adir","content":"x"}`, "", ""},
		{"a file in the way of a directory", `{"path":"afile/x.txt","content":"x"}`, "", ""},
	}
	tr := newTranscript(env)
	for _, tt := range tests {
		res, err := call(t, context.Background(), env, "write", tt.args)
		tr.add(tt.label, res, err)
		if tt.path != "" {
			if err != nil {
				t.Errorf("%s: %v", tt.label, err)
			} else if got := readFile(t, filepath.Join(env.CWD, tt.path)); got != tt.want {
				t.Errorf("%s: file %q, want %q", tt.label, got, tt.want)
			}
		} else if err == nil {
			t.Errorf("%s: no error", tt.label)
		}
	}
	golden.Check(t, "write.golden", tr.String())
	if st, _ := os.Stat(filepath.Join(env.CWD, "old.txt")); st.Mode().Perm() != 0o600 {
		t.Errorf("replaced file mode %v, want 0600", st.Mode().Perm())
	}
	if st, _ := os.Stat(filepath.Join(env.CWD, "new.txt")); st.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", st.Mode().Perm())
	}
}
