package settings

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeJSON(t *testing.T, file, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPermissionRulesProjectOnlyTightens: a project's deny rules always
// apply, its allow rules only once the project is trusted; the user's
// rules for one project apply to it alone.
func TestPermissionRulesProjectOnlyTightens(t *testing.T) {
	root := t.TempDir()
	agent, proj, other := filepath.Join(root, "agent"), filepath.Join(root, "proj"), filepath.Join(root, "other")
	for _, d := range []string{proj, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeJSON(t, filepath.Join(agent, "settings.json"), `{"permissions": {"allow": ["Bash(go test:*)"], "deny": ["Read(~/.ssh/**)"],
		"projects": {"`+proj+`": {"allow": ["Bash(make:*)"], "allowUnconfined": ["Bash(docker:*)"]}}}}`)
	writeJSON(t, filepath.Join(proj, ".prime", "agent", "settings.json"), `{"permissions": {"allow": ["Bash"], "allowUnconfined": ["Bash(curl:*)"], "deny": ["Bash(rm:*)", 7]}}`)
	load := func(project string) *Settings {
		s, err := Load(context.Background(), Options{AgentDir: agent, ProjectDir: project, WorkDir: project})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := load(proj)
	r := s.PermissionRules()
	if !slices.Equal(r.Allow, []string{"Bash(go test:*)", "Bash(make:*)"}) || !slices.Equal(r.Deny, []string{"Read(~/.ssh/**)", "Bash(rm:*)"}) ||
		!slices.Equal(r.AllowUnconfined, []string{"Bash(docker:*)"}) || !slices.Equal(r.IgnoredAllow, []string{"Bash", "Bash(curl:*)"}) {
		t.Errorf("untrusted: %+v", r)
	}
	var bad bool
	for _, p := range s.Problems() {
		bad = bad || strings.Contains(p.Key, "permissions.deny[1]")
	}
	if !bad {
		t.Errorf("no problem for a rule that is not a string: %v", s.Problems())
	}
	if o := load(other).PermissionRules(); !slices.Equal(o.Allow, []string{"Bash(go test:*)"}) || len(o.AllowUnconfined) != 0 {
		t.Errorf("another project: %+v", o)
	}
	ts, err := s.Trust(context.Background(), proj)
	if err != nil {
		t.Fatal(err)
	}
	if r := ts.PermissionRules(); !slices.Contains(r.Allow, "Bash") || !slices.Contains(r.AllowUnconfined, "Bash(curl:*)") || len(r.IgnoredAllow) != 0 {
		t.Errorf("trusted: %+v", r)
	}
}

// TestAddPermissionRule: an "always" answer goes to the project's file when
// the project is trusted, else to the user's under the project's path;
// twice is once.
func TestAddPermissionRule(t *testing.T) {
	root := t.TempDir()
	agent, proj := filepath.Join(root, "agent"), filepath.Join(root, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".prime", "agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Load(context.Background(), Options{AgentDir: agent, ProjectDir: proj, WorkDir: proj})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		ns, scope, err := s.AddPermissionRule(context.Background(), RuleAllow, "Bash(npm test:*)")
		if err != nil || scope != Global {
			t.Fatalf("untrusted: %v, %v", scope, err)
		}
		s = ns
	}
	b, _ := os.ReadFile(filepath.Join(agent, "settings.json"))
	if strings.Count(string(b), "npm test") != 1 || !strings.Contains(string(b), canonicalDir(proj)) {
		t.Errorf("global file: %s", b)
	}
	if s, err = s.Trust(context.Background(), proj); err != nil {
		t.Fatal(err)
	}
	ns, scope, err := s.AddPermissionRule(context.Background(), RuleAllowUnconfine, "Bash(docker:*)")
	if err != nil || scope != Project {
		t.Fatalf("trusted: %v, %v", scope, err)
	}
	if r := ns.PermissionRules(); !slices.Equal(r.AllowUnconfined, []string{"Bash(docker:*)"}) || !slices.Equal(r.Allow, []string{"Bash(npm test:*)"}) {
		t.Errorf("rules: %+v", r)
	}
	if _, _, err := s.AddPermissionRule(context.Background(), "maybe", "Bash"); err == nil {
		t.Error("an unknown list was written")
	}
	writeJSON(t, filepath.Join(proj, ".prime", "agent", "settings.json"), `{"permissions": {"allow": "Bash"}}`)
	if _, _, err := ns.AddPermissionRule(context.Background(), RuleAllow, "Bash(ls:*)"); err == nil || !strings.Contains(err.Error(), "not a list") {
		t.Errorf("a list that is not one: %v", err)
	}
}
