package tui

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestHelpCommand: /help lists the keys and the commands, as /hotkeys does
// (the list itself is pinned by its golden file).
func TestHelpCommand(t *testing.T) {
	st := newStyles()
	frameGolden(t, "help", ansi.Strip(hotkeysText(&view{width: 80, st: &st})))
	h := newHarness(t, setup{})
	h.waitText("v0.0.0-test")
	h.send("/help")
	h.waitText("Commands", "/help", "list the commands and the keys", "/quit")
}
