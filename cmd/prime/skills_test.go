package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/prime-agent/prime/internal/piagent"
	"github.com/prime-agent/prime/settings"
)

// TestSkillsAndTemplatesFakeLLM runs the binary in print mode against
// "prime dev fake-llm" (which answers "fake reply to: " and the message it
// was sent) with a pi user's skills and prompts copied in: a template and
// a skill command expand before they reach the model, the session's system
// prompt lists the skills, and --no-skills turns them off.
func TestSkillsAndTemplatesFakeLLM(t *testing.T) {
	bin := buildPrime(t)
	agentDir, project, home := t.TempDir(), t.TempDir(), t.TempDir()
	_, stop := startFakeLLM(t, agentDir, "--api", "anthropic")
	defer stop()
	piagent.Copy(t, agentDir)
	prime := func(args ...string) (string, string, int) {
		cmd := exec.Command(bin, append([]string{"--model", "fake/fake-model", "--no-context-files"}, args...)...)
		cmd.Dir = project
		cmd.Env = append(os.Environ(), settings.AgentDirEnv+"="+agentDir, "HOME="+home, "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=")
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out.String(), errOut.String(), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), 0
	}

	out, errOut, code := prime("-p", "/review foo")
	if code != 0 || strings.TrimSpace(out) != "fake reply to: Review the staged changes. Focus on foo." {
		t.Fatalf("/review foo: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "broken-yaml/SKILL.md not loaded") {
		t.Errorf("stderr lacks the warning about the broken skill:\n%s", errOut)
	}
	files, _ := filepath.Glob(filepath.Join(agentDir, "sessions", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files: %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `\u003cavailable_skills\u003e`) && !strings.Contains(string(data), "<available_skills>") {
		t.Errorf("the session's system prompt lists no skills:\n%s", data)
	}

	out, errOut, code = prime("-p", "/skill:pdf-tools extract report.pdf")
	if code != 0 || !strings.HasPrefix(out, `fake reply to: <skill name="pdf-tools" location="`+filepath.Join(agentDir, "skills", "pdf-tools", "SKILL.md")) ||
		!strings.Contains(out, "extract report.pdf") {
		t.Errorf("/skill:pdf-tools: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	_, errOut, code = prime("--no-skills", "-p", "/skill:pdf-tools")
	if code != 1 || !strings.Contains(errOut, `unknown skill "pdf-tools": no skills are loaded`) {
		t.Errorf("--no-skills: exit %d, stderr %q", code, errOut)
	}
	out, _, code = prime("-np", "-p", "/review foo")
	if code != 0 || strings.TrimSpace(out) != "fake reply to: /review foo" {
		t.Errorf("--no-prompt-templates: exit %d, stdout %q", code, out)
	}

	// --skill and --prompt-template load files named on the command line
	// (relative to the working directory), even with -ns and -np.
	own := filepath.Join(project, "own")
	writeFile(t, mkdirs(t, filepath.Join(own, "deploy")), "---\nname: deploy\ndescription: Deploy the service.\n---\nRun make deploy.\n")
	writeFile(t, filepath.Join(own, "haiku.md"), "Write a haiku about $1.")
	out, errOut, code = prime("-ns", "--skill", "own/deploy", "-p", "/skill:deploy now")
	if code != 0 || !strings.Contains(out, `<skill name="deploy" location="`+filepath.Join(own, "deploy", "SKILL.md")) || !strings.Contains(out, "now") {
		t.Errorf("--skill: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = prime("-np", "--prompt-template", "own/haiku.md", "-p", "/haiku rain")
	if code != 0 || strings.TrimSpace(out) != "fake reply to: Write a haiku about rain." {
		t.Errorf("--prompt-template: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	_, errOut, _ = prime("--skill", "own/missing", "-p", "hi")
	if !strings.Contains(errOut, filepath.Join(own, "missing")+" not loaded: not found") {
		t.Errorf("a missing --skill: stderr %q", errOut)
	}
}

// mkdirs makes dir and returns the path of its SKILL.md.
func mkdirs(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "SKILL.md")
}

// TestSkillsOverRPC sends a template and a skill command through RPC's
// prompt, as a pi client would, and lists them with get_commands.
func TestSkillsOverRPC(t *testing.T) {
	s := newRPCSetup(t, nil)
	piagent.Copy(t, s.agentDir)
	p := s.start(t)
	p.converse("/review rpc")
	req := s.srv.LastRequest()
	if got := req.LastUserText(); got != "Review the staged changes. Focus on rpc." {
		t.Errorf("rpc /review sent %q", got)
	}
	if !strings.Contains(req.System(), "<name>pdf-tools</name>") {
		t.Errorf("rpc request's system prompt lacks the skills")
	}
	p.converse("/skill:commit-style")
	if got := s.srv.LastRequest().LastUserText(); !strings.Contains(got, "Subject line under 72 characters") {
		t.Errorf("rpc /skill:commit-style sent %q", got)
	}
	resp := p.call("c", `{"id":"c","type":"get_commands"}`)
	cmds, _ := resp.data()["commands"].([]any)
	var names []string
	for _, c := range cmds {
		m, _ := c.(map[string]any)
		names = append(names, m["source"].(string)+":"+m["name"].(string))
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "prompt:review") || !strings.Contains(got, "skill:skill:pdf-tools") {
		t.Errorf("get_commands: %s", resp.raw)
	}
	resp = p.call("u", `{"id":"u","type":"prompt","message":"/skill:nope"}`)
	if resp.ok() || !strings.Contains(resp.errText(), `unknown skill "nope"`) {
		t.Errorf("rpc unknown skill: %s", resp.raw)
	}
	p.exit()
}

// TestSkillsAndTemplatesTUI drives the binary in tmux against "prime dev
// fake-llm" with a pi user's skills and prompts: the warnings show at
// start, "/" completion offers the template and the skills with their
// descriptions, and "/review parser" reaches the model expanded.
func TestSkillsAndTemplatesTUI(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: this test drives the binary in tmux (apt-get install -y tmux)")
	}
	bin := buildPrime(t)
	agentDir, project, home := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(agentDir, "settings.json"), `{"retry": {"enabled": false}}`)
	piagent.Copy(t, agentDir)
	fake := exec.Command(bin, "dev", "fake-llm", "--api", "anthropic", "--models-json", filepath.Join(agentDir, "models.json"))
	stdout, err := fake.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Process.Signal(syscall.SIGINT); fake.Wait() })
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatalf("the fake model did not start: %v", err)
	}
	s := &tmuxSession{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	command := "env HOME=" + home + " " + settings.AgentDirEnv + "=" + agentDir + " " + bin + " --model fake/fake-model --no-context-files; sleep 600"
	s.run("new-session", "-d", "-s", "prime", "-x", "120", "-y", "40", "-c", project, command)
	t.Cleanup(func() { exec.Command("tmux", "-S", s.socket, "kill-server").Run() })

	s.waitFor("fake-model • medium", "broken-yaml/SKILL.md not loaded")
	s.literal("/fix")
	s.waitFor("/fix-issue", "<issue> [notes]  Fix a GitHub issue by number")
	s.keys("BSpace", "BSpace", "BSpace", "BSpace")
	s.literal("/skill:p")
	s.waitFor("/skill:pdf-tools", "Extract text and tables from PDF files.")
	s.keys("BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace")
	s.literal("/review parser")
	s.keys("Escape", "Enter")
	s.waitFor("fake reply to: Review the staged changes. Focus on parser.")
}
