package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
	"github.com/prime-agent/prime/tui"
)

// runTUI runs the interactive terminal UI: "prime [MESSAGE...]" on a
// terminal. With --resume the session picker comes first.
func runTUI(ctx context.Context, a *app, f *chatFlags) int {
	if f.resume {
		picked, code, ok := pickSession(ctx, a, f)
		if !ok {
			return code
		}
		f.resume, f.sessionFile = false, picked.Path
		if f.cwd == "" {
			if fi, err := os.Stat(picked.CWD); err == nil && fi.IsDir() {
				f.cwd = picked.CWD
			}
		}
	}
	f.interactive = true
	ch, err := openChat(ctx, a, f)
	if err != nil {
		return a.fail("prime", err)
	}
	defer ch.close()
	first, images, rest, err := ch.initialPrompt(f)
	if err != nil {
		return a.fail("prime", err)
	}
	if len(images) > 0 {
		fmt.Fprintln(a.stderr, "prime: warning: images given as @files are sent in print mode only; paste their paths in the editor instead")
	}
	var prompts []string
	if first != "" {
		prompts = append(prompts, first)
	}
	prompts = append(prompts, rest...)
	events := tui.NewEvents()
	ch.out = events.Send
	home, _ := os.UserHomeDir()
	opts := tui.Options{
		Version: version(), CWD: ch.cwd, Home: home, Prompts: prompts,
		Input: a.stdin, Output: a.stdout, Sandboxed: ch.sandboxed,
	}
	if err := tui.Run(ctx, ch.ag, events, opts); err != nil {
		return a.fail("prime", err)
	}
	if file := ch.ag.State().SessionFile; file != "" {
		if _, err := os.Stat(file); err == nil {
			fmt.Fprintf(a.stdout, "Session: %s ('prime -c' continues it)\n", file)
		}
	}
	if ctx.Err() != nil {
		return a.interruptStatus()
	}
	return exitOK
}

// pickSession shows the session picker of --resume. ok is false when no
// session was chosen; code is then the exit status.
func pickSession(ctx context.Context, a *app, f *chatFlags) (_ *session.Info, code int, ok bool) {
	cwd := f.cwd
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return nil, a.fail("prime", err), false
		}
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return nil, a.fail("prime", err), false
	}
	st, err := loadSettings(ctx, a, settingsFlags{cwd: cwd})
	if err != nil {
		return nil, a.fail("prime", err), false
	}
	dir := settings.SessionsDir(st.AgentDir(), cwd)
	picked, err := tui.PickSession(ctx, tui.PickerOptions{Dir: dir, Root: filepath.Dir(dir), Input: a.stdin, Output: a.stdout})
	if err != nil {
		if ctx.Err() != nil {
			return nil, a.interruptStatus(), false
		}
		return nil, a.fail("prime", err), false
	}
	if picked == nil {
		fmt.Fprintln(a.stdout, "No session selected")
		return nil, exitOK, false
	}
	return picked, exitOK, true
}

// version is the module version the binary was built from, or "dev".
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// versionLine is what "prime --version" prints: the version, and the commit
// and its time when the build recorded them (go build inside a git checkout
// does; -buildvcs=false does not).
func versionLine() string {
	line := "prime " + version()
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return line
	}
	var rev, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return line + " (" + bi.GoVersion + ")"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified {
		rev += "+dirty"
	}
	if at != "" {
		rev += " " + at
	}
	return line + " (commit " + rev + ", " + bi.GoVersion + ")"
}
