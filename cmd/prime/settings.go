package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/prime-agent/prime/settings"
)

func settingsCommands() []*command {
	return []*command{
		{
			name:    "settings",
			usage:   "[--json] [--model PROVIDER/ID] [--cwd DIR]",
			summary: "show every setting's effective value, the file it came from, and any problems",
			run:     runSettings,
		},
		{
			name:    "settings set",
			usage:   "KEY VALUE [--project] [--cwd DIR]",
			summary: "write one setting to the global settings file (--project: the project's)",
			run:     runSettingsSet,
		},
		{
			name:    "settings unset",
			usage:   "KEY [--project] [--cwd DIR]",
			summary: "remove one setting from the global settings file (--project: the project's)",
			run:     runSettingsUnset,
		},
		{
			name:    "trust",
			usage:   "[DIR] [--remove] | --list [--json]",
			summary: "trust a project (default: the current one): its hooks may run, its skills and prompt templates load",
			run:     runTrust,
		},
	}
}

// settingsFlags are the flags every settings command takes.
type settingsFlags struct {
	cwd string
}

func (f *settingsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.cwd, "cwd", "", "find the project from `DIR` instead of the working directory")
}

// loadSettings reads the settings for a command started in f.cwd (or the
// working directory).
func loadSettings(ctx context.Context, a *app, f settingsFlags) (*settings.Settings, error) {
	agentDir, err := settings.DefaultAgentDir(a.getenv)
	if err != nil {
		return nil, err
	}
	cwd := f.cwd
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return nil, err
		}
	} else if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return nil, usageErrorf("--cwd %s: not a directory", cwd)
	}
	project, err := settings.FindProject(cwd, agentDir)
	if err != nil {
		return nil, err
	}
	return settings.Load(ctx, settings.Options{AgentDir: agentDir, ProjectDir: project, WorkDir: cwd, Home: a.getenv("HOME")})
}

// unusedSummary says in one line which keys of the settings files have no
// effect.
func unusedSummary(u []settings.Problem) string {
	keys := make([]string, 0, min(len(u), 4))
	for _, p := range u[:min(len(u), 3)] {
		keys = append(keys, p.Key)
	}
	if len(u) > 3 {
		keys = append(keys, "…")
	}
	word := "keys"
	if len(u) == 1 {
		word = "key"
	}
	return fmt.Sprintf("%s sets %d %s Prime does not use (%s); 'prime settings' lists them", u[0].File, len(u), word, strings.Join(keys, ", "))
}

// warnProblems tells the user what is wrong in the settings files.
func warnProblems(a *app, name string, s *settings.Settings) {
	for _, p := range s.Problems() {
		fmt.Fprintf(a.stderr, "prime %s: warning: %v\n", name, p)
	}
}

// settingsErr marks a settings error caused by the user's input as such.
func settingsErr(err error) error {
	if errors.Is(err, settings.ErrInvalid) {
		return badInput(err)
	}
	return err
}

// settingsReport is the --json form of "prime settings". Its field names
// are stable.
type settingsReport struct {
	GlobalFile      string          `json:"globalFile"`
	GlobalExists    bool            `json:"globalFileExists"`
	ProjectDir      string          `json:"projectDir,omitzero"`
	ProjectFile     string          `json:"projectFile,omitzero"`
	ProjectExists   bool            `json:"projectFileExists"`
	ProjectTrusted  bool            `json:"projectTrusted"`
	Model           string          `json:"model,omitzero"`
	Settings        []reportValue   `json:"settings"`
	Hooks           []reportHook    `json:"hooks"`
	TrustedProjects []string        `json:"trustedProjects"`
	Problems        []reportProblem `json:"problems"`
	// Unused are the keys the files set that Prime does not read (a pi
	// user's theme, httpProxy, …): they have no effect.
	Unused []reportProblem `json:"unused"`
}

type reportValue struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
	// Source is "default", "global", "project" or "flag".
	Source string `json:"source"`
	File   string `json:"file,omitzero"`
	// From is the key the value was read from when a per-model override
	// supplied it.
	From string `json:"from,omitzero"`
	// Ignored is a value a file sets for the key that does not apply
	// (an untrusted project's shellPath), with the reason.
	Ignored *reportIgnored `json:"ignored,omitzero"`
}

type reportIgnored struct {
	Value  any    `json:"value"`
	Source string `json:"source"`
	File   string `json:"file"`
	Reason string `json:"reason"`
}

type reportHook struct {
	Event     string   `json:"event"`
	Command   string   `json:"command"`
	Args      []string `json:"args,omitzero"`
	TimeoutMs int      `json:"timeoutMs,omitzero"`
	Source    string   `json:"source"`
	File      string   `json:"file"`
	Key       string   `json:"key"`
}

type reportProblem struct {
	File   string `json:"file"`
	Line   int    `json:"line,omitzero"`
	Column int    `json:"column,omitzero"`
	Key    string `json:"key,omitzero"`
	// Message says what is wrong; BrokenFile means the whole file is
	// ignored and will not be written.
	Message    string `json:"message"`
	BrokenFile bool   `json:"brokenFile"`
}

func newSettingsReport(s *settings.Settings, model string) settingsReport {
	r := settingsReport{
		GlobalFile:      s.GlobalFile(),
		GlobalExists:    fileExists(s.GlobalFile()),
		ProjectDir:      s.ProjectDir(),
		ProjectFile:     s.ProjectFile(),
		ProjectExists:   fileExists(s.ProjectFile()),
		ProjectTrusted:  s.Trusted(s.ProjectDir()),
		Model:           model,
		Settings:        []reportValue{},
		Hooks:           []reportHook{},
		TrustedProjects: s.TrustedProjects(),
		Problems:        []reportProblem{},
		Unused:          []reportProblem{},
	}
	if r.TrustedProjects == nil {
		r.TrustedProjects = []string{}
	}
	for _, v := range s.Values(model) {
		rv := reportValue{Key: v.Key, Value: v.Value, Source: v.Source.Scope.String(), File: v.Source.File}
		if v.Source.ModelOverride() && v.Source.Key != v.Key {
			rv.From = v.Source.Key
		}
		if ig := v.Ignored; ig != nil {
			rv.Ignored = &reportIgnored{Value: ig.Value, Source: ig.Source.Scope.String(), File: ig.Source.File, Reason: ig.Reason}
		}
		r.Settings = append(r.Settings, rv)
	}
	for _, h := range s.Hooks() {
		r.Hooks = append(r.Hooks, reportHook{Event: h.Event, Command: h.Command, Args: h.Args, TimeoutMs: h.TimeoutMs,
			Source: h.Source.Scope.String(), File: h.Source.File, Key: h.Source.Key})
	}
	for _, p := range s.Problems() {
		r.Problems = append(r.Problems, reportProblem{File: p.File, Line: p.Line, Column: p.Column, Key: p.Key, Message: p.Msg, BrokenFile: p.Broken})
	}
	for _, p := range s.Unused() {
		r.Unused = append(r.Unused, reportProblem{File: p.File, Line: p.Line, Column: p.Column, Key: p.Key, Message: p.Msg})
	}
	return r
}

func fileExists(path string) bool {
	if path == "" {
		return false
	}
	_, err := os.Stat(path)
	return err == nil
}

func runSettings(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("settings", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	model := fs.String("model", "", "show compaction values for `PROVIDER/ID`, its overrides applied")
	var sf settingsFlags
	sf.register(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageErrorf("unexpected argument %q (to change a setting: prime settings set KEY VALUE)", pos[0])
	}
	if *model != "" && !strings.Contains(strings.Trim(*model, "/"), "/") {
		return usageErrorf("--model %q: want PROVIDER/ID", *model)
	}
	s, err := loadSettings(ctx, a, sf)
	if err != nil {
		return err
	}
	r := newSettingsReport(s, *model)
	if *asJSON {
		return writeJSON(a.stdout, r)
	}
	writeSettingsText(a.stdout, r)
	return nil
}

func writeSettingsText(w io.Writer, r settingsReport) {
	state := func(exists bool) string {
		if exists {
			return ""
		}
		return " (no file)"
	}
	fmt.Fprintf(w, "global file:   %s%s\n", r.GlobalFile, state(r.GlobalExists))
	if r.ProjectFile != "" {
		fmt.Fprintf(w, "project file:  %s%s\n", r.ProjectFile, state(r.ProjectExists))
	}
	if r.ProjectDir != "" {
		trust := "not trusted; run prime trust to let its hooks run"
		if r.ProjectTrusted {
			trust = "trusted"
		}
		fmt.Fprintf(w, "project:       %s (%s)\n", r.ProjectDir, trust)
	}
	if r.Model != "" {
		fmt.Fprintf(w, "model:         %s\n", r.Model)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tFROM")
	for _, v := range r.Settings {
		val := fmt.Sprint(v.Value)
		if v.Value == nil {
			val = unsetText(v.Key)
		}
		from := v.Source
		if v.From != "" {
			from += " " + v.From
		}
		if ig := v.Ignored; ig != nil {
			from += fmt.Sprintf(" (%s sets %v: ignored, not trusted)", ig.Source, ig.Value)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Key, val, from)
	}
	tw.Flush()
	if len(r.Hooks) > 0 {
		fmt.Fprintln(w, "\nhooks:")
		for _, h := range r.Hooks {
			cmd := strings.Join(append([]string{h.Command}, h.Args...), " ")
			extra := ""
			if h.TimeoutMs > 0 {
				extra = fmt.Sprintf(", timeout %dms", h.TimeoutMs)
			}
			if h.Source == "project" && !r.ProjectTrusted {
				extra += "; not run: the project is not trusted"
			}
			fmt.Fprintf(w, "  %s: %s  (%s %s%s)\n", h.Event, cmd, h.Source, h.Key, extra)
		}
	}
	if len(r.Problems) > 0 {
		fmt.Fprintln(w, "\nproblems:")
		for _, p := range r.Problems {
			fmt.Fprintf(w, "  %v\n", settings.Problem{File: p.File, Line: p.Line, Column: p.Column, Key: p.Key, Msg: p.Message, Broken: p.BrokenFile})
		}
	}
	if len(r.Unused) > 0 {
		fmt.Fprintln(w, "\nnot used by Prime (no effect):")
		for _, p := range r.Unused {
			fmt.Fprintf(w, "  %v\n", settings.Problem{File: p.File, Line: p.Line, Column: p.Column, Key: p.Key, Msg: p.Message})
		}
	}
}

// parseFlagsValues is parseFlags for commands whose positional arguments
// are values: an argument that is a negative number ("-5") is a value to
// check and reject with a clear message, not an unknown flag.
func parseFlagsValues(fs *flag.FlagSet, args []string) ([]string, error) {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if _, err := strconv.ParseFloat(arg, 64); err == nil || !strings.HasPrefix(arg, "-") || arg == "-" {
			pos = append(pos, arg)
			continue
		}
		flags = append(flags, arg)
		name := strings.TrimLeft(arg, "-")
		if f := fs.Lookup(name); f != nil && !isBoolFlag(f) && i+1 < len(args) {
			flags = append(flags, args[i+1])
			i++
		}
	}
	rest, err := parseFlags(fs, flags)
	return append(pos, rest...), err
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// parseWrite reads the arguments of a command that changes one settings
// file: n positional arguments, --project and --cwd.
func parseWrite(ctx context.Context, a *app, name string, args []string, n int, usage string) (*settings.Settings, settings.Scope, []string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	project := fs.Bool("project", false, "change the project's settings file")
	var sf settingsFlags
	sf.register(fs)
	pos, err := parseFlagsValues(fs, args)
	if err != nil {
		return nil, 0, nil, err
	}
	if len(pos) != n {
		return nil, 0, nil, usageErrorf("%s", usage)
	}
	s, err := loadSettings(ctx, a, sf)
	return s, scopeOf(*project), pos, err
}

func runSettingsSet(ctx context.Context, a *app, args []string) error {
	s, scope, pos, err := parseWrite(ctx, a, "settings set", args, 2, "want KEY VALUE, e.g. prime settings set compaction.enabled false")
	if err != nil {
		return err
	}
	ns, err := s.Set(ctx, scope, pos[0], pos[1])
	if err != nil {
		return settingsErr(err)
	}
	warnProblems(a, "settings set", ns)
	fmt.Fprintf(a.stdout, "%s = %s in %s\n", pos[0], pos[1], fileOf(ns, scope))
	return nil
}

func runSettingsUnset(ctx context.Context, a *app, args []string) error {
	s, scope, pos, err := parseWrite(ctx, a, "settings unset", args, 1, "want KEY, e.g. prime settings unset compaction.keepRecentTokens")
	if err != nil {
		return err
	}
	ns, found, err := s.Unset(ctx, scope, pos[0])
	if err != nil {
		return settingsErr(err)
	}
	warnProblems(a, "settings unset", ns)
	if !found {
		fmt.Fprintf(a.stdout, "%s was not set in %s\n", pos[0], fileOf(ns, scope))
		return nil
	}
	fmt.Fprintf(a.stdout, "removed %s from %s\n", pos[0], fileOf(ns, scope))
	return nil
}

func scopeOf(project bool) settings.Scope {
	if project {
		return settings.Project
	}
	return settings.Global
}

func fileOf(s *settings.Settings, scope settings.Scope) string {
	if scope == settings.Project {
		return s.ProjectFile()
	}
	return s.GlobalFile()
}

func runTrust(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("trust", flag.ContinueOnError)
	list := fs.Bool("list", false, "list the trusted projects")
	remove := fs.Bool("remove", false, "stop trusting the project")
	asJSON := fs.Bool("json", false, "with --list: print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 1:
		return usageErrorf("want at most one DIR")
	case *list && (*remove || len(pos) > 0):
		return usageErrorf("--list takes no DIR and no --remove")
	case *asJSON && !*list:
		return usageErrorf("--json goes with --list")
	}
	var sf settingsFlags
	if len(pos) == 1 {
		if fi, err := os.Stat(pos[0]); err == nil && fi.IsDir() {
			sf.cwd = pos[0]
		} else if !*remove {
			return usageErrorf("%s: not a directory", pos[0])
		}
	}
	s, err := loadSettings(ctx, a, sf)
	if err != nil {
		return err
	}
	if *list {
		trusted := s.TrustedProjects()
		if *asJSON {
			if trusted == nil {
				trusted = []string{}
			}
			return writeJSON(a.stdout, trusted)
		}
		for _, d := range trusted {
			fmt.Fprintln(a.stdout, d)
		}
		return nil
	}
	dir := s.ProjectDir()
	if *remove && len(pos) == 1 && sf.cwd == "" {
		dir = pos[0] // a directory that is gone can still be removed by name
	}
	if *remove {
		ns, found, err := s.Untrust(ctx, dir)
		if err != nil {
			return err
		}
		warnProblems(a, "trust", ns)
		if !found {
			fmt.Fprintf(a.stdout, "%s was not trusted\n", dir)
			return nil
		}
		fmt.Fprintf(a.stdout, "no longer trusted: %s\n", dir)
		return nil
	}
	ns, err := s.Trust(ctx, dir)
	if err != nil {
		return err
	}
	warnProblems(a, "trust", ns)
	fmt.Fprintf(a.stdout, "trusted: %s (the hooks in its .prime/agent/settings.json may run)\n", dir)
	return nil
}

// unsetText says what a setting with no value and no default means.
func unsetText(key string) string {
	switch key {
	case "compaction.model":
		return "(the session's model)"
	case "defaultProvider", "defaultModel":
		return "(the session's, else the first with a key)"
	case "defaultThinkingLevel":
		return "(the session's, else medium)"
	case "shellPath":
		return "(/bin/bash, else bash on PATH, else sh)"
	}
	return "(not set)"
}
