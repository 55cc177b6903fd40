package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/llm/llmfake"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/settings"
)

// readmeGoProgram is the program the README's two Go snippets are put in,
// as the bodies of two functions, with the variables they take for given
// (ctx, dir, st) as parameters: the first converses in memory, the second
// compacts session.jsonl in the working directory.
const readmeGoProgram = `package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
	"github.com/prime-agent/prime/tool"
)

func converse(ctx context.Context, dir string) error {
@FIRST@
	fmt.Println("answer:", text)
	return nil
}

func compact(ctx context.Context, st *settings.Settings) error {
@SECOND@
	return nil
}

func main() {
	ctx := context.Background()
	dir, err := os.Getwd()
	if err != nil {
		log.Fatal(err)
	}
	if err := converse(ctx, dir); err != nil {
		log.Fatal(err)
	}
	st, err := settings.Load(ctx, settings.Options{})
	if err != nil {
		log.Fatal(err)
	}
	if err := compact(ctx, st); err != nil {
		log.Fatal(err)
	}
}
`

// TestREADMEGoSnippets compiles the README's "Using Prime from Go"
// snippets, as written, into a program inside this module (through the go
// command's -overlay, so the tree is not touched) and runs it against a
// fake Anthropic server standing in for the built-in anthropic provider
// (models.json's baseUrl): the first snippet's prompt is answered and its
// answer read; the second compacts a generated session with the summary
// the server sends.
func TestREADMEGoSnippets(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not installed")
	}
	first := readmeBlock(t, "agent.New(s, agent.Config{")
	second := readmeBlock(t, "agent.Open(", "ag.Compact(")
	program := strings.Replace(readmeGoProgram, "@FIRST@", "\t"+strings.Join(first, "\n\t"), 1)
	program = strings.Replace(program, "@SECOND@", "\t"+strings.Join(second, "\n\t"), 1)

	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	src := filepath.Join(tmp, "main.go")
	writeFile(t, src, program)
	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{
		filepath.Join(root, "cmd", "prime", "readmego", "main.go"): src,
	}})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(tmp, "overlay.json"), string(overlay))
	exe := filepath.Join(tmp, "readmego")
	build := exec.Command(goBin, "build", "-buildvcs=false", "-overlay", filepath.Join(tmp, "overlay.json"), "-o", exe, "./cmd/prime/readmego")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the README's Go snippets do not compile: %v\n%s\nthe program:\n%s", err, out, program)
	}

	srv := llmtest.NewAnthropic(t)
	srv.Reply(llmtest.Text("All tests pass now."), llmtest.Usage(900, 20))
	// Every later request is one of the compaction's summary requests (the
	// history, and the turn prefix when the cut splits a turn).
	srv.Handle(func(*llmfake.Request) llmfake.Reply {
		return llmfake.Stream(llmtest.Text("## Goal\nShip the parser.\n\n## Next Steps\n1. Run the tests."), llmtest.Usage(9000, 40))
	})
	agentDir, work := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(agentDir, "models.json"), `{"providers": {"anthropic": {"baseUrl": "`+srv.URL()+`"}}}`)
	// The generated session's own model is an Anthropic one, so the
	// compaction goes to the same fake server.
	gen := exec.Command(buildPrime(t), "dev", "gen-session", "--entries", "300", "--seed", "3", "--out", filepath.Join(work, "session.jsonl"))
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("gen-session: %v\n%s", err, out)
	}
	run := exec.Command(exe)
	run.Dir = work
	run.Env = append(os.Environ(), settings.AgentDirEnv+"="+agentDir, "HOME="+t.TempDir(), "ANTHROPIC_API_KEY=test-key", "OPENAI_API_KEY=")
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the program: %v\n%s", err, out)
	}
	for _, want := range []string{"answer: All tests pass now.", "## Goal\nShip the parser.", " → "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the program's output lacks %q:\n%s", want, out)
		}
	}
	// The compaction was appended to the file, with the README's
	// instructions on it.
	data, err := os.ReadFile(filepath.Join(work, "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, `"type":"compaction"`) || !strings.Contains(last, "Ship the parser.") {
		t.Errorf("the session's last entry is not the compaction:\n%s", last)
	}
	if reqs := srv.Requests(); len(reqs) < 2 || !strings.Contains(string(reqs[1].Body), "focus on the parser") {
		t.Errorf("the server got %d requests; the second should be a summary request with the instructions", len(reqs))
	}
}
