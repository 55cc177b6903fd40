package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/hook"
	"github.com/prime-agent/prime/internal/numfmt"
	"github.com/prime-agent/prime/llm"
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
	noHooks      bool
	cwd          string
	help         bool
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
  --no-hooks                  run none of the command hooks declared in settings
  --cwd DIR                   work in DIR instead of the working directory
  @FILE                       send the file's contents with the message

A message "/compact [INSTRUCTIONS]" compacts the session instead of asking the model.
Exit status: 0 done, 1 the model or the operation failed, 2 bad usage, 130 interrupted.`

// parseChatArgs reads the agent's command line. pi's conventions: flags
// anywhere, "-p TEXT" takes TEXT as a message unless it looks like a flag or
// a file, "--" ends the flags, "@path" names a file to send.
func parseChatArgs(args []string) (*chatFlags, error) {
	f := &chatFlags{}
	value := func(i *int, name string) (string, error) {
		if *i+1 >= len(args) {
			return "", usageErrorf("%s needs a value", name)
		}
		*i++
		return args[*i], nil
	}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, inline, hasInline := strings.Cut(arg, "=")
		if !strings.HasPrefix(arg, "--") || !hasInline {
			name, inline = arg, ""
		}
		str := func(dst *string) error {
			if hasInline && strings.HasPrefix(arg, "--") {
				*dst = inline
				return nil
			}
			v, err := value(&i, name)
			*dst = v
			return err
		}
		var err error
		switch name {
		case "--":
			f.messages = append(f.messages, args[i+1:]...)
			i = len(args)
		case "-p", "--print":
			f.print = true
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && !strings.HasPrefix(args[i+1], "@") {
				i++
				f.messages = append(f.messages, args[i])
			}
		case "--mode":
			err = str(&f.mode)
			if err == nil && f.mode != "text" && f.mode != "json" && f.mode != "rpc" {
				err = usageErrorf("--mode %q: want text, json or rpc", f.mode)
			}
		case "--model":
			err = str(&f.model)
		case "--thinking":
			err = str(&f.thinking)
		case "-t", "--tools":
			err = str(&f.tools)
		case "--no-tools", "-nt":
			f.noTools = true
		case "--system-prompt":
			err = str(&f.systemPrompt)
		case "--append-system-prompt":
			var v string
			if err = str(&v); err == nil {
				f.appendPrompt = append(f.appendPrompt, v)
			}
		case "-c", "--continue":
			f.cont = true
		case "-r", "--resume":
			f.resume = true
		case "--session":
			err = str(&f.sessionFile)
		case "--no-session":
			f.noSession = true
		case "-n", "--name":
			err = str(&f.name)
		case "--no-context-files", "-nc":
			f.noContext = true
		case "--no-hooks":
			f.noHooks = true
		case "--cwd":
			err = str(&f.cwd)
		case "-h", "--help":
			f.help = true
		default:
			switch {
			case strings.HasPrefix(arg, "@") && len(arg) > 1:
				f.files = append(f.files, arg[1:])
			case strings.HasPrefix(arg, "-") && arg != "-":
				err = usageErrorf("unknown flag %s (run 'prime --help')", arg)
			default:
				f.messages = append(f.messages, arg)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	sessionFlags := 0
	for _, on := range []bool{f.cont, f.resume, f.sessionFile != "", f.noSession} {
		if on {
			sessionFlags++
		}
	}
	if sessionFlags > 1 {
		return nil, usageErrorf("--continue, --resume, --session and --no-session exclude each other")
	}
	if f.noTools && f.tools != "" {
		return nil, usageErrorf("--tools and --no-tools exclude each other")
	}
	if f.thinking != "" && !validThinking(f.thinking) {
		return nil, usageErrorf("--thinking %q: want off, minimal, low, medium, high or xhigh", f.thinking)
	}
	return f, nil
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
	s     *session.Session
	st    *settings.Settings
	cwd   string
	out   func(agent.Event)
	json  bool
	ended chan struct{}
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
	for _, p := range st.Problems() {
		fmt.Fprintf(a.stderr, "prime: warning: %v\n", p)
	}
	s, err := chooseSession(a, f, st, cwd)
	if err != nil {
		return nil, err
	}
	printWarnings(a, s)
	ch := &chat{a: a, st: st, cwd: cwd, json: f.mode == "json", ended: make(chan struct{})}
	env := tool.Env{CWD: cwd, Shell: st.Conversation().ShellPath, Environ: func() []string {
		return ch.toolEnviron()
	}}
	var tools []tool.Tool
	if !f.noTools {
		if tools, err = tool.Select(tool.Builtins(env), f.tools); err != nil {
			return nil, usageErrorf("--tools: %v", err)
		}
	}
	hooks := hook.New(st, hook.Options{Disabled: f.noHooks})
	ch.out = ch.textEvents
	if ch.json {
		ch.out = ch.jsonEvents
	}
	cfg := agent.Config{
		Settings: st, Getenv: a.getenv, Hooks: hooks, Events: func(e agent.Event) { ch.out(e) },
		Model: f.model, ThinkingLevel: llm.ThinkingLevel(f.thinking), Tools: tools, CWD: cwd,
		SystemPrompt: f.systemPrompt, AppendSystemPrompt: f.appendPrompt, NoContextFiles: f.noContext,
		DiscoverLocal: true,
	}
	ch.ag, ch.s = agent.New(s, cfg), s
	if f.name != "" {
		if err := ch.ag.SetSessionName(f.name); err != nil {
			return nil, err
		}
	}
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
	dir := session.SessionsDir(st.AgentDir(), cwd)
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
	ch.ag.Close()
	ch.s.Close()
}

// initialPrompt joins standard input (when it is not a terminal), the
// contents of the @files and the first message with blank lines (DESIGN
// decision 8), and returns the images among the @files and the remaining
// messages.
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
		if mime := imageType(data); mime != "" {
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

// imageType returns the MIME type of an image the models take (PNG, JPEG,
// GIF, WebP), judged by its content, or "".
func imageType(data []byte) string {
	switch t := http.DetectContentType(data); t {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return t
	}
	return ""
}

// print runs print mode (and JSON mode): each message in turn, each awaited
// until the agent settles, then the final answer on standard output (text
// mode) or every event as a JSON line (JSON mode). A message "/compact
// [INSTRUCTIONS]" compacts instead. The exit status is 1 when the last reply
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
	if ch.json {
		var header []byte
		ch.ag.View(func(s *session.Session) { header = s.Header().Raw() })
		ch.a.stdout.Write(append(header, '\n'))
	}
	for i, m := range msgs {
		if instr, ok := compactCommand(m); ok {
			if code := ch.compact(ctx, instr); code != exitOK {
				return code
			}
			continue
		}
		opts := agent.PromptOptions{}
		if i == 0 {
			opts.Images = images
		}
		if _, err := ch.ag.Prompt(ctx, m, opts); err != nil {
			return ch.a.fail("prime", err)
		}
		if err := ch.ag.Wait(ctx); err != nil {
			ch.ag.Abort()
			fmt.Fprintln(ch.a.stderr, "prime: interrupted; the session keeps everything up to here")
			return ch.a.interruptStatus()
		}
	}
	return ch.finish()
}

// compactCommand reports whether a message is "/compact [INSTRUCTIONS]".
func compactCommand(m string) (string, bool) {
	m = strings.TrimSpace(m)
	if m == "/compact" {
		return "", true
	}
	if rest, ok := strings.CutPrefix(m, "/compact "); ok {
		return strings.TrimSpace(rest), true
	}
	return "", false
}

// compact runs a manual compaction and says what it did.
func (ch *chat) compact(ctx context.Context, instructions string) int {
	res, err := ch.ag.Compact(ctx, agent.CompactRequest{Instructions: instructions})
	if err != nil {
		return ch.a.fail("prime", operationError(err))
	}
	if !ch.json {
		fmt.Fprintf(ch.a.stdout, "compacted: %s → %s tokens\n\n%s\n", numfmt.Commas(res.TokensBefore), numfmt.Commas(res.TokensAfter), res.Compaction.Summary)
	}
	return exitOK
}

// finish prints the last reply (text mode) and returns the exit status.
// As in pi, only the last message on the session's path counts: when it is
// not a reply (the run ended on a tool result, or nothing was sent), nothing
// is printed.
func (ch *chat) finish() int {
	var last *llm.AssistantMessage
	ch.ag.View(func(s *session.Session) {
		path := s.LeafView()
		for i := path.Len() - 1; i >= 0; i-- {
			if path.Type(i) != session.TypeMessage {
				continue
			}
			if m, err := path.Entry(i).Message(); err == nil {
				last, _ = m.(*llm.AssistantMessage)
			}
			return
		}
	})
	if last == nil {
		return exitOK
	}
	switch last.StopReason {
	case llm.StopReasonError, llm.StopReasonAborted:
		msg := last.ErrorMessage
		if msg == "" {
			msg = "the request " + string(last.StopReason)
		}
		fmt.Fprintf(ch.a.stderr, "prime: %s\n", msg)
		return exitFailed
	}
	if !ch.json {
		for _, c := range last.Content {
			if t, ok := c.(llm.Text); ok {
				fmt.Fprintln(ch.a.stdout, t.Text)
			}
		}
	}
	if last.StopReason == llm.StopReasonLength {
		fmt.Fprintln(ch.a.stderr, "prime: the answer was cut off at the model's output limit")
		return exitFailed
	}
	return exitOK
}

// textEvents shows, in print mode, what the user should know while the agent
// works: notices, retries and compactions, on standard error.
func (ch *chat) textEvents(e agent.Event) {
	w := ch.a.stderr
	switch e := e.(type) {
	case agent.Notice:
		fmt.Fprintf(w, "prime: %s: %s\n", e.Level, e.Text)
	case agent.RetryStart:
		fmt.Fprintf(w, "prime: %s; retrying in %s (%d/%d)\n", e.ErrorMessage, e.Delay.Round(100*1e6), e.Attempt, e.MaxAttempts)
	case agent.RetryEnd:
		if !e.Success {
			fmt.Fprintf(w, "prime: retries ended after %d: %s\n", e.Attempt, e.FinalError)
		}
	case agent.CompactionStart:
		if e.Reason != agent.ReasonManual {
			fmt.Fprintf(w, "prime: compacting the context (%s)…\n", e.Reason)
		}
	case agent.CompactionEnd:
		switch {
		case e.Result != nil && e.Reason != agent.ReasonManual:
			fmt.Fprintf(w, "prime: compacted: %s → %s tokens\n", numfmt.Commas(e.Result.TokensBefore), numfmt.Commas(e.Result.TokensAfter))
		case e.Aborted:
			fmt.Fprintln(w, "prime: compaction cancelled, nothing written")
		case e.Err != nil:
			fmt.Fprintf(w, "prime: %s\n", agent.CompactionErrorText(e.Reason, e.Err))
		}
	case *agent.Progress:
		if e.Kind == agent.ProgressHookReport && e.HookReport != nil {
			fmt.Fprintf(w, "prime: %v\n", e.HookReport)
		}
	}
}

// jsonEvents writes every event pi has a wire form for as one JSON line on
// standard output; notices go to standard error.
func (ch *chat) jsonEvents(e agent.Event) {
	if n, ok := e.(agent.Notice); ok {
		fmt.Fprintf(ch.a.stderr, "prime: %s: %s\n", n.Level, n.Text)
		return
	}
	line, ok, err := agent.MarshalEvent(e)
	if err != nil {
		fmt.Fprintf(ch.a.stderr, "prime: cannot encode a %s event: %v\n", e.EventType(), err)
		return
	}
	if ok {
		ch.a.stdout.Write(append(line, '\n'))
	}
}
