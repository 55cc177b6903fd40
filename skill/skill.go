// Package skill loads Agent Skills (https://agentskills.io/specification)
// the way pi 1.6 does, so that a pi user's skills work in Prime unchanged:
// a skill is a directory holding a SKILL.md whose YAML frontmatter gives
// its name and description. The system prompt lists each skill's name,
// description and SKILL.md path ([Prompt]); the model reads the file with
// the read tool when a task matches, and the user can load one explicitly
// with "/skill:name args" ([Skill.Expand]).
//
// Discovery ([Load]), in pi's order, the first skill of a name winning:
// the project's .prime/skills, then .agents/skills in the working
// directory and each ancestor up to the git repository's root (both only
// when the project is trusted), then the agent directory's skills
// (~/.prime/agent/skills), then ~/.agents/skills. In a skills directory a
// directory holding SKILL.md is a skill and is not searched further; other
// directories are searched (hidden ones and node_modules skipped); a
// skills directory's own .md files are standalone skills in .prime/skills
// and ~/.prime/agent/skills (pi's "pi" layout), while .agents/skills takes
// .md files only below its top level (pi's "agents" layout).
//
// Validation follows pi: a missing or empty description, or a SKILL.md
// whose frontmatter does not parse, skips the skill with a warning; a name
// that breaks the specification's rules (lowercase letters, digits and
// single inner hyphens, at most 64 characters) or a description over 1024
// characters is a warning and the skill still loads; a second skill of a
// name is a warning naming the one kept. Every warning names its file.
//
// Where Prime does differently from pi, and why:
//   - pi reads .gitignore, .ignore and .fdignore inside skill directories;
//     Prime does not (a skills directory is something the user assembled,
//     and honouring ignore files there hides skills with no word of why).
//   - A standalone .md skill without a name is named after its file
//     (commit-style.md is "commit-style"); pi names it after its directory,
//     so every such file in ~/.pi/agent/skills is "skills" and only the
//     first of them loads.
package skill

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/prime-agent/prime/internal/frontmatter"
)

// Limits from the specification.
const (
	MaxNameLength        = 64
	MaxDescriptionLength = 1024
)

// Scope says where a skill was found.
type Scope string

// The scopes.
const (
	User    Scope = "user"
	Project Scope = "project"
)

// Skill is one loaded skill.
type Skill struct {
	Name        string
	Description string
	// File is the SKILL.md (or standalone .md) path; Dir is its directory,
	// which relative paths in the body are resolved against.
	File, Dir string
	Scope     Scope
	// DisableModelInvocation keeps the skill out of the system prompt: it
	// is loaded only by "/skill:name".
	DisableModelInvocation bool
}

// Warning is a problem with a skill file: the skill is still loaded unless
// Skipped.
type Warning struct {
	File    string
	Message string
	Skipped bool
}

func (w Warning) String() string {
	if w.Skipped {
		return fmt.Sprintf("skill %s not loaded: %s", w.File, w.Message)
	}
	return fmt.Sprintf("skill %s: %s", w.File, w.Message)
}

// Options says where to look.
type Options struct {
	// AgentDir is Prime's agent directory (~/.prime/agent); its skills
	// subdirectory is read.
	AgentDir string
	// Home is the user's home directory, for ~/.agents/skills ("" skips it).
	Home string
	// ProjectDir holds the project's .prime/skills; CWD is where the walk
	// for .agents/skills starts. Both are read only when Trusted.
	ProjectDir, CWD string
	Trusted         bool
	// Paths are skill files or directories named explicitly (pi's --skill
	// and the skills setting), read before the discovered ones and even
	// with NoDiscovery; a directory is searched as ~/.prime/agent/skills is.
	Paths []string
	// NoDiscovery reads Paths only (--no-skills).
	NoDiscovery bool
}

// Dirs returns the directories Load reads, in order, with their scope and
// whether their top-level .md files are skills. Project directories are
// listed whether or not trusted (see [Options.Trusted]).
func Dirs(opts Options) []Dir {
	var out []Dir
	if opts.ProjectDir != "" {
		out = append(out, Dir{Path: filepath.Join(opts.ProjectDir, ".prime", "skills"), Scope: Project, RootFiles: true})
	}
	userAgents := ""
	if opts.Home != "" {
		userAgents = filepath.Join(opts.Home, ".agents", "skills")
	}
	if opts.CWD != "" {
		for _, d := range ancestors(opts.CWD) {
			if p := filepath.Join(d, ".agents", "skills"); p != userAgents {
				out = append(out, Dir{Path: p, Scope: Project})
			}
		}
	}
	if opts.AgentDir != "" {
		out = append(out, Dir{Path: filepath.Join(opts.AgentDir, "skills"), Scope: User, RootFiles: true})
	}
	if userAgents != "" {
		out = append(out, Dir{Path: userAgents, Scope: User})
	}
	return out
}

// Dir is a directory skills are read from.
type Dir struct {
	Path      string
	Scope     Scope
	RootFiles bool
	file      bool // Path is a skill file named explicitly
}

// ancestors returns dir and its parents up to the git repository's root
// (the nearest holding .git), or to the filesystem root when there is none.
func ancestors(dir string) []string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	var chain []string
	for d := abs; ; d = filepath.Dir(d) {
		chain = append(chain, d)
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil || filepath.Dir(d) == d {
			return chain
		}
	}
}

// Load reads the skills opts names. untrusted lists the project skill
// files that exist but were not read because the project is not trusted.
func Load(opts Options) (skills []Skill, warnings []Warning, untrusted []string) {
	byName := map[string]string{}
	seenFile := map[string]bool{}
	var dirs []Dir
	for _, p := range opts.Paths {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			warnings = append(warnings, Warning{File: p, Skipped: true, Message: "not found"})
		case fi.IsDir():
			dirs = append(dirs, Dir{Path: p, Scope: User, RootFiles: true})
		default:
			dirs = append(dirs, Dir{Path: p, Scope: User, file: true})
		}
	}
	if !opts.NoDiscovery {
		dirs = append(dirs, Dirs(opts)...)
	}
	for _, d := range dirs {
		files := []string{d.Path}
		if !d.file {
			files = find(d.Path, d.RootFiles, true)
		}
		if d.Scope == Project && !opts.Trusted {
			untrusted = append(untrusted, files...)
			continue
		}
		for _, f := range files {
			key := f
			if real, err := filepath.EvalSymlinks(f); err == nil {
				key = real
			}
			if seenFile[key] {
				continue
			}
			s, ws := loadFile(f, d.Scope)
			warnings = append(warnings, ws...)
			if s == nil {
				continue
			}
			if kept, ok := byName[s.Name]; ok {
				warnings = append(warnings, Warning{File: f, Skipped: true,
					Message: fmt.Sprintf("another skill is named %q (%s is kept)", s.Name, kept)})
				continue
			}
			seenFile[key] = true
			byName[s.Name] = f
			skills = append(skills, *s)
		}
	}
	return skills, warnings, untrusted
}

// find lists the skill files under dir: dir's SKILL.md alone when it has
// one, else the skills of its subdirectories and its own .md files where
// the layout takes them: at the top only in the "pi" layout (rootFiles),
// below the top only in the "agents" layout.
func find(dir string, rootFiles, top bool) []string {
	if fi, err := os.Stat(filepath.Join(dir, "SKILL.md")); err == nil && fi.Mode().IsRegular() {
		return []string{filepath.Join(dir, "SKILL.md")}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	takeFiles := rootFiles == top
	var out []string
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || name == "node_modules" {
			continue
		}
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p) // follows symbolic links; a broken one is skipped
		if err != nil {
			continue
		}
		switch {
		case fi.IsDir():
			out = append(out, find(p, rootFiles, false)...)
		case takeFiles && fi.Mode().IsRegular() && strings.HasSuffix(name, ".md"):
			out = append(out, p)
		}
	}
	return out
}

var namePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9-]+$`) })

// nameProblems lists how name breaks the specification's rules.
func nameProblems(name string) []string {
	var out []string
	if n := len([]rune(name)); n > MaxNameLength {
		out = append(out, fmt.Sprintf("name is longer than %d characters (%d)", MaxNameLength, n))
	}
	if !namePattern().MatchString(name) {
		out = append(out, "name may hold only lowercase letters a-z, digits and hyphens")
	}
	if strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") {
		out = append(out, "name must not start or end with a hyphen")
	}
	if strings.Contains(name, "--") {
		out = append(out, "name must not hold two hyphens in a row")
	}
	return out
}

// loadFile reads one skill file. A standalone .md file (not SKILL.md)
// without a description, or whose frontmatter does not parse, is quietly
// not a skill, as in pi.
func loadFile(file string, scope Scope) (*Skill, []Warning) {
	declared := filepath.Base(file) == "SKILL.md"
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, []Warning{{File: file, Skipped: true, Message: err.Error()}}
	}
	doc, err := frontmatter.Parse(string(data))
	if err != nil {
		if !declared {
			return nil, nil
		}
		return nil, []Warning{{File: file, Skipped: true, Message: err.Error()}}
	}
	desc := doc.String("description")
	hasDesc := strings.TrimSpace(desc) != ""
	if !declared && !hasDesc {
		return nil, nil
	}
	var ws []Warning
	if n := len([]rune(desc)); n > MaxDescriptionLength {
		ws = append(ws, Warning{File: file, Message: fmt.Sprintf("description is longer than %d characters (%d)", MaxDescriptionLength, n)})
	}
	name := doc.String("name")
	switch {
	case name != "":
	case declared:
		name = filepath.Base(filepath.Dir(file))
	default:
		name = strings.TrimSuffix(filepath.Base(file), ".md")
	}
	for _, p := range nameProblems(name) {
		ws = append(ws, Warning{File: file, Message: p})
	}
	if !hasDesc {
		return nil, append(ws, Warning{File: file, Skipped: true, Message: "it has no description (the model needs one to know when to use it)"})
	}
	return &Skill{Name: name, Description: desc, File: file, Dir: filepath.Dir(file), Scope: scope,
		DisableModelInvocation: doc.Bool("disable-model-invocation")}, ws
}

// Prompt returns the system prompt's list of skills (without the section's
// tags), "" when no skill is offered to the model: those with
// DisableModelInvocation are left out. reader names the tool the model
// reads files with ("read" or "bash"; any other value words the
// instruction without naming a tool), so that the instruction names it.
// A conversation without a tool to read files gets no list (the agent
// does not call Prompt), as in pi.
func Prompt(skills []Skill, reader string) string {
	var b strings.Builder
	n := 0
	for _, s := range skills {
		if s.DisableModelInvocation {
			continue
		}
		if n == 0 {
			b.WriteString(promptIntro)
			b.WriteString("\n")
			switch reader {
			case "read":
				b.WriteString(promptReadTool)
			case "bash":
				b.WriteString(promptBash)
			default:
				b.WriteString(promptIndirect)
			}
			b.WriteString("\n" + promptPaths + "\n\n<available_skills>\n")
		}
		n++
		fmt.Fprintf(&b, "  <skill>\n    <name>%s</name>\n    <description>%s</description>\n    <location>%s</location>\n  </skill>\n",
			escape(s.Name), escape(s.Description), escape(s.File))
	}
	if n == 0 {
		return ""
	}
	b.WriteString("</available_skills>")
	return b.String()
}

// Prime's words for the list's preamble (the list itself is the Agent
// Skills format, as pi writes it).
const (
	promptIntro    = "These skills hold instructions for particular kinds of work."
	promptReadTool = "When a task matches a skill's description, read its file with the read tool before you start."
	promptBash     = "When a task matches a skill's description, read its file with bash before you start."
	promptIndirect = "When a task matches a skill's description, read its file before you start."
	promptPaths    = "Paths in a skill are relative to its directory (the one holding its file); use absolute paths in tool calls."
)

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

func escape(s string) string { return xmlEscaper.Replace(s) }

// Expand returns the user message "/skill:name args" stands for: the
// skill's body in a <skill> block naming its file and directory, then the
// arguments, as pi sends it. The file is read now, so an edit since
// loading is seen.
func (s Skill) Expand(args string) (string, error) {
	data, err := os.ReadFile(s.File)
	if err != nil {
		return "", fmt.Errorf("skill %s: %w", s.Name, err)
	}
	doc, _ := frontmatter.Parse(string(data))
	block := fmt.Sprintf("<skill name=\"%s\" location=\"%s\">\nPaths in this skill are relative to %s.\n\n%s\n</skill>",
		s.Name, s.File, s.Dir, strings.TrimSpace(doc.Body))
	if args = strings.TrimSpace(args); args != "" {
		block += "\n\n" + args
	}
	return block, nil
}

// CommandPrefix starts a command that loads a skill: "/skill:name".
const CommandPrefix = "/skill:"

// Find returns the skill named name.
func Find(skills []Skill, name string) (Skill, bool) {
	for _, s := range skills {
		if s.Name == name {
			return s, true
		}
	}
	return Skill{}, false
}
