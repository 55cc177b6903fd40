package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/hook"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/registry"
	"github.com/prime-agent/prime/llm/retry"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
	"github.com/prime-agent/prime/tool"
)

// Config says where an [Agent] finds its settings and models, and who is told
// what it is doing.
type Config struct {
	// Settings are the effective settings: settings.Load, with command-line
	// flags applied by Settings.WithOverride. Nil means the defaults.
	Settings *settings.Settings
	// AgentDir holds models.json. Empty means the settings' agent
	// directory, else registry.DefaultAgentDir.
	AgentDir string
	// Getenv reads the environment (API keys, OPENAI_BASE_URL). Nil means
	// os.Getenv.
	Getenv func(string) string
	// HTTPClient carries the model requests. Nil means http.DefaultClient.
	HTTPClient *http.Client
	// Events, when set, is told what an operation is doing (see [Event]).
	// It is called on the goroutine running the operation (an MCP
	// server's failure, on the goroutine that saw it) and should return
	// quickly.
	Events func(Event)
	// Hooks dispatches the extension events (see the package
	// documentation, "Hooks"): hook.New with the settings and any
	// in-process handlers. Nil means no hooks.
	Hooks *hook.Runner

	// The conversation (see [Agent.Prompt]); none of it is needed to
	// compact or navigate.

	// Model is the model to converse with, "provider/id" (or an id only one
	// provider has). Empty means the settings' defaultProvider and
	// defaultModel, else the session's last model, else the first model
	// with a key, else a local server that answers (see [Agent.Model]).
	Model string
	// ThinkingLevel is the reasoning level to ask for. Empty means the
	// session's last, else the settings' defaultThinkingLevel, else medium;
	// it is clamped to what the model can do.
	ThinkingLevel llm.ThinkingLevel
	// Tools are the tools the model may call.
	Tools []tool.Tool
	// CWD is the directory the conversation is about: where the context
	// files are looked for, and what the system prompt names. Empty means
	// the session header's, else the process's working directory.
	CWD string
	// SystemPrompt replaces Prime's own prompt (its description of the
	// tools and rules included); AppendSystemPrompt is added after it.
	// Either may name a file whose contents are used.
	SystemPrompt       string
	AppendSystemPrompt []string
	// NoContextFiles leaves AGENTS.md and CLAUDE.md files out of the
	// system prompt.
	NoContextFiles bool
	// NoSkills loads no skills (--no-skills); NoPromptTemplates no prompt
	// templates (--no-prompt-templates).
	NoSkills, NoPromptTemplates bool
	// SkillPaths and PromptTemplatePaths are skill and template files or
	// directories named on the command line (--skill, --prompt-template):
	// read first, and even with NoSkills or NoPromptTemplates.
	SkillPaths, PromptTemplatePaths []string
	// DiscoverLocal lets the agent look for a local model server (Ollama
	// on 127.0.0.1:11434, llama.cpp on 127.0.0.1:8080) when no model is
	// configured and no key is set. LocalServers replaces that list.
	DiscoverLocal bool
	LocalServers  []registry.LocalServer
	// Now is the clock for new messages; nil means time.Now.
	Now func() time.Time
	// Procs tracks the processes of the user's own commands (RunBash) and
	// holds their full output; nil means their process group only and the
	// system's temporary directory.
	Procs *tool.Procs
	// MCP connects the MCP servers of mcp.json (see mcp.go) and offers
	// their tools to the model; Close stops them.
	MCP bool
	// MCPTools, when not nil, keeps only the MCP tools whose names match
	// one of its patterns ("mcp__github__*": * is any characters), pi's
	// --tools entries that start with mcp__.
	MCPTools []string
	// ToolErrorBackoff is the first wait after turns whose tool calls all
	// failed (loop.Config.ErrorBackoff); 0 means one second.
	ToolErrorBackoff time.Duration
	// Confinement, when set, puts every tool call through the permission
	// mode (permissions.mode, see [Agent.SetPermissionMode]); it is called
	// once, on the first call, for the sandbox the modes confine with.
	// Nil runs the tools as they are, unchecked.
	Confinement func() Confinement
	// Approvals says who answers what the mode asks (see [ApprovalAsked]).
	Approvals Approvals
}

// Agent runs one session: the conversation with the model ([Agent.Prompt]),
// compaction ([Agent.Compact]) and tree navigation with an optional branch
// summary ([Agent.Navigate]). Its methods may be called from any goroutine;
// a conversation runs on a goroutine the agent owns, which ends when the
// agent settles ([Agent.Wait]).
type Agent struct {
	cfg Config

	// mu guards the session and the conversation's state. It is never held
	// while events are emitted or a model or tool works.
	mu sync.Mutex
	s  *session.Session
	// opened is set when the agent opened the session file for appending
	// itself; Close closes it.
	opened bool
	// migrated reports that opening the file for appending migrated it
	// from an older format version (the original kept as FILE.bak).
	migrated bool

	conv conversation
	// res are the skills and prompt templates (resources.go), nil until read.
	res *resources
	// resMu makes the reading of res happen once at a time (its notices
	// once); it is taken before mu, never while mu is held.
	resMu sync.Mutex
	// stats holds the sums Stats returns, of the entries counted so far
	// (guarded by mu); statsMu makes one Stats sum at a time, without mu
	// (taken before mu, never while mu is held).
	stats   statsCache
	statsMu sync.Mutex
	// sumHook, when set (by tests), is called as a Stats sum starts,
	// without mu.
	sumHook func()
	// live is the settings read again after a file changed (reload.go).
	live liveSettings
	// approvals are the permission requests waiting for the user (approval.go).
	approvals approvalState
	// mcp is the MCP connections (mcp.go).
	mcp mcpState
}

// New returns an agent for s. Entries are appended to s; a session loaded
// read-only ([session.Load]) is opened for appending ([session.Open]) at the
// moment the first entry is written, so an operation that fails or is
// cancelled never touches the file.
func New(s *session.Session, cfg Config) *Agent {
	a := &Agent{cfg: cfg, s: s}
	a.watchSettings()
	a.startMCP()
	return a
}

// Load reads the session file at path and returns an agent for it (see
// [New]): nothing is written until an operation succeeds.
func Load(path string, cfg Config) (*Agent, error) {
	s, err := session.LoadWith(path, cfg.readOptions())
	if err != nil {
		return nil, err
	}
	return New(s, cfg), nil
}

// Open returns an agent for a session file about to be written to: a file
// in the current format version is opened for appending at once
// ([session.Open]), so the entry an operation writes does not cost a second
// reading of the file. Any other file is read as [Load] reads it and opened
// only when an operation writes, since opening an older file migrates it.
// Call [Agent.Close] when done.
func Open(path string, cfg Config) (*Agent, error) {
	if h, err := session.ReadHeader(path); err != nil || h.Version != session.CurrentVersion {
		// Not a current session file (or none): Load decides what it is.
		return Load(path, cfg)
	}
	s, err := session.OpenWith(path, cfg.readOptions())
	if err != nil {
		return nil, err
	}
	a := &Agent{cfg: cfg, s: s, opened: true}
	a.startMCP()
	return a, nil
}

// Session returns the session the agent works on. After an operation
// appended an entry to a session loaded read-only, it is the session opened
// for appending, read again from the file. A session is not safe for
// concurrent use: while the agent may be working, read it through
// [Agent.View] instead; a front end uses the read models.
func (a *Agent) Session() *session.Session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.s
}

// View calls f with the session while the agent's lock keeps it still, for
// the command line's own commands and tests. A front end reads the agent's
// read models instead (Transcript, Tree, ForkPoints, EntryLines, State,
// Stats, Preferences): snapshots it may keep while a run goes on. f must
// only read, and must not call the agent.
func (a *Agent) View(f func(s *session.Session)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f(a.s)
}

// Close closes the session file if the agent opened it, and stops the MCP
// servers.
func (a *Agent) Close() error {
	a.Abort()
	a.cancelApprovals()
	// A server's exit status on the way out is no news to the user.
	_ = a.closeMCP()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.opened {
		a.opened = false
		return a.s.Close()
	}
	return nil
}

func (a *Agent) emit(e Event) {
	if a.cfg.Events != nil {
		a.cfg.Events(e)
	}
}

// Environment variables the agent gives command hooks, besides those of the
// hook package (PRIME_HOOK_EVENT, PRIME_HOOK_SETTINGS, PRIME_PROJECT_DIR).
const (
	// EnvSessionFile is the session file's absolute path.
	EnvSessionFile = "PRIME_SESSION_FILE"
	// EnvSessionID is the session's id, from its header.
	EnvSessionID = "PRIME_SESSION_ID"
	// EnvLeafID is the entry the operation starts from: the leaf compacted
	// at, or the entry navigated away from ("" for an empty session).
	EnvLeafID = "PRIME_LEAF_ID"
)

// hooks returns the runner for one operation starting at leaf: the
// configured one, its command hooks told the session file, the session id
// and the leaf (nil when there are no hooks). The hooks skipped for the
// operation's events are reported first, as EventHookReport events, so that
// every user interface can say why a hook did not run.
func (a *Agent) hooks(leaf string, events ...string) *hook.Runner {
	r := a.cfg.Hooks
	if r == nil {
		return nil
	}
	for _, rep := range r.Skipped() {
		if slices.Contains(events, rep.Event) || rep.Skip == hook.SkipUnknownEvent {
			a.emit(&Progress{Kind: ProgressHookReport, HookEvent: rep.Event, HookReport: &rep})
		}
	}
	a.mu.Lock()
	file := a.s.File()
	h := a.s.Header()
	a.mu.Unlock()
	if file != "" {
		if abs, err := filepath.Abs(file); err == nil {
			file = abs
		}
	}
	id := ""
	if h != nil {
		id = h.ID
	}
	return r.WithEnv(EnvSessionFile+"="+file, EnvSessionID+"="+id, EnvLeafID+"="+leaf)
}

// hookStart tells the user interface that the handlers of a hook event are
// about to run, when there are any.
func (a *Agent) hookStart(r *hook.Runner, event string) {
	if names := r.Handlers(event); len(names) > 0 {
		a.emit(&Progress{Kind: ProgressHooks, HookEvent: event, Handlers: names})
	}
}

// hookReports passes a dispatch's reports on as EventHookReport events.
func (a *Agent) hookReports(reports []hook.Report) {
	for i := range reports {
		a.emit(&Progress{Kind: ProgressHookReport, HookEvent: reports[i].Event, HookReport: &reports[i]})
	}
}

// afterCancelGrace bounds the after-event handlers that run once the
// operation's context is done (session_compact_failed after Ctrl-C): they
// are told, but the user who pressed Ctrl-C does not wait for long.
const afterCancelGrace = 5 * time.Second

// notifyContext is the context for an after-event: ctx, or when ctx is
// done (the user cancelled), one that lasts afterCancelGrace.
func notifyContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() == nil {
		return ctx, func() {}
	}
	return context.WithTimeout(context.WithoutCancel(ctx), afterCancelGrace)
}

// settings returns the effective settings (never nil).
// readOptions are the options the agent reads session files with: the
// persistent index in the agent directory's cache, when there is an agent
// directory.
func (cfg *Config) readOptions() session.ReadOptions {
	dir := cfg.AgentDir
	if dir == "" && cfg.Settings != nil {
		dir = cfg.Settings.AgentDir()
	}
	if dir == "" {
		return session.ReadOptions{}
	}
	// The index is written while the agent starts; Close waits for it.
	return session.ReadOptions{IndexDir: session.IndexDir(dir), IndexLater: true}
}

func (a *Agent) settings() *settings.Settings {
	a.live.mu.Lock()
	cur := a.live.current
	a.live.mu.Unlock()
	switch {
	case cur != nil:
		return cur
	case a.cfg.Settings == nil:
		return settings.Defaults()
	}
	return a.cfg.Settings
}

// appendAt appends p as a child of parentID ("" for a new root) as the one
// write of an operation. A session loaded read-only is first opened for
// appending: the file is read again (entries other processes appended meanwhile
// join the tree) and, if it is in an older format version, migrated with a
// backup, since version-3 entries cannot be appended to it. Nothing is
// written when ctx is done by then.
func (a *Agent) appendAt(ctx context.Context, parentID string, p session.Payload) (*session.Entry, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.appendAtLocked(ctx, parentID, p)
}

// appendAtLocked is appendAt with a.mu held.
func (a *Agent) appendAtLocked(ctx context.Context, parentID string, p session.Payload) (*session.Entry, error) {
	e, err := a.appendToFileLocked(ctx, parentID, p)
	if err == nil {
		a.stats.appended(a.s, e)
	}
	return e, err
}

// appendToFileLocked is appendAtLocked without the sums: a session loaded
// read-only is opened for appending first.
func (a *Agent) appendToFileLocked(ctx context.Context, parentID string, p session.Payload) (*session.Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e, err := a.s.AppendAt(parentID, p)
	if !errors.Is(err, session.ErrReadOnly) || a.s.File() == "" {
		return e, err
	}
	old := a.s
	s, err := session.OpenWith(old.File(), a.cfg.readOptions())
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		s.Close()
		return nil, err
	}
	if parentID != "" && s.Entry(parentID) == nil {
		s.Close()
		return nil, fmt.Errorf("%s: entry %s is no longer in the file: %w", old.File(), parentID, session.ErrNotFound)
	}
	e, err = s.AppendAt(parentID, p)
	if err != nil {
		s.Close()
		return nil, err
	}
	a.stats.reopened(old, s)
	a.s, a.opened, a.migrated = s, true, old.FileVersion() < session.CurrentVersion
	return e, nil
}

// models loads the registry summarizer models come from (the built-in list
// and models.json, keys from the environment), its providers retrying as
// the settings say and reporting each retry of op as an EventRetry.
func (a *Agent) models(op Op) (*registry.Registry, error) {
	dir := a.cfg.AgentDir
	if dir == "" {
		dir = a.settings().AgentDir()
	}
	rs := a.settings().Retry()
	policy := retry.Policy{
		BaseDelay: time.Duration(rs.BaseDelayMs) * time.Millisecond,
		MaxDelay:  time.Duration(rs.MaxDelayMs) * time.Millisecond,
		OnRetry: func(attempt int, delay time.Duration, err error) {
			a.emit(&Progress{Kind: ProgressRetry, Op: op, Attempt: attempt, Delay: delay, Err: err})
		},
	}
	if rs.Enabled {
		policy.MaxRetries = rs.MaxRetries
	}
	return registry.Load(registry.Options{AgentDir: dir, Getenv: a.cfg.Getenv, HTTPClient: a.cfg.HTTPClient, Retry: &policy,
		Stream: a.streamBounds()})
}

// SummarizerChoice says which model writes a summary.
type SummarizerChoice struct {
	// Model is "provider/id" (or an id only one provider has). Empty means
	// the settings' compaction.model, else the session's current model.
	Model string
	// Offline asks for no model: the deterministic summarizer builds the
	// summary by code.
	Offline bool
	// ContextWindow, when positive, replaces the context window of every
	// model involved (the session's and the summarizer's): it bounds the
	// summary request, sets the branch summary's budget, and is the window
	// the automatic-compaction threshold is reported against.
	ContextWindow int
}

// Sources of a summarizer model or a context window.
const (
	SourceRequest  = "request"  // SummarizerChoice.Model or ContextWindow
	SourceSettings = "settings" // compaction.model
	SourceSession  = "session"  // the session's current model
	SourceDefault  = "default"  // compaction.DefaultContextWindow: the model is unknown
	SourceModel    = "model"    // the model's metadata
	SourceOffline  = "offline"  // no model was asked for
)

// Summarizer is the model chosen to write a summary, before any request.
type Summarizer struct {
	// Ref is "provider/id"; empty when offline or when no model could be
	// chosen.
	Ref string
	// Source says where the choice came from: SourceRequest,
	// SourceSettings, SourceSession or SourceOffline.
	Source string
	// Model is the model's metadata, ContextWindow replaced as requested.
	Model llm.Model
	// Err is why no model can be used (a *ModelError); the operation
	// fails with it, a dry run only reports it.
	Err error
}

// Offline reports that the summary is built by code, as asked.
func (s *Summarizer) Offline() bool { return s.Source == SourceOffline }

// window is a context window and where it came from.
type window struct {
	tokens int
	source string
}

// chooseSummarizer resolves a choice to a model's metadata (no key is needed
// for that), and the context window of the conversation: the requested one,
// else the session model's, else the summarizer's, else the default.
func (a *Agent) chooseSummarizer(reg *registry.Registry, regErr error, c SummarizerChoice, sessionModel *session.ModelRef) (Summarizer, window) {
	var sum Summarizer
	win := window{tokens: compaction.DefaultContextWindow, source: SourceDefault}
	sessionRef := ""
	if sessionModel != nil && sessionModel.Provider != "" && sessionModel.ModelID != "" {
		sessionRef = sessionModel.Provider + "/" + sessionModel.ModelID
	}
	if sessionRef != "" && reg != nil {
		if e, err := reg.Find(sessionRef); err == nil && e.Model.ContextWindow > 0 {
			win = window{tokens: e.Model.ContextWindow, source: SourceSession}
		}
	}
	switch {
	case c.Offline:
		sum.Source = SourceOffline
	case c.Model != "":
		sum.Ref, sum.Source = c.Model, SourceRequest
	case a.settings().SummaryModel() != "":
		sum.Ref, sum.Source = a.settings().SummaryModel(), SourceSettings
	case sessionRef != "":
		sum.Ref, sum.Source = sessionRef, SourceSession
	default:
		sum.Err = &ModelError{Err: ErrNoModel, Why: "the session names no model and compaction.model is not set"}
	}
	if sum.Ref != "" {
		switch {
		case regErr != nil:
			sum.Err = &ModelError{Ref: sum.Ref, Source: sum.Source, Err: regErr}
		default:
			e, err := reg.Find(sum.Ref)
			if err != nil {
				sum.Err = &ModelError{Ref: sum.Ref, Source: sum.Source, Err: err}
				break
			}
			sum.Ref, sum.Model = e.Ref(), e.Model
			switch {
			case !e.Supported:
				sum.Err = &ModelError{Ref: sum.Ref, Source: sum.Source, Err: fmt.Errorf("%w %q", registry.ErrUnsupportedAPI, e.Model.API)}
			case e.Key != "" && !e.HasKey:
				// Known without building the provider, so a dry run can
				// say it (building would run a key command).
				sum.Err = &ModelError{Ref: sum.Ref, Source: sum.Source, Err: fmt.Errorf("%w: set %s", registry.ErrNoKey, strings.TrimPrefix(e.Key, "$"))}
			}
			if win.source == SourceDefault && e.Model.ContextWindow > 0 {
				win = window{tokens: e.Model.ContextWindow, source: SourceModel}
			}
		}
	}
	if c.ContextWindow > 0 {
		win = window{tokens: c.ContextWindow, source: SourceRequest}
		sum.Model.ContextWindow = c.ContextWindow
	}
	return sum, win
}

// provider builds the summarizer's provider, or nil when offline.
func provider(ctx context.Context, reg *registry.Registry, sum *Summarizer) (llm.Provider, llm.Model, error) {
	if sum.Offline() {
		return nil, llm.Model{}, nil
	}
	if sum.Err != nil {
		return nil, llm.Model{}, sum.Err
	}
	p, m, err := reg.ProviderFor(ctx, sum.Model)
	if err != nil {
		return nil, llm.Model{}, &ModelError{Ref: sum.Ref, Source: sum.Source, Err: err}
	}
	m.ContextWindow = sum.Model.ContextWindow
	return p, m, nil
}

// progress turns the summarizer's progress reports into events.
func (a *Agent) progress(op Op) func(compaction.Progress) {
	return func(p compaction.Progress) {
		e := &Progress{Op: op, Phase: p.Phase, Part: p.Part, Attempt: p.Attempt, Err: p.Err}
		switch p.Kind {
		case compaction.ProgressRequest:
			e.Kind = ProgressRequest
		case compaction.ProgressText:
			e.Kind, e.Delta = ProgressText, p.Delta
		case compaction.ProgressRetry:
			e.Kind = ProgressOverflowRetry
		case compaction.ProgressRepeat:
			e.Kind = ProgressRetry
		case compaction.ProgressFallback:
			e.Kind, e.Message = ProgressFallback, p.Reason
		default:
			return
		}
		a.emit(e)
	}
}
