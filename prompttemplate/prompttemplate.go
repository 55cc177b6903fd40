// Package prompttemplate loads prompt templates, Markdown files that
// become "/name" commands, as pi 1.6 does so that a pi user's templates
// work in Prime unchanged: the file name without ".md" is the command, the
// frontmatter's description and argument-hint are shown in completion (the
// description defaults to the body's first non-empty line, cut at 60
// characters), and the body, with the arguments substituted
// ([Substitute]), is the message sent.
//
// Templates come from the agent directory's prompts (~/.prime/agent/prompts)
// and the project's .prime/prompts (only when the project is trusted),
// their direct .md children only. pi lists every template of a name (the
// first wins when expanding); Prime keeps the first, the project's, and
// warns about the others, so that completion shows each command once.
package prompttemplate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/prime-agent/prime/internal/frontmatter"
)

// Template is one loaded template.
type Template struct {
	Name         string
	Description  string
	ArgumentHint string
	Body         string
	File         string
	// Project is set for a template from the project's .prime/prompts.
	Project bool
}

// Warning is a template file that was not loaded, and why.
type Warning struct {
	File, Message string
}

func (w Warning) String() string {
	return fmt.Sprintf("prompt template %s not loaded: %s", w.File, w.Message)
}

// Options says where to look.
type Options struct {
	AgentDir   string // its prompts subdirectory is read
	ProjectDir string // its .prime/prompts is read when Trusted
	Trusted    bool
	// Paths are template files or directories named explicitly (pi's
	// --prompt-template and the prompts setting), read before the others
	// and even with NoDiscovery.
	Paths []string
	// NoDiscovery reads Paths only (--no-prompt-templates).
	NoDiscovery bool
}

// Load reads the templates opts names, the project's first. untrusted
// lists the project's template files that were not read because the
// project is not trusted.
func Load(opts Options) (templates []Template, warnings []Warning, untrusted []string) {
	type dir struct {
		path    string
		project bool
	}
	var dirs []dir
	explicit := map[string]bool{}
	for _, p := range opts.Paths {
		if fi, err := os.Stat(p); err != nil {
			warnings = append(warnings, Warning{File: p, Message: "not found"})
		} else {
			dirs = append(dirs, dir{p, false})
			explicit[p] = !fi.IsDir()
		}
	}
	if opts.ProjectDir != "" && !opts.NoDiscovery {
		dirs = append(dirs, dir{filepath.Join(opts.ProjectDir, ".prime", "prompts"), true})
	}
	if opts.AgentDir != "" && !opts.NoDiscovery {
		dirs = append(dirs, dir{filepath.Join(opts.AgentDir, "prompts"), false})
	}
	kept := map[string]string{}
	seen := map[string]bool{} // a file named explicitly and found again
	for _, d := range dirs {
		files := mdFiles(d.path)
		if explicit[d.path] {
			files = []string{d.path}
		}
		if d.project && !opts.Trusted {
			untrusted = append(untrusted, files...)
			continue
		}
		for _, f := range files {
			key := filepath.Clean(f)
			if real, err := filepath.EvalSymlinks(f); err == nil {
				key = real
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			t, err := loadFile(f)
			if err != nil {
				warnings = append(warnings, Warning{File: f, Message: err.Error()})
				continue
			}
			if k, ok := kept[t.Name]; ok {
				warnings = append(warnings, Warning{File: f, Message: fmt.Sprintf("/%s is already the template %s", t.Name, k)})
				continue
			}
			kept[t.Name] = f
			t.Project = d.project
			templates = append(templates, t)
		}
	}
	return templates, warnings, untrusted
}

// mdFiles lists dir's .md files (symbolic links to files included), by name.
func mdFiles(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func loadFile(file string) (Template, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return Template{}, err
	}
	doc, err := frontmatter.Parse(string(data))
	if err != nil {
		return Template{}, err
	}
	t := Template{Name: strings.TrimSuffix(filepath.Base(file), ".md"), Body: doc.Body, File: file,
		Description: doc.String("description"), ArgumentHint: doc.String("argument-hint")}
	if t.Description == "" {
		for line := range strings.SplitSeq(doc.Body, "\n") {
			if strings.TrimSpace(line) != "" {
				t.Description = line
				if r := []rune(line); len(r) > 60 {
					t.Description = string(r[:60]) + "..."
				}
				break
			}
		}
	}
	return t, nil
}

// Find returns the template "/name args" invokes, and the arguments' text;
// ok is false when text is not such a command.
func Find(templates []Template, text string) (t Template, args string, ok bool) {
	if !strings.HasPrefix(text, "/") {
		return Template{}, "", false
	}
	name, rest := text[1:], ""
	if i := strings.IndexAny(name, " \t\n\r\f\v"); i >= 0 {
		name, rest = name[:i], strings.TrimLeft(name[i:], " \t\n\r\f\v")
	}
	for _, t := range templates {
		if t.Name == name && name != "" {
			return t, rest, true
		}
	}
	return Template{}, "", false
}

// Expand returns the message text "/name args" stands for, and whether
// text invokes one of templates.
func Expand(templates []Template, text string) (string, bool) {
	t, args, ok := Find(templates, text)
	if !ok {
		return text, false
	}
	return Substitute(t.Body, SplitArgs(args)), true
}
