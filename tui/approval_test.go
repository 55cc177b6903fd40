package tui

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/llm/llmtest"
)

const askSettings = `{"retry": {"enabled": false}, "permissions": {"mode": "ask"}}`

// TestApprovalDialogCommand: in ask mode a command waits for the dialog;
// y runs it once.
func TestApprovalDialogCommand(t *testing.T) {
	h := newHarness(t, setup{builtins: true, approvals: true, settings: askSettings})
	h.srv.Reply(llmtest.ToolCall("b1", "bash", `{"command":"echo hi > note.txt"}`), llmtest.Usage(100, 10))
	h.srv.Reply(llmtest.Text("Wrote the note."), llmtest.Usage(120, 10))
	h.waitText("v0.0.0-test", "• ask")
	h.send("write a note")
	h.golden(h.waitText("Allow this command?", "Always allow Bash(echo:*)"))
	h.typeText("y")
	h.waitIdle("Wrote the note.")
	if b, err := os.ReadFile(filepath.Join(h.cwd, "note.txt")); err != nil || string(b) != "hi\n" {
		t.Errorf("note.txt: %q, %v", b, err)
	}
}

// TestApprovalDialogEditDenyWithMessage: an edit shows its diff; m asks
// for a message, which the model reads in the result; the file stays.
func TestApprovalDialogEditDenyWithMessage(t *testing.T) {
	h := newHarness(t, setup{builtins: true, approvals: true, settings: askSettings})
	main := filepath.Join(h.cwd, "main.go")
	write(t, main, "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n")
	h.srv.Reply(llmtest.ToolCall("e1", "edit", `{"path":"main.go","edits":[{"oldText":"println(\"hi\")","newText":"println(\"hello\")\n\tprintln(\"again\")"}]}`), llmtest.Usage(100, 10))
	h.srv.Reply(llmtest.Text("Left it alone."), llmtest.Usage(120, 10))
	h.waitText("v0.0.0-test")
	h.send("say hello")
	h.waitText("Allow this edit of main.go?", `println("again")`)
	h.typeText("m")
	h.typeText("keep hi")
	h.golden(h.waitText("Your message to the model", "> keep hi"))
	h.enter()
	f := h.waitIdle("Left it alone.")
	if !strings.Contains(f, "The user says: keep hi") {
		t.Errorf("the result does not carry the message:\n%s", f)
	}
	if b, _ := os.ReadFile(main); !strings.Contains(string(b), `println("hi")`) || strings.Contains(string(b), "hello") {
		t.Errorf("main.go changed: %s", b)
	}
	if r := h.srv.Requests(); len(r) != 2 || !strings.Contains(r[1].Text(), "keep hi") {
		t.Error("the model was not told the message")
	}
}

// TestApprovalDialogEscapeAndQueue: parallel calls wait in line; Escape
// denies the one shown, Down and Enter pick.
func TestApprovalDialogEscapeAndQueue(t *testing.T) {
	h := newHarness(t, setup{builtins: true, approvals: true, settings: askSettings})
	h.srv.Reply(llmtest.ToolCall("b1", "bash", `{"command":"echo one > one.txt"}`), llmtest.ToolCall("b2", "bash", `{"command":"echo two > two.txt"}`), llmtest.Usage(100, 10))
	h.srv.Reply(llmtest.Text("Both asked."), llmtest.Usage(120, 10))
	h.waitText("v0.0.0-test")
	h.send("two notes")
	h.waitText("Allow this command?", "1 more waiting")
	h.key(tea.KeyEscape)
	h.waitFor("the second request", func(f string) bool {
		return !strings.Contains(f, "more waiting") && strings.Contains(f, "Allow this command?")
	})
	h.key(tea.KeyDown)
	h.key(tea.KeyDown)
	h.enter() // the third line: deny
	h.waitIdle("Both asked.")
	for _, f := range []string{"one.txt", "two.txt"} {
		if _, err := os.Stat(filepath.Join(h.cwd, f)); err == nil {
			t.Errorf("%s was written", f)
		}
	}
}

// TestPermissionsCommand: /permissions MODE changes the mode for the
// session, and the footer says it; /permissions lists the mode and rules.
func TestPermissionsCommand(t *testing.T) {
	h := newHarness(t, setup{builtins: true, approvals: true,
		settings: `{"retry": {"enabled": false}, "permissions": {"mode": "ask", "allow": ["Bash(go test:*)"], "deny": ["Read(~/.ssh/**)"]}}`})
	h.srv.Reply(llmtest.ToolCall("w1", "write", `{"path":"a.txt","content":"x"}`), llmtest.Usage(100, 10))
	h.srv.Reply(llmtest.Text("Could not write."), llmtest.Usage(120, 10))
	h.waitText("v0.0.0-test", "• ask")
	h.send("/permissions read-only")
	h.waitText("• read-only", "Permission mode: read-only")
	h.send("/permissions")
	h.waitText("allow: Bash(go test:*)", "deny: Read(~/.ssh/**)", "Permission mode for this session")
	h.key(tea.KeyEscape)
	h.send("/permissions plan")
	h.waitText(`"plan" is not a permission mode`)
	h.send("write a")
	f := h.waitIdle("Could not write.")
	if !strings.Contains(f, "refuse this call: read-only mode changes no") {
		t.Errorf("the write was not refused:\n%s", f)
	}
}

// TestApprovalDialogWhileTyping: a dialog that opens while the user types
// a message does not take the letters as answers; Enter on the starting
// line denies.
func TestApprovalDialogWhileTyping(t *testing.T) {
	h := newHarness(t, setup{builtins: true, approvals: true, settings: askSettings})
	ready := make(chan struct{})
	var n atomic.Int32
	h.srv.Handle(func(r *llmtest.Request) llmtest.Reply {
		if n.Add(1) == 1 {
			<-ready // the model answers once the user has typed
			return llmtest.Stream(llmtest.ToolCall("b1", "bash", `{"command":"echo y > typed.txt"}`), llmtest.Usage(100, 10))
		}
		return llmtest.Stream(llmtest.Text("Stopped."), llmtest.Usage(120, 10))
	})
	h.waitText("v0.0.0-test")
	h.send("go")
	h.typeText("yes please")
	h.waitText("yes please")
	close(ready)
	h.waitText("Allow this command?", "you were typing")
	h.typeText("y a")
	h.enter()
	h.waitIdle("Stopped.")
	if _, err := os.Stat(filepath.Join(h.cwd, "typed.txt")); err == nil {
		t.Error("a letter typed for the editor approved the command")
	}
}
