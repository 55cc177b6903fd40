// Command prime is a terminal coding agent whose sessions are trees of
// entries in append-only JSONL files, kept inside the model's context window
// by compaction and branch summarization.
//
// Run "prime help" for the list of commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/permission"
)

func main() {
	// A confined command's trampoline: confine this process, run the
	// shell (it does not return then).
	permission.Trampoline()
	// The first SIGINT, SIGTERM or SIGHUP cancels the context: the command
	// stops what it is doing, writes nothing half-done, and exits with the
	// signal's status. A second one exits at once.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(context.Background())
	var got atomic.Value
	go func() {
		s := <-sigs
		got.Store(s)
		cancel()
		s = <-sigs
		os.Exit(signalStatus(s))
	}()
	code := run(ctx, os.Args[1:], &app{
		stdin:  os.Stdin,
		stdout: os.Stdout,
		stderr: os.Stderr,
		getenv: os.Getenv,
		signal: func() os.Signal { s, _ := got.Load().(os.Signal); return s },
	})
	os.Exit(code)
}

// signalStatus is the exit status for a process ended by s: 128 plus the
// signal's number, as shells report it.
func signalStatus(s os.Signal) int {
	switch s {
	case syscall.SIGTERM:
		return exitTerminated
	case syscall.SIGHUP:
		return exitHangUp
	default:
		return exitInterrupted
	}
}

// app is what a command may touch of the outside world, so commands run the
// same in tests as from a shell.
type app struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	// signal returns the signal that cancelled the command's context, nil
	// when none did.
	signal func() os.Signal
	// atEnd is run, last first, once the command has returned (what it
	// printed is out): the sessions it read finish writing their indexes.
	atEnd []func()
}

// interruptStatus is the exit status of a command its context's
// cancellation stopped: the signal's, else 130.
func (a *app) interruptStatus() int {
	if a.signal != nil {
		if s := a.signal(); s != nil {
			return signalStatus(s)
		}
	}
	return exitInterrupted
}

// command is one subcommand, e.g. "session info".
type command struct {
	// name is the words that select the command, e.g. "session info".
	name string
	// usage is the argument synopsis shown in help, e.g. "FILE [--json]".
	usage string
	// summary is a one-line description.
	summary string
	run     func(ctx context.Context, a *app, args []string) error
}

// commands lists every subcommand. Each is defined in its own file.
func commands() []*command {
	var cmds []*command
	cmds = append(cmds, sessionCommands()...)
	cmds = append(cmds, sessionRepairCommands()...)
	cmds = append(cmds, devCommands()...)
	cmds = append(cmds, settingsCommands()...)
	cmds = append(cmds, modelsCommands()...)
	cmds = append(cmds, compactCommands()...)
	cmds = append(cmds, uncompactCommands()...)
	cmds = append(cmds, transcriptCommands()...)
	cmds = append(cmds, exportCommands()...)
	cmds = append(cmds, loginCommands()...)
	cmds = append(cmds, mcpCommands()...)
	return cmds
}

// Exit statuses.
const (
	exitOK       = 0 // success
	exitFailed   = 1 // the operation failed
	exitBadUsage = 2 // bad usage or bad input
	// exitInterrupted: the operation was cancelled (Ctrl-C) before it
	// wrote anything; 128 + SIGINT, as shells report it.
	exitInterrupted = 130
	// exitTerminated and exitHangUp: the agent was stopped by SIGTERM or
	// SIGHUP (128 + 15, 128 + 1).
	exitTerminated = 143
	exitHangUp     = 129
)

// exitError carries the exit status an error should end the process with.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// helpError is what parseFlags returns for -h or --help: flag.ErrHelp,
// with the flags' descriptions for run to print.
type helpError struct{ flags string }

func (e *helpError) Error() string { return flag.ErrHelp.Error() }
func (e *helpError) Unwrap() error { return flag.ErrHelp }

// usageErrorf reports a mistake in the command line (exit status 2).
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitBadUsage, err: fmt.Errorf(format, args...)}
}

// badInput marks err as caused by bad input data, such as a file that is
// not a session (exit status 2).
func badInput(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: exitBadUsage, err: err}
}

// run executes one prime invocation and returns its exit status: a
// subcommand when the first argument names one, else the agent itself.
func run(ctx context.Context, args []string, a *app) int {
	cmds := commands()
	if len(args) > 0 && args[0] == "help" {
		printHelp(a.stdout, cmds)
		return exitOK
	}
	cmd, rest := lookup(cmds, args)
	if cmd == nil {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			printHelp(a.stdout, cmds)
			return exitOK
		}
		if len(args) == 1 && (args[0] == "-v" || args[0] == "--version") {
			fmt.Fprintln(a.stdout, versionLine())
			return exitOK
		}
		if len(args) > 0 {
			if members := group(cmds, args[0]); members != nil {
				return groupUsage(a, args[0], members, args[1:])
			}
		}
		if len(args) == 1 {
			if near := misspelt(cmds, args[0]); near != "" {
				fmt.Fprintf(a.stderr, "prime: %q is not a command; did you mean 'prime %s'? ('prime help' lists the commands; to ask the model, write more than one word)\n", args[0], near)
				return exitBadUsage
			}
		}
		return runChat(ctx, a, args)
	}
	err := cmd.run(ctx, a, rest)
	for i := len(a.atEnd) - 1; i >= 0; i-- {
		a.atEnd[i]()
	}
	a.atEnd = nil
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(a.stdout, "Usage: prime %s %s\n\n%s\n", cmd.name, cmd.usage, cmd.summary)
		var he *helpError
		if errors.As(err, &he) && he.flags != "" {
			fmt.Fprintf(a.stdout, "\nFlags:\n%s", he.flags)
		}
		return exitOK
	}
	fmt.Fprintf(a.stderr, "prime %s: %v\n", cmd.name, err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitFailed
}

// lookup finds the command whose name is the longest prefix of args.
func lookup(cmds []*command, args []string) (*command, []string) {
	var best *command
	bestLen := 0
	for _, c := range cmds {
		words := strings.Fields(c.name)
		if len(words) > len(args) || len(words) <= bestLen {
			continue
		}
		match := true
		for i, w := range words {
			if args[i] != w {
				match = false
				break
			}
		}
		if match {
			best, bestLen = c, len(words)
		}
	}
	if best == nil {
		return nil, nil
	}
	return best, args[bestLen:]
}

// printHelp lists the commands, one line each; "prime COMMAND --help"
// shows a command's arguments and flags.
func printHelp(w io.Writer, cmds []*command) {
	fmt.Fprintln(w, chatUsage)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: prime COMMAND [ARGS]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	sorted := append([]*command(nil), cmds...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	width := 0
	for _, c := range sorted {
		width = max(width, len(c.name))
	}
	for _, c := range sorted {
		fmt.Fprintf(w, "  prime %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "prime COMMAND --help" for a command's arguments and flags.`)
}

// parseFlags parses args with fs, allowing positional arguments before,
// between and after flags ("prime session info FILE --json"), and returns the
// positional arguments. "--" ends flag parsing. A parse error is a usage
// error.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, &helpError{flags: flagHelp(fs)}
			}
			return nil, usageErrorf("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		if args[0] == "--" {
			return append(positional, args[1:]...), nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// flagHelp lists fs's flags the way the usage lines spell them: two
// dashes for a long name, one for a letter ("  --name VALUE", "  -o FILE"),
// the usage text indented below, plus the default when it is not the zero
// value.
func flagHelp(fs *flag.FlagSet) string {
	var b strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		dashes := "--"
		if len(f.Name) == 1 {
			dashes = "-"
		}
		fmt.Fprintf(&b, "  %s%s", dashes, f.Name)
		if name != "" {
			fmt.Fprintf(&b, " %s", name)
		}
		fmt.Fprintf(&b, "\n      %s", usage)
		if def := f.DefValue; def != "" && def != "0" && def != "false" {
			fmt.Fprintf(&b, " (default %s)", def)
		}
		b.WriteByte('\n')
	})
	return b.String()
}

// writeJSON prints v as indented JSON followed by a newline: the --json
// output of every command.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v, jsontext.WithIndent("  "))
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
