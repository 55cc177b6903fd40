package hook

import (
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/settings"
)

func TestReportText(t *testing.T) {
	tests := []struct {
		r        Report
		text     string
		jsonText string
	}{
		{
			Report{Kind: Failed, Event: EventBeforeCompact, Handler: "./s.sh --x", Detail: "exited with status 2", ExitCode: 2, Output: "line 1\nline 2\n",
				Source: settings.Source{Scope: settings.Project, File: "/p/.prime/agent/settings.json", Key: "hooks[1]"}},
			"session_before_compact: hook \"./s.sh --x\" (project settings hooks[1], /p/.prime/agent/settings.json): exited with status 2\n    line 1\n    line 2",
			`{"kind":"failed","event":"session_before_compact","handler":"./s.sh --x","detail":"exited with status 2","scope":"project","file":"/p/.prime/agent/settings.json","key":"hooks[1]","exitCode":2,"output":"line 1\nline 2\n"}`,
		},
		{
			Report{Kind: Skipped, Skip: SkipUntrusted, Event: EventTree, Handler: "./t.sh", Detail: "not run: untrusted",
				Source: settings.Source{Scope: settings.Project, File: "/p/.prime/agent/settings.json", Key: "hooks[0]"}},
			`session_tree: hook "./t.sh" (project settings hooks[0], /p/.prime/agent/settings.json): not run: untrusted`,
			`{"kind":"skipped","event":"session_tree","handler":"./t.sh","detail":"not run: untrusted","skip":"untrusted","scope":"project","file":"/p/.prime/agent/settings.json","key":"hooks[0]"}`,
		},
		{
			Report{Kind: TimedOut, Event: EventTree, Handler: "audit", Detail: "did not return within 1s"},
			`session_tree: in-process hook "audit": did not return within 1s`,
			`{"kind":"timed out","event":"session_tree","handler":"audit","detail":"did not return within 1s"}`,
		},
	}
	for _, tc := range tests {
		if got := tc.r.Error(); got != tc.text {
			t.Errorf("Error() =\n%s\nwant\n%s", got, tc.text)
		}
		b, err := json.Marshal(tc.r)
		if err != nil || string(b) != tc.jsonText {
			t.Errorf("JSON = %s, %v\nwant %s", b, err, tc.jsonText)
		}
	}
}

func TestLastLines(t *testing.T) {
	long := ""
	for range 200 {
		long += "0123456789012345678901234567890123456789\n"
	}
	tests := []struct{ in, want string }{
		{"", ""},
		{"one\ntwo\n\n", "one\ntwo"},
		{linesFrom(1, 30), linesFrom(11, 30)[:len(linesFrom(11, 30))-1]},
	}
	for _, tc := range tests {
		if got := lastLines(tc.in); got != tc.want {
			t.Errorf("lastLines(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := lastLines(long + "\xff\xfe end"); len(got) > maxReportBytes || got[len(got)-4:] != " end" {
		t.Errorf("bounded lastLines: %d bytes, ends %q", len(got), got[len(got)-10:])
	}
}
