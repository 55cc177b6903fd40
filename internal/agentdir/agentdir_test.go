package agentdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HOME": "/home/u"}, "/home/u/.prime/agent"},
		{map[string]string{"HOME": "/home/u", Env: "/etc/prime"}, "/etc/prime"},
		{map[string]string{"HOME": "/home/u", Env: "~/cfg/prime"}, "/home/u/cfg/prime"},
		{map[string]string{"HOME": "/home/u", Env: "~"}, "/home/u"},
		{map[string]string{"HOME": "/home/u", Env: "~other/x"}, filepath.Join(cwd, "~other/x")},
		{map[string]string{"HOME": "/home/u", Env: "rel/dir"}, filepath.Join(cwd, "rel/dir")},
	} {
		got, err := Find(func(k string) string { return tt.env[k] })
		if err != nil || got != tt.want {
			t.Errorf("Find(%v) = %q, %v; want %q", tt.env, got, err, tt.want)
		}
	}
}

// TestFindWithoutHome: with HOME unset the system's home directory is
// used, and the error, when there is none, says what to set.
func TestFindWithoutHome(t *testing.T) {
	t.Setenv("HOME", "")
	got, err := Find(func(string) string { return "" })
	if h, herr := os.UserHomeDir(); herr == nil {
		if err != nil || got != filepath.Join(h, ".prime", "agent") {
			t.Errorf("Find = %q, %v; want under %s", got, err, h)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), Env) {
		t.Errorf("Find without a home: %q, %v", got, err)
	}
}
