package tool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/permission"
)

// denyFixture is a project holding a secret directory and a link to it,
// with the deny list naming the secret.
func denyFixture(t *testing.T) (Env, context.Context) {
	t.Helper()
	env := testEnv(t)
	cwd, err := filepath.EvalSymlinks(env.CWD)
	if err != nil {
		t.Fatal(err)
	}
	env.CWD = cwd
	for p, text := range map[string]string{
		"src/a.go":            "package a // needle\n",
		"src/b.go":            "package b\n",
		"secret/id_rsa":       "needle PRIVATE KEY\n",
		"secret/deeper/x.txt": "needle\n",
		"notes.txt":           "needle in notes\n",
	} {
		p = filepath.Join(cwd, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(cwd, "secret", "id_rsa"), filepath.Join(cwd, "key")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(cwd, "secret"), filepath.Join(cwd, "secret-dir")); err != nil {
		t.Fatal(err)
	}
	ctx := permission.WithConfinement(context.Background(), permission.Confinement{DenyRead: []string{filepath.Join(cwd, "secret")}})
	return env, ctx
}

// TestReadToolsKeepToTheDenyList: given the deny list, read and ls refuse
// a denied path (through a link too, which the policy's check before the
// call may not have seen), and grep and find walk past it.
func TestReadToolsKeepToTheDenyList(t *testing.T) {
	env, ctx := denyFixture(t)
	tests := []struct {
		tool, args string
		denied     bool   // the call fails with a ReadDeniedError
		want, not  string // in the output, and not
	}{
		{"read", `{"path":"secret/id_rsa"}`, true, "secret/id_rsa is on the sandbox's deny list", ""},
		{"read", `{"path":"key"}`, true, "(it leads to " + filepath.Join(env.CWD, "secret", "id_rsa") + ")", ""},
		{"read", `{"path":"src/../secret/deeper/x.txt"}`, true, "deny list", ""},
		{"read", `{"path":"notes.txt"}`, false, "needle in notes", ""},
		{"ls", `{"path":"secret-dir"}`, true, "deny list", ""},
		{"ls", `{}`, false, "secret/", ""},
		{"grep", `{"pattern":"needle"}`, false, "notes.txt", "PRIVATE"},
		{"grep", `{"pattern":"needle","path":"secret-dir/id_rsa"}`, true, "deny list", ""},
		{"grep", `{"pattern":"needle","path":"src"}`, false, "a.go", "secret"},
		{"find", `{"pattern":"*"}`, false, "src/a.go", "id_rsa"},
		{"find", `{"pattern":"**/x.txt"}`, false, "No files match", ""},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			res, err := call(t, ctx, env, tt.tool, tt.args)
			var de *ReadDeniedError
			if tt.denied != errors.As(err, &de) {
				t.Fatalf("err %v; want denied %v", err, tt.denied)
			}
			out := resultText(res)
			if err != nil {
				out = err.Error()
			}
			if !strings.Contains(out, tt.want) || tt.not != "" && strings.Contains(out, tt.not) {
				t.Errorf("output %q; want %q and not %q", out, tt.want, tt.not)
			}
		})
	}
	// Without the deny list (full mode, or approved), all of it is read.
	if out := mustCall(t, env, "grep", `{"pattern":"needle"}`); !strings.Contains(out, "PRIVATE") {
		t.Errorf("grep without a deny list: %q", out)
	}
}
