package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
)

// TestRPCApprovals: in ask mode, a pi-shaped RPC client is asked about
// each command with an extension_ui_request select and answers with an
// extension_ui_response: the first allowed once, the second denied with a
// message (a select, then an input), which the model reads.
func TestRPCApprovals(t *testing.T) {
	s := newRPCSetup(t, nil)
	s.script(
		toolCall("c1", "bash", `{"command":"echo approved > ok.txt"}`),
		toolCall("c2", "bash", `{"command":"rm ok.txt"}`),
		textReply("fine"),
	)
	p := s.start(t, "--permission-mode", "ask")
	p.send(`{"id":"p1","type":"prompt","message":"go"}`)
	req := p.until(func(l rpcLine) bool { return l.is("extension_ui_request") })
	sel := req[len(req)-1]
	opts, _ := sel.field("options").([]any)
	if sel.field("method") != "select" || len(opts) != 4 || opts[0] != "Allow once" ||
		!strings.Contains(fmt.Sprint(sel.field("title")), "echo approved > ok.txt") {
		t.Fatalf("select: %s", sel.raw)
	}
	p.send(fmt.Sprintf(`{"type":"extension_ui_response","id":%q,"value":"Allow once"}`, sel.field("id")))
	req = p.until(func(l rpcLine) bool { return l.is("extension_ui_request") })
	all := req
	sel = req[len(req)-1]
	if !strings.Contains(fmt.Sprint(sel.field("title")), "rm ok.txt") {
		t.Fatalf("second select: %s", sel.raw)
	}
	p.send(fmt.Sprintf(`{"type":"extension_ui_response","id":%q,"value":"Deny with a message to the model"}`, sel.field("id")))
	req = p.until(func(l rpcLine) bool { return l.is("extension_ui_request") })
	in := req[len(req)-1]
	if in.field("method") != "input" {
		t.Fatalf("input: %s", in.raw)
	}
	p.send(fmt.Sprintf(`{"type":"extension_ui_response","id":%q,"value":"keep the file"}`, in.field("id")))
	all = append(all, p.settle()...)
	var results []string
	for _, l := range all {
		if l.is("tool_execution_end") {
			r, _ := l.field("result").(map[string]any)
			results = append(results, fmt.Sprint(r["content"]))
		}
	}
	if len(results) != 2 || !strings.Contains(results[1], "Not run: the user denied this call. The user says: keep the file") {
		t.Errorf("results: %q", results)
	}
	if b, err := os.ReadFile(filepath.Join(s.project, "ok.txt")); err != nil || string(b) != "approved\n" {
		t.Errorf("ok.txt: %q, %v", b, err)
	}
	if code, _ := p.exit(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestRPCApprovalCancelledAtEOF: the end of input while a select waits
// answers it (denied), and prime exits.
func TestRPCApprovalCancelledAtEOF(t *testing.T) {
	s := newRPCSetup(t, nil)
	s.script(toolCall("c1", "bash", `{"command":"echo x > never.txt"}`), textReply("ok"))
	p := s.start(t, "--permission-mode", "ask", "--abort-at-eof")
	p.send(`{"id":"p1","type":"prompt","message":"go"}`)
	p.until(func(l rpcLine) bool { return l.is("extension_ui_request") })
	if code, _ := p.exit(); code != 0 {
		t.Errorf("exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(s.project, "never.txt")); err == nil {
		t.Error("the command ran")
	}
}

// TestPrintModeCannotAsk: print mode denies what ask mode would ask with a
// result that says so; --yes approves it.
func TestPrintModeCannotAsk(t *testing.T) {
	for _, yes := range []bool{false, true} {
		t.Run(fmt.Sprint("yes=", yes), func(t *testing.T) {
			srv := llmtest.NewAnthropic(t)
			e := newAgentEnv(t, srv, 0, "")
			srv.Reply(llmtest.ToolCall("b1", "bash", `{"command":"echo x > made.txt"}`))
			srv.Reply(llmtest.Text("done"))
			args := []string{"-p", "go", "--permission-mode", "ask"}
			if yes {
				args = append(args, "--yes")
			}
			out, errOut, code := e.run(t, "", args...)
			if code != 0 || out != "done\n" {
				t.Fatalf("exit %d: %s%s", code, out, errOut)
			}
			_, s := kinds(t, e.sessionFile(t))
			text := llm.TextOf(results(t, s)["b1"].Content)
			_, err := os.Stat(filepath.Join(e.project, "made.txt"))
			if yes != (err == nil) {
				t.Errorf("made.txt: %v", err)
			}
			if !yes && !strings.Contains(text, "no one can approve it here (print and JSON modes cannot ask)") {
				t.Errorf("result: %q", text)
			}
		})
	}
}
