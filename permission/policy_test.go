package permission

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestPolicyDecide(t *testing.T) {
	sb, ro := &Sandbox{Exe: "x"}, &Sandbox{Exe: "ro"}
	proj := realPaths([]string{t.TempDir()})[0]
	if err := os.Mkdir(proj+"/.git", 0o755); err != nil {
		t.Fatal(err)
	}
	rules := Rules{Allow: mustRules(t, "Bash(npm test:*)", "Edit(//etc/prime/**)"), Deny: mustRules(t, "Bash(rm:*)"), Where: Where{Home: "/h", Project: "/p"}}
	in := func(m Mode) *Policy {
		return &Policy{Mode: m, Rules: rules, Unconfined: mustRules(t, "Bash(docker:*)"), Sandbox: sb, ReadOnly: ro, Scope: &Scope{Write: []string{proj}}}
	}
	noSandbox := func(m Mode) *Policy {
		p := in(m)
		p.Sandbox, p.ReadOnly, p.NoSandbox = nil, nil, "no Landlock"
		return p
	}
	bash := func(c string) Call { return Call{Tool: "bash", Command: c} }
	edit := func(p ...string) Call { return Call{Tool: "edit", Paths: p} }
	for _, tc := range []struct {
		name       string
		p          *Policy
		call       Call
		want       Action
		sandbox    *Sandbox
		retry      bool
		always     string
		alwaysList string
	}{
		{"full runs anything", in(ModeFull), bash("curl x"), Run, nil, false, "", ""},
		{"deny rules hold in full", in(ModeFull), bash("rm -rf x"), Refuse, nil, false, "", ""},
		{"sandbox confines bash", in(ModeSandbox), bash("make"), Run, sb, true, "Bash(make:*)", "allowUnconfined"},
		{"allowUnconfined runs unconfined", in(ModeSandbox), bash("docker ps"), Run, nil, false, "", ""},
		{"sandbox without kernel asks", noSandbox(ModeSandbox), bash("make"), Ask, nil, false, "Bash(make:*)", "allow"},
		{"sandbox without kernel, allowed", noSandbox(ModeSandbox), bash("npm test"), Run, nil, false, "", ""},
		{"sandbox edit in project", in(ModeSandbox), edit(proj + "/a.go"), Run, nil, false, "", ""},
		{"sandbox edit outside asks", in(ModeSandbox), edit("/etc/x"), Ask, nil, false, "Edit(//etc/x)", "allow"},
		{"sandbox edit outside, allowed", in(ModeSandbox), edit("/etc/prime/x"), Run, nil, false, "", ""},
		{"sandbox edit through link asks", in(ModeSandbox), edit(proj+"/link", "/etc/x"), Ask, nil, false, "Edit(//etc/x)", "allow"},
		{"ask asks for bash", in(ModeAsk), bash("make"), Ask, nil, false, "Bash(make:*)", "allow"},
		{"ask, allowed", in(ModeAsk), bash("npm test -- -v"), Run, nil, false, "", ""},
		{"ask asks for edit", in(ModeAsk), edit("/p/a"), Ask, nil, false, "Edit(//p/a)", "allow"},
		{"sandbox edit of .git asks", func() *Policy { p := in(ModeSandbox); p.Scope.Deny = []string{proj + "/.git"}; return p }(), edit(proj + "/.git/config"), Ask, nil, false, "Edit(/" + proj + "/.git/config)", "allow"},
		{"ask reads", in(ModeAsk), Call{Tool: "read", Paths: []string{"/etc/passwd"}}, Run, nil, false, "", ""},
		{"read-only refuses edit", in(ModeReadOnly), edit("/p/a"), Refuse, nil, false, "", ""},
		{"read-only refuses an allowed edit", in(ModeReadOnly), edit("/etc/prime/a"), Refuse, nil, false, "", ""},
		{"read-only confines bash", in(ModeReadOnly), bash("npm test"), Run, ro, false, "", ""},
		{"read-only without kernel asks", noSandbox(ModeReadOnly), bash("ls"), Ask, nil, false, "", ""},
		{"other tools ask", in(ModeSandbox), Call{Tool: "mcp__s__t"}, Ask, nil, false, "mcp__s__t", "allow"},
		{"other tools run in full", in(ModeFull), Call{Tool: "mcp__s__t"}, Run, nil, false, "", ""},
		{"a read-only other tool runs in sandbox", in(ModeSandbox), Call{Tool: "mcp__s__t", ReadOnly: true}, Run, nil, false, "", ""},
		{"a read-only other tool runs in read-only", in(ModeReadOnly), Call{Tool: "mcp__s__t", ReadOnly: true}, Run, nil, false, "", ""},
		{"ask asks for a read-only other tool", in(ModeAsk), Call{Tool: "mcp__s__t", ReadOnly: true}, Ask, nil, false, "mcp__s__t", "allow"},
		{"deny rules hold for a read-only other tool", func() *Policy { p := in(ModeSandbox); p.Rules.Deny = mustRules(t, "mcp__s"); return p }(), Call{Tool: "mcp__s__t", ReadOnly: true}, Refuse, nil, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.p.Decide(tc.call)
			if d.Action != tc.want || d.Confine.Sandbox != tc.sandbox || d.RetryUnconfined != tc.retry {
				t.Fatalf("Decide = %+v; want action %v sandbox %v retry %v", d, tc.want, tc.sandbox, tc.retry)
			}
			if d.Action != Refuse && (d.Always != tc.always || d.AlwaysList != tc.alwaysList) {
				t.Errorf("always = %q in %q; want %q in %q", d.Always, d.AlwaysList, tc.always, tc.alwaysList)
			}
			if d.Action != Run && d.Reason == "" {
				t.Errorf("no reason: %+v", d)
			}
		})
	}
}

func TestConfinementContext(t *testing.T) {
	if _, ok := ConfinementOf(context.Background()); ok {
		t.Fatal("a bare context has a confinement")
	}
	sb := &Sandbox{}
	c, ok := ConfinementOf(WithConfinement(context.Background(), Confinement{Sandbox: sb}))
	if !ok || c.Sandbox != sb || c.Scope != nil {
		t.Fatalf("ConfinementOf = %+v, %v", c, ok)
	}
}

func TestParseMode(t *testing.T) {
	for _, m := range Modes {
		if got, err := ParseMode(string(m)); err != nil || got != m {
			t.Errorf("ParseMode(%q) = %q, %v", m, got, err)
		}
	}
	if _, err := ParseMode("plan"); err == nil {
		t.Error("ParseMode(plan) did not fail")
	}
}

// TestPolicyDecideRead: the read tools keep to the sandbox's deny list in
// every mode but full; a Read(...) allow rule opens a denied path; a tree
// is walked without the denied paths in it.
func TestPolicyDecideRead(t *testing.T) {
	home := realPaths([]string{t.TempDir()})[0]
	ssh := home + "/.ssh"
	if err := os.MkdirAll(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ssh+"/id_rsa", home+"/key-link"); err != nil {
		t.Fatal(err)
	}
	// The auth file under another name: a hard link, as a file system
	// that ignores case gives .SSH for .ssh.
	for _, d := range []string{home + "/agent", home + "/p"} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(home+"/agent/auth.json", []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(home+"/agent/auth.json", home+"/p/auth-alias"); err != nil {
		t.Fatal(err)
	}
	deny := []string{home + "/.ssh", home + "/agent/auth.json", home + "/missing"}
	in := func(m Mode, allow ...string) *Policy {
		return &Policy{Mode: m, DenyRead: deny, Rules: Rules{Allow: mustRules(t, allow...), Deny: mustRules(t, "Read(~/.aws/**)"), Where: Where{Home: home, Project: home + "/p"}}}
	}
	read := func(tool string, p ...string) Call { return Call{Tool: tool, Paths: p} }
	for _, tc := range []struct {
		name   string
		p      *Policy
		call   Call
		want   Action
		hidden bool // the call runs with the deny list to skip
		always string
	}{
		{"sandbox reads elsewhere, skipping the denied", in(ModeSandbox), read("read", "/etc/hosts"), Run, true, ""},
		{"sandbox: a key asks", in(ModeSandbox), read("read", ssh+"/id_rsa"), Ask, false, "Read(/" + ssh + "/id_rsa)"},
		{"sandbox: the directory itself asks", in(ModeSandbox), read("ls", ssh), Ask, false, "Read(/" + ssh + ")"},
		{"sandbox: grep of the denied directory asks", in(ModeSandbox), read("grep", ssh+"/../.ssh"), Ask, false, "Read(/" + ssh + ")"},
		{"sandbox: through a link asks", in(ModeSandbox), read("read", home+"/key-link", ssh+"/id_rsa"), Ask, false, "Read(/" + ssh + "/id_rsa)"},
		{"sandbox: the auth file asks", in(ModeSandbox), read("find", home+"/agent/auth.json"), Ask, false, "Read(/" + home + "/agent/auth.json)"},
		{"sandbox: the auth file under another name asks", in(ModeSandbox), read("read", home+"/p/auth-alias"), Ask, false, "Read(/" + home + "/agent/auth.json)"},
		{"sandbox: a walk of home runs, skipping", in(ModeSandbox), read("grep", home), Run, true, ""},
		{"sandbox: a name like a denied one", in(ModeSandbox), read("read", home+"/.sshrc"), Run, true, ""},
		{"ask mode keeps to the list", in(ModeAsk), read("read", ssh+"/id_rsa"), Ask, false, "Read(/" + ssh + "/id_rsa)"},
		{"read-only keeps to the list", in(ModeReadOnly), read("grep", ssh), Ask, false, "Read(/" + ssh + ")"},
		{"full reads anything", in(ModeFull), read("read", ssh+"/id_rsa"), Run, false, ""},
		{"an allow rule opens it", in(ModeSandbox, "Read(~/.ssh/**)"), read("read", ssh+"/id_rsa"), Run, false, ""},
		{"an allow rule for another tool does not", in(ModeSandbox, "Grep(~/.ssh/**)"), read("read", ssh+"/id_rsa"), Ask, false, "Read(/" + ssh + "/id_rsa)"},
		{"a deny rule refuses, full too", in(ModeFull), read("read", home+"/.aws/credentials"), Refuse, false, ""},
		{"no deny list, nothing skipped", &Policy{Mode: ModeSandbox}, read("read", ssh+"/id_rsa"), Run, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.p.Decide(tc.call)
			if d.Action != tc.want || (len(d.Confine.DenyRead) > 0) != tc.hidden {
				t.Fatalf("Decide = %+v; want action %v, deny list passed %v", d, tc.want, tc.hidden)
			}
			if d.Action == Ask && (d.Always != tc.always || d.AlwaysList != "allow" || !strings.Contains(d.Reason, "deny list")) {
				t.Errorf("ask: always %q in %q, reason %q; want %q", d.Always, d.AlwaysList, d.Reason, tc.always)
			}
			if want := []string{ssh, home + "/agent/auth.json", home + "/missing"}; tc.hidden && !slices.Equal(d.Confine.DenyRead, want) {
				t.Errorf("deny list passed to the tool %q; want %q", d.Confine.DenyRead, want)
			}
		})
	}
}
