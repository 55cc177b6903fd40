package settings

import (
	"fmt"
	"strings"
	"testing"
)

// TestUnusedKeys: a pi user's settings.json, with keys from pi 1.6's
// settings.md, loads without problems; every key Prime does not read is
// listed with its place (pi's, misspelt, a section's unknown field), the
// keys Prime reads are not, and a project file's are listed too.
func TestUnusedKeys(t *testing.T) {
	global := `{
  "$schema": "https://pi.dev/schemas/settings.schema.json",
  "lastChangelogVersion": "1.6.0",
  "defaultProvider": "anthropic",
  "theme": "dark",
  "httpProxy": "http://proxy:8080",
  "shellCommandPrefix": "shopt -s expand_aliases",
  "compaction": {"enabled": true, "reserveTokens": 16384, "modelOverrides": {}},
  "retry": {"maxRetries": 3, "provider": {"timeoutMs": 60000}},
  "skills": [], "prompts": [], "hooks": [], "permissions": {"mode": "ask"},
  "compactoin": {"enabled": false}
}`
	s := load(t, global, `{"tuiMode": "fullscreen"}`)
	if p := s.Problems(); len(p) != 0 {
		t.Fatalf("problems %v", p)
	}
	var got []string
	for _, u := range s.Unused() {
		got = append(got, fmt.Sprintf("%s:%d:%d %s: %s", u.Scope, u.Line, u.Column, u.Key, u.Msg))
	}
	want := []string{
		"global:5:12 theme: a setting of pi's that Prime does not use",
		"global:6:16 httpProxy: a setting of pi's that Prime does not use",
		"global:7:25 shellCommandPrefix: a setting of pi's that Prime does not use",
		"global:9:42 retry.provider: not a field of retry that Prime knows",
		"global:11:17 compactoin: not a setting Prime knows ('prime settings' lists them)",
		"project:1:13 tuiMode: a setting of pi's that Prime does not use",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("unused:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if v, _ := value(t, s, "", "compaction.reserveTokens"); v != 16384 {
		t.Errorf("a used key lost its value: %v", v)
	}
}
