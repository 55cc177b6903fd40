package main

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseChatArgs(t *testing.T) {
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for _, tt := range []struct {
		name string
		args string
		want chatFlags
		err  string // a part of the error; "" when none
	}{
		{"print takes a message", "-p hello world", chatFlags{print: true, messages: []string{"hello", "world"}}, ""},
		{"print leaves a flag and a file", "-p --no-session @a.txt", chatFlags{print: true, noSession: true, files: []string{"a.txt"}}, ""},
		{"value flags, both forms", "--model fake/m --thinking=high -t read,bash --name=n --cwd /w --max-turns 3",
			chatFlags{model: "fake/m", thinking: "high", tools: "read,bash", name: "n", cwd: "/w", maxTurns: "3"}, ""},
		{"an inline value may hold =", "--system-prompt=a=b", chatFlags{systemPrompt: "a=b"}, ""},
		{"short flags take no inline value", "-n=x", chatFlags{}, "unknown flag -n=x"},
		{"repeatable", "--append-system-prompt a --append-system-prompt=b", chatFlags{appendPrompt: []string{"a", "b"}}, ""},
		{"skills and templates made absolute", "--skill s --prompt-template=p/t",
			chatFlags{skills: []string{abs("s")}, templates: []string{abs("p/t")}}, ""},
		{"switches", "-nt -c -nc -ns -np --no-mcp --no-hooks --abort-at-eof --keep-tool-output --yolo -y -h",
			chatFlags{noTools: true, cont: true, noContext: true, noSkills: true, noTemplates: true, noMCP: true, noHooks: true,
				abortAtEOF: true, keepOutput: true, yolo: true, yes: true, help: true}, ""},
		{"double dash ends the flags", "a -- --model x @f", chatFlags{messages: []string{"a", "--model", "x", "@f"}}, ""},
		{"a lone dash is a message", "-", chatFlags{messages: []string{"-"}}, ""},
		{"mode", "--mode json --permission-mode ask -r", chatFlags{mode: "json", permissionMode: "ask", resume: true}, ""},
		{"bad mode", "--mode xml", chatFlags{}, `--mode "xml"`},
		{"empty session name", "--session= ", chatFlags{}, "--session needs a FILE"},
		{"session", "--session f.jsonl", chatFlags{sessionFile: "f.jsonl"}, ""},
		{"missing value", "hi --model", chatFlags{}, "--model needs a value"},
		{"unknown flag", "--frobnicate", chatFlags{}, "unknown flag --frobnicate"},
		{"session flags exclude each other", "-c --no-session", chatFlags{}, "exclude each other"},
		{"tools and no tools", "-t read --no-tools", chatFlags{}, "exclude each other"},
		{"bad thinking", "--thinking=max", chatFlags{}, `--thinking "max"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseChatArgs(strings.Split(tt.args, " "))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}
