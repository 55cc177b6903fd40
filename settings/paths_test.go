package settings

import "testing"

func TestSessionsDir(t *testing.T) {
	env := map[string]string{"HOME": "/home/ann"}
	getenv := func(k string) string { return env[k] }
	if d, _ := DefaultAgentDir(getenv); d != "/home/ann/.prime/agent" {
		t.Errorf("default agent dir %q", d)
	}
	env[AgentDirEnv] = "~/custom"
	if d, _ := DefaultAgentDir(getenv); d != "/home/ann/custom" {
		t.Errorf("~ expansion %q", d)
	}
	for _, tt := range []struct{ cwd, want string }{
		{"/Users/x/proj", "--Users-x-proj--"},
		{`C:\a\b`, "--C--a-b--"},
		{"/a:b/c", "--a-b-c--"},
		{`\\server\share`, "---server-share--"}, // only one leading separator is dropped,
		{"rel/dir", "--rel-dir--"},
	} {
		if got := EncodeCWD(tt.cwd); got != tt.want {
			t.Errorf("EncodeCWD(%q) = %q, want %q", tt.cwd, got, tt.want)
		}
	}
	if got := SessionsDir("/ag", "/home/ann/p"); got != "/ag/sessions/--home-ann-p--" {
		t.Errorf("SessionsDir %q", got)
	}
}
