package tui

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/prime-agent/prime/llm/llmtest"
)

// TestHostileTextReachesNoTerminal: a cloned repository's file that a
// command prints, and the model's reply, hold escape sequences that set
// the terminal's title and write its clipboard (the user's next paste).
// They reached the terminal as they were; now the program writes their
// text without them.
func TestHostileTextReachesNoTerminal(t *testing.T) {
	h := newHarness(t, setup{builtins: true})
	evil := "hello \x1b]0;PWNEDTITLE\x07 \x1b]52;c;Q0xJUEJPQVJE\x07 \u009d0;C1TITLE\u0007 end\n"
	if err := os.WriteFile(filepath.Join(h.cwd, "evil.txt"), []byte(evil), 0o644); err != nil {
		t.Fatal(err)
	}
	h.srv.Reply(llmtest.ToolCall("c1", "bash", `{"command":"cat evil.txt"}`))
	h.srv.Reply(llmtest.Text("done \x1b]0;MODELTITLE\x07 plain"))
	h.waitText("v0.0.0-test")
	h.send("look")
	h.waitIdle("done  plain", "hello")
	h.frame()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, payload := range []string{"PWNEDTITLE", "Q0xJUEJPQVJE", "MODELTITLE"} {
		if bytes.Contains(h.raw.Bytes(), []byte(payload)) {
			t.Errorf("the terminal was sent the escape sequence carrying %s", payload)
		}
	}
	// A C1 OSC (U+009D) loses its introducer; what followed is text.
	if bytes.Contains(h.raw.Bytes(), []byte("\u009d")) {
		t.Error("the terminal was sent a C1 control")
	}
}
