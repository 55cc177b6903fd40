package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
)

// TestResumeWithABadField: issue 21's session whose compaction has a
// number for its summary resumes (read as pi reads it, with a warning
// naming the line); prime session check lists the problem and exits 1;
// prime session repair fixes it, keeps a .bak and says what it changed.
func TestResumeWithABadField(t *testing.T) {
	s := newRPCSetup(t, nil)
	file := filepath.Join(s.project, "bad.jsonl")
	lines := []string{
		`{"type":"session","version":3,"id":"bad-field","timestamp":"2025-01-01T00:00:00.000Z","cwd":"` + s.project + `"}`,
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"fix the parser","timestamp":1}}`,
		`{"type":"message","id":"a1","parentId":"u1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Fixed."}],"api":"anthropic-messages","provider":"fake","model":"fake-model","usage":{"input":10,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":12,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}}`,
		`{"type":"compaction","id":"c1","parentId":"a1","timestamp":"2025-01-01T00:00:03.000Z","summary":1234,"firstKeptEntryId":"a1","tokensBefore":5000}`,
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.script(textReply("Continuing."))
	out, errOut, code := s.run(t, "", "--no-context-files", "--session", file, "-p", "continue")
	if code != 0 || !strings.Contains(out, "Continuing.") {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "line 4: entry c1: /summary: 1234 is not text; read as \"1234\"") {
		t.Errorf("no warning naming the line:\n%s", errOut)
	}
	if req := s.srv.Requests(); !strings.Contains(req[len(req)-1].Text(), "1234") {
		t.Error("the summary did not reach the model as text")
	}

	code, out, errOut = s.runCmd(t, "session", "check", file)
	if code != exitFailed || !strings.Contains(out, file+": line 4: entry c1: /summary: 1234 is not text") {
		t.Errorf("check: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = s.runCmd(t, "session", "repair", "--json", file)
	var rep repairJSON
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || !rep.Changed || rep.Backup != file+".bak" || len(rep.Fixes) != 1 || rep.Fixes[0].Line != 4 {
		t.Fatalf("repair: exit %d, %v\n%s", code, err, out)
	}
	if b, _ := os.ReadFile(file + ".bak"); !strings.Contains(string(b), `"summary":1234`) {
		t.Error("the backup is not the original")
	}
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), `"summary":"1234"`) {
		t.Errorf("the repaired file:\n%s", b)
	}
	if code, out, _ := s.runCmd(t, "session", "check", file); code != 0 || !strings.Contains(out, "no problems") {
		t.Errorf("check after repair: exit %d\n%s", code, out)
	}
}

// runCmd runs a subcommand of the binary (no --model) in the project.
func (s *rpcSetup) runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := s.command()
	cmd.Args = append([]string{s.bin}, args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if err != nil {
		code = cmd.ProcessState.ExitCode()
	}
	return code, out.String(), errOut.String()
}

// TestEmptySessionFlag: --session "" is bad usage, in every mode, before
// anything is opened or sent.
func TestEmptySessionFlag(t *testing.T) {
	s := newRPCSetup(t, nil)
	for _, args := range [][]string{{"-p", "hi", "--session", ""}, {"--session=", "-p", "hi"}, {"--mode", "rpc", "--session", " "}} {
		out, errOut, code := s.run(t, "", args...)
		if code != exitBadUsage || !strings.Contains(errOut, "--session needs a FILE") || out != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	if n := len(s.srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}
