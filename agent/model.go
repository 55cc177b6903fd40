package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/registry"
	"github.com/prime-agent/prime/llm/retry"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/skill"
	"github.com/prime-agent/prime/tool"
)

// ErrNoConversationModel means no model to converse with was found: none
// named, none configured, no key set and no local server answering.
var ErrNoConversationModel = errors.New("no model to talk to")

// textNoModel says what to do when no model can be found.
const textNoModel = "set ANTHROPIC_API_KEY or OPENAI_API_KEY, start a local Ollama (127.0.0.1:11434) or llama.cpp server (127.0.0.1:8080), " +
	"or add a provider to models.json in the agent directory and name its model with --model PROVIDER/ID ('prime models' lists them)"

// ThinkingLevels are the levels a reasoning model may be asked for, lowest
// first.
var ThinkingLevels = []llm.ThinkingLevel{llm.ThinkingOff, llm.ThinkingMinimal, llm.ThinkingLow, llm.ThinkingMedium, llm.ThinkingHigh, llm.ThinkingXHigh}

// defaultThinking is the level of a new session when nothing says otherwise.
const defaultThinking = llm.ThinkingMedium

// conversationRegistry loads the models for the conversation. Its providers
// do not retry on their own: the agent retries failed replies itself, with
// events the user sees.
func (a *Agent) conversationRegistry() (*registry.Registry, error) {
	dir := a.cfg.AgentDir
	if dir == "" {
		dir = a.settings().AgentDir()
	}
	return registry.Load(registry.Options{AgentDir: dir, Getenv: a.cfg.Getenv, HTTPClient: a.cfg.HTTPClient, Retry: &retry.Policy{},
		Stream: a.streamBounds()})
}

// streamBounds are the settings' bounds on a silent model server
// (retry.streamIdleTimeoutMs, retry.streamKeepAliveTimeoutMs).
func (a *Agent) streamBounds() llm.StreamBounds {
	idle, keepAlive := a.settings().Retry().StreamBounds()
	return llm.StreamBounds{IdleTimeout: idle, KeepAliveTimeout: keepAlive}
}

// Model returns the model the agent converses with, choosing it on first
// use: Config.Model, else the settings' defaultProvider and defaultModel,
// else the session's last model (if it can be used), else the first model
// with a key, else (with Config.DiscoverLocal) a local server that answers.
// An error says what to set.
func (a *Agent) Model(ctx context.Context) (llm.Model, error) {
	if err := a.ensureModel(ctx); err != nil {
		return llm.Model{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return *a.conv.model, nil
}

// ensureModel chooses the model, the thinking level, the tools and the system
// prompt, once.
func (a *Agent) ensureModel(ctx context.Context) error {
	a.mu.Lock()
	if a.conv.model != nil {
		a.mu.Unlock()
		return nil
	}
	sctx, err := a.s.Context("")
	a.mu.Unlock()
	if err != nil {
		return err
	}
	reg, err := a.conversationRegistry()
	if err != nil {
		return err
	}
	entry, warning, err := a.chooseModel(ctx, reg, sctx.Model)
	if err != nil {
		return err
	}
	p, m, err := reg.ProviderFor(ctx, entry.Model)
	if err != nil {
		return fmt.Errorf("model %s: %w", entry.Ref(), err)
	}
	level := a.cfg.ThinkingLevel
	if level == "" && sctx.Model != nil && hasThinkingEntry(a) {
		level = sctx.ThinkingLevel
	}
	if level == "" {
		level = llm.ThinkingLevel(a.settings().Conversation().DefaultThinkingLevel)
	}
	if level == "" {
		level = defaultThinking
	}
	spec, err := a.promptSpec()
	if err != nil {
		return err
	}
	a.mu.Lock()
	c := &a.conv
	if c.model == nil {
		c.model, c.provider, c.thinking = &m, p, clampThinking(m, level)
		c.tools, c.prompt = a.cfg.Tools, spec
		a.initFlagsLocked()
	}
	a.mu.Unlock()
	if warning != "" {
		a.notice(NoticeWarning, warning)
	}
	// models.json's fields Prime does not act on are said once, when the
	// conversation's model is chosen, not left unused in silence.
	for _, w := range reg.Warnings() {
		a.notice(NoticeWarning, w)
	}
	return nil
}

// hasThinkingEntry reports whether the session's path sets a thinking level.
func hasThinkingEntry(a *Agent) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	path := a.s.LeafView()
	for i := range path.Len() {
		if path.Type(i) == session.TypeThinkingLevelChange {
			return true
		}
	}
	return false
}

// chooseModel picks the conversation's model from the registry (see
// [Agent.Model]); warning says why the session's own model was passed over.
func (a *Agent) chooseModel(ctx context.Context, reg *registry.Registry, sessionModel *session.ModelRef) (registry.Entry, string, error) {
	usable := func(e registry.Entry) bool { return e.Supported && (e.HasKey || e.Key == "") }
	if ref := a.cfg.Model; ref != "" {
		e, err := reg.Find(ref)
		if err != nil {
			return registry.Entry{}, "", fmt.Errorf("--model: %w", err) // the error names the model
		}
		if !e.Supported {
			return registry.Entry{}, "", fmt.Errorf("model %s: %w %q", e.Ref(), registry.ErrUnsupportedAPI, e.Model.API)
		}
		return e, "", nil
	}
	cs := a.settings().Conversation()
	if cs.DefaultModel != "" {
		ref := cs.DefaultModel
		if cs.DefaultProvider != "" && !strings.HasPrefix(ref, cs.DefaultProvider+"/") {
			ref = cs.DefaultProvider + "/" + ref
		}
		if e, err := reg.Find(ref); err == nil && usable(e) {
			return e, "", nil
		}
	}
	var warning string
	if sessionModel != nil && sessionModel.Provider != "" && sessionModel.ModelID != "" {
		ref := sessionModel.Provider + "/" + sessionModel.ModelID
		e, err := reg.Find(ref)
		if err == nil && usable(e) {
			return e, "", nil
		}
		warning = fmt.Sprintf("could not use the session's model %s", ref)
		if err == nil && !e.HasKey {
			warning += " (no key: set " + strings.TrimPrefix(e.Key, "$") + ")"
		}
	}
	for _, e := range reg.Models() {
		if e.Supported && e.HasKey {
			if warning != "" {
				warning += "; using " + e.Ref()
			}
			return e, warning, nil
		}
	}
	if a.cfg.DiscoverLocal {
		if e, ok := a.discoverLocal(ctx); ok {
			if warning != "" {
				warning += "; using " + e.Ref()
			}
			return e, warning, nil
		}
	}
	return registry.Entry{}, "", fmt.Errorf("%w: %s", ErrNoConversationModel, textNoModel)
}

// clampThinking brings level within what model can do (pi's
// clampThinkingLevel, [llm.Model.ClampThinking]): off for a model that does
// not reason, high for one that cannot do xhigh, the nearest level the
// model's thinking-level table allows.
func clampThinking(m llm.Model, level llm.ThinkingLevel) llm.ThinkingLevel {
	if !m.Reasoning {
		return llm.ThinkingOff
	}
	if !slices.Contains(ThinkingLevels, level) {
		level = defaultThinking
	}
	return m.ClampThinking(level)
}

// AvailableThinkingLevels returns the levels the current model accepts
// (only "off" for a model that does not reason).
func (a *Agent) AvailableThinkingLevels() []llm.ThinkingLevel {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := a.conv.model
	if m == nil || !m.Reasoning {
		return []llm.ThinkingLevel{llm.ThinkingOff}
	}
	return m.ThinkingLevels()
}

// promptFile reads the system prompt file name (SYSTEM.md or
// APPEND_SYSTEM.md) as pi 1.6 does: the project's .prime/NAME when the
// project is trusted, else the agent directory's. A project's file left
// out because the project is not trusted is said, once per reading.
func (a *Agent) promptFile(name string) string {
	st := a.settings()
	project := st.ProjectDir()
	if project == "" {
		project = a.cwd()
	}
	if project != "" {
		path := filepath.Join(project, ".prime", name)
		if data, err := os.ReadFile(path); err == nil {
			if st.Trusted(project) {
				return string(data)
			}
			a.notice(NoticeWarning, fmt.Sprintf("%s not read: the project is not trusted, and it would change the system prompt; "+
				"if you trust it, run \"prime trust\" in it", path))
		}
	}
	if dir := a.agentDir(); dir != "" {
		if data, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			return string(data)
		}
	}
	return ""
}

// promptSpec gathers what the system prompt is made of.
func (a *Agent) promptSpec() (*promptSpec, error) {
	spec := &promptSpec{cwd: a.cwd()}
	custom, err := promptText(a.cfg.SystemPrompt)
	if err != nil {
		return nil, err
	}
	agentDir := a.agentDir()
	if custom == "" {
		custom = a.promptFile("SYSTEM.md")
	}
	spec.custom = custom
	var parts []string
	for _, v := range a.cfg.AppendSystemPrompt {
		t, err := promptText(v)
		if err != nil {
			return nil, err
		}
		if t != "" {
			parts = append(parts, t)
		}
	}
	if len(a.cfg.AppendSystemPrompt) == 0 {
		if t := a.promptFile("APPEND_SYSTEM.md"); t != "" {
			parts = append(parts, t)
		}
	}
	spec.addendum = strings.Join(parts, "\n\n")
	for _, t := range a.cfg.Tools {
		spec.tools = append(spec.tools, t.Spec())
	}
	if !a.cfg.NoContextFiles {
		files, skipped, err := LoadContextFiles(agentDir, spec.cwd, a.contextDenyList(agentDir))
		if err != nil {
			return nil, err
		}
		spec.contextFiles = files
		for _, f := range skipped {
			a.notice(NoticeWarning, fmt.Sprintf("context file %s not read: %s", f.Path, f.Why))
		}
	}
	if reader := skillReader(spec.tools); reader != "" {
		spec.skills = skill.Prompt(a.loadedResources().skills, reader)
	} else {
		a.loadedResources() // the templates are still offered
	}
	return spec, nil
}

// ContextFiles returns the context files the system prompt holds.
func (a *Agent) ContextFiles() []ContextFile {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.conv.prompt == nil {
		return nil
	}
	return slices.Clone(a.conv.prompt.contextFiles)
}

// cwd is the directory the conversation is about.
func (a *Agent) cwd() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cwdLocked()
}

func (a *Agent) cwdLocked() string {
	if a.cfg.CWD != "" {
		return a.cfg.CWD
	}
	if h := a.s.Header(); h != nil && h.CWD != "" {
		return h.CWD
	}
	wd, _ := os.Getwd()
	return wd
}

// setUpSession records the model and thinking level in the session when it
// does not have them yet (a new session gets a model_change and a
// thinking_level_change, as pi writes them), or when they differ from what
// its path says (a session continued with another --model).
func (a *Agent) setUpSession() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := &a.conv
	if c.setUp || c.model == nil {
		return nil
	}
	c.setUp = true
	sctx, err := a.s.Context("")
	if err != nil {
		return err
	}
	var appended []*session.Entry
	if m := sctx.Model; m == nil || m.Provider != c.model.Provider || m.ModelID != c.model.ID {
		e, err := a.appendLocked(&session.ModelChangeEntry{Provider: c.model.Provider, ModelID: c.model.ID})
		if err != nil {
			return err
		}
		appended = append(appended, e)
	}
	thinkingSet := false
	path := a.s.LeafView()
	for i := range path.Len() {
		if path.Type(i) == session.TypeThinkingLevelChange {
			thinkingSet = true
		}
	}
	if !thinkingSet || sctx.ThinkingLevel != c.thinking {
		e, err := a.appendLocked(&session.ThinkingLevelChangeEntry{ThinkingLevel: c.thinking})
		if err != nil {
			return err
		}
		appended = append(appended, e)
	}
	_ = appended
	return nil
}

// SetModel switches the conversation to the model ref ("provider/id"): a
// model_change entry is appended (even for the same model, as pi does) and
// the thinking level is brought within the model's. Mid-run, the switch
// applies from the next turn.
func (a *Agent) SetModel(ctx context.Context, ref string) (llm.Model, error) {
	if err := a.ensureModel(ctx); err != nil && !errors.Is(err, ErrNoConversationModel) {
		return llm.Model{}, err
	}
	reg, err := a.conversationRegistry()
	if err != nil {
		return llm.Model{}, err
	}
	e, err := a.findModel(reg, ref)
	if err != nil {
		return llm.Model{}, err
	}
	p, m, err := reg.ProviderFor(ctx, e.Model)
	if err != nil {
		return llm.Model{}, err
	}
	a.mu.Lock()
	c := &a.conv
	if c.prompt == nil {
		a.mu.Unlock()
		spec, err := a.promptSpec()
		if err != nil {
			return llm.Model{}, err
		}
		a.mu.Lock()
		c.prompt, c.tools = spec, a.cfg.Tools
	}
	old := c.thinking
	if old == "" {
		old = defaultThinking
	}
	c.model, c.provider = &m, p
	c.thinking = clampThinking(m, old)
	var appended []*session.Entry
	entry, err := a.appendLocked(&session.ModelChangeEntry{Provider: m.Provider, ModelID: m.ID})
	if err == nil {
		appended = append(appended, entry)
		if c.thinking != old || !c.setUp {
			if te, err := a.appendLocked(&session.ThinkingLevelChangeEntry{ThinkingLevel: c.thinking}); err == nil {
				appended = append(appended, te)
			}
		}
		c.setUp = true
	}
	level := c.thinking
	a.mu.Unlock()
	if err != nil {
		return m, fmt.Errorf("model switched, but not recorded in the session: %w", err)
	}
	for _, e := range appended {
		a.emit(EntryAppended{Entry: e})
	}
	a.emit(ModelChanged{Model: m})
	a.emit(ThinkingLevelChanged{Level: level})
	return m, nil
}

// SetThinkingLevel sets the reasoning level, clamped to the model's; a
// thinking_level_change entry is appended when it changes.
func (a *Agent) SetThinkingLevel(ctx context.Context, level llm.ThinkingLevel) (llm.ThinkingLevel, error) {
	if err := a.ensureModel(ctx); err != nil {
		return "", err
	}
	a.mu.Lock()
	c := &a.conv
	level = clampThinking(*c.model, level)
	if level == c.thinking {
		a.mu.Unlock()
		return level, nil
	}
	c.thinking = level
	e, err := a.appendLocked(&session.ThinkingLevelChangeEntry{ThinkingLevel: level})
	a.mu.Unlock()
	if err != nil {
		return level, fmt.Errorf("thinking level set, but not recorded in the session: %w", err)
	}
	a.emit(EntryAppended{Entry: e})
	a.emit(ThinkingLevelChanged{Level: level})
	return level, nil
}

// ThinkingLevel returns the reasoning level in force.
func (a *Agent) ThinkingLevel() llm.ThinkingLevel {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.conv.thinking
}

// CycleThinkingLevel moves to the next level the model accepts (after the
// highest, back to off); ok is false for a model that does not reason.
func (a *Agent) CycleThinkingLevel(ctx context.Context) (level llm.ThinkingLevel, ok bool, err error) {
	levels := a.AvailableThinkingLevels()
	if len(levels) < 2 {
		return llm.ThinkingOff, false, nil
	}
	cur := a.ThinkingLevel()
	i := slices.Index(levels, cur)
	next := levels[(i+1)%len(levels)]
	level, err = a.SetThinkingLevel(ctx, next)
	return level, true, err
}

// Models lists the models the conversation can switch to: those Prime can
// call with a key set (or needing none).
func (a *Agent) Models() ([]registry.Entry, error) {
	reg, err := a.conversationRegistry()
	if err != nil {
		return nil, err
	}
	var out []registry.Entry
	for _, e := range reg.Models() {
		if e.Supported && (e.HasKey || e.Key == "") {
			out = append(out, e)
		}
	}
	a.mu.Lock()
	for _, m := range a.conv.local {
		out = append(out, localEntry(m))
	}
	a.mu.Unlock()
	return out, nil
}

// CycleModel switches to the next model of Models (forward, or back);
// ok is false when there is only one.
func (a *Agent) CycleModel(ctx context.Context, back bool) (m llm.Model, ok bool, err error) {
	models, err := a.Models()
	if err != nil {
		return llm.Model{}, false, err
	}
	cur, _ := a.Model(ctx)
	i := slices.IndexFunc(models, func(e registry.Entry) bool { return e.Model.Provider == cur.Provider && e.Model.ID == cur.ID })
	if len(models) == 0 || len(models) == 1 && i == 0 {
		return cur, false, nil
	}
	step := 1
	if back {
		step = len(models) - 1
	}
	next := models[(i+step+len(models))%len(models)]
	if i < 0 {
		next = models[0]
	}
	m, err = a.SetModel(ctx, next.Ref())
	return m, true, err
}

// Tools returns the tools the model may call.
func (a *Agent) Tools() []tool.Tool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.conv.tools != nil {
		return slices.Clone(a.conv.tools)
	}
	return slices.Clone(a.cfg.Tools)
}

// discoverLocal looks for local model servers, remembers the models they
// serve (so that they can be switched to) and returns the first.
func (a *Agent) discoverLocal(ctx context.Context) (registry.Entry, bool) {
	servers := a.cfg.LocalServers
	if servers == nil {
		servers = registry.LocalServers
	}
	ms := registry.Discover(ctx, a.cfg.HTTPClient, servers)
	if len(ms) == 0 {
		return registry.Entry{}, false
	}
	a.mu.Lock()
	a.conv.local = ms
	a.mu.Unlock()
	return localEntry(ms[0]), true
}

// SourceLocal is the source of a model found on a local server.
const SourceLocal = "local server"

func localEntry(m llm.Model) registry.Entry {
	return registry.Entry{Model: m, Source: SourceLocal, Supported: true}
}

// findModel looks ref up in the registry, then among the local servers'
// models found.
func (a *Agent) findModel(reg *registry.Registry, ref string) (registry.Entry, error) {
	e, err := reg.Find(ref)
	if err == nil {
		return e, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, m := range a.conv.local {
		if m.Provider+"/"+m.ID == ref || m.ID == ref {
			return localEntry(m), nil
		}
	}
	return registry.Entry{}, err
}
