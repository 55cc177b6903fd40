package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/prime-agent/prime/prompttemplate"
	"github.com/prime-agent/prime/settings"
	"github.com/prime-agent/prime/skill"
)

// resources are the skills and prompt templates the conversation offers,
// read once (at the first prompt, or when a front end first lists the
// commands) and again on [Agent.Reload].
type resources struct {
	skills    []skill.Skill
	templates []prompttemplate.Template
}

// ErrUnknownSkill is returned for "/skill:name" naming no loaded skill:
// Prime refuses it rather than sending the command to the model as text,
// as pi does, so that a mistyped name costs no turn.
var ErrUnknownSkill = errors.New("unknown skill")

// Command is a command a skill or prompt template adds ("/skill:pdf-tools",
// "/review"), as completion shows it.
type Command struct {
	// Name is the command without its slash: "skill:pdf-tools", "review".
	Name         string
	Description  string
	ArgumentHint string
	// Source is "prompt" for a template, "skill" for a skill (pi's words,
	// which RPC's get_commands sends); File is the file it comes from, and
	// Project is set when that is in the project rather than the user's.
	Source  string
	File    string
	Project bool
}

// Commands lists the commands the loaded skills and prompt templates add,
// templates first, in the order they were found.
func (a *Agent) Commands() []Command {
	res := a.loadedResources()
	var out []Command
	for _, t := range res.templates {
		out = append(out, Command{Name: t.Name, Description: t.Description, ArgumentHint: t.ArgumentHint,
			Source: "prompt", File: t.File, Project: t.Project})
	}
	for _, s := range res.skills {
		out = append(out, Command{Name: strings.TrimPrefix(skill.CommandPrefix, "/") + s.Name, Description: s.Description,
			Source: "skill", File: s.File, Project: s.Scope == skill.Project})
	}
	return out
}

// Skills returns the loaded skills.
func (a *Agent) Skills() []skill.Skill { return slices.Clone(a.loadedResources().skills) }

// loadedResources returns the resources, reading them the first time.
func (a *Agent) loadedResources() *resources {
	a.resMu.Lock()
	a.mu.Lock()
	res := a.res
	a.mu.Unlock()
	var notices []string
	if res == nil {
		res, notices = a.readResources()
		a.mu.Lock()
		a.res = res
		a.mu.Unlock()
	}
	a.resMu.Unlock()
	for _, n := range notices {
		a.notice(NoticeWarning, n)
	}
	return res
}

// readResources reads the skills and templates the settings and flags
// allow, and words the notices the user should see (emitted by the caller
// once no lock is held): files with problems, and project files left
// unread because the project is not trusted.
func (a *Agent) readResources() (*resources, []string) {
	st := a.settings()
	agentDir := a.agentDir()
	cwd := a.cwd()
	project := st.ProjectDir()
	if project == "" {
		project = cwd
	}
	trusted := st.Trusted(project)
	home := ""
	if st.AgentDir() != "" { // settings from files: the user's own directories count
		home = a.getenv("HOME")
	}
	res := &resources{}
	var untrusted, notices []string
	skillPaths, templatePaths := a.cfg.SkillPaths, a.cfg.PromptTemplatePaths
	if !a.cfg.NoSkills {
		skillPaths = append(slices.Clone(skillPaths), configured(st, settings.SkillsKey, trusted, a.getenv("HOME"), &untrusted)...)
	}
	if !a.cfg.NoPromptTemplates {
		templatePaths = append(slices.Clone(templatePaths), configured(st, settings.PromptsKey, trusted, a.getenv("HOME"), &untrusted)...)
	}
	if !a.cfg.NoSkills || len(skillPaths) > 0 {
		skills, warnings, skipped := skill.Load(skill.Options{AgentDir: agentDir, Home: home, ProjectDir: project, CWD: cwd, Trusted: trusted,
			Paths: skillPaths, NoDiscovery: a.cfg.NoSkills})
		res.skills = skills
		untrusted = append(untrusted, skipped...)
		for _, w := range warnings {
			notices = append(notices, w.String())
		}
	}
	if !a.cfg.NoPromptTemplates || len(templatePaths) > 0 {
		templates, warnings, skipped := prompttemplate.Load(prompttemplate.Options{AgentDir: agentDir, ProjectDir: project, Trusted: trusted,
			Paths: templatePaths, NoDiscovery: a.cfg.NoPromptTemplates})
		res.templates = templates
		untrusted = append(untrusted, skipped...)
		for _, w := range warnings {
			notices = append(notices, w.String())
		}
	}
	if len(untrusted) > 0 {
		notices = append(notices, fmt.Sprintf("%s not loaded: the project %s is not trusted, and its skills and prompt templates "+
			"tell the model what to do; if you trust it, run \"prime trust\" in it", countFiles(untrusted), project))
	}
	return res, notices
}

// configured returns the paths the settings list under key (pi's skills
// and prompts), resolved; a project's entries count only when the project
// is trusted, else they are added to untrusted.
func configured(st *settings.Settings, key string, trusted bool, home string, untrusted *[]string) []string {
	var out []string
	for _, p := range st.Resources(key) {
		path := p.Resolve(home)
		if p.Source.Scope == settings.Project && !trusted {
			*untrusted = append(*untrusted, path)
			continue
		}
		out = append(out, path)
	}
	return out
}

// countFiles words how many files paths are, naming the first.
func countFiles(paths []string) string {
	if len(paths) == 1 {
		return paths[0]
	}
	return fmt.Sprintf("%d files (%s, …)", len(paths), paths[0])
}

// agentDir is the directory of the user's SYSTEM.md, AGENTS.md, skills
// and prompts: the configured one, else the settings'.
func (a *Agent) agentDir() string {
	if a.cfg.AgentDir != "" {
		return a.cfg.AgentDir
	}
	return a.settings().AgentDir()
}

func (a *Agent) getenv(key string) string {
	if a.cfg.Getenv != nil {
		return a.cfg.Getenv(key)
	}
	return os.Getenv(key)
}

// expandCommand returns the message "/skill:name args" or "/template
// args" stands for, or text itself when it is neither.
func (a *Agent) expandCommand(text string) (string, error) {
	if !strings.HasPrefix(text, "/") {
		return text, nil
	}
	res := a.loadedResources()
	if rest, ok := strings.CutPrefix(text, skill.CommandPrefix); ok {
		name, args, _ := strings.Cut(rest, " ")
		if i := strings.IndexAny(name, "\n\t"); i >= 0 {
			name, args = name[:i], name[i+1:]+" "+args
		}
		s, ok := skill.Find(res.skills, name)
		if !ok {
			return "", unknownSkill(name, res.skills)
		}
		return s.Expand(args)
	}
	if out, ok := prompttemplate.Expand(res.templates, text); ok {
		return out, nil
	}
	return text, nil
}

func unknownSkill(name string, skills []skill.Skill) error {
	if len(skills) == 0 {
		return fmt.Errorf("%w %q: no skills are loaded", ErrUnknownSkill, name)
	}
	var names []string
	for _, s := range skills {
		names = append(names, s.Name)
	}
	return fmt.Errorf("%w %q (the skills are %s)", ErrUnknownSkill, name, strings.Join(names, ", "))
}

// ReloadResult says what [Agent.Reload] found.
type ReloadResult struct {
	Skills, Templates, ContextFiles int
}

// Reload reads the settings, skills, prompt templates and context files
// (AGENTS.md, CLAUDE.md) again, so that edits apply without a restart: the
// next request carries the new system prompt (recorded in the session as
// a system message holding the sections that changed). A settings file
// that cannot be read keeps the settings as they were, and the error says
// so; the rest is still read. Command hooks are not read again: they stay
// those Config.Hooks was built with.
func (a *Agent) Reload(ctx context.Context) (ReloadResult, error) {
	var errs []error
	if st := a.settings(); st.AgentDir() != "" {
		ns, err := st.Reload(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("settings kept as they were: %w", err))
		} else {
			a.live.mu.Lock()
			a.live.current, a.live.stamps = ns, stampsOf(ns)
			a.live.mu.Unlock()
		}
	}
	a.reloadMCP()
	a.resMu.Lock()
	res, notices := a.readResources()
	a.mu.Lock()
	a.res = res
	haveModel := a.conv.prompt != nil
	a.mu.Unlock()
	a.resMu.Unlock()
	for _, n := range notices {
		a.notice(NoticeWarning, n)
	}
	out := ReloadResult{Skills: len(res.skills), Templates: len(res.templates)}
	if haveModel {
		spec, err := a.promptSpec()
		if err != nil {
			errs = append(errs, err)
		} else {
			a.mu.Lock()
			a.conv.prompt = spec
			a.mu.Unlock()
			out.ContextFiles = len(spec.contextFiles)
		}
	} else if !a.cfg.NoContextFiles {
		if files, _, err := LoadContextFiles(a.agentDir(), a.cwd(), a.contextDenyList(a.agentDir())); err == nil {
			out.ContextFiles = len(files)
		}
	}
	return out, errors.Join(errs...)
}
