package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/llm/llmtest"
)

// TestTemplatesAndSkillsInTheEditor types a prompt template's and a
// skill's commands in the real program: /reload reads the files written
// after it started, completion offers them with their descriptions,
// "/review parser" reaches the model expanded (not refused as an unknown
// command), and a second /reload picks up a template added meanwhile.
func TestTemplatesAndSkillsInTheEditor(t *testing.T) {
	h := newHarness(t, setup{builtins: true})
	for p, text := range map[string]string{
		filepath.Join(h.agent, "prompts", "review.md"):            "---\ndescription: Review staged git changes\nargument-hint: \"[focus]\"\n---\nReview the staged changes. Focus on ${1:-correctness}.",
		filepath.Join(h.agent, "skills", "pdf-tools", "SKILL.md"): "---\nname: pdf-tools\ndescription: Extract text from PDF files.\n---\nRun pdftotext.",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, p, text)
	}
	// The agent read its (empty) directories when the program started.
	h.waitText("v0.0.0-test")
	h.send("/reload")
	h.waitText("Reloaded: 1 skills, 1 prompt templates, 0 context files")
	h.typeText("/rev")
	h.waitText("/review", "[focus]  Review staged git changes")
	h.erase(len("/rev"))
	h.typeText("/skill:")
	h.waitText("/skill:pdf-tools", "Extract text from PDF files.")
	h.erase(len("/skill:"))

	h.srv.Reply(llmtest.Text("Reviewed."), llmtest.Usage(100, 5))
	h.send("/review parser")
	h.waitIdle("Reviewed.")
	if got := h.srv.LastRequest().LastUserText(); got != "Review the staged changes. Focus on parser." {
		t.Errorf("/review parser sent %q", got)
	}
	if sys := h.srv.LastRequest().System(); !strings.Contains(sys, "<name>pdf-tools</name>") {
		t.Errorf("system prompt lacks the skill")
	}

	write(t, filepath.Join(h.agent, "prompts", "haiku.md"), "Write a haiku about $1.")
	h.send("/reload")
	h.waitText("Reloaded: 1 skills, 2 prompt templates")
	h.srv.Reply(llmtest.Text("Rain on the roof."), llmtest.Usage(100, 5))
	h.send("/haiku rain")
	h.waitIdle("Rain on the roof.")
	if got := h.srv.LastRequest().LastUserText(); got != "Write a haiku about rain." {
		t.Errorf("/haiku after /reload sent %q", got)
	}
}

// erase closes the completion and deletes n characters before the cursor.
func (h *harness) erase(n int) {
	h.key(tea.KeyEscape)
	for range n {
		h.key(tea.KeyBackspace)
	}
}
