package agent

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/safepath"
	"github.com/prime-agent/prime/internal/smallfile"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/tool"
)

// The system prompt is built from named sections, rendered in this order and
// joined by blank lines; every section but the first is wrapped in
// <name>…</name> (pi 1.6's structure, so pi reads Prime's system messages as
// its own). Prime's words:
const (
	preambleText = "You are Prime, a coding agent working in the user's project from their terminal. " +
		"You help by reading files, running commands and changing code, and you say plainly what you did."
	toolsTrailer  = "Use them to look before you change anything."
	noToolsText   = "(no tools in this conversation)"
	bashFilesRule = "List, search and find files with bash (ls, grep, find)."
	briefRule     = "Keep answers short: they are read in a terminal."
	pathsRule     = "Name files by their paths when you talk about them."
	projectIntro  = "Instructions for this project, from its context files:"
)

// Section names, as pi names them.
const (
	sectionPreamble = "preamble"
	sectionTools    = "tools"
	sectionRules    = "rules"
	sectionAddendum = "addendum"
	sectionProject  = "project_context"
	sectionSkills   = "skills"
	sectionCWD      = "cwd"
)

// contextFileNames are the files read from each directory, the first that
// exists winning.
var contextFileNames = []string{"AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"}

// ContextFile is a file of instructions for the model: an AGENTS.md or
// CLAUDE.md found in the agent directory or on the way from the filesystem
// root to the working directory.
type ContextFile struct {
	Path    string
	Content string
}

// maxContextFile bounds one context file: a repository's AGENTS.md that is
// huge, or a link to a device, must not fill Prime's memory or the
// model's context.
const maxContextFile = 1 << 20

// SkippedContextFile is a context file that was found but not read, and
// why (for a warning).
type SkippedContextFile struct {
	Path, Why string
}

// LoadContextFiles returns the context files for a conversation in dir: the
// agent directory's first, then one per directory from the filesystem root
// down to dir (the first of AGENTS.override.md, AGENTS.md, AGENTS.MD,
// CLAUDE.md, CLAUDE.MD that is a regular file), each path once, a byte-order
// mark removed. A file that exists but cannot be read is an error naming it.
//
// A context file is text a cloned repository chooses, sent to the model and
// kept in the session, so a file that leads where the repository should
// not reach is skipped and returned in skipped: one whose real path is in
// deny (the sandbox's deny list: ~/.ssh, ~/.aws, the agent's auth.json),
// one that is not a regular file on a real file system (a FIFO, a device,
// /proc/self/environ and its API keys), one over 1 MiB, and one that
// another user could write (safepath: a shared /tmp's AGENTS.md).
func LoadContextFiles(agentDir, dir string, deny []string) (files []ContextFile, skipped []SkippedContextFile, err error) {
	var dirs []string
	if agentDir != "" {
		dirs = append(dirs, agentDir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	var chain []string
	for d := abs; ; d = filepath.Dir(d) {
		chain = append(chain, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		dirs = append(dirs, chain[i])
	}
	denied := deniedPaths(deny)
	seen := map[string]bool{}
	for _, d := range dirs {
		for _, name := range contextFileNames {
			p := filepath.Join(d, name)
			fi, err := os.Lstat(p)
			if err != nil || fi.IsDir() {
				continue
			}
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				continue // a link that leads nowhere
			}
			if seen[real] {
				break
			}
			seen[real] = true
			if why := contextFileRefused(real, denied); why != "" {
				skipped = append(skipped, SkippedContextFile{Path: p, Why: why})
				break
			}
			data, err := smallfile.Read(real, maxContextFile)
			if why := smallfile.Why(err); why != "" {
				skipped = append(skipped, SkippedContextFile{Path: p, Why: why})
				break
			}
			if err != nil {
				return nil, nil, fmt.Errorf("context file: %w", err)
			}
			if why := ""; unsafeContextFile(p, &why) {
				skipped = append(skipped, SkippedContextFile{Path: p, Why: why})
				break
			}
			files = append(files, ContextFile{Path: real, Content: string(bytes.TrimPrefix(data, []byte("\ufeff")))})
			break
		}
	}
	return files, skipped, nil
}

// deniedPaths are the deny list's paths as written and where they lead.
func deniedPaths(deny []string) []string {
	var out []string
	for _, d := range deny {
		if !filepath.IsAbs(d) {
			continue
		}
		out = append(out, filepath.Clean(d))
		if r, err := filepath.EvalSymlinks(d); err == nil && r != filepath.Clean(d) {
			out = append(out, r)
		}
	}
	return out
}

// unsafeContextFile reports, setting why, whether another user of the
// machine could write the context file at p (a shared /tmp's AGENTS.md,
// a file anyone may write): its text would tell the model what to do in
// the user's name.
func unsafeContextFile(p string, why *string) bool {
	var ue *safepath.UnsafeError
	if !errors.As(safepath.Check(p), &ue) {
		return false
	}
	*why = fmt.Sprintf("another user could change it (%v)", ue)
	return true
}

// contextFileRefused says why the context file at real (its links
// resolved) is not read, "" when it may be.
func contextFileRefused(real string, denied []string) string {
	for _, d := range denied {
		if real == d || strings.HasPrefix(real, d+string(filepath.Separator)) {
			return fmt.Sprintf("it leads to %s, which is on the deny list of credentials (permissions.denyRead)", real)
		}
	}
	return ""
}

// promptText reads a --system-prompt or --append-system-prompt value: the
// contents of the file it names when it names one, else the text itself.
func promptText(v string) (string, error) {
	if v == "" || strings.Contains(v, "\n") {
		return v, nil
	}
	if fi, err := os.Stat(v); err != nil || !fi.Mode().IsRegular() {
		return v, nil
	}
	data, err := os.ReadFile(v)
	if err != nil {
		return "", fmt.Errorf("system prompt: %w", err)
	}
	return string(data), nil
}

// promptSpec is what the system prompt is made of.
type promptSpec struct {
	custom       string // replaces the preamble, the tools and the rules
	addendum     string
	tools        []tool.Spec
	contextFiles []ContextFile
	skills       string // the skills section's text (skill.Prompt), "" for none
	cwd          string
	// mcp are the tools section's lines for the MCP servers (mcp.go).
	mcp []string
}

// sections renders the prompt's sections, in order.
func (p *promptSpec) sections() []session.SystemSection {
	var out []session.SystemSection
	add := func(name, text string) {
		if name != sectionPreamble {
			text = "<" + name + ">\n" + text + "\n</" + name + ">"
		}
		out = append(out, session.SystemSection{Name: name, Text: text})
	}
	if p.custom != "" {
		add(sectionPreamble, p.custom)
	} else {
		add(sectionPreamble, preambleText)
		var lines []string
		for _, t := range p.tools {
			if t.Snippet != "" {
				lines = append(lines, "- "+t.Name+": "+t.Snippet)
			}
		}
		lines = append(lines, p.mcp...)
		if len(lines) == 0 {
			add(sectionTools, noToolsText)
		} else {
			add(sectionTools, strings.Join(lines, "\n")+"\n\n"+toolsTrailer)
		}
		add(sectionRules, p.rules())
	}
	if p.addendum != "" {
		add(sectionAddendum, p.addendum)
	}
	if len(p.contextFiles) > 0 {
		parts := []string{projectIntro}
		for _, f := range p.contextFiles {
			parts = append(parts, "<project_instructions path=\""+f.Path+"\">\n"+f.Content+"\n</project_instructions>")
		}
		add(sectionProject, strings.Join(parts, "\n\n"))
	}
	if p.skills != "" {
		add(sectionSkills, p.skills)
	}
	add(sectionCWD, filepath.ToSlash(p.cwd))
	return out
}

// rules lists the rules section: a rule for finding files with bash when
// there is no tool for it, each tool's guidelines, then Prime's own; each
// once.
func (p *promptSpec) rules() string {
	has := map[string]bool{}
	for _, t := range p.tools {
		has[t.Name] = true
	}
	var rules []string
	seen := map[string]bool{}
	add := func(r string) {
		if r = strings.TrimSpace(r); r != "" && !seen[r] {
			seen[r] = true
			rules = append(rules, "- "+r)
		}
	}
	if has["bash"] && !has["grep"] && !has["find"] && !has["ls"] {
		add(bashFilesRule)
	}
	for _, t := range p.tools {
		for _, g := range t.Guidelines {
			add(g)
		}
	}
	add(briefRule)
	add(pathsRule)
	return strings.Join(rules, "\n")
}

// skillReader names the tool the model reads a skill's file with: read,
// else bash, else "" (no way to read it: the skills are not listed).
func skillReader(tools []tool.Spec) string {
	for _, want := range []string{"read", "bash"} {
		for _, t := range tools {
			if t.Name == want {
				return want
			}
		}
	}
	return ""
}

// systemPatch compares the prompt and tools the conversation should have
// with those its system messages give it now (current, nil for none) and
// returns the system message that brings it there, or nil when nothing
// changed: the sections that differ (a removed one marked Removed) and the
// tools added or changed and removed, as pi 1.6 records them.
func systemPatch(current *session.SystemMessage, want []session.SystemSection, tools []llm.Tool, now int64) *session.SystemMessage {
	patch := &session.SystemMessage{Timestamp: now}
	have := map[string]string{}
	var haveTools []session.ToolDeclaration
	if current != nil {
		for _, s := range current.Sections {
			if !s.Removed {
				have[s.Name] = s.Text
			}
		}
		haveTools = current.ToolsAdded
	}
	wanted := map[string]bool{}
	for _, s := range want {
		wanted[s.Name] = true
		if t, ok := have[s.Name]; !ok || t != s.Text {
			patch.Sections = append(patch.Sections, s)
		}
	}
	if current != nil {
		for _, s := range current.Sections {
			if !s.Removed && !wanted[s.Name] {
				patch.Sections = append(patch.Sections, session.SystemSection{Name: s.Name, Removed: true})
			}
		}
	}
	byName := map[string]session.ToolDeclaration{}
	for _, d := range haveTools {
		byName[d.Name] = d
	}
	wantTools := map[string]bool{}
	for _, t := range tools {
		wantTools[t.Name] = true
		d := declaration(t)
		if old, ok := byName[t.Name]; !ok || !sameDeclaration(old, d) {
			patch.ToolsAdded = append(patch.ToolsAdded, d)
		}
	}
	for _, d := range haveTools {
		if !wantTools[d.Name] || !sameDeclaration(d, byNameOf(tools, d.Name)) {
			patch.ToolsRemoved = append(patch.ToolsRemoved, d.Name)
		}
	}
	if len(patch.Sections) == 0 && len(patch.ToolsAdded) == 0 && len(patch.ToolsRemoved) == 0 {
		return nil
	}
	return patch
}

// byNameOf returns the declaration of the named tool, or an empty one.
func byNameOf(tools []llm.Tool, name string) session.ToolDeclaration {
	for _, t := range tools {
		if t.Name == name {
			return declaration(t)
		}
	}
	return session.ToolDeclaration{}
}

func declaration(t llm.Tool) session.ToolDeclaration {
	return session.ToolDeclaration{Name: t.Name, Description: t.Description, Parameters: compactJSON(t.Parameters)}
}

func sameDeclaration(a, b session.ToolDeclaration) bool {
	return a.Name == b.Name && a.Description == b.Description &&
		bytes.Equal(compactJSON(a.Parameters), compactJSON(b.Parameters)) &&
		bytes.Equal(compactJSON(a.ConstrainedSampling), compactJSON(b.ConstrainedSampling))
}

// compactJSON returns v without insignificant white space (v itself when it
// is not valid JSON).
func compactJSON(v jsontext.Value) jsontext.Value {
	if len(v) == 0 {
		return v
	}
	c := v.Clone()
	if err := c.Compact(); err != nil {
		return v
	}
	return c
}
