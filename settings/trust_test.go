package settings

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeysChooseProjectRule pins that every key, plain or structured,
// says whether an untrusted project may set it, and which keys may not.
func TestKeysChooseProjectRule(t *testing.T) {
	var needTrust []string
	for _, d := range knownKeys {
		if d.project != anyProject && d.project != trustedProject && d.project != tighterProject {
			t.Errorf("%s: no project rule", d.name)
		}
		if d.project == tighterProject && (d.kind != kindEnum || len(d.values) < 2) {
			t.Errorf("%s: a stricter-only key must be an enum from loosest to strictest", d.name)
		}
		if d.project == trustedProject {
			needTrust = append(needTrust, d.name)
		}
	}
	for _, k := range structuredKeys {
		if k.project != anyProject && k.project != trustedProject {
			t.Errorf("%s: no project rule", k.name)
		}
		if k.project == trustedProject {
			needTrust = append(needTrust, k.name)
		}
	}
	// The audit: only these can run code or send data elsewhere. A model
	// is chosen among the user's own configured providers (endpoints and
	// keys live in the global models.json only), so it may be set. The
	// permission keys that loosen the sandbox or let secrets into
	// commands need trust too.
	want := "shellPath shellEnvironment.include shellEnvironment.inheritSecrets permissions.network permissions.allowWrite hooks trustedProjects"
	if got := strings.Join(needTrust, " "); got != want {
		t.Errorf("keys needing trust = %q, want %q", got, want)
	}
	for _, k := range Keys() {
		if k.NeedsTrust != strings.Contains(" "+want+" ", " "+k.Name+" ") {
			t.Errorf("Keys(): %s NeedsTrust = %v", k.Name, k.NeedsTrust)
		}
	}
}

// trustEnv is a home, a git checkout inside it, a directory outside both,
// and the agent directory.
type trustEnv struct {
	root, home, agent string
}

func newTrustEnv(t *testing.T) trustEnv {
	t.Helper()
	root := t.TempDir()
	e := trustEnv{root: root, home: filepath.Join(root, "home"), agent: filepath.Join(root, "home", ".prime", "agent")}
	mkdir(t, e.agent)
	return e
}

func mkdir(t *testing.T, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

// project writes dir/.prime/agent/settings.json.
func writeProject(t *testing.T, dir, text string) string {
	t.Helper()
	mkdir(t, filepath.Join(dir, ".prime", "agent"))
	f := filepath.Join(dir, ".prime", "agent", "settings.json")
	writeFile(t, f, text)
	return f
}

func (e trustEnv) load(t *testing.T, work string) *Settings {
	t.Helper()
	mkdir(t, work)
	proj, err := FindProject(work, e.agent)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(context.Background(), Options{AgentDir: e.agent, ProjectDir: proj, WorkDir: work, Home: e.home})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestUntrustedProjectCannotChooseTheShell(t *testing.T) {
	const evil = "{\n  \"shellPath\": \"./evil.sh\",\n  \"compaction\": {\"enabled\": false}\n}"
	tests := []struct {
		name      string
		global    string
		trust     bool
		wantShell string
		wantFrom  Scope
	}{
		{name: "untrusted", wantShell: "", wantFrom: Default},
		{name: "untrusted, the user's own shell stays", global: `{"shellPath": "/bin/zsh"}`, wantShell: "/bin/zsh", wantFrom: Global},
		{name: "trusted", trust: true, wantShell: "./evil.sh", wantFrom: Project},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTrustEnv(t)
			repo := filepath.Join(e.root, "repo")
			file := writeProject(t, repo, evil)
			g := tt.global
			if tt.trust {
				g = `{"trustedProjects": [` + quoteValue(repo) + `]}`
			}
			if g != "" {
				writeFile(t, filepath.Join(e.agent, "settings.json"), g)
			}
			s := e.load(t, repo)
			if got := s.Conversation().ShellPath; got != tt.wantShell {
				t.Errorf("ShellPath = %q, want %q", got, tt.wantShell)
			}
			if s.Compaction("").Enabled {
				t.Errorf("compaction.enabled: the project's false should apply whether trusted or not")
			}
			var v Value
			for _, x := range s.Values("") {
				if x.Key == keyShellPath {
					v = x
				}
			}
			if v.Source.Scope != tt.wantFrom {
				t.Errorf("Values: shellPath from %v, want %v", v.Source.Scope, tt.wantFrom)
			}
			probs := problemText(s)
			if tt.trust {
				if v.Ignored != nil || strings.Contains(probs, "shellPath") {
					t.Errorf("trusted: ignored %+v, problems %s", v.Ignored, probs)
				}
				return
			}
			if v.Ignored == nil || v.Ignored.Value != "./evil.sh" || v.Ignored.Source.File != file {
				t.Errorf("Values: shellPath ignored = %+v, want ./evil.sh from %s", v.Ignored, file)
			}
			want := file + `:2:16: shellPath: "./evil.sh": the project ` + repo + ` is not trusted`
			if !strings.Contains(probs, want) || !strings.Contains(probs, `prime trust `+repo) {
				t.Errorf("problems:\n%s\nwant one containing %q", probs, want)
			}
		})
	}
}

func problemText(s *Settings) string {
	var b strings.Builder
	for _, p := range s.Problems() {
		b.WriteString(p.Error() + "\n")
	}
	return b.String()
}

func TestAncestorProjectSettings(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, e trustEnv) (projectDir, workDir string)
		apply bool
	}{
		{name: "the working directory itself, outside home", apply: true, setup: func(t *testing.T, e trustEnv) (string, string) {
			d := filepath.Join(e.root, "srv", "app")
			return d, d
		}},
		{name: "an ancestor outside home and git", setup: func(t *testing.T, e trustEnv) (string, string) {
			return filepath.Join(e.root, "tmp"), filepath.Join(e.root, "tmp", "clone", "src")
		}},
		{name: "an ancestor above the git root", setup: func(t *testing.T, e trustEnv) (string, string) {
			mkdir(t, filepath.Join(e.root, "tmp", "clone", ".git"))
			return filepath.Join(e.root, "tmp"), filepath.Join(e.root, "tmp", "clone", "src")
		}},
		{name: "an ancestor inside the git checkout", apply: true, setup: func(t *testing.T, e trustEnv) (string, string) {
			mkdir(t, filepath.Join(e.root, "tmp", "clone", ".git"))
			return filepath.Join(e.root, "tmp", "clone"), filepath.Join(e.root, "tmp", "clone", "src", "deep")
		}},
		{name: "an ancestor inside home", apply: true, setup: func(t *testing.T, e trustEnv) (string, string) {
			return filepath.Join(e.home, "src"), filepath.Join(e.home, "src", "app")
		}},
		{name: "an ancestor outside home, trusted", apply: true, setup: func(t *testing.T, e trustEnv) (string, string) {
			p := filepath.Join(e.root, "tmp")
			writeFile(t, filepath.Join(e.agent, "settings.json"), `{"trustedProjects": [`+quoteValue(p)+`]}`)
			return p, filepath.Join(p, "x")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTrustEnv(t)
			proj, work := tt.setup(t, e)
			file := writeProject(t, proj, `{"compaction": {"enabled": false}, "steeringMode": "all"}`)
			s := e.load(t, work)
			if s.ProjectDir() != proj {
				t.Fatalf("project = %s, want %s", s.ProjectDir(), proj)
			}
			applied := !s.Compaction("").Enabled
			if applied != tt.apply {
				t.Fatalf("project settings applied = %v, want %v; problems:\n%s", applied, tt.apply, problemText(s))
			}
			probs := problemText(s)
			if tt.apply {
				if probs != "" || len(s.Ignored()) != 0 {
					t.Errorf("problems %s, ignored %+v", probs, s.Ignored())
				}
				return
			}
			if want := file + ": is ignored whole: it was found in " + proj + ", above the working directory"; !strings.Contains(probs, want) {
				t.Errorf("problems:\n%s\nwant %q", probs, want)
			}
			if ig := s.Ignored(); len(ig) != 2 || ig[0].Key != keyCompactionEnabled || ig[1].Key != keySteeringMode {
				t.Errorf("Ignored = %+v", ig)
			}
		})
	}
}

func TestFileWritableByOthersIsIgnored(t *testing.T) {
	tests := []struct {
		name   string
		global bool
		unsafe func(t *testing.T, file string)
	}{
		{name: "project file mode 0666", unsafe: func(t *testing.T, f string) { chmodT(t, f, 0o666) }},
		{name: "project directory mode 0777", unsafe: func(t *testing.T, f string) { chmodT(t, filepath.Dir(f), 0o777) }},
		{name: "global file mode 0646", global: true, unsafe: func(t *testing.T, f string) { chmodT(t, f, 0o646) }},
		{name: "project file of another user", unsafe: func(t *testing.T, f string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a file to another user")
			}
			if err := os.Chown(f, 4242, 4242); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTrustEnv(t)
			repo := filepath.Join(e.root, "repo")
			const text = `{"compaction": {"keepRecentTokens": 1234}}`
			file := filepath.Join(e.agent, "settings.json")
			if tt.global {
				writeFile(t, file, text)
			} else {
				file = writeProject(t, repo, text)
			}
			tt.unsafe(t, file)
			s := e.load(t, repo)
			if got := s.Compaction("").KeepRecentTokens; got != 20000 {
				t.Errorf("keepRecentTokens = %d, want the default: the file must be ignored", got)
			}
			ps := s.Problems()
			if len(ps) != 1 || !ps[0].Unsafe || ps[0].File != file || !strings.Contains(ps[0].Error(), "is ignored whole") ||
				!strings.Contains(ps[0].Error(), "another user could choose what Prime runs") {
				t.Errorf("problems = %s", problemText(s))
			}
		})
	}
}

func chmodT(t *testing.T, p string, m os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, m); err != nil {
		t.Fatal(err)
	}
}

// TestUntrustedProjectOnlyTightensPermissions: a project may turn the
// sandbox on and keep more variables out of commands, but not turn the
// sandbox off, open the network or let secrets in unless trusted.
func TestUntrustedProjectOnlyTightensPermissions(t *testing.T) {
	tests := []struct {
		name, global, project string
		trust                 bool
		want                  PermissionSettings
		ignored               string // a key the problems must name
	}{
		{name: "project turns the sandbox on", global: `{"permissions": {"mode": "full"}}`, project: `{"permissions": {"mode": "sandbox"}}`,
			want: PermissionSettings{Mode: "sandbox"}},
		{name: "project makes it read-only", project: `{"permissions": {"mode": "read-only"}}`,
			want: PermissionSettings{Mode: "read-only"}},
		{name: "project cannot ask instead of confining", project: `{"permissions": {"mode": "ask"}}`,
			want: PermissionSettings{Mode: "sandbox"}, ignored: "permissions.mode"},
		{name: "project cannot turn it off", global: `{"permissions": {"mode": "sandbox"}}`, project: `{"permissions": {"mode": "full"}}`,
			want: PermissionSettings{Mode: "sandbox"}, ignored: "permissions.mode"},
		{name: "trusted project may turn it off", global: `{"permissions": {"mode": "sandbox"}}`, project: `{"permissions": {"mode": "full"}}`,
			trust: true, want: PermissionSettings{Mode: "full"}},
		{name: "project keeps more out, cannot let secrets in or open the network",
			project: `{"shellEnvironment": {"exclude": "MY_*", "include": "GITHUB_TOKEN", "inheritSecrets": true}, "permissions": {"network": true, "allowWrite": "~"}}`,
			want:    PermissionSettings{Mode: "sandbox", EnvExclude: "MY_*"}, ignored: "shellEnvironment.include"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTrustEnv(t)
			repo := filepath.Join(e.root, "repo")
			writeProject(t, repo, tt.project)
			g := tt.global
			if tt.trust {
				g = strings.TrimSuffix(g, "}") + `, "trustedProjects": [` + quoteValue(repo) + `]}`
			}
			if g != "" {
				writeFile(t, filepath.Join(e.agent, "settings.json"), g)
			}
			s := e.load(t, repo)
			if got := s.Permissions(); got != tt.want {
				t.Errorf("Permissions() = %+v, want %+v", got, tt.want)
			}
			probs := problemText(s)
			if tt.ignored != "" && !strings.Contains(probs, tt.ignored+": ") {
				t.Errorf("problems:\n%s\nwant one naming %s", probs, tt.ignored)
			}
			if tt.ignored == "" && strings.Contains(probs, "permissions.") {
				t.Errorf("problems:\n%s", probs)
			}
		})
	}
}
