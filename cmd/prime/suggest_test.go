package main

import (
	"strings"
	"testing"
)

func TestMisspelt(t *testing.T) {
	cmds := commands()
	for _, tc := range []struct{ word, want string }{
		{"sesion", "session"}, {"sessons", "sessions"}, {"comapct", "compact"}, {"setings", "settings"},
		{"modles", "models"}, {"model", "models"}, {"hlep", "help"}, {"trnscript", "transcript"},
		{"session", ""}, {"hello", ""}, {"test", ""}, {"frobnicate", ""}, {"fix", ""}, {"commit", ""},
		{"-x", ""}, {"@main.go", ""}, {"/compact", ""}, {"sesion2", ""},
	} {
		if got := misspelt(cmds, tc.word); got != tc.want {
			t.Errorf("misspelt(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

// TestMisspeltCommand: a bare word close to a command is not sent to the
// model (exit 2, one line on stderr); several words are a prompt.
func TestMisspeltCommand(t *testing.T) {
	env := fakeEnv(t, nil)
	code, out, errOut := runPrime(t, env, "sesion")
	want := "prime: \"sesion\" is not a command; did you mean 'prime session'? ('prime help' lists the commands; to ask the model, write more than one word)\n"
	if code != exitBadUsage || out != "" || errOut != want {
		t.Errorf("prime sesion: exit %d, stdout %q\nstderr %q\nwant   %q", code, out, errOut, want)
	}
	// Not close to a command, or several words: a prompt, which here
	// finds no model.
	for _, args := range [][]string{{"frobnicate"}, {"sesion", "please"}} {
		code, _, errOut := runPrime(t, env, args...)
		if code != exitFailed || !strings.Contains(errOut, "no model to talk to") {
			t.Errorf("prime %s: exit %d, stderr %q; want the prompt sent (and no model)", args, code, errOut)
		}
	}
}

// TestCommandGroup: a group's name alone, or with a word that is none of
// its commands, lists the group's commands (exit 2, a near command
// suggested) instead of sending the words to the model; with --help it
// lists them on stdout (exit 0). A quoted prompt that starts with the word
// is still a prompt.
func TestCommandGroup(t *testing.T) {
	env := fakeEnv(t, nil)
	for _, tc := range []struct {
		args  []string
		code  int
		first string // the first line, on stderr (stdout for help)
	}{
		{[]string{"session"}, exitBadUsage, "prime session: name one of its commands"},
		{[]string{"mcp", "frob"}, exitBadUsage, `prime mcp: "frob" is not one of its commands`},
		{[]string{"session", "contxt", "x.jsonl"}, exitBadUsage, `prime session: "contxt" is not one of its commands; did you mean 'prime session context'?`},
		{[]string{"dev", "--help"}, exitOK, "Usage: prime dev COMMAND [ARGS]"},
	} {
		code, out, errOut := runPrime(t, env, tc.args...)
		text := errOut
		if tc.code == exitOK {
			text = out
		}
		if code != tc.code || !strings.HasPrefix(text, tc.first+"\n") || !strings.Contains(text, "\n  prime "+tc.args[0]+" ") {
			t.Errorf("prime %s: exit %d, stdout %q, stderr %q; want exit %d and %q, then the group's commands", tc.args, code, out, errOut, tc.code, tc.first)
		}
	}
	code, _, errOut := runPrime(t, env, "session handling is broken, fix it")
	if code != exitFailed || !strings.Contains(errOut, "no model to talk to") {
		t.Errorf("a quoted prompt starting with a group's name: exit %d, stderr %q; want it sent to the model (and no model)", code, errOut)
	}
}
