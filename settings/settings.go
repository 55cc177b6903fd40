package settings

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// Scope says which layer a value came from.
type Scope uint8

// The layers, lowest precedence first.
const (
	// Default is Prime's built-in default.
	Default Scope = iota
	// Global is the user's file, <agentDir>/settings.json.
	Global
	// Project is the project's file, <project>/.prime/agent/settings.json.
	Project
	// Flag is a value set at run time with [Settings.WithOverride], such as
	// a command-line flag. It wins over everything, per-model overrides
	// included.
	Flag
)

func (s Scope) String() string {
	switch s {
	case Global:
		return "global"
	case Project:
		return "project"
	case Flag:
		return "flag"
	default:
		return "default"
	}
}

// Source says where a resolved value came from, for display.
type Source struct {
	Scope Scope
	// File is the settings file, for Global and Project.
	File string
	// Key is the key the value was read from. It differs from the key
	// asked for when a per-model override supplied the value:
	// compaction.modelOverrides["openai/gpt-5"].reserveTokens.
	Key string
}

// ModelOverride reports whether the value came from a per-model override.
func (s Source) ModelOverride() bool {
	return strings.HasPrefix(s.Key, modelOverridesKeyPrefix+"[")
}

// String returns "default", "global", "project" or "flag", followed by the
// override's key when a per-model override supplied the value.
func (s Source) String() string {
	if s.ModelOverride() {
		return s.Scope.String() + " " + s.Key
	}
	return s.Scope.String()
}

// Problem is something wrong in a settings file. Prime keeps running: an
// invalid value is ignored (the key resolves as if the file did not set
// it), and a broken file is ignored whole.
type Problem struct {
	Scope Scope
	File  string
	// Line and Column locate the problem in the file (1-based; Column in
	// characters); both are 0 when it has no place, as for a file that
	// cannot be read.
	Line, Column int
	// Key is the setting concerned, empty for the file as a whole.
	Key string
	// Msg says what is wrong, quoting the offending value.
	Msg string
	// Broken means the file as a whole is ignored (it cannot be read, does
	// not parse, or does not hold an object), and Prime refuses to write to
	// it until it is fixed.
	Broken bool
	// Unsafe means the file as a whole is ignored because another user
	// could change it (it, or a directory above it, is writable by others
	// or owned by someone else).
	Unsafe bool
}

func (p Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", p.Line, p.Column)
	}
	b.WriteString(": ")
	if p.Key != "" {
		b.WriteString(p.Key + ": ")
	}
	b.WriteString(p.Msg)
	if p.Broken {
		b.WriteString("; the whole file is ignored, and Prime will not write to it until it is fixed")
	} else if p.Key != "" {
		b.WriteString(" (ignored)")
	}
	return b.String()
}

// Hook is one command hook declared in a settings file's "hooks" list.
// This package checks the declaration's shape; the hook package decides
// what the events mean and when a command may run.
type Hook struct {
	// Event is the event the hook handles, such as "session_before_compact".
	Event string
	// Command is the executable to run, with Args as its arguments.
	Command string
	Args    []string
	// TimeoutMs is how long the command may run, in milliseconds; 0 when
	// the file does not say (the hook package's default applies).
	TimeoutMs int
	// Source is the file that declares the hook (Global or Project) and
	// its place there, such as "hooks[2]". Hooks from a project file run
	// only when the project is trusted (see [Settings.Trusted]).
	Source Source
}

// Options says where the settings files are.
type Options struct {
	// AgentDir holds the global settings.json. Empty means
	// [DefaultAgentDir] with the process environment.
	AgentDir string
	// ProjectDir is the project whose .prime/agent/settings.json applies.
	// Empty means no project settings. See [FindProject].
	ProjectDir string
	// WorkDir is the directory the command started in, when ProjectDir was
	// found from it. A project found above it that is neither inside Home
	// nor inside WorkDir's git repository applies only once trusted.
	WorkDir string
	// Home is the user's home directory; empty means the system's idea.
	Home string
}

// Where the settings files are, inside the agent and project directories.
const (
	fileName      = "settings.json"
	projectSubdir = ".prime/agent"
)

// Settings is a snapshot of the effective settings: the global and project
// files merged over the defaults, with run-time flags on top. It does not
// change when the files do; writes return a new snapshot. A Settings is
// safe for concurrent use, and a nil *Settings reads as all defaults.
type Settings struct {
	agentDir    string
	projectDir  string
	globalFile  string
	projectFile string
	global      *layer
	project     *layer
	flag        *layer
	problems    []Problem
	// ignored are the values files set that do not apply (see applyTrust).
	ignored []Ignored
	// opts are the options Load was given, for reloading after a write.
	opts Options
}

// Load reads the global and project settings files. Problems in them (a
// file that does not parse, an invalid value) do not fail Load: they are
// listed by [Settings.Problems] and the affected values fall back to the
// next layer. Load fails only when ctx is done or the agent directory
// cannot be found.
func Load(ctx context.Context, opts Options) (*Settings, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &Settings{opts: opts}
	dir := opts.AgentDir
	if dir == "" {
		var err error
		if dir, err = DefaultAgentDir(os.Getenv); err != nil {
			return nil, err
		}
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("agent directory: %w", err)
	}
	s.agentDir = dir
	s.globalFile = filepath.Join(dir, fileName)
	var probs []Problem
	s.global, probs = readLayer(Global, s.globalFile)
	s.problems = append(s.problems, probs...)
	if opts.ProjectDir != "" {
		if s.projectDir, err = filepath.Abs(opts.ProjectDir); err != nil {
			return nil, fmt.Errorf("project directory: %w", err)
		}
		// In the home directory, the project's .prime/agent is the agent
		// directory itself: one file, read once, as global.
		if pdir := filepath.Join(s.projectDir, projectSubdir); !sameDir(pdir, s.agentDir) {
			s.projectFile = filepath.Join(pdir, fileName)
			s.project, probs = readLayer(Project, s.projectFile)
			s.problems = append(s.problems, probs...)
			s.applyTrust(opts)
		}
	}
	return s, nil
}

// Defaults returns settings with every key at its default and no files.
func Defaults() *Settings { return &Settings{} }

// AgentDir returns the directory that holds the global settings file.
func (s *Settings) AgentDir() string { return s.get().agentDir }

// GlobalFile returns the global settings file's path.
func (s *Settings) GlobalFile() string { return s.get().globalFile }

// ProjectDir returns the project directory, or "" when there is none.
func (s *Settings) ProjectDir() string { return s.get().projectDir }

// ProjectFile returns the project settings file's path, or "" when there
// is no project scope (no project directory, or the project's .prime/agent
// is the agent directory itself).
func (s *Settings) ProjectFile() string { return s.get().projectFile }

// Problems lists what is wrong in the settings files, global first.
func (s *Settings) Problems() []Problem { return append([]Problem(nil), s.get().problems...) }

func (s *Settings) get() *Settings {
	if s == nil {
		return &Settings{}
	}
	return s
}

// layers returns the layers that exist, highest precedence first.
func (s *Settings) layers() []*layer {
	s = s.get()
	var ls []*layer
	for _, l := range []*layer{s.flag, s.project, s.global} {
		if l != nil {
			ls = append(ls, l)
		}
	}
	return ls
}

// lookup resolves a known key: the highest layer that sets it validly,
// else the default.
func (s *Settings) lookup(name string) setting {
	for _, l := range s.layers() {
		if v, ok := l.plain[name]; ok {
			return v
		}
	}
	return setting{value: lookupDef(name).def, src: Source{Scope: Default, Key: name}}
}

// tokens resolves compaction.reserveTokens or keepRecentTokens for model:
// a flag, then the model's override, then the ordinary value, then the
// default (pi 1.6's order, with run-time flags on top).
func (s *Settings) tokens(field, model string) setting {
	name := "compaction." + field
	if v, ok := s.get().flagValue(name); ok {
		return v
	}
	if ov := s.overrides(); ov != nil && model != "" {
		if v, ok := ov.fields[model][field]; ok {
			return setting{value: v, src: Source{Scope: ov.src.Scope, File: ov.src.File, Key: overrideKeyName(model, field)}}
		}
	}
	return s.lookup(name)
}

func (s *Settings) flagValue(name string) (setting, bool) {
	if s.flag == nil {
		return setting{}, false
	}
	v, ok := s.flag.plain[name]
	return v, ok
}

// overrides returns the compaction.modelOverrides map in effect: the
// project's if it has one, else the global one. As in pi, objects merge
// one level deep, so a project map replaces the global map whole.
func (s *Settings) overrides() *modelOverrides {
	for _, l := range s.layers() {
		if l.overrides != nil {
			return l.overrides
		}
	}
	return nil
}

func (s *Settings) boolean(name string) bool { return s.lookup(name).value.(bool) }
func (s *Settings) integer(name string) int  { return s.lookup(name).value.(int) }
func (s *Settings) text(name string) string  { v, _ := s.lookup(name).value.(string); return v }

// ConversationSettings are the values the conversation with the model
// starts with (pi's keys).
type ConversationSettings struct {
	// DefaultProvider and DefaultModel name the model to converse with
	// when none is given; DefaultModel may be "provider/id" alone.
	DefaultProvider, DefaultModel string
	// DefaultThinkingLevel is a new session's thinking level; empty means
	// Prime's default.
	DefaultThinkingLevel string
	// SteeringMode and FollowUpMode say how many queued messages are
	// delivered at once: "one-at-a-time" or "all".
	SteeringMode, FollowUpMode string
	// ShellPath is the shell the bash tool runs; empty means the default.
	ShellPath string
	// MaxTurns is the most turns of one prompt's run; 0 means no limit.
	MaxTurns int
	// BashTimeoutSec is the bash tool's timeout for calls that name none;
	// 0 means none.
	BashTimeoutSec int
}

// Conversation returns the conversation settings.
func (s *Settings) Conversation() ConversationSettings {
	return ConversationSettings{
		DefaultProvider:      s.text(keyDefaultProvider),
		DefaultModel:         s.text(keyDefaultModel),
		DefaultThinkingLevel: s.text(keyDefaultThinking),
		SteeringMode:         s.text(keySteeringMode),
		FollowUpMode:         s.text(keyFollowUpMode),
		ShellPath:            s.text(keyShellPath),
		MaxTurns:             s.integer(keyMaxTurns),
		BashTimeoutSec:       s.integer(keyBashTimeout),
	}
}

// PermissionSettings say what the tools' processes may reach.
type PermissionSettings struct {
	// Mode is "full" (unconfined, as pi), "ask", "sandbox" or "read-only".
	Mode string
	// Network lets sandboxed commands use the network.
	Network bool
	// DenyRead and AllowWrite are more paths than the sandbox's own.
	DenyRead, AllowWrite string
	// EnvExclude and EnvInclude are the lists of variables (globs) kept
	// out of commands' environment or kept in it; EnvInherit keeps all.
	EnvExclude, EnvInclude string
	EnvInherit             bool
}

// Permissions returns the permission settings (permissions.*,
// shellEnvironment.*).
func (s *Settings) Permissions() PermissionSettings {
	return PermissionSettings{
		Mode: s.text(keyPermMode), Network: s.boolean(keyPermNetwork),
		DenyRead: s.text(keyPermDenyRead), AllowWrite: s.text(keyPermAllowWrite),
		EnvExclude: s.text(keyEnvExclude), EnvInclude: s.text(keyEnvInclude), EnvInherit: s.boolean(keyEnvInherit),
	}
}

// InterfaceSettings are the terminal UI's preferences.
type InterfaceSettings struct {
	// HideThinkingBlock folds the model's thinking.
	HideThinkingBlock bool
	// DoubleEscapeAction is what Escape twice on an empty editor opens:
	// "tree", "fork" or "none".
	DoubleEscapeAction string
}

// Interface returns the terminal UI's preferences.
func (s *Settings) Interface() InterfaceSettings {
	return InterfaceSettings{HideThinkingBlock: s.boolean(keyHideThinking), DoubleEscapeAction: s.text(keyDoubleEscape)}
}

// CompactionSettings are the values compaction runs with.
type CompactionSettings struct {
	// Enabled turns automatic compaction on.
	Enabled bool
	// ReserveTokens is kept free for the reply: compaction starts when the
	// context exceeds the window minus this.
	ReserveTokens int
	// KeepRecentTokens of recent conversation stay word for word.
	KeepRecentTokens int
}

// Compaction returns the compaction settings for model ("provider/id", as
// llm.Model.String gives; empty for none), its per-model overrides
// applied field by field.
func (s *Settings) Compaction(model string) CompactionSettings {
	return CompactionSettings{
		Enabled:          s.boolean(keyCompactionEnabled),
		ReserveTokens:    s.tokens(overrideReserveTokens, model).value.(int),
		KeepRecentTokens: s.tokens(overrideKeepRecentTokens, model).value.(int),
	}
}

// BackgroundSettings say whether and when the summary of a compaction is
// written in the background, before the context reaches the point where
// compaction starts.
type BackgroundSettings struct {
	// Enabled is compaction.background.
	Enabled bool
	// Percent is compaction.backgroundThreshold: the background summary
	// starts when the context passes this percentage of the point where
	// compaction starts (the window less reserveTokens).
	Percent int
}

// Background returns the background compaction settings.
func (s *Settings) Background() BackgroundSettings {
	return BackgroundSettings{Enabled: s.boolean(keyBackground), Percent: s.integer(keyBackgroundThreshold)}
}

// SummaryModel returns compaction.model, the "provider/id" of the model
// that writes compaction and branch summaries, or "" to use the session's
// own model.
func (s *Settings) SummaryModel() string {
	v, _ := s.lookup(keyCompactionModel).value.(string)
	return v
}

// BranchSummarySettings are the values branch summarization runs with.
type BranchSummarySettings struct {
	// ReserveTokens is kept free for the prompt and the reply.
	ReserveTokens int
	// SkipPrompt leaves a branch without asking whether to summarize it
	// (and without a summary).
	SkipPrompt bool
}

// BranchSummary returns the branch summarization settings.
func (s *Settings) BranchSummary() BranchSummarySettings {
	return BranchSummarySettings{
		ReserveTokens: s.integer(keyBranchReserve),
		SkipPrompt:    s.boolean(keyBranchSkipPrompt),
	}
}

// RetrySettings say how failed model requests are retried.
type RetrySettings struct {
	Enabled bool
	// MaxRetries is how many retries follow the first attempt.
	MaxRetries int
	// BaseDelayMs is the first retry's delay; each retry doubles it, up to
	// MaxDelayMs.
	BaseDelayMs, MaxDelayMs int
	// StreamIdleTimeoutMs is how long a server may send nothing, and
	// StreamKeepAliveTimeoutMs how long it may send only keep-alives,
	// before a request fails as a broken connection; 0 means no limit.
	StreamIdleTimeoutMs, StreamKeepAliveTimeoutMs int
}

// Retry returns the retry settings.
func (s *Settings) Retry() RetrySettings {
	return RetrySettings{
		Enabled:     s.boolean(keyRetryEnabled),
		MaxRetries:  s.integer(keyRetryMaxRetries),
		BaseDelayMs: s.integer(keyRetryBaseDelay),
		MaxDelayMs:  s.integer(keyRetryMaxDelay),

		StreamIdleTimeoutMs:      s.integer(keyStreamIdle),
		StreamKeepAliveTimeoutMs: s.integer(keyStreamKeepAlive),
	}
}

// StreamBounds are the stream bounds the retry settings give, for
// [llm.StreamBounds]: 0 (no limit) becomes a negative duration.
func (r RetrySettings) StreamBounds() (idle, keepAlive time.Duration) {
	d := func(ms int) time.Duration {
		if ms == 0 {
			return -1
		}
		return time.Duration(ms) * time.Millisecond
	}
	return d(r.StreamIdleTimeoutMs), d(r.StreamKeepAliveTimeoutMs)
}

// Hooks returns the command hooks the settings declare: the global file's
// in order, then the project's. Invalid declarations are left out (and
// listed by Problems). Whether a project's hooks may run is the caller's
// decision; see [Settings.Trusted].
func (s *Settings) Hooks() []Hook {
	s = s.get()
	var hs []Hook
	for _, l := range []*layer{s.global, s.project} {
		if l != nil {
			for _, h := range l.hooks {
				h.Args = append([]string(nil), h.Args...)
				hs = append(hs, h)
			}
		}
	}
	return hs
}

// TrustedProjects returns the trusted project directories recorded in the
// global settings file, as written there.
func (s *Settings) TrustedProjects() []string {
	if s == nil || s.global == nil {
		return nil
	}
	return append([]string(nil), s.global.trusted...)
}

// Trusted reports whether the user has trusted the project directory dir
// (with "prime trust"). Paths are compared after making them absolute and
// resolving symbolic links; a trusted directory does not make its
// subdirectories trusted.
func (s *Settings) Trusted(dir string) bool {
	if dir == "" {
		return false
	}
	want := canonicalDir(dir)
	for _, t := range s.TrustedProjects() {
		if canonicalDir(t) == want {
			return true
		}
	}
	return false
}

// Value is one effective setting, for display.
type Value struct {
	// Key is the setting's name, e.g. "compaction.reserveTokens".
	Key string
	// Value is a bool, an int or a string; nil for compaction.model when it
	// is not set.
	Value  any
	Source Source
	// Ignored is a value a file sets for this key that does not apply
	// (an untrusted project's shellPath), or nil.
	Ignored *Ignored
}

// Values lists every known setting's effective value and where it came
// from, then each per-model override in effect. With a model
// ("provider/id"), compaction.reserveTokens and keepRecentTokens show the
// values for that model, overrides applied.
func (s *Settings) Values(model string) []Value {
	var vs []Value
	for _, d := range knownKeys {
		var v setting
		switch d.name {
		case keyCompactionReserve:
			v = s.tokens(overrideReserveTokens, model)
		case keyCompactionKeepRecent:
			v = s.tokens(overrideKeepRecentTokens, model)
		default:
			v = s.lookup(d.name)
		}
		vs = append(vs, Value{Key: d.name, Value: v.value, Source: v.src, Ignored: s.ignoredValue(d.name)})
	}
	if ov := s.overrides(); ov != nil {
		for _, m := range ov.models {
			for _, f := range overrideFields {
				if n, ok := ov.fields[m][f]; ok {
					k := overrideKeyName(m, f)
					vs = append(vs, Value{Key: k, Value: n, Source: Source{Scope: ov.src.Scope, File: ov.src.File, Key: k}})
				}
			}
		}
	}
	return vs
}

// WithOverride returns a copy of s in which key is set to value (written as
// on the command line: true, 42, provider/id) above every file and
// per-model override, as a command-line flag would be. Per-model override
// keys cannot be set this way.
func (s *Settings) WithOverride(key, value string) (*Settings, error) {
	k, _, err := parseSetting(key, value)
	if err != nil {
		return nil, err
	}
	if k.model != "" {
		return nil, invalid("%s: a per-model override cannot be set at run time; set %s instead", k, k.def.name)
	}
	v, _, _ := k.parseValue(value)
	c := *s.get()
	f := &layer{scope: Flag, plain: map[string]setting{}}
	if c.flag != nil {
		for n, v := range c.flag.plain {
			f.plain[n] = v
		}
	}
	f.plain[k.def.name] = setting{value: v, src: Source{Scope: Flag, Key: k.def.name}}
	c.flag = f
	return &c, nil
}

// unquote reads a JSON string's text.
func unquote(raw []byte, s *string) error {
	b, err := jsontext.AppendUnquote(nil, raw)
	*s = string(b)
	return err
}

// Reload reads s's files again (the same agent and project directories)
// and keeps its run-time flags: the settings as they are now on disk.
func (s *Settings) Reload(ctx context.Context) (*Settings, error) {
	cur := s.get()
	if cur.agentDir == "" {
		return cur, nil // defaults, no files
	}
	// reload keeps every option s was loaded with (the working directory
	// and home that decide which ancestor settings apply, among them).
	return cur.reload(ctx)
}
