package tool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
)

// testEnv returns an Env working in a fresh temporary directory.
func testEnv(t testing.TB) Env {
	t.Helper()
	return Env{CWD: t.TempDir(), TempDir: t.TempDir()}
}

// toolNamed returns the built-in tool called name.
func toolNamed(t testing.TB, env Env, name string) Tool {
	t.Helper()
	for _, tl := range Builtins(env) {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

// call runs a tool the way the loop does: repair, validate, run.
func call(t testing.TB, ctx context.Context, env Env, name, args string) (Result, error) {
	t.Helper()
	tl := toolNamed(t, env, name)
	raw := jsontext.Value(args)
	if p, ok := tl.(ArgPreparer); ok {
		raw = p.PrepareArgs(raw)
	}
	v, err := Validate(tl.Spec(), raw)
	if err != nil {
		return Result{}, err
	}
	return tl.Run(ctx, Call{ID: "call-1", Args: v})
}

// mustCall runs a call that must succeed and returns its text.
func mustCall(t testing.TB, env Env, name, args string) string {
	t.Helper()
	res, err := call(t, context.Background(), env, name, args)
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	if res.IsError {
		t.Fatalf("%s %s: error result %q", name, args, resultText(res))
	}
	return resultText(res)
}

// mustFail runs a call that must fail and returns the error's text.
func mustFail(t testing.TB, env Env, name, args string) string {
	t.Helper()
	res, err := call(t, context.Background(), env, name, args)
	if err == nil {
		t.Fatalf("%s %s: no error, got %q", name, args, resultText(res))
	}
	return err.Error()
}

// resultText joins the text blocks of a result.
func resultText(r Result) string {
	var parts []string
	for _, c := range r.Content {
		if tx, ok := c.(llm.Text); ok {
			parts = append(parts, tx.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// writeFile writes a file under dir, making its directories.
func writeFile(t testing.TB, dir, rel, content string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// transcript collects texts for a golden file, with the temporary
// directories replaced by stable names.
type transcript struct {
	b    strings.Builder
	repl *strings.Replacer
}

func newTranscript(env Env) *transcript {
	return &transcript{repl: strings.NewReplacer(env.CWD, "$CWD", env.TempDir, "$TMP")}
}

// add records one call's outcome under a label.
func (tr *transcript) add(label string, res Result, err error) {
	tr.b.WriteString("### " + label + "\n")
	switch {
	case err != nil:
		kind := "error"
		if errors.Is(err, ErrAborted) {
			kind = "error (aborted)"
		}
		tr.b.WriteString(kind + ":\n" + tr.repl.Replace(err.Error()) + "\n")
	case res.IsError:
		tr.b.WriteString("error result:\n" + tr.repl.Replace(resultText(res)) + "\n")
	default:
		tr.b.WriteString(tr.repl.Replace(resultText(res)) + "\n")
	}
	if len(res.Details) > 0 {
		tr.b.WriteString("details: " + tr.repl.Replace(string(res.Details)) + "\n")
	}
	tr.b.WriteString("\n")
}

func (tr *transcript) String() string { return tr.b.String() }

// llmText builds text content for tests that shorten a result.
type llmText struct{ text string }

type llmTexts []llmText

func (ts llmTexts) content() []llm.Content {
	out := make([]llm.Content, len(ts))
	for i, t := range ts {
		out[i] = llm.Text{Text: t.text}
	}
	return out
}
