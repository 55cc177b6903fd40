// Package npmtest installs the real MCP servers from npm that tests run
// against, once per machine, and skips a test with a clear message when
// npm is missing or cannot install them.
package npmtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Packages are the servers installed: server-everything (text, images,
// errors, slow calls) and server-filesystem.
var Packages = []string{"@modelcontextprotocol/server-everything", "@modelcontextprotocol/server-filesystem"}

// EnvDir names the directory the packages are installed in; .ci/run sets
// it so that CI installs them once. By default it is prime-test-npm in the
// user's cache directory. (Not PRIME_TEST_…: the bash tool's tests look
// for variables of that prefix in its environment.)
const EnvDir = "PRIME_MCP_NPM_DIR"

var once struct {
	sync.Once
	dir  string
	skip string
}

// Bin returns the path of an installed package's binary
// ("mcp-server-everything", "mcp-server-filesystem"), installing the
// packages the first time.
func Bin(t testing.TB, name string) string {
	t.Helper()
	once.Do(install)
	if once.skip != "" {
		t.Skip(once.skip)
	}
	return filepath.Join(once.dir, "node_modules", ".bin", name)
}

func install() {
	npm, err := exec.LookPath("npm")
	if err != nil {
		once.skip = "npm is not installed: the tests against real MCP servers from npm are skipped"
		return
	}
	dir := os.Getenv(EnvDir)
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			once.skip = "no cache directory to install the npm MCP servers in: " + err.Error()
			return
		}
		dir = filepath.Join(cache, "prime-test-npm")
	}
	done := true
	for _, bin := range []string{"mcp-server-everything", "mcp-server-filesystem"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", bin)); err != nil {
			done = false
		}
	}
	if !done {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			once.skip = "the npm MCP servers cannot be installed: " + err.Error()
			return
		}
		cmd := exec.Command(npm, append([]string{"install", "--no-audit", "--no-fund", "--silent", "--prefix", dir}, Packages...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			once.skip = "npm could not install the MCP servers (" + err.Error() + "), so the tests against them are skipped: " + string(out)
			return
		}
	}
	once.dir = dir
}
