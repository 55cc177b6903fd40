package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
)

// settingsEnv is a home directory with an agent directory and a project.
type settingsEnv struct {
	home, agent, project string
}

func newSettingsEnv(t *testing.T) settingsEnv {
	t.Helper()
	root := t.TempDir()
	e := settingsEnv{
		home:    filepath.Join(root, "home"),
		agent:   filepath.Join(root, "home", ".prime", "agent"),
		project: filepath.Join(root, "src", "app"),
	}
	// The project is a git checkout, so its settings apply from any
	// directory inside it.
	for _, d := range []string{e.agent, filepath.Join(e.project, ".prime", "agent"), filepath.Join(e.project, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e settingsEnv) globalFile() string { return filepath.Join(e.agent, "settings.json") }
func (e settingsEnv) projectFile() string {
	return filepath.Join(e.project, ".prime", "agent", "settings.json")
}

// run runs prime with HOME set to the environment's home directory.
func (e settingsEnv) run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &app{
		stdin:  strings.NewReader(""),
		stdout: &out,
		stderr: &errb,
		getenv: func(k string) string {
			if k == "HOME" {
				return e.home
			}
			return ""
		},
	})
	return code, out.String(), errb.String()
}

// squeeze returns the lines of out with runs of spaces folded to one.
func squeeze(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return lines
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSettingsShow(t *testing.T) {
	e := newSettingsEnv(t)
	write(t, e.globalFile(), `{"compaction": {"reserveTokens": 1000, "modelOverrides": {"openai/gpt-5": {"keepRecentTokens": 40000}}}, "theme": "dark"}`)
	write(t, e.projectFile(), "{\n  \"compaction\": {\"enabled\": false, \"keepRecentTokens\": -1},\n  \"hooks\": [{\"event\": \"session_before_compact\", \"command\": \"./sum.sh\", \"args\": [\"-q\"]}]\n}")

	code, out, errOut := e.run(t, "settings", "--cwd", filepath.Join(e.project, ".prime"), "--model", "openai/gpt-5")
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := squeeze(out)
	for _, want := range []string{
		"global file: " + e.globalFile(),
		"project file: " + e.projectFile(),
		"project: " + e.project + " (not trusted; run prime trust to let its hooks run)",
		"compaction.enabled false project",
		"compaction.reserveTokens 1000 global",
		`compaction.keepRecentTokens 40000 global compaction.modelOverrides["openai/gpt-5"].keepRecentTokens`,
		"compaction.model (the session's model) default",
		"shellPath (/bin/bash, else bash on PATH, else sh) default",
		"defaultModel (the session's, else the first with a key) default",
		`compaction.modelOverrides["openai/gpt-5"].keepRecentTokens 40000 global`,
		"session_before_compact: ./sum.sh -q (project hooks[0]; not run: the project is not trusted)",
		e.projectFile() + ":2:56: compaction.keepRecentTokens: -1 is negative; want a whole number of tokens, 0 or more (ignored)",
	} {
		if !slices.Contains(lines, want) {
			t.Errorf("output lacks the line %q:\n%s", want, out)
		}
	}

	code, out, _ = e.run(t, "settings", "--json", "--cwd", e.project)
	if code != exitOK {
		t.Fatalf("--json: exit %d", code)
	}
	var r settingsReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, out)
	}
	if r.GlobalFile != e.globalFile() || !r.GlobalExists || r.ProjectDir != e.project || r.ProjectTrusted {
		t.Errorf("report header = %+v", r)
	}
	got := map[string]reportValue{}
	for _, v := range r.Settings {
		got[v.Key] = v
	}
	for key, want := range map[string]reportValue{
		"compaction.enabled":          {Key: "compaction.enabled", Value: false, Source: "project", File: e.projectFile()},
		"compaction.reserveTokens":    {Key: "compaction.reserveTokens", Value: 1000.0, Source: "global", File: e.globalFile()},
		"compaction.keepRecentTokens": {Key: "compaction.keepRecentTokens", Value: 20000.0, Source: "default"},
		"compaction.model":            {Key: "compaction.model", Value: nil, Source: "default"},
		`compaction.modelOverrides["openai/gpt-5"].keepRecentTokens`: {Key: `compaction.modelOverrides["openai/gpt-5"].keepRecentTokens`, Value: 40000.0, Source: "global", File: e.globalFile()},
	} {
		if diff := cmp.Diff(want, got[key]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", key, diff)
		}
	}
	if len(r.Hooks) != 1 || r.Hooks[0].Command != "./sum.sh" || r.Hooks[0].Source != "project" {
		t.Errorf("hooks = %+v", r.Hooks)
	}
	wantProblem := reportProblem{File: e.projectFile(), Line: 2, Column: 56, Key: "compaction.keepRecentTokens",
		Message: "-1 is negative; want a whole number of tokens, 0 or more"}
	if len(r.Problems) != 1 || r.Problems[0] != wantProblem {
		t.Errorf("problems = %+v, want %+v", r.Problems, wantProblem)
	}
}

func TestSettingsShowBrokenFile(t *testing.T) {
	e := newSettingsEnv(t)
	const broken = "{\n  \"compaction\": {\n    \"enabled\": false\n"
	write(t, e.globalFile(), broken)
	code, out, _ := e.run(t, "settings", "--cwd", e.project)
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	want := e.globalFile() + ":4:1: does not parse: unexpected end of file; the whole file is ignored, and Prime will not write to it until it is fixed"
	if lines := squeeze(out); !slices.Contains(lines, want) || !slices.Contains(lines, "compaction.enabled true default") {
		t.Errorf("output:\n%s\nwant the problem %q and defaults", out, want)
	}
	code, _, errOut := e.run(t, "settings", "set", "compaction.enabled", "true")
	if code != exitFailed || !strings.Contains(errOut, "not writing "+e.globalFile()+", the settings file is broken: line 4, column 1") {
		t.Errorf("set on a broken file: exit %d, %q", code, errOut)
	}
	code, _, errOut = e.run(t, "trust", e.project)
	if code != exitFailed || !strings.Contains(errOut, "the settings file is broken") {
		t.Errorf("trust with a broken global file: exit %d, %q", code, errOut)
	}
	if got := read(t, e.globalFile()); got != broken {
		t.Errorf("broken file changed: %q", got)
	}
}

func TestSettingsSetUnset(t *testing.T) {
	e := newSettingsEnv(t)
	const pi = "{\n  \"defaultModel\": \"claude-sonnet-4-5\",\n  \"compaction\": {\n    \"enabled\": true\n  }\n}"
	write(t, e.globalFile(), pi)

	code, out, errOut := e.run(t, "settings", "set", "compaction.enabled", "false", "--cwd", e.project)
	if code != exitOK || errOut != "" || out != "compaction.enabled = false in "+e.globalFile()+"\n" {
		t.Fatalf("set: exit %d, %q, %q", code, out, errOut)
	}
	if got, want := read(t, e.globalFile()), strings.Replace(pi, "true", "false", 1); got != want {
		t.Errorf("global file = %q, want %q", got, want)
	}

	code, out, _ = e.run(t, "settings", "set", "--project", "--cwd", e.project, `compaction.modelOverrides["openai/gpt-5"].reserveTokens`, "32768")
	if code != exitOK || !strings.Contains(out, e.projectFile()) {
		t.Fatalf("set --project: exit %d, %q", code, out)
	}
	want := "{\n  \"compaction\": {\n    \"modelOverrides\": {\n      \"openai/gpt-5\": {\n        \"reserveTokens\": 32768\n      }\n    }\n  }\n}\n"
	if got := read(t, e.projectFile()); got != want {
		t.Errorf("project file = %q, want %q", got, want)
	}

	code, out, _ = e.run(t, "settings", "unset", "compaction.enabled")
	if code != exitOK || out != "removed compaction.enabled from "+e.globalFile()+"\n" {
		t.Errorf("unset: exit %d, %q", code, out)
	}
	code, out, _ = e.run(t, "settings", "unset", "compaction.enabled")
	if code != exitOK || !strings.Contains(out, "was not set") {
		t.Errorf("second unset: exit %d, %q", code, out)
	}

	for _, bad := range [][]string{
		{"settings", "set", "retry.maxRetries", "-3"},
		{"settings", "set", "compaction.enabled", "yes"},
		{"settings", "set", "compaction.bogus", "1"},
		{"settings", "set", "compaction.enabled"},
		{"settings", "unset", "nope"},
		{"settings", "extra"},
		{"settings", "--model", "gpt-5"},
		{"settings", "--cwd", filepath.Join(e.project, "missing")},
	} {
		code, _, errOut := e.run(t, bad...)
		if code != exitBadUsage || errOut == "" {
			t.Errorf("%q: exit %d, stderr %q; want %d and a message", bad, code, errOut, exitBadUsage)
		}
	}
	if _, _, errOut := e.run(t, "settings", "set", "retry.maxRetries", "-3"); !strings.Contains(errOut, "retry.maxRetries: -3 is negative") {
		t.Errorf("negative value message: %q", errOut)
	}
}

func TestTrustCommand(t *testing.T) {
	e := newSettingsEnv(t)
	sub := filepath.Join(e.project, "internal")
	os.MkdirAll(sub, 0o755)

	// Trusting from a subdirectory trusts the project it belongs to.
	code, out, errOut := e.run(t, "trust", sub)
	if code != exitOK || out != "trusted: "+e.project+" (the hooks in its .prime/agent/settings.json may run)\n" {
		t.Fatalf("trust: exit %d, %q, %q", code, out, errOut)
	}
	code, out, _ = e.run(t, "trust", "--list")
	if code != exitOK || out != e.project+"\n" {
		t.Errorf("--list: %q", out)
	}
	code, out, _ = e.run(t, "trust", "--list", "--json")
	if code != exitOK || out != "[\n  \""+e.project+"\"\n]\n" {
		t.Errorf("--list --json: %q", out)
	}
	if _, out, _ := e.run(t, "settings", "--cwd", e.project); !strings.Contains(out, "("+"trusted)") {
		t.Errorf("settings does not show the project as trusted:\n%s", out)
	}
	code, out, _ = e.run(t, "trust", "--remove", e.project)
	if code != exitOK || out != "no longer trusted: "+e.project+"\n" {
		t.Errorf("--remove: exit %d, %q", code, out)
	}
	if _, out, _ := e.run(t, "trust", "--list", "--json"); out != "[]\n" {
		t.Errorf("--list after remove: %q", out)
	}
	for _, bad := range [][]string{
		{"trust", "a", "b"},
		{"trust", "--list", "--remove"},
		{"trust", "--json"},
		{"trust", filepath.Join(e.project, "missing")},
	} {
		if code, _, _ := e.run(t, bad...); code != exitBadUsage {
			t.Errorf("%q: exit %d, want %d", bad, code, exitBadUsage)
		}
	}
}
