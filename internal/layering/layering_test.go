package layering

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/prime-agent/prime"

// frontEnds are the front ends' package directories, each with the
// packages under it. A new front end joins this list.
var frontEnds = []string{"tui", "rpc", "printmode"}

// forbidden are the packages (each with those under it) that only the
// agent orchestrates: a front end importing one reaches below the agent.
var forbidden = []string{
	"session", "compaction", "settings", "tool", "hook", "loop", "permission",
	"skill", "prompttemplate", "llm/registry",
}

// shared are the packages the front ends share beside the agent: the JSON
// form of the agent's events and results that RPC and JSON mode both write
// (agentjson, where the house's wire package lives).
var shared = []string{"agentjson"}

// allowed says which of the module's packages a front end may import
// besides its own: the agent, llm's types, the shared packages and internal
// helpers.
func allowed(rel string) bool {
	return rel == "agent" || rel == "llm" || slices.Contains(shared, rel) || strings.HasPrefix(rel, "internal/")
}

// TestFrontEndsImportOnlyTheAgent: no front-end package imports a package
// below the agent (its non-test files, for this platform).
func TestFrontEndsImportOnlyTheAgent(t *testing.T) {
	root := moduleRoot(t)
	for _, fe := range frontEnds {
		for _, dir := range packageDirs(t, filepath.Join(root, fe)) {
			pkg, err := build.Default.ImportDir(dir, 0)
			if err != nil {
				t.Errorf("%s: %v", dir, err)
				continue
			}
			rel, _ := filepath.Rel(root, dir)
			for _, bad := range violations(fe, pkg.Imports) {
				t.Errorf("%s/%s imports %s: a front end sees the session through the agent's read models only", module, filepath.ToSlash(rel), bad)
			}
		}
	}
}

// violations returns the imports of a package of front end fe that it
// must not have.
func violations(fe string, imports []string) []string {
	var out []string
	for _, imp := range imports {
		rel, ok := strings.CutPrefix(imp, module+"/")
		if !ok {
			continue // the standard library and other modules
		}
		switch {
		case slices.ContainsFunc(forbidden, func(f string) bool { return rel == f || strings.HasPrefix(rel, f+"/") }):
			out = append(out, imp)
		case rel == fe || strings.HasPrefix(rel, fe+"/") || allowed(rel):
		default:
			out = append(out, imp+" (not the agent, llm, a shared package or internal)")
		}
	}
	return out
}

// TestViolations: the rule itself, on made-up import lists.
func TestViolations(t *testing.T) {
	for _, c := range []struct {
		fe      string
		imports []string
		want    int
	}{
		{"tui", []string{"fmt", module + "/agent", module + "/llm", module + "/internal/numfmt", module + "/tui/markdown"}, 0},
		{"tui", []string{module + "/session"}, 1},
		{"tui", []string{module + "/session/sessiongen"}, 1},
		{"rpc", []string{module + "/llm/registry", module + "/compaction", module + "/settings"}, 3},
		{"rpc", []string{module + "/tool", module + "/hook", module + "/loop", module + "/permission"}, 4},
		{"rpc", []string{module + "/skill", module + "/prompttemplate"}, 2},
		{"rpc", []string{module + "/tui"}, 1},
		{"rpc", []string{module + "/llm/anthropic"}, 1},
		{"rpc", []string{module + "/sessionx"}, 1},
		{"rpc", []string{module + "/agentjson"}, 0},
	} {
		if got := violations(c.fe, c.imports); len(got) != c.want {
			t.Errorf("%s %v: %q, want %d violations", c.fe, c.imports, got, c.want)
		}
	}
}

// moduleRoot is the directory holding go.mod, above this one.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = up
	}
}

// packageDirs lists dir and the directories under it that hold Go files
// (testdata left out); dir itself must be a package.
func packageDirs(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); p != dir && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if m, _ := filepath.Glob(filepath.Join(p, "*.go")); len(m) > 0 {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(out, dir) {
		t.Fatalf("%s holds no Go package", dir)
	}
	return out
}
