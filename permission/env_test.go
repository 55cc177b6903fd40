package permission

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestEnvPolicySecret(t *testing.T) {
	tests := []struct {
		name   string
		policy EnvPolicy
		secret []string
		kept   []string
	}{
		{name: "defaults",
			secret: []string{"ANTHROPIC_API_KEY", "openai_api_key", "GITHUB_TOKEN", "CLIENT_SECRET", "DB_PASSWORD",
				"AWS_ACCESS_KEY_ID", "AWS_PROFILE", "STRIPE_SECRET_KEY", "GOOGLE_APPLICATION_CREDENTIALS"},
			kept: []string{"PATH", "HOME", "TOKENIZERS_PARALLELISM", "API_KEY_FILE_HINT", "GOPATH", "SSH_AUTH_SOCK"}},
		{name: "exclude adds names and globs", policy: EnvPolicy{Exclude: []string{"OLLAMA_KEY", "MY_*"}},
			secret: []string{"OLLAMA_KEY", "MY_THING", "GITHUB_TOKEN"}, kept: []string{"OLLAMA_HOST", "PATH"}},
		{name: "include wins over the patterns", policy: EnvPolicy{Include: []string{"GITHUB_TOKEN", " npm_* "}},
			secret: []string{"GITLAB_TOKEN"}, kept: []string{"GITHUB_TOKEN", "NPM_TOKEN", "PATH"}},
		{name: "inherit keeps all", policy: EnvPolicy{Inherit: true}, kept: []string{"ANTHROPIC_API_KEY", "AWS_PROFILE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, n := range tt.secret {
				if !tt.policy.Secret(n) {
					t.Errorf("%s is kept, want removed", n)
				}
			}
			for _, n := range tt.kept {
				if tt.policy.Secret(n) {
					t.Errorf("%s is removed, want kept", n)
				}
			}
		})
	}
}

func TestEnvPolicyFilter(t *testing.T) {
	kept, removed := EnvPolicy{}.Filter([]string{"PATH=/bin", "OPENAI_API_KEY=sk=1", "NOVALUE", "X_TOKEN="})
	if !slices.Equal(kept, []string{"PATH=/bin", "NOVALUE"}) || !slices.Equal(removed, []string{"OPENAI_API_KEY", "X_TOKEN"}) {
		t.Errorf("kept %q, removed %q", kept, removed)
	}
}

func TestSplitList(t *testing.T) {
	if got := SplitList(" A_*, B\tC,,"); !slices.Equal(got, []string{"A_*", "B", "C"}) {
		t.Errorf("SplitList = %q", got)
	}
}

func TestScopeCheck(t *testing.T) {
	root := t.TempDir()
	project, other := root+"/project", root+"/other"
	for _, d := range []string{project + "/sub", other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(project+"/.env.secret", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// A file on the deny list under another name: a hard link in the
	// project (as a case-insensitive file system gives .GIT for .git).
	netrc := other + "/.netrc"
	if err := os.WriteFile(netrc, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(netrc, project+"/sub/alias"); err != nil {
		t.Fatal(err)
	}
	s := &Scope{Write: []string{project}, Deny: []string{project + "/.env.secret", netrc}}
	tests := []struct {
		path   string
		ok     bool
		denied bool
	}{
		{project + "/a.go", true, false},
		{project + "/sub/new/b.go", true, false},
		{project, true, false},
		{project + "x/a.go", false, false},
		{other + "/a.go", false, false},
		{"/etc/passwd", false, false},
		{project + "/.env.secret", false, true},
		{project + "/sub/alias", false, true},
	}
	for _, tt := range tests {
		err := s.Check(tt.path, tt.path)
		var oe *OutsideError
		if (err == nil) != tt.ok || err != nil && (!errors.As(err, &oe) || oe.Denied != tt.denied) {
			t.Errorf("Check(%s) = %v, want ok=%v denied=%v", tt.path, err, tt.ok, tt.denied)
		}
	}
}

// FuzzEnvPolicy: any setting's list and any variable name are read
// without a panic, an included name is never removed, and a name the
// defaults remove stays removed whatever else is excluded.
func FuzzEnvPolicy(f *testing.F) {
	f.Add("GITHUB_TOKEN, npm_*", "MY_*,[", "GITHUB_TOKEN")
	f.Add("", "", "ANTHROPIC_API_KEY")
	f.Add("*", "\\", "PATH")
	f.Fuzz(func(t *testing.T, include, exclude, name string) {
		p := EnvPolicy{Include: SplitList(include), Exclude: SplitList(exclude)}
		secret := p.Secret(name)
		if matchAny(p.Include, name) && secret {
			t.Errorf("%q is included by %q yet removed", name, include)
		}
		if !matchAny(p.Include, name) && matchAny(DefaultSecretPatterns, name) && !secret {
			t.Errorf("%q matches a default pattern yet is kept", name)
		}
		for _, e := range ExpandPaths(exclude, "/home/u", "/p") {
			if !filepath.IsAbs(e) {
				t.Errorf("ExpandPaths(%q) gave %q", exclude, e)
			}
		}
	})
}

func TestProbeReportsAFailingTrampoline(t *testing.T) {
	for _, network := range []bool{false, true} {
		err := (&Sandbox{Exe: "/bin/false", Network: network}).Probe()
		if err == nil {
			t.Errorf("network %v: a trampoline that fails probes fine", network)
		}
	}
}
