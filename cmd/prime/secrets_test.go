package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
)

// TestAgentSecretsStayOutOfCommands: the model's provider gets its key
// (from a variable models.json names), but the bash tool's commands see
// neither it nor any other secret of Prime's environment, unless a
// setting includes one again.
func TestAgentSecretsStayOutOfCommands(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	e := newAgentEnv(t, srv, 0, `{"shellEnvironment": {"include": "KEEP_THIS_TOKEN", "exclude": "MY_PRIVATE_*"}}`)
	models := filepath.Join(e.agentDir, "models.json")
	b, err := os.ReadFile(models)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(models, []byte(strings.Replace(string(b), `"fake-key"`, `"PRIME_FAKE_PROVIDER_KEY"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	srv.Reply(llmtest.ToolCall("b1", "bash", `{"command":"env | grep -E 'API_KEY|TOKEN|SECRET|AWS_|PRIME_FAKE|MY_PRIVATE|PLAIN' | sort"}`))
	srv.Reply(llmtest.Text("done"))
	cmd := e.command("-p", "show the environment")
	cmd.Env = append(cmd.Env, "PRIME_FAKE_PROVIDER_KEY=sk-provider", "ANTHROPIC_API_KEY=sk-ant", "GITHUB_TOKEN=ghp",
		"AWS_SECRET_ACCESS_KEY=aws", "DB_PASSWORD=pw", "MY_PRIVATE_THING=x", "KEEP_THIS_TOKEN=kept", "PLAIN_VAR=plain")
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "done\n" {
		t.Fatalf("run: %v\n%s", err, out)
	}
	_, s := kinds(t, e.sessionFile(t))
	r := results(t, s)["b1"]
	if r == nil {
		t.Fatal("no bash result")
	}
	if got, want := llm.TextOf(r.Content), "KEEP_THIS_TOKEN=kept\nPLAIN_VAR=plain\n"; got != want {
		t.Errorf("the command's environment:\n%s\nwant only\n%s", got, want)
	}
}

// TestRPCBashSecrets: RPC's bash command (the client's own command, run
// unconfined) does not inherit Prime's keys either.
func TestRPCBashSecrets(t *testing.T) {
	t.Setenv("PRIME_RPC_TEST_API_KEY", "sk-rpc")
	t.Setenv("PRIME_RPC_TEST_PLAIN", "plain")
	s := newRPCSetup(t, nil)
	p := s.start(t)
	r := p.call("1", `{"id":"1","type":"bash","command":"env | grep PRIME_RPC_TEST_ | sort"}`)
	if !r.ok() || r.str("output") != "PRIME_RPC_TEST_PLAIN=plain\n" {
		t.Errorf("bash: %s", r.raw)
	}
}
