package sessiongen

import (
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// With Options.Pi16 the session is written as pi 1.6 writes one: the
// system prompt lives in the transcript (a system message before the first
// request, patches when a section or the tool set changes, its replayed
// state on every compaction), and a failed attempt stays in the file but
// is hidden from the model by context_edit entries.

// toolSpec is a tool the simulated agent can declare.
type toolSpec struct {
	name, summary, description, schema string
}

var agentTools = []toolSpec{
	{"read", "read a file's contents", "Read the contents of a file. Text files are shown with line numbers cut to a window; images are attached. Use offset and limit for large files.",
		`{"type":"object","properties":{"path":{"type":"string","description":"Path of the file, relative to the working directory or absolute"},"offset":{"type":"number","description":"First line to show, 1-based"},"limit":{"type":"number","description":"Most lines to show"}},"required":["path"],"additionalProperties":false}`},
	{"bash", "run a shell command", "Run a command with bash in the working directory and return its output and exit status. Long output is truncated; the full output is kept in a file.",
		`{"type":"object","properties":{"command":{"type":"string","description":"The command line"},"timeout":{"type":"number","description":"Seconds before the command is stopped"}},"required":["command"],"additionalProperties":false}`},
	{"edit", "replace exact text in a file", "Edit a file by replacing exact text. Each oldText must occur exactly once in the file; several disjoint edits may be given at once.",
		`{"type":"object","properties":{"path":{"type":"string","description":"Path of the file to edit"},"oldText":{"type":"string","description":"Exact text to replace"},"newText":{"type":"string","description":"Replacement text"}},"required":["path","oldText","newText"],"additionalProperties":false}`},
	{"write", "create or overwrite a file", "Write a whole file, creating it and its directories when needed. Prefer edit for changes to an existing file.",
		`{"type":"object","properties":{"path":{"type":"string","description":"Path of the file to write"},"content":{"type":"string","description":"The file's new contents"}},"required":["path","content"],"additionalProperties":false}`},
	{"grep", "search file contents", "Search file contents for a regular expression (or a literal string), honouring .gitignore. Returns matching lines with their file and line number.",
		`{"type":"object","properties":{"pattern":{"type":"string","description":"Regular expression or literal text"},"path":{"type":"string","description":"Directory or file to search"},"glob":{"type":"string","description":"Only files matching this glob"},"ignoreCase":{"type":"boolean"},"literal":{"type":"boolean"},"context":{"type":"number","description":"Lines of context around each match"},"limit":{"type":"number","description":"Most matches to return"}},"required":["pattern"],"additionalProperties":false}`},
}

// declaration returns the tool as a system message declares it.
func (t toolSpec) declaration() session.ToolDeclaration {
	return session.ToolDeclaration{Name: t.name, Description: t.description, Parameters: jsontext.Value(t.schema)}
}

// toolsSection lists the tools a prompt names.
func toolsSection(tools []toolSpec) string {
	var b strings.Builder
	b.WriteString("Tools available to you:\n")
	for _, t := range tools {
		b.WriteString("- " + t.name + ": " + t.summary + "\n")
	}
	b.WriteString("\nExtensions may register more tools; they are declared to you with their schemas.")
	return b.String()
}

const (
	preambleSection = "You are a coding agent working in a developer's terminal. You read and change the code of the " +
		"project in the working directory, run commands, and report what you did and what you found, briefly and exactly."
	rulesSection = "- Read a file before you edit it; quote oldText exactly.\n- Prefer edit over write for existing files.\n" +
		"- Run the tests that cover a change before you call it done.\n- Keep answers short and name the files you touched."
	skillsSection = "Skills hold instructions for recurring tasks. When one applies, read its file first.\n<available_skills>\n" +
		"<skill><name>release-notes</name><description>Draft release notes from the commits since the last tag</description>" +
		"<location>/home/dev/.prime/skills/release-notes/SKILL.md</location></skill>\n</available_skills>"
)

// projectSection is the project-instructions section: the repository's
// AGENTS.md, in one of two versions (the user edits it once in a while).
func projectSection(cwd string, version int) string {
	rules := "- Go 1.23; run `go test ./...` before committing.\n- Do not change the public API of package orbit without asking.\n- The web UI lives in web/; run `npm test --prefix web` for it."
	if version%2 == 1 {
		rules += "\n- Keep planner changes behind the `planner.v2` flag until the next release."
	}
	return "Project instructions follow.\n\n<project_instructions path=\"" + cwd + "/AGENTS.md\">\n# orbit\n\n" + rules + "\n</project_instructions>"
}

// system is the prompt state the simulated agent keeps and records.
type system struct {
	tools   []toolSpec
	skills  bool
	project int // version of AGENTS.md
}

// initialSystem is the state of a new session: every tool but grep.
func initialSystem() *system {
	return &system{tools: slices.Clone(agentTools[:4])}
}

// message returns the first system message of a session with this state.
func (s *system) message(cwd string, ts int64) *session.SystemMessage {
	m := &session.SystemMessage{Timestamp: ts, ToolsAdded: []session.ToolDeclaration{}}
	m.Sections = []session.SystemSection{
		{Name: "preamble", Text: preambleSection},
		{Name: "tools", Text: toolsSection(s.tools)},
		{Name: "rules", Text: rulesSection},
		{Name: "project_context", Text: projectSection(cwd, s.project)},
		{Name: "cwd", Text: cwd},
	}
	if s.skills {
		m.Sections = slices.Insert(m.Sections, 4, session.SystemSection{Name: "skills", Text: skillsSection})
	}
	for _, t := range s.tools {
		m.ToolsAdded = append(m.ToolsAdded, t.declaration())
	}
	return m
}

// startPi16 opens a pi 1.6 session: the model and thinking level pi records
// at creation, then the system message.
func (g *gen) startPi16() {
	g.emit(&session.ModelChangeEntry{Provider: g.model.provider, ModelID: g.model.id}, node{kind: session.TypeModelChange})
	g.thinking = "off"
	g.emit(&session.ThinkingLevelChangeEntry{ThinkingLevel: llm.ThinkingOff}, node{kind: session.TypeThinkingLevelChange})
	g.sys = initialSystem()
	g.emitSystem(g.sys.message(g.o.CWD, g.ms()))
}

// emitSystem writes a system message, which changes the state the next
// requests replay.
func (g *gen) emitSystem(m *session.SystemMessage) {
	g.tick(1)
	m.Timestamp = g.ms()
	g.state = session.ReplaySystem([]session.Message{g.state, m}[boolIndex(g.state == nil):])
	g.emitMessage(m)
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

// patchSystem changes the prompt the way a session's does now and then:
// the grep tool turned on or off, the skills section added or removed, the
// project's instructions edited; it writes the patch pi writes for it.
func (g *gen) patchSystem() {
	s := &system{tools: slices.Clone(g.sys.tools), skills: g.sys.skills, project: g.sys.project}
	g.sys = s // entries before keep the state they were written with
	patch := &session.SystemMessage{}
	switch g.rng.IntN(3) {
	case 0:
		grep := agentTools[4]
		if i := slices.IndexFunc(s.tools, func(t toolSpec) bool { return t.name == grep.name }); i >= 0 {
			s.tools = slices.Delete(s.tools, i, i+1)
			patch.ToolsRemoved = []string{grep.name}
		} else {
			s.tools = append(s.tools, grep)
			patch.ToolsAdded = []session.ToolDeclaration{grep.declaration()}
		}
		patch.Sections = []session.SystemSection{{Name: "tools", Text: toolsSection(s.tools)}}
	case 1:
		s.skills = !s.skills
		patch.Sections = []session.SystemSection{{Name: "skills", Text: skillsSection, Removed: !s.skills}}
		if !s.skills {
			patch.Sections[0].Text = ""
		}
	default:
		s.project++
		patch.Sections = []session.SystemSection{{Name: "project_context", Text: projectSection(g.o.CWD, s.project)}}
	}
	g.emitSystem(patch)
}

// promptTokens is what the system prompt and tool declarations add to a
// request's input: the replayed system state's estimate, or
// SystemPromptTokens for a session without system messages.
func (g *gen) promptTokens() int {
	if g.state == nil {
		return SystemPromptTokens
	}
	return session.EstimateTokens(g.state)
}

// hide writes a context_edit hiding the entry at path[i], as pi 1.6's agent
// does for a failed attempt, and takes it out of the context's estimate.
func (g *gen) hide(i int) {
	n := &g.path[i]
	target := n.id
	g.context -= n.tokens
	if n.hidden {
		g.hidden -= n.tokens
	}
	n.tokens, n.hidden, n.usage, n.kind = 0, false, 0, "hidden"
	g.emit(&session.ContextEditEntry{TargetID: target}, node{kind: session.TypeContextEdit})
}

// failedAttempt writes an attempt pi 1.6's agent retries on its own and
// hides: a reply the provider failed, or one cut off by the output limit
// whose tool calls were answered with errors without running. The caller
// then writes the retry.
func (g *gen) failedAttempt() {
	start := len(g.path)
	m := g.newAssistant()
	if g.chance(0.6) {
		m.StopReason = llm.StopReasonError
		m.ErrorMessage = []string{"overloaded_error: Overloaded", "upstream connect error or disconnect/reset before headers. reset reason: connection termination", "request timed out after 600s"}[g.rng.IntN(3)]
		if !g.emitMessage(m) {
			return
		}
	} else {
		t := g.conv.current()
		g.addThinking(m, 1)
		m.Content = append(m.Content, llm.Text{Text: g.say(introLines, 1)})
		var uses []toolUse
		for _, p := range t.files[:min(2, len(t.files))] {
			u := g.use("read", readArgs{Path: p}, "Not run: the reply was cut off at the output limit before this call was complete.", true, nothing)
			uses = append(uses, u)
			m.Content = append(m.Content, u.call)
		}
		g.finishAssistant(m)
		m.StopReason = llm.StopReasonLength
		if !g.emitMessage(m) {
			return
		}
		for _, u := range uses {
			u.result.Timestamp = g.ms()
			if !g.emitMessage(u.result) {
				return
			}
		}
	}
	for i, end := start, len(g.path); i < end && !g.full(); i++ {
		g.hide(i)
	}
}
