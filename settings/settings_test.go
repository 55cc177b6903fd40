package settings

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// dirs makes an agent directory and a project directory under a fresh
// temporary directory and writes the given settings files (empty text: no
// file).
func dirs(t *testing.T, global, project string) (agentDir, projectDir string) {
	t.Helper()
	root := t.TempDir()
	agentDir = filepath.Join(root, "home", ".prime", "agent")
	projectDir = filepath.Join(root, "work", "app")
	for _, d := range []string{agentDir, filepath.Join(projectDir, ".prime", "agent")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if global != "" {
		writeFile(t, filepath.Join(agentDir, "settings.json"), global)
	}
	if project != "" {
		writeFile(t, filepath.Join(projectDir, ".prime", "agent", "settings.json"), project)
	}
	return agentDir, projectDir
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func load(t *testing.T, global, project string) *Settings {
	t.Helper()
	agent, proj := dirs(t, global, project)
	s, err := Load(context.Background(), Options{AgentDir: agent, ProjectDir: proj})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// value returns the effective value of key and its source scope.
func value(t *testing.T, s *Settings, model, key string) (any, Source) {
	t.Helper()
	for _, v := range s.Values(model) {
		if v.Key == key {
			return v.Value, v.Source
		}
	}
	t.Fatalf("no value for %s", key)
	return nil, Source{}
}

func TestDefaults(t *testing.T) {
	want := CompactionSettings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 20000}
	var nilSettings *Settings
	for name, s := range map[string]*Settings{"Defaults": Defaults(), "nil": nilSettings, "no files": load(t, "", "")} {
		if got := s.Compaction("anthropic/claude-sonnet-4"); got != want {
			t.Errorf("%s: Compaction = %+v, want %+v", name, got, want)
		}
		if got, want := s.BranchSummary(), (BranchSummarySettings{ReserveTokens: 16384}); got != want {
			t.Errorf("%s: BranchSummary = %+v, want %+v", name, got, want)
		}
		if got, want := s.Retry(), (RetrySettings{Enabled: true, MaxRetries: 3, BaseDelayMs: 2000, MaxDelayMs: 60000,
			StreamIdleTimeoutMs: 300000, StreamKeepAliveTimeoutMs: 1800000}); got != want {
			t.Errorf("%s: Retry = %+v, want %+v", name, got, want)
		}
		if s.SummaryModel() != "" || len(s.Hooks()) != 0 || len(s.Problems()) != 0 || s.Trusted("/") {
			t.Errorf("%s: not all defaults", name)
		}
		for _, v := range s.Values("") {
			if v.Source.Scope != Default {
				t.Errorf("%s: %s from %v, want default", name, v.Key, v.Source)
			}
		}
	}
	// An empty file is {}, as in pi.
	if s := load(t, "  \n", ""); len(s.Problems()) != 0 {
		t.Errorf("empty file: %v", s.Problems())
	}
}

func TestValidation(t *testing.T) {
	type problem struct {
		key  string
		line int
		col  int
		msg  string // a substring
	}
	tests := []struct {
		name    string
		global  string
		project string
		// key and want: the effective value afterwards (the invalid value
		// ignored).
		key  string
		want any
		// problems expected (any scope); none when nil.
		problems []problem
	}{
		{name: "bool as string", global: `{"compaction": {"enabled": "no"}}`, key: "compaction.enabled", want: true,
			problems: []problem{{"compaction.enabled", 1, 28, `"no" is a string; want true or false`}}},
		{name: "bool as number", global: `{"branchSummary": {"skipPrompt": 1}}`, key: "branchSummary.skipPrompt", want: false,
			problems: []problem{{"branchSummary.skipPrompt", 1, 34, "1 is a number; want true or false"}}},
		{name: "negative tokens", global: "{\n  \"compaction\": {\n    \"reserveTokens\": -5\n  }\n}", key: "compaction.reserveTokens", want: 16384,
			problems: []problem{{"compaction.reserveTokens", 3, 22, "-5 is negative; want a whole number of tokens, 0 or more"}}},
		{name: "fractional tokens", global: `{"compaction": {"keepRecentTokens": 1.5}}`, key: "compaction.keepRecentTokens", want: 20000,
			problems: []problem{{"compaction.keepRecentTokens", 1, 37, "1.5 is not a whole number"}}},
		{name: "numeric string", global: `{"compaction": {"keepRecentTokens": "30000"}}`, key: "compaction.keepRecentTokens", want: 20000,
			problems: []problem{{"compaction.keepRecentTokens", 1, 37, `"30000" is a string; want a whole number of tokens`}}},
		{name: "beyond the safe integers", global: `{"compaction": {"reserveTokens": 9007199254740992}}`, key: "compaction.reserveTokens", want: 16384,
			problems: []problem{{"compaction.reserveTokens", 1, 34, "9007199254740992 is too large"}}},
		{name: "overflowing number", global: `{"compaction": {"reserveTokens": 1e400}}`, key: "compaction.reserveTokens", want: 16384,
			problems: []problem{{"compaction.reserveTokens", 1, 34, "1e400 is too large"}}},
		{name: "largest safe integer", global: `{"compaction": {"reserveTokens": 9007199254740991}}`, key: "compaction.reserveTokens", want: 9007199254740991},
		{name: "exponent form is whole", global: `{"compaction": {"reserveTokens": 1e3}}`, key: "compaction.reserveTokens", want: 1000},
		{name: "2.0 is whole", global: `{"compaction": {"reserveTokens": 2.0}}`, key: "compaction.reserveTokens", want: 2},
		{name: "zero is allowed", global: `{"compaction": {"reserveTokens": 0}}`, key: "compaction.reserveTokens", want: 0},
		{name: "null means unset", global: `{"compaction": {"reserveTokens": null, "enabled": null}}`, key: "compaction.reserveTokens", want: 16384},
		{name: "section null", global: `{"compaction": null}`, key: "compaction.enabled", want: true},
		{name: "section not an object", global: `{"retry": 5}`, key: "retry.maxRetries", want: 3,
			problems: []problem{{"retry", 1, 11, "5 is a number; want an object"}}},
		{name: "section an array", global: `{"retry": [{"maxRetries": 9}]}`, key: "retry.maxRetries", want: 3,
			problems: []problem{{"retry", 1, 11, "is an array; want an object"}}},
		{name: "retry count negative", global: `{"retry": {"maxRetries": -1}}`, key: "retry.maxRetries", want: 3,
			problems: []problem{{"retry.maxRetries", 1, 26, "-1 is negative; want a whole number, 0 or more"}}},
		{name: "delay as duration text", global: `{"retry": {"baseDelayMs": "2s"}}`, key: "retry.baseDelayMs", want: 2000,
			problems: []problem{{"retry.baseDelayMs", 1, 27, `"2s" is a string; want a whole number of milliseconds`}}},
		{name: "model without provider", global: `{"compaction": {"model": "gpt-5"}}`, key: "compaction.model", want: nil,
			problems: []problem{{"compaction.model", 1, 26, `"gpt-5" is not a model as "provider/id"`}}},
		{name: "model as number", global: `{"compaction": {"model": 5}}`, key: "compaction.model", want: nil,
			problems: []problem{{"compaction.model", 1, 26, "5 is a number"}}},
		{name: "model with nested id", global: `{"compaction": {"model": "openrouter/anthropic/claude-sonnet-4"}}`, key: "compaction.model", want: "openrouter/anthropic/claude-sonnet-4"},
		{name: "overrides not an object", global: `{"compaction": {"modelOverrides": []}}`, key: "compaction.reserveTokens", want: 16384,
			problems: []problem{{"compaction.modelOverrides", 1, 35, "is an array; want an object"}}},
		{name: "override for a name that is not provider/id", global: `{"compaction": {"modelOverrides": {"gpt-5": {"reserveTokens": 1}}}}`, key: "compaction.reserveTokens", want: 16384,
			problems: []problem{{`compaction.modelOverrides["gpt-5"]`, 1, 45, "never applies"}}},
		{name: "override entry not an object", global: `{"compaction": {"modelOverrides": {"a/b": 5}}}`, key: "compaction.reserveTokens", want: 16384,
			problems: []problem{{`compaction.modelOverrides["a/b"]`, 1, 43, "5 is a number; want an object"}}},
		{name: "override value negative", global: `{"compaction": {"modelOverrides": {"a/b": {"keepRecentTokens": -1}}}}`, key: "compaction.keepRecentTokens", want: 20000,
			problems: []problem{{`compaction.modelOverrides["a/b"].keepRecentTokens`, 1, 64, "-1 is negative"}}},
		{name: "unknown keys are no problem", global: `{"theme": "dark", "compaction": {"future": [1], "enabled": false}, "retry": {"provider": {"timeoutMs": 5}}}`, key: "compaction.enabled", want: false},
		{name: "duplicate names: the last wins", global: `{"compaction": {"enabled": false, "enabled": true}}`, key: "compaction.enabled", want: true},
		{name: "hooks not a list", global: `{"hooks": {"event": "x"}}`, key: "compaction.enabled", want: true,
			problems: []problem{{"hooks", 1, 11, "is an object; want a list"}}},
		{name: "hook without event", global: `{"hooks": [{"command": "x"}]}`, key: "compaction.enabled", want: true,
			problems: []problem{{"hooks[0]", 1, 12, `"event" is missing`}}},
		{name: "hook with an empty command", global: `{"hooks": [{"event": "session_compact", "command": ""}]}`, key: "compaction.enabled", want: true,
			problems: []problem{{"hooks[0].command", 1, 52, `"" is not a non-empty string`}}},
		{name: "hook args not strings", global: `{"hooks": [{"event": "e", "command": "c", "args": ["a", 2]}]}`, key: "compaction.enabled", want: true,
			problems: []problem{{"hooks[0].args[1]", 1, 57, "2 is a number; want a string"}}},
		{name: "hook timeout zero", global: `{"hooks": [{"event": "e", "command": "c", "timeoutMs": 0}]}`, key: "compaction.enabled", want: true,
			problems: []problem{{"hooks[0].timeoutMs", 1, 56, "0 is not a timeout"}}},
		{name: "hook timeout negative", global: `{"hooks": [{"event": "e", "command": "c", "timeoutMs": -1}]}`, key: "compaction.enabled", want: true,
			problems: []problem{{"hooks[0].timeoutMs", 1, 56, "-1 is negative"}}},
		{name: "trusted projects in a project file", project: `{"trustedProjects": ["/x"]}`, key: "compaction.enabled", want: true,
			problems: []problem{{"trustedProjects", 1, 21, "read only from the global settings file"}}},
		{name: "trusted project relative", global: `{"trustedProjects": ["src/app", 7]}`, key: "compaction.enabled", want: true,
			problems: []problem{
				{"trustedProjects[0]", 1, 22, `"src/app" is not an absolute path`},
				{"trustedProjects[1]", 1, 33, "7 is a number; want a directory"},
			}},
		{name: "invalid project value falls back to the global one", global: `{"compaction": {"reserveTokens": 1000}}`, project: `{"compaction": {"reserveTokens": -1}}`,
			key: "compaction.reserveTokens", want: 1000,
			problems: []problem{{"compaction.reserveTokens", 1, 34, "-1 is negative"}}},
		{name: "invalid project section falls back to the global one", global: `{"compaction": {"keepRecentTokens": 7}}`, project: `{"compaction": true}`,
			key: "compaction.keepRecentTokens", want: 7,
			problems: []problem{{"compaction", 1, 16, "true is a boolean; want an object"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := load(t, tt.global, tt.project)
			if got, _ := value(t, s, "", tt.key); !cmp.Equal(got, tt.want) {
				t.Errorf("%s = %v (%T), want %v", tt.key, got, got, tt.want)
			}
			probs := s.Problems()
			if len(probs) != len(tt.problems) {
				t.Fatalf("problems = %v, want %d", probs, len(tt.problems))
			}
			for i, want := range tt.problems {
				p := probs[i]
				if p.Key != want.key || p.Line != want.line || p.Column != want.col || !strings.Contains(p.Msg, want.msg) || p.Broken {
					t.Errorf("problem %d = %q at %d:%d: %q (broken %v);\nwant %q at %d:%d: containing %q",
						i, p.Key, p.Line, p.Column, p.Msg, p.Broken, want.key, want.line, want.col, want.msg)
				}
				// The message names the file, the key and the value.
				if e := p.Error(); !strings.HasPrefix(e, p.File+":") || !strings.Contains(e, p.Key+": ") || !strings.HasSuffix(e, "(ignored)") {
					t.Errorf("Error() = %q: want FILE:LINE:COL: KEY: MESSAGE (ignored)", e)
				}
			}
		})
	}
}

func TestMerge(t *testing.T) {
	type want struct {
		key   string
		value any
		scope Scope
	}
	tests := []struct {
		name            string
		global, project string
		model           string
		want            []want
	}{
		{
			name:    "project over global, key by key",
			global:  `{"compaction": {"enabled": false, "reserveTokens": 1000}, "retry": {"maxRetries": 9}}`,
			project: `{"compaction": {"enabled": true}, "branchSummary": {"skipPrompt": true}}`,
			want: []want{
				{"compaction.enabled", true, Project},
				{"compaction.reserveTokens", 1000, Global},
				{"compaction.keepRecentTokens", 20000, Default},
				{"branchSummary.skipPrompt", true, Project},
				{"retry.maxRetries", 9, Global},
				{"retry.enabled", true, Default},
			},
		},
		{
			name:   "model override, then ordinary, then default, per field",
			global: `{"compaction": {"keepRecentTokens": 5000, "modelOverrides": {"openai/gpt-5": {"reserveTokens": 32768}}}}`,
			model:  "openai/gpt-5",
			want: []want{
				{"compaction.reserveTokens", 32768, Global},
				{"compaction.keepRecentTokens", 5000, Global},
				{`compaction.modelOverrides["openai/gpt-5"].reserveTokens`, 32768, Global},
			},
		},
		{
			name:   "another model gets the ordinary values",
			global: `{"compaction": {"keepRecentTokens": 5000, "modelOverrides": {"openai/gpt-5": {"reserveTokens": 32768}}}}`,
			model:  "anthropic/claude-sonnet-4",
			want: []want{
				{"compaction.reserveTokens", 16384, Default},
				{"compaction.keepRecentTokens", 5000, Global},
			},
		},
		{
			name:    "a project override map replaces the global map whole",
			global:  `{"compaction": {"modelOverrides": {"a/global": {"reserveTokens": 1}}}}`,
			project: `{"compaction": {"modelOverrides": {"a/project": {"reserveTokens": 2}}}}`,
			model:   "a/global",
			want: []want{
				{"compaction.reserveTokens", 16384, Default},
				{`compaction.modelOverrides["a/project"].reserveTokens`, 2, Project},
			},
		},
		{
			name:    "a project override beats a project ordinary value and a global override",
			global:  `{"compaction": {"modelOverrides": {"a/m": {"keepRecentTokens": 1}}}}`,
			project: `{"compaction": {"keepRecentTokens": 3, "modelOverrides": {"a/m": {"keepRecentTokens": 2}}}}`,
			model:   "a/m",
			want:    []want{{"compaction.keepRecentTokens", 2, Project}},
		},
		{
			name:    "a project ordinary value does not beat the global override map",
			global:  `{"compaction": {"modelOverrides": {"a/m": {"keepRecentTokens": 1}}}}`,
			project: `{"compaction": {"keepRecentTokens": 3}}`,
			model:   "a/m",
			want:    []want{{"compaction.keepRecentTokens", 1, Global}},
		},
		{
			name:    "summary model from the project",
			global:  `{"compaction": {"model": "anthropic/claude-haiku-4-5"}}`,
			project: `{"compaction": {"model": "openai/gpt-5-mini"}}`,
			want:    []want{{"compaction.model", "openai/gpt-5-mini", Project}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := load(t, tt.global, tt.project)
			if p := s.Problems(); len(p) != 0 {
				t.Fatalf("problems: %v", p)
			}
			for _, w := range tt.want {
				got, src := value(t, s, tt.model, w.key)
				if !cmp.Equal(got, w.value) || src.Scope != w.scope {
					t.Errorf("%s = %v from %v, want %v from %v", w.key, got, src, w.value, w.scope)
				}
				wantFile := map[Scope]string{Global: s.GlobalFile(), Project: s.ProjectFile()}[w.scope]
				if src.File != wantFile {
					t.Errorf("%s: source file %q, want %q", w.key, src.File, wantFile)
				}
			}
		})
	}
}

func TestCompactionGetter(t *testing.T) {
	s := load(t,
		`{"compaction": {"enabled": false, "reserveTokens": 1000, "modelOverrides": {"openai/gpt-5": {"reserveTokens": 32768, "keepRecentTokens": 40000}}}}`,
		`{"compaction": {"keepRecentTokens": 9000}}`)
	for model, want := range map[string]CompactionSettings{
		"":                          {Enabled: false, ReserveTokens: 1000, KeepRecentTokens: 9000},
		"openai/gpt-5":              {Enabled: false, ReserveTokens: 32768, KeepRecentTokens: 40000},
		"anthropic/claude-sonnet-4": {Enabled: false, ReserveTokens: 1000, KeepRecentTokens: 9000},
	} {
		if got := s.Compaction(model); got != want {
			t.Errorf("Compaction(%q) = %+v, want %+v", model, got, want)
		}
	}
	_, src := value(t, s, "openai/gpt-5", "compaction.keepRecentTokens")
	if !src.ModelOverride() || src.String() != `global compaction.modelOverrides["openai/gpt-5"].keepRecentTokens` {
		t.Errorf("source = %q (override %v)", src, src.ModelOverride())
	}
}

func TestWithOverride(t *testing.T) {
	s := load(t, `{"compaction": {"reserveTokens": 1000, "modelOverrides": {"a/m": {"reserveTokens": 2}}}}`, "")
	f, err := s.WithOverride("compaction.reserveTokens", "500")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Compaction("a/m").ReserveTokens; got != 500 {
		t.Errorf("a flag should beat the model override: got %d", got)
	}
	if _, src := value(t, f, "a/m", "compaction.reserveTokens"); src.Scope != Flag {
		t.Errorf("source %v, want flag", src)
	}
	if got := s.Compaction("a/m").ReserveTokens; got != 2 {
		t.Errorf("WithOverride changed the original: %d", got)
	}
	f2, err := f.WithOverride("compaction.enabled", "false")
	if err != nil {
		t.Fatal(err)
	}
	if c := f2.Compaction("a/m"); c.Enabled || c.ReserveTokens != 500 {
		t.Errorf("second override lost the first: %+v", c)
	}
	for _, bad := range [][2]string{
		{"compaction.reserveTokens", "-1"},
		{"compaction.reserveTokens", "lots"},
		{"compaction.enabled", "yes"},
		{"compaction.model", "gpt-5"},
		{"compaction.nope", "1"},
		{`compaction.modelOverrides["a/m"].reserveTokens`, "1"},
	} {
		if _, err := s.WithOverride(bad[0], bad[1]); !errors.Is(err, ErrInvalid) {
			t.Errorf("WithOverride(%s, %s) = %v, want ErrInvalid", bad[0], bad[1], err)
		}
	}
}

func TestHooks(t *testing.T) {
	s := load(t,
		`{"hooks": [{"event": "session_before_compact", "command": "/bin/g1"}, {"event": "session_compact", "command": "g2", "args": ["-v"], "timeoutMs": 500, "future": 1}]}`,
		`{"hooks": [{"event": "session_before_compact", "command": "./p1"}, {"event": "x"}]}`)
	got := s.Hooks()
	want := []Hook{
		{Event: "session_before_compact", Command: "/bin/g1", Source: Source{Scope: Global, File: s.GlobalFile(), Key: "hooks[0]"}},
		{Event: "session_compact", Command: "g2", Args: []string{"-v"}, TimeoutMs: 500, Source: Source{Scope: Global, File: s.GlobalFile(), Key: "hooks[1]"}},
		{Event: "session_before_compact", Command: "./p1", Source: Source{Scope: Project, File: s.ProjectFile(), Key: "hooks[0]"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Hooks mismatch (-want +got):\n%s", diff)
	}
	if p := s.Problems(); len(p) != 1 || p[0].Key != "hooks[1]" || p[0].Scope != Project {
		t.Errorf("problems = %v, want the project's hooks[1]", p)
	}
}

func TestBrokenFile(t *testing.T) {
	const broken = "{\n  \"compaction\": {\n    \"enabled\": false,\n  },\n  \"theme\": \"dark\"\n}\n"
	tests := []struct {
		name      string
		global    string
		project   string
		brokenIn  Scope
		line, col int
		msg       string
	}{
		{name: "project does not parse", global: `{"compaction": {"reserveTokens": 1000}}`, project: broken, brokenIn: Project, line: 3, col: 21, msg: "does not parse: trailing comma"},
		{name: "global does not parse", global: broken, project: `{"compaction": {"reserveTokens": 1000}}`, brokenIn: Global, line: 3, col: 21, msg: "does not parse: trailing comma"},
		{name: "truncated", global: "{\n  \"compaction\": {\n", brokenIn: Global, line: 3, col: 1, msg: "unexpected end of file"},
		{name: "not an object", global: `["compaction"]`, brokenIn: Global, line: 1, col: 1, msg: "holds an array, not an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := load(t, tt.global, tt.project)
			file := map[Scope]string{Global: s.GlobalFile(), Project: s.ProjectFile()}[tt.brokenIn]
			before := readFile(t, file)

			probs := s.Problems()
			if len(probs) != 1 {
				t.Fatalf("problems = %v, want one", probs)
			}
			p := probs[0]
			if !p.Broken || p.File != file || p.Line != tt.line || p.Column != tt.col || !strings.Contains(p.Msg, tt.msg) {
				t.Errorf("problem = %+v, want broken %s at %d:%d with %q", p, file, tt.line, tt.col, tt.msg)
			}
			if !strings.Contains(p.Error(), "will not write to it") {
				t.Errorf("Error() = %q should say the file is left alone", p.Error())
			}
			// The broken scope contributes nothing: the other file and the
			// defaults apply.
			if got := s.Compaction(""); got.Enabled != true || got.KeepRecentTokens != 20000 {
				t.Errorf("Compaction = %+v, want defaults where the broken file spoke", got)
			}
			if tt.project != "" && tt.global != "" {
				if got := s.Compaction("").ReserveTokens; got != 1000 {
					t.Errorf("reserveTokens = %d, want the healthy file's 1000", got)
				}
			}

			// Writes to the broken file are refused, and it stays byte for byte.
			ctx := context.Background()
			_, err := s.Set(ctx, tt.brokenIn, "compaction.enabled", "true")
			if !errors.Is(err, ErrBrokenFile) || !strings.Contains(err.Error(), file) {
				t.Errorf("Set on the broken file = %v, want ErrBrokenFile naming the file", err)
			}
			if _, _, err := s.Unset(ctx, tt.brokenIn, "compaction.enabled"); !errors.Is(err, ErrBrokenFile) {
				t.Errorf("Unset on the broken file = %v, want ErrBrokenFile", err)
			}
			if tt.brokenIn == Global {
				if _, err := s.Trust(ctx, t.TempDir()); !errors.Is(err, ErrBrokenFile) {
					t.Errorf("Trust with a broken global file = %v, want ErrBrokenFile", err)
				}
			}
			if after := readFile(t, file); after != before {
				t.Errorf("broken file changed:\n%q\nwant\n%q", after, before)
			}
			entries, _ := os.ReadDir(filepath.Dir(file))
			for _, e := range entries {
				if e.Name() != "settings.json" {
					t.Errorf("left behind: %s", e.Name())
				}
			}
		})
	}
}

func TestUnreadableFile(t *testing.T) {
	agent, proj := dirs(t, "", "")
	// A directory where the file should be cannot be read as one.
	if err := os.Mkdir(filepath.Join(agent, "settings.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Load(context.Background(), Options{AgentDir: agent, ProjectDir: proj})
	if err != nil {
		t.Fatal(err)
	}
	p := s.Problems()
	if len(p) != 1 || !p[0].Broken || !strings.Contains(p[0].Msg, "cannot be read") || p[0].Line != 0 {
		t.Fatalf("problems = %v, want one unreadable file", p)
	}
	if !strings.HasPrefix(p[0].Error(), s.GlobalFile()+": cannot be read") {
		t.Errorf("Error() = %q", p[0].Error())
	}
	if _, err := s.Set(context.Background(), Global, "compaction.enabled", "false"); !errors.Is(err, ErrBrokenFile) {
		t.Errorf("Set = %v, want ErrBrokenFile", err)
	}
}

func TestLoadCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Load(ctx, Options{AgentDir: t.TempDir()}); !errors.Is(err, context.Canceled) {
		t.Errorf("Load = %v, want context.Canceled", err)
	}
}

func TestProjectInHome(t *testing.T) {
	// Started in the home directory: the "project" file would be the
	// global file. It is read once, as global.
	home := t.TempDir()
	agent := filepath.Join(home, ".prime", "agent")
	os.MkdirAll(agent, 0o755)
	writeFile(t, filepath.Join(agent, "settings.json"), `{"hooks": [{"event": "e", "command": "c"}]}`)
	s, err := Load(context.Background(), Options{AgentDir: agent, ProjectDir: home})
	if err != nil {
		t.Fatal(err)
	}
	if s.ProjectFile() != "" || len(s.Hooks()) != 1 || s.Hooks()[0].Source.Scope != Global {
		t.Errorf("project file %q, hooks %v: want no project scope and one global hook", s.ProjectFile(), s.Hooks())
	}
	if _, err := s.Set(context.Background(), Project, "compaction.enabled", "false"); err == nil {
		t.Error("Set(Project) with no project scope: no error")
	}
}

func TestFindProject(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	agent := filepath.Join(home, ".prime", "agent")
	proj := filepath.Join(home, "src", "app")
	deep := filepath.Join(proj, "internal", "pkg")
	bare := filepath.Join(home, "src", "other", "sub")
	for _, d := range []string{agent, filepath.Join(proj, ".prime", "agent"), deep, bare} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A file named .prime/agent is not a project marker.
	os.MkdirAll(filepath.Join(home, "src", "other", ".prime"), 0o755)
	writeFile(t, filepath.Join(home, "src", "other", ".prime", "agent"), "")
	tests := []struct{ start, want string }{
		{proj, proj},
		{deep, proj},
		{bare, bare}, // no marker up to the home directory, whose .prime/agent is the agent directory
		{home, home},
	}
	for _, tt := range tests {
		got, err := FindProject(tt.start, agent)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("FindProject(%s) = %s, want %s", tt.start, got, tt.want)
		}
	}
}

func TestDefaultAgentDir(t *testing.T) {
	cwd, _ := os.Getwd()
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HOME": "/home/u"}, "/home/u/.prime/agent"},
		{map[string]string{"HOME": "/home/u", AgentDirEnv: "/etc/prime"}, "/etc/prime"},
		{map[string]string{"HOME": "/home/u", AgentDirEnv: "~/cfg/prime"}, "/home/u/cfg/prime"},
		{map[string]string{"HOME": "/home/u", AgentDirEnv: "~"}, "/home/u"},
		{map[string]string{"HOME": "/home/u", AgentDirEnv: "rel/dir"}, filepath.Join(cwd, "rel/dir")},
	}
	for _, tt := range tests {
		got, err := DefaultAgentDir(func(k string) string { return tt.env[k] })
		if err != nil || got != tt.want {
			t.Errorf("DefaultAgentDir(%v) = %q, %v; want %q", tt.env, got, err, tt.want)
		}
	}
}

func TestKeys(t *testing.T) {
	var names []string
	for _, k := range Keys() {
		names = append(names, k.Name)
		if k.Summary == "" {
			t.Errorf("%s has no summary", k.Name)
		}
		if got, _ := value(t, Defaults(), "", k.Name); !cmp.Equal(got, k.Default) {
			t.Errorf("%s: default %v, but resolves to %v", k.Name, k.Default, got)
		}
	}
	want := []string{
		"compaction.enabled", "compaction.reserveTokens", "compaction.keepRecentTokens", "compaction.model",
		"compaction.background", "compaction.backgroundThreshold", "branchSummary.reserveTokens", "branchSummary.skipPrompt",
		"retry.enabled", "retry.maxRetries", "retry.baseDelayMs", "retry.maxDelayMs",
		"retry.streamIdleTimeoutMs", "retry.streamKeepAliveTimeoutMs",
		"defaultProvider", "defaultModel", "defaultThinkingLevel", "steeringMode", "followUpMode", "shellPath",
		"hideThinkingBlock", "doubleEscapeAction", "maxTurns", "bashTimeoutSec",
		"shellEnvironment.exclude", "shellEnvironment.include", "shellEnvironment.inheritSecrets",
		"permissions.mode", "permissions.network", "permissions.denyRead", "permissions.allowWrite",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("Keys mismatch (-want +got):\n%s", diff)
	}
}

// TestBackgroundSettings: compaction.background and backgroundThreshold, a
// percentage from 1 to 100 on the command line and in files alike.
func TestBackgroundSettings(t *testing.T) {
	if b := Defaults().Background(); !b.Enabled || b.Percent != 80 {
		t.Errorf("defaults %+v", b)
	}
	s, err := Defaults().WithOverride("compaction.backgroundThreshold", "65")
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.WithOverride("compaction.background", "false"); err != nil {
		t.Fatal(err)
	}
	if b := s.Background(); b.Enabled || b.Percent != 65 {
		t.Errorf("overridden %+v", b)
	}
	for _, bad := range []string{"0", "101", "-5", "half"} {
		if _, err := Defaults().WithOverride("compaction.backgroundThreshold", bad); err == nil {
			t.Errorf("backgroundThreshold %s accepted", bad)
		}
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		json    string
		percent int
		problem bool
	}{{`{"compaction": {"backgroundThreshold": 90}}`, 90, false}, {`{"compaction": {"backgroundThreshold": 150}}`, 80, true}, {`{"compaction": {"backgroundThreshold": 0.5}}`, 80, true}} {
		if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(tc.json), 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := Load(t.Context(), Options{AgentDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Background().Percent; got != tc.percent || (len(st.Problems()) > 0) != tc.problem {
			t.Errorf("%s: percent %d, problems %v", tc.json, got, st.Problems())
		}
	}
}

// BenchmarkLoad reads a global file as pi leaves it and a project file.
func BenchmarkLoad(b *testing.B) {
	root := b.TempDir()
	agent, proj := filepath.Join(root, "agent"), filepath.Join(root, "proj")
	os.MkdirAll(agent, 0o755)
	os.MkdirAll(filepath.Join(proj, ".prime", "agent"), 0o755)
	os.WriteFile(filepath.Join(agent, "settings.json"), []byte(piSettings), 0o644)
	os.WriteFile(filepath.Join(proj, ".prime", "agent", "settings.json"),
		[]byte(`{"compaction": {"keepRecentTokens": 30000, "modelOverrides": {"openai/gpt-5": {"reserveTokens": 32768}}}, "hooks": [{"event": "session_compact", "command": "./h"}]}`), 0o644)
	ctx := context.Background()
	for b.Loop() {
		s, err := Load(ctx, Options{AgentDir: agent, ProjectDir: proj})
		if err != nil {
			b.Fatal(err)
		}
		_ = s.Compaction("openai/gpt-5")
	}
}

// BenchmarkSet is one locked, atomic write of one key.
func BenchmarkSet(b *testing.B) {
	agent := b.TempDir()
	os.WriteFile(filepath.Join(agent, "settings.json"), []byte(piSettings), 0o644)
	ctx := context.Background()
	s, err := Load(ctx, Options{AgentDir: agent})
	if err != nil {
		b.Fatal(err)
	}
	v := false
	for b.Loop() {
		v = !v
		if s, err = s.Set(ctx, Global, "compaction.enabled", strconv.FormatBool(v)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTopLevelKeys reads, validates and writes pi's top-level keys (no
// section), strings and enumerations.
func TestTopLevelKeys(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "settings.json")
	os.WriteFile(file, []byte(`{"defaultProvider": "anthropic", "defaultModel": "claude-opus-5",
  "defaultThinkingLevel": "loud", "steeringMode": "all", "shellPath": 7}`), 0o644)
	st, err := Load(t.Context(), Options{AgentDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c := st.Conversation()
	if c.DefaultProvider != "anthropic" || c.DefaultModel != "claude-opus-5" || c.SteeringMode != "all" ||
		c.FollowUpMode != "one-at-a-time" || c.DefaultThinkingLevel != "" || c.ShellPath != "" {
		t.Errorf("conversation settings %+v", c)
	}
	var keys []string
	for _, p := range st.Problems() {
		keys = append(keys, p.Key)
		if p.Line == 0 {
			t.Errorf("problem without a place: %v", p)
		}
	}
	if !slices.Equal(keys, []string{"defaultThinkingLevel", "shellPath"}) {
		t.Errorf("problems %v", st.Problems())
	}
	st, err = st.Set(t.Context(), Global, "defaultThinkingLevel", "high")
	if err != nil {
		t.Fatal(err)
	}
	if st.Conversation().DefaultThinkingLevel != "high" {
		t.Error("the written level does not read back")
	}
	data, _ := os.ReadFile(file)
	if !strings.Contains(string(data), `"defaultThinkingLevel": "high"`) || !strings.Contains(string(data), `"shellPath": 7`) {
		t.Errorf("file after set:\n%s", data)
	}
	if _, err := st.Set(t.Context(), Global, "steeringMode", "some"); err == nil || !strings.Contains(err.Error(), "one-at-a-time, all") {
		t.Errorf("bad enum value: %v", err)
	}
	if _, err := st.Set(t.Context(), Global, "doubleEscapeAction", "fork"); err != nil {
		t.Error(err)
	}
}

func TestResources(t *testing.T) {
	home := t.TempDir()
	agentDir, project := filepath.Join(home, ".prime", "agent"), filepath.Join(home, "src", "app")
	writeFile := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(filepath.Join(agentDir, "settings.json"), `{"skills": ["my-skills", "~/shared/skills", "/abs/skill.md", "+plus", "!*.tmp", 3], "prompts": "nope"}`)
	writeFile(filepath.Join(project, ".prime", "agent", "settings.json"), `{"prompts": ["team-prompts"]}`)
	s, err := Load(context.Background(), Options{AgentDir: agentDir, ProjectDir: project, WorkDir: project, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	var skills []string
	for _, p := range s.Resources(SkillsKey) {
		skills = append(skills, p.Resolve("/home/me"))
	}
	want := []string{filepath.Join(agentDir, "my-skills"), "/home/me/shared/skills", "/abs/skill.md", filepath.Join(agentDir, "plus")}
	if !slices.Equal(skills, want) {
		t.Errorf("skills %v, want %v", skills, want)
	}
	prompts := s.Resources(PromptsKey)
	if len(prompts) != 1 || prompts[0].Resolve("") != filepath.Join(project, ".prime", "agent", "team-prompts") || prompts[0].Source.Scope != Project {
		t.Errorf("prompts %+v", prompts)
	}
	var probs []string
	for _, p := range s.Problems() {
		probs = append(probs, p.Key+": "+p.Msg)
	}
	wantProbs := []string{`skills[4]: "!*.tmp": exclusions (!pattern, -path) are not supported; ignored`, "skills[5]: 3 is not a path", `prompts: "nope" is a string; want a list of paths`}
	if !slices.Equal(probs, wantProbs) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(probs, "\n"), strings.Join(wantProbs, "\n"))
	}
}
