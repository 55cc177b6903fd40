package tool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/internal/golden"
)

// searchTree makes a repository with ignore rules of every kind, a nested
// repository, hidden, binary and linked files.
func searchTree(t *testing.T) Env {
	t.Helper()
	env := testEnv(t)
	d := env.CWD
	files := map[string]string{
		".git/info/exclude":   "excluded.txt\n",
		".gitignore":          "*.log\nbuild/\n!keep.log\n/root-only.txt\n",
		"a.go":                "package a\n// TODO first\nfunc A() {}\n// TODO second\n",
		"b.log":               "TODO in an ignored log\n",
		"keep.log":            "TODO kept by negation\n",
		"build/out.go":        "TODO in an ignored directory\n",
		"root-only.txt":       "TODO anchored, ignored\n",
		"sub/root-only.txt":   "TODO anchored elsewhere, kept\n",
		"sub/.gitignore":      "*.tmp\n",
		"sub/x.tmp":           "TODO ignored by the nested file\n",
		"sub/c.go":            "package sub\n\nfunc C() {\n\t// todo lower case\n}\n",
		".hidden/h.go":        "// TODO hidden files are searched\n",
		"excluded.txt":        "TODO excluded by info/exclude\n",
		"bin.dat":             "\x00\x01TODO binary",
		"nested/.git/HEAD":    "ref: refs/heads/main\n",
		"nested/n.log":        "TODO the parent's rules stop at a nested repository\n",
		"crlf.txt":            "TODO windows\r\nline two\r\n",
		"Upper.GO":            "TODO upper-case extension\n",
		"dots/a.b":            "a.b literal\naxb regex\n",
		"deep/er/still/x.txt": "TODO deep\n",
	}
	for rel, content := range files {
		writeFile(t, d, rel, content)
	}
	if err := os.Symlink("a.go", filepath.Join(d, "link.go")); err != nil {
		t.Fatal(err)
	}
	return env
}

func TestGrep(t *testing.T) {
	env := searchTree(t)
	writeFile(t, env.CWD, "ctx/lines.txt", "1\nmatch 2\n3\nmatch 4\n5\n6\n7\n8\nmatch 9\n10\n11\n")
	writeFile(t, env.CWD, "wide/long.txt", "start "+strings.Repeat("é", 600)+" end\n")
	var many strings.Builder
	for i := range 400 {
		fmt.Fprintf(&many, "hit %d %s\n", i, strings.Repeat("w", 200))
	}
	writeFile(t, env.CWD, "big/many.txt", many.String())
	tests := []struct{ label, args string }{
		{"basic", `{"pattern":"TODO"}`},
		{"ignore case", `{"pattern":"todo","ignoreCase":true,"glob":"*.go"}`},
		{"regex", `{"pattern":"a.b","path":"dots"}`},
		{"literal", `{"pattern":"a.b","path":"dots","literal":true}`},
		{"anchors per line", `{"pattern":"^func [A-Z]\\(\\) \\{$"}`},
		{"context merges windows", `{"pattern":"match","path":"ctx","context":1}`},
		{"limit with trailing context", `{"pattern":"match","path":"ctx","context":2,"limit":2}`},
		{"limit exactly reached: no notice", `{"pattern":"match","path":"ctx","limit":3}`},
		{"limit reached", `{"pattern":"TODO","limit":2}`},
		{"glob by name", `{"pattern":"TODO","glob":"*.go"}`},
		{"glob by path", `{"pattern":"TODO","glob":"./sub/*.txt"}`},
		{"glob with braces", `{"pattern":"TODO","glob":"*.{txt,go}"}`},
		{"negated glob", `{"pattern":"TODO","glob":"!*.go"}`},
		{"negated directory glob", `{"pattern":"TODO","glob":"!deep"}`},
		{"one file", `{"pattern":"TODO","path":"a.go"}`},
		{"an ignored file named directly", `{"pattern":"TODO","path":"b.log"}`},
		{"a subdirectory keeps the parent's rules", `{"pattern":"TODO","path":"sub"}`},
		{"a binary file named directly", `{"pattern":"TODO","path":"bin.dat"}`},
		{"long lines cut", `{"pattern":"start","path":"wide"}`},
		{"output cut at the byte limit", `{"pattern":"hit","path":"big","limit":1000}`},
		{"no matches", `{"pattern":"nothing like this"}`},
		{"invalid regular expression", `{"pattern":"a(b"}`},
		{"invalid glob", `{"pattern":"x","glob":"[a"}`},
		{"missing path", `{"pattern":"x","path":"nowhere"}`},
	}
	tr := newTranscript(env)
	for _, tt := range tests {
		res, err := call(t, context.Background(), env, "grep", tt.args)
		if tt.label == "output cut at the byte limit" {
			text := resultText(res)
			res.Content = llmTexts{{"…\n" + text[strings.LastIndex(text[:len(text)-300], "\n")+1:]}}.content()
		}
		tr.add(tt.label+" "+tt.args, res, err)
	}
	golden.Check(t, "grep.golden", tr.String())
}

func TestFind(t *testing.T) {
	env := searchTree(t)
	tests := []struct{ label, args string }{
		{"by name at any depth", `{"pattern":"*.go"}`},
		{"everything", `{"pattern":"*"}`},
		{"by path", `{"pattern":"sub/*"}`},
		{"globstar", `{"pattern":"**/x.*"}`},
		{"leading ./", `{"pattern":"./deep/**"}`},
		{"braces", `{"pattern":"{a,c}.go"}`},
		{"lower case ignores case", `{"pattern":"upper.go"}`},
		{"mixed case is exact", `{"pattern":"upper.GO"}`},
		{"in a subdirectory", `{"pattern":"*","path":"sub"}`},
		{"limit", `{"pattern":"*.go","limit":2}`},
		{"limit exactly reached", `{"pattern":"*.go","limit":5}`},
		{"absolute pattern", `{"pattern":"` + filepath.ToSlash(env.CWD) + `/sub/*.go"}`},
		{"no match", `{"pattern":"*.rs"}`},
		{"invalid glob", `{"pattern":"[oops"}`},
		{"missing directory", `{"pattern":"*","path":"nowhere"}`},
		{"not a directory", `{"pattern":"*","path":"a.go"}`},
	}
	tr := newTranscript(env)
	for _, tt := range tests {
		res, err := call(t, context.Background(), env, "find", tt.args)
		tr.add(tt.label+" "+strings.ReplaceAll(tt.args, env.CWD, "$CWD"), res, err)
	}
	golden.Check(t, "find.golden", tr.String())
}

func TestLs(t *testing.T) {
	env := testEnv(t)
	d := env.CWD
	for _, rel := range []string{"b.txt", "A.txt", "c/inner.txt", ".dot", "B.md"} {
		writeFile(t, d, rel, "x")
	}
	if err := os.Mkdir(filepath.Join(d, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("c", filepath.Join(d, "to-dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("missing", filepath.Join(d, "broken")); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ label, args string }{
		{"the working directory", `{}`},
		{"limit", `{"limit":3}`},
		{"limit below 1 means 1", `{"limit":0}`},
		{"a subdirectory", `{"path":"c"}`},
		{"empty directory", `{"path":"empty"}`},
		{"missing", `{"path":"nowhere"}`},
		{"not a directory", `{"path":"b.txt"}`},
	}
	tr := newTranscript(env)
	for _, tt := range tests {
		res, err := call(t, context.Background(), env, "ls", tt.args)
		tr.add(tt.label+" "+tt.args, res, err)
	}
	golden.Check(t, "ls.golden", tr.String())
}

func TestLsManyEntriesCutAtBytes(t *testing.T) {
	env := testEnv(t)
	for i := range 600 {
		writeFile(t, env.CWD, fmt.Sprintf("%03d-%s", i, strings.Repeat("n", 120)), "")
	}
	text := mustCall(t, env, "ls", `{"limit":1000}`)
	if !strings.HasSuffix(text, "\n\n[Output cut at 50.0KB.]") || len(text) > MaxBytes+100 {
		t.Errorf("text ends %q (%d bytes)", text[len(text)-60:], len(text))
	}
	text = mustCall(t, env, "ls", `{}`)
	if !strings.HasSuffix(text, "[500 entries shown, the limit: use limit=1000 for more. Output cut at 50.0KB.]") {
		t.Errorf("text ends %q", text[len(text)-100:])
	}
}

func TestSearchAborted(t *testing.T) {
	env := searchTree(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct{ tool, args string }{
		{"grep", `{"pattern":"TODO"}`}, {"find", `{"pattern":"*"}`}, {"ls", `{}`},
		{"write", `{"path":"w","content":"x"}`}, {"edit", `{"path":"a.go","edits":[{"oldText":"A","newText":"B"}]}`},
	} {
		_, err := call(t, ctx, env, c.tool, c.args)
		if !errors.Is(err, ErrAborted) || err.Error() != abortedText {
			t.Errorf("%s: error %v", c.tool, err)
		}
	}
	// A walk notices a cancellation between directories.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	seen := 0
	err := walkTree(ctx, env.CWD, func(e walkEntry) (bool, error) {
		if seen++; seen == 3 {
			cancel()
		}
		return true, nil
	})
	if !errors.Is(err, ErrAborted) {
		t.Errorf("walk error %v", err)
	}
}
