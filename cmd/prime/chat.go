package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/hook"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/registry"
	"github.com/prime-agent/prime/printmode"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
	"github.com/prime-agent/prime/tool"
)

// chatFlags are the flags of the agent itself: "prime [FLAGS] [MESSAGE...]".
type chatFlags struct {
	print        bool
	mode         string // "", "text", "json" or "rpc"
	model        string
	thinking     string
	tools        string
	noTools      bool
	systemPrompt string
	appendPrompt []string
	cont         bool
	resume       bool
	sessionFile  string
	noSession    bool
	name         string
	noContext    bool
	noSkills     bool
	noTemplates  bool
	noMCP        bool
	skills       []string
	templates    []string
	noHooks      bool
	cwd          string
	help         bool
	maxTurns     string
	abortAtEOF   bool
	keepOutput   bool
	// permissionMode is --permission-mode; yolo is --yolo (mode full).
	permissionMode string
	yolo           bool
	// yes is --yes: approve what the mode would ask; interactive is set
	// for the terminal UI, which asks the user.
	yes, interactive bool
	// messages are the positional arguments, files the @file ones, in
	// order.
	messages []string
	files    []string
}

// chatUsage is the agent's part of "prime help".
const chatUsage = `Usage: prime [FLAGS] [MESSAGE...]         talk to the agent (print mode when -p or not on a terminal)

Flags:
  -p, --print                 run the messages to the end and print the last answer
  --mode text|json|rpc        json: every event as a JSON line; rpc: pi's RPC protocol on stdin/stdout
  --model PROVIDER/ID         the model to talk to ('prime models' lists them)
  --thinking LEVEL            off, minimal, low, medium, high or xhigh
  -t, --tools LIST            the tools the model may call: names (read,bash,edit,write,grep,find,ls),
                              or +name/-name changes to the default read,bash,edit,write
  --no-tools                  no tools at all
  --system-prompt TEXT|FILE   replace Prime's system prompt
  --append-system-prompt TEXT|FILE   add to it (repeatable)
  -c, --continue              continue the latest session of this directory
  -r, --resume                choose a session to continue
  --session FILE              use this session file (created when missing)
  --no-session                keep the session in memory only
  -n, --name NAME             name the session
  --no-context-files          leave AGENTS.md and CLAUDE.md out of the system prompt
  -ns, --no-skills            load no skills (~/.prime/agent/skills, .prime/skills, .agents/skills)
  -np, --no-prompt-templates  load no prompt templates (~/.prime/agent/prompts, .prime/prompts)
  --skill PATH                load a skill file or directory, even with --no-skills (repeatable)
  --prompt-template PATH      load a prompt template file or directory, even with -np (repeatable)
  --no-mcp                    connect no MCP servers (~/.prime/agent/mcp.json, .prime/mcp.json)
  --no-hooks                  run none of the command hooks declared in settings
  --cwd DIR                   work in DIR instead of the working directory
  --max-turns N               stop a prompt's run after N turns (setting maxTurns; 0: no limit)
  --permission-mode MODE      sandbox (bash confined: writes only in the project and temp dirs, no network,
                              credentials unreadable; anything beyond asks), ask (every bash, write and
                              edit asks), read-only (no changes) or full (your rights, unasked, as pi)
  --yolo                      --permission-mode full
  -y, --yes                   approve what the permission mode would ask (print and JSON modes cannot ask)
  --keep-tool-output          keep the files holding commands' full output when the session ends
  --abort-at-eof              RPC mode: at the end of input abort the run and report the queued messages
                              dropped, instead of finishing them
  -v, --version               print the version and commit
  -h, --help                  print this help (also: prime help)
  @FILE                       send the file's contents with the message

A message "/compact [INSTRUCTIONS]" compacts the session instead of asking the model;
"/skill:NAME [ARGS]" sends a skill's instructions, "/TEMPLATE [ARGS]" a prompt template's text.
Exit status: 0 done, 1 the model or the operation failed, 2 bad usage, 130 interrupted.`

// parseChatArgs reads the agent's command line. pi's conventions: flags
// anywhere, "-p TEXT" takes TEXT as a message unless it looks like a flag or
// a file, "--" ends the flags, "@path" names a file to send.
func parseChatArgs(args []string) (*chatFlags, error) {
	f := &chatFlags{}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, inline, hasInline := strings.Cut(arg, "=")
		if !strings.HasPrefix(arg, "--") || !hasInline {
			name, inline, hasInline = arg, "", false
		}
		switch name {
		case "--":
			f.messages = append(f.messages, args[i+1:]...)
			i = len(args)
			continue
		case "-p", "--print":
			f.print = true
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && !strings.HasPrefix(args[i+1], "@") {
				i++
				f.messages = append(f.messages, args[i])
			}
			continue
		}
		if on := f.switchFor(name); on != nil {
			*on = true
			continue
		}
		set := f.setterFor(name)
		if set == nil {
			if err := f.positional(arg); err != nil {
				return nil, err
			}
			continue
		}
		if !hasInline {
			if i+1 >= len(args) {
				return nil, usageErrorf("%s needs a value", name)
			}
			i++
			inline = args[i]
		}
		if err := set(inline); err != nil {
			return nil, err
		}
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return f, nil
}

// switchFor returns the field a flag without a value turns on, or nil when
// name is not such a flag.
func (f *chatFlags) switchFor(name string) *bool {
	switch name {
	case "--no-tools", "-nt":
		return &f.noTools
	case "-c", "--continue":
		return &f.cont
	case "-r", "--resume":
		return &f.resume
	case "--no-session":
		return &f.noSession
	case "--no-context-files", "-nc":
		return &f.noContext
	case "--no-skills", "-ns":
		return &f.noSkills
	case "--no-prompt-templates", "-np":
		return &f.noTemplates
	case "--no-mcp":
		return &f.noMCP
	case "--no-hooks":
		return &f.noHooks
	case "--abort-at-eof":
		return &f.abortAtEOF
	case "--keep-tool-output":
		return &f.keepOutput
	case "--yolo":
		return &f.yolo
	case "-y", "--yes":
		return &f.yes
	case "-h", "--help":
		return &f.help
	}
	return nil
}

// setterFor returns what takes the value of a flag that has one (--flag V
// or --flag=V), checking it where a bad value can be told at once, or nil
// when name is not such a flag.
func (f *chatFlags) setterFor(name string) func(string) error {
	to := func(dst *string) func(string) error {
		return func(v string) error { *dst = v; return nil }
	}
	switch name {
	case "--mode":
		return func(v string) error {
			if v != "text" && v != "json" && v != "rpc" {
				return usageErrorf("--mode %q: want text, json or rpc", v)
			}
			f.mode = v
			return nil
		}
	case "--session":
		return func(v string) error {
			if strings.TrimSpace(v) == "" {
				return usageErrorf("--session needs a FILE, not an empty name")
			}
			f.sessionFile = v
			return nil
		}
	case "--append-system-prompt":
		return func(v string) error { f.appendPrompt = append(f.appendPrompt, v); return nil }
	case "--skill":
		return func(v string) error { f.skills = append(f.skills, absOr(v)); return nil }
	case "--prompt-template":
		return func(v string) error { f.templates = append(f.templates, absOr(v)); return nil }
	case "--model":
		return to(&f.model)
	case "--thinking":
		return to(&f.thinking)
	case "-t", "--tools":
		return to(&f.tools)
	case "--system-prompt":
		return to(&f.systemPrompt)
	case "-n", "--name":
		return to(&f.name)
	case "--cwd":
		return to(&f.cwd)
	case "--max-turns":
		return to(&f.maxTurns)
	case "--permission-mode":
		return to(&f.permissionMode)
	}
	return nil
}

// absOr returns path made absolute, or path itself when it cannot be.
func absOr(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// positional takes an argument that is not a known flag: an @file, a
// message, or an unknown flag (an error).
func (f *chatFlags) positional(arg string) error {
	switch {
	case strings.HasPrefix(arg, "@") && len(arg) > 1:
		f.files = append(f.files, arg[1:])
	case strings.HasPrefix(arg, "-") && arg != "-":
		return usageErrorf("unknown flag %s (run 'prime --help')", arg)
	default:
		f.messages = append(f.messages, arg)
	}
	return nil
}

// check reports flags that exclude each other and a thinking level that
// does not exist.
func (f *chatFlags) check() error {
	sessionFlags := 0
	for _, on := range []bool{f.cont, f.resume, f.sessionFile != "", f.noSession} {
		if on {
			sessionFlags++
		}
	}
	if sessionFlags > 1 {
		return usageErrorf("--continue, --resume, --session and --no-session exclude each other")
	}
	if f.noTools && f.tools != "" {
		return usageErrorf("--tools and --no-tools exclude each other")
	}
	if f.thinking != "" && !validThinking(f.thinking) {
		return usageErrorf("--thinking %q: want off, minimal, low, medium, high or xhigh", f.thinking)
	}
	return nil
}

func validThinking(s string) bool {
	for _, l := range agent.ThinkingLevels {
		if string(l) == s {
			return true
		}
	}
	return false
}

// runChat runs the agent: print mode, JSON mode, or RPC mode.
func runChat(ctx context.Context, a *app, args []string) int {
	f, err := parseChatArgs(args)
	if err != nil {
		return a.fail("prime", err)
	}
	if f.help {
		fmt.Fprintln(a.stdout, chatUsage)
		return exitOK
	}
	if f.mode == "rpc" {
		return runRPC(ctx, a, f)
	}
	if !f.print && f.mode == "" && a.terminal() {
		return runTUI(ctx, a, f)
	}
	ch, err := openChat(ctx, a, f)
	if err != nil {
		return a.fail("prime", err)
	}
	defer ch.close()
	waitMCP(ctx, ch.ag)
	return ch.print(ctx, f)
}

// fail reports err and returns its exit status.
func (a *app) fail(name string, err error) int {
	fmt.Fprintf(a.stderr, "%s: %v\n", name, err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitFailed
}

// terminal reports whether standard input and output are both terminals.
func (a *app) terminal() bool {
	return isTerminal(a.stdin) && isTerminal(a.stdout)
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// chat is a running agent and what it was made from.
type chat struct {
	a  *app
	ag *agent.Agent
	// s is the session the chat opened, which it closes (the agent closes
	// those it opens itself).
	s   *session.Session
	st  *settings.Settings
	cwd string
	out func(agent.Event)
	// sandboxed: the bash tool's commands run in the OS sandbox.
	sandboxed bool
	// warned are the session warnings already told.
	warned map[string]bool
	// procs are the processes and output files of the tools' commands;
	// keepOutput keeps the files when the chat closes.
	procs      *tool.Procs
	keepOutput bool
	// printer is print or JSON mode's front end, whose events out sends
	// unless another front end takes them.
	printer *printmode.Printer
}

// openChat chooses the session, loads the settings, the tools and the hooks,
// and makes the agent.
func openChat(ctx context.Context, a *app, f *chatFlags) (*chat, error) {
	cwd := f.cwd
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return nil, usageErrorf("--cwd %s: not a directory", cwd)
	}
	st, err := loadSettings(ctx, a, settingsFlags{cwd: cwd})
	if err != nil {
		return nil, err
	}
	if f.maxTurns != "" {
		if st, err = st.WithOverride("maxTurns", f.maxTurns); err != nil {
			return nil, usageErrorf("--max-turns: %v", err)
		}
	}
	if st, err = permissionOverride(st, f); err != nil {
		return nil, err
	}
	for _, p := range st.Problems() {
		fmt.Fprintf(a.stderr, "prime: warning: %v\n", p)
	}
	if u := st.Unused(); len(u) > 0 {
		// One line, not one per key: a pi user's whole settings.json is
		// expected here, and 'prime settings' has the list.
		fmt.Fprintf(a.stderr, "prime: note: %s\n", unusedSummary(u))
	}
	s, err := chooseSession(a, f, st, cwd)
	if err != nil {
		return nil, err
	}
	printWarnings(a, s)
	procs, err := tool.NewProcs("")
	if err != nil {
		return nil, err
	}
	opened := false
	defer func() {
		if !opened {
			_ = procs.Close(false)
		}
	}()
	ch := &chat{a: a, st: st, cwd: cwd, procs: procs, keepOutput: f.keepOutput, warned: map[string]bool{}}
	for _, w := range s.Warnings() {
		ch.warned[w.String()] = true
	}
	env := tool.Env{CWD: cwd, Shell: st.Conversation().ShellPath, Environ: func() []string {
		return ch.toolEnviron()
	}, Procs: procs, Timeout: time.Duration(st.Conversation().BashTimeoutSec) * time.Second}
	reg, _ := registry.Load(registry.Options{AgentDir: st.AgentDir(), Getenv: a.getenv})
	env.Secrets = agent.SecretsPolicy(st.Permissions(), reg)
	confine := a.toolConfinement(st, cwd, procs)
	ch.sandboxed = st.Permissions().Mode == "sandbox" && confine().Sandbox != nil
	var tools []tool.Tool
	builtins, mcpTools, err := splitToolList(f.tools)
	if err != nil {
		return nil, err
	}
	if !f.noTools && (builtins != "" || mcpTools == nil) {
		if tools, err = tool.Select(tool.Builtins(env), builtins); err != nil {
			return nil, usageErrorf("--tools: %v", err)
		}
	}
	hooks := hook.New(st, hook.Options{Disabled: f.noHooks})
	ch.printer = printmode.New(printmode.Options{Stdout: a.stdout, Stderr: a.stderr, JSON: f.mode == "json",
		StdoutTerminal: isTerminal(a.stdout), StderrTerminal: isTerminal(a.stderr)})
	ch.out = ch.printer.Event
	cfg := agent.Config{
		Settings: st, Getenv: a.getenv, Hooks: hooks, Events: func(e agent.Event) { ch.out(e) },
		Model: f.model, ThinkingLevel: llm.ThinkingLevel(f.thinking), Tools: tools, CWD: cwd,
		SystemPrompt: f.systemPrompt, AppendSystemPrompt: f.appendPrompt, NoContextFiles: f.noContext,
		DiscoverLocal: true, Procs: procs, NoSkills: f.noSkills, NoPromptTemplates: f.noTemplates,
		Confinement: confine, Approvals: approvalsFor(f),
		MCP: !f.noMCP, MCPTools: mcpTools, SkillPaths: f.skills, PromptTemplatePaths: f.templates,
	}
	ch.ag, ch.s = agent.New(s, cfg), s
	if f.name != "" {
		if err := ch.ag.SetSessionName(f.name); err != nil {
			return nil, err
		}
	}
	opened = true
	return ch, nil
}

// toolEnviron is what the bash tool adds to a command's environment: where
// the session is.
func (ch *chat) toolEnviron() []string {
	st := ch.ag.State()
	env := []string{"PRIME_SESSION_ID=" + st.SessionID}
	if st.SessionFile != "" {
		if abs, err := filepath.Abs(st.SessionFile); err == nil {
			env = append(env, "PRIME_SESSION_FILE="+abs)
		}
	}
	if st.Model != nil {
		env = append(env, "PRIME_PROVIDER="+st.Model.Provider, "PRIME_MODEL="+st.Model.ID)
	}
	return append(env, "PRIME_THINKING_LEVEL="+string(st.ThinkingLevel))
}

// chooseSession opens or creates the session the flags ask for: a new one in
// the sessions directory by default, the latest with --continue, a given
// file with --session, one in memory with --no-session.
func chooseSession(a *app, f *chatFlags, st *settings.Settings, cwd string) (*session.Session, error) {
	dir := settings.SessionsDir(st.AgentDir(), cwd)
	opts := session.Options{CWD: cwd}
	read := session.ReadOptions{IndexDir: session.IndexDir(st.AgentDir())}
	switch {
	case f.noSession:
		return session.Create("", opts)
	case f.sessionFile != "":
		if _, err := os.Stat(f.sessionFile); errors.Is(err, os.ErrNotExist) {
			return session.Create(f.sessionFile, opts)
		}
		s, err := session.OpenWith(f.sessionFile, read)
		return s, sessionFileErr(err)
	case f.cont:
		latest, err := session.MostRecent(dir, cwd)
		if err == nil && latest != "" {
			s, err := session.OpenWith(latest, read)
			return s, sessionFileErr(err)
		}
		fmt.Fprintln(a.stderr, "prime: no session to continue in this directory; starting a new one")
	case f.resume:
		// On a terminal runTUI asks which session first (tui.go).
		return nil, usageErrorf("--resume needs the interactive terminal UI; use --continue or --session FILE")
	}
	return session.CreateIn(dir, opts)
}

func (ch *chat) close() {
	ch.warnLate()
	ch.ag.Close()
	ch.s.Close()
	// What the commands left running is killed; their output files go
	// unless the user keeps them.
	if err := ch.procs.Close(ch.keepOutput); err != nil {
		fmt.Fprintf(ch.a.stderr, "prime: warning: %v\n", err)
	}
	if ch.keepOutput {
		fmt.Fprintf(ch.a.stderr, "prime: the full output of commands is kept in %s\n", ch.procs.Dir)
	}
}

// warnLate reports the warnings found only once entries were decoded (a
// field of the wrong type read as pi reads it), which opening the session
// could not know.
func (ch *chat) warnLate() {
	for _, s := range []*session.Session{ch.s, ch.ag.Session()} {
		for _, w := range s.Warnings() {
			if !ch.warned[w.String()] {
				ch.warned[w.String()] = true
				fmt.Fprintf(ch.a.stderr, "warning: %s: %s\n", s.File(), w)
			}
		}
	}
}

// initialPrompt joins standard input (when it is not a terminal), the
// contents of the @files and the first message with blank lines, and
// returns the images among the @files and the remaining messages.
func (ch *chat) initialPrompt(f *chatFlags) (string, []llm.Image, []string, error) {
	var parts []string
	var images []llm.Image
	if !isTerminal(ch.a.stdin) && ch.a.stdin != nil {
		data, err := io.ReadAll(bufio.NewReader(ch.a.stdin))
		if err != nil {
			return "", nil, nil, fmt.Errorf("reading standard input: %w", err)
		}
		if t := strings.TrimSpace(string(data)); t != "" {
			parts = append(parts, t)
		}
	}
	for _, name := range f.files {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(ch.cwd, p)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return "", nil, nil, &exitError{code: exitFailed, err: fmt.Errorf("@%s: %w", name, err)}
		}
		if len(data) == 0 {
			continue
		}
		if mime := agent.ImageType(data); mime != "" {
			images = append(images, llm.Image{Data: base64.StdEncoding.EncodeToString(data), MIMEType: mime})
			parts = append(parts, "<file name=\""+p+"\"></file>")
			continue
		}
		parts = append(parts, "<file name=\""+p+"\">\n"+strings.TrimRight(string(data), "\n")+"\n</file>")
	}
	rest := f.messages
	if len(rest) > 0 {
		parts = append(parts, rest[0])
		rest = rest[1:]
	}
	return strings.Join(parts, "\n\n"), images, rest, nil
}

// print runs print mode (and JSON mode) over the messages the flags give
// (package printmode) and returns the exit status: 1 when the last reply
// failed, was aborted or was cut off, or an operation failed.
func (ch *chat) print(ctx context.Context, f *chatFlags) int {
	first, images, rest, err := ch.initialPrompt(f)
	if err != nil {
		return ch.a.fail("prime", err)
	}
	var msgs []string
	if first != "" || len(images) > 0 {
		msgs = append(msgs, first)
	}
	msgs = append(msgs, rest...)
	err = ch.printer.Run(ctx, ch.ag, msgs, images)
	var ce *printmode.CompactError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, printmode.ErrFailed):
		return exitFailed
	case errors.Is(err, printmode.ErrInterrupted):
		return ch.a.interruptStatus()
	case errors.As(err, &ce):
		return ch.a.fail("prime", operationError(ce.Err))
	}
	return ch.a.fail("prime", err)
}
