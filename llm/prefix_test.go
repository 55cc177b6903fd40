package llm

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// packagePrefix is an error text that starts the way Go package errors do,
// "name: …", where a user should read what failed.
var packagePrefix = regexp.MustCompile(`^[a-z]+: `)

// TestNoPackagePrefix: no error this package and its providers make starts
// with a package or provider name ("llm: …", "anthropic: …"); a user reads
// these texts in the TUI, print mode and the session's errorMessage.
func TestNoPackagePrefix(t *testing.T) {
	for _, e := range []*APIError{
		NewAPIError("anthropic", 503, "server_error", "the server is busy", 0),
		NewAPIError("openai", 413, "", "", 0),
		NewAPIError("google", 0, "UNAVAILABLE", "overloaded", 0),
		{Provider: "anthropic", Message: "the server sent nothing for 5m0s", Kind: ErrConnection},
		{Message: "undecodable chunk", Kind: ErrBadResponse},
		NewAPIError("", 401, "authentication_error", "invalid x-api-key", 0),
	} {
		if s := e.Error(); packagePrefix.MatchString(s) || s == "" {
			t.Errorf("APIError %+v reads %q", *e, s)
		}
	}
	if got := NewAPIError("anthropic", 503, "server_error", "the server is busy", 0).Error(); got != "503 server_error from anthropic: the server is busy" {
		t.Errorf("APIError text %q", got)
	}
	if got := (&APIError{Provider: "ollama", Message: "nothing is listening", Kind: ErrConnection}).Error(); got != "connection to ollama failed: nothing is listening" {
		t.Errorf("APIError text without status %q", got)
	}
	for _, events := range [][]Event{
		nil,
		{{Type: EventDone}},
		{{Type: EventError}},
		{{Type: EventError, Message: &AssistantMessage{ErrorMessage: "boom"}}},
	} {
		_, err := Collect(func(yield func(Event) bool) {
			for _, ev := range events {
				if !yield(ev) {
					return
				}
			}
		})
		if err == nil || packagePrefix.MatchString(err.Error()) {
			t.Errorf("Collect(%v) = %v", events, err)
		}
	}
	for _, raw := range []string{`{"role":"nobody"}`, `{}`, `{"role":"user","content":7}`, `[`} {
		if _, err := DecodeMessage([]byte(raw)); err == nil || packagePrefix.MatchString(err.Error()) {
			t.Errorf("DecodeMessage(%s) = %v", raw, err)
		}
	}
}

// TestNoPackagePrefixInSource: no errors.New or fmt.Errorf of this package
// or the packages under it starts its text with "name: ", so a new error
// cannot bring the prefix back.
func TestNoPackagePrefixInSource(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); !ok || !(pkg.Name == "errors" && sel.Sel.Name == "New" || pkg.Name == "fmt" && sel.Sel.Name == "Errorf") {
				return true
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && packagePrefix.MatchString(s) {
					t.Errorf("%s: error text %q starts with a package name", fset.Position(lit.Pos()), s)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
