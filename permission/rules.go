package permission

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Rule is one entry of permissions.allow or permissions.deny, in Claude
// Code's shape: a tool name alone ("Bash", "mcp__github__create_issue",
// "mcp__github" for every tool of that server), or a tool name with a
// specifier in parentheses: a command for Bash ("npm test" exactly,
// "npm test:*" for it and anything after it, "git * --dry-run" with *
// matching any text), a path glob for Edit, Write and Read ("src/**",
// "~/.ssh/**", "//etc/**" for an absolute path).
type Rule struct {
	// Text is the rule as written.
	Text string
	// tool is the tool name, lower case ("bash", "edit", "mcp__server").
	tool string
	// spec is the text in parentheses, "" for none (every call).
	spec string
	// hasSpec: the rule had parentheses.
	hasSpec bool
}

// RuleError is a rule that cannot be read.
type RuleError struct {
	Text, Why string
}

func (e *RuleError) Error() string { return fmt.Sprintf("permission rule %q %s", e.Text, e.Why) }

// ParseRule reads one rule.
func ParseRule(text string) (Rule, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return Rule{}, &RuleError{text, "is empty"}
	}
	r := Rule{Text: t}
	name, rest, paren := strings.Cut(t, "(")
	name = strings.TrimSpace(name)
	if name == "" {
		return Rule{}, &RuleError{text, "names no tool (want Tool or Tool(specifier))"}
	}
	for _, c := range name {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return Rule{}, &RuleError{text, fmt.Sprintf("has %q in its tool name (want Tool or Tool(specifier))", c)}
		}
	}
	r.tool = strings.ToLower(name)
	if paren {
		if !strings.HasSuffix(rest, ")") {
			return Rule{}, &RuleError{text, "has no closing parenthesis"}
		}
		r.spec, r.hasSpec = strings.TrimSpace(strings.TrimSuffix(rest, ")")), true
		if r.spec == "" {
			return Rule{}, &RuleError{text, "has nothing in its parentheses (write the tool name alone for every call)"}
		}
		if r.spec == "*" {
			r.spec, r.hasSpec = "", false
		}
	}
	return r, nil
}

// ParseRules reads a list of rules; the rules that cannot be read are
// left out and returned as errors.
func ParseRules(texts []string) ([]Rule, []error) {
	var out []Rule
	var errs []error
	for _, t := range texts {
		r, err := ParseRule(t)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, r)
	}
	return out, errs
}

// toolAliases are the names a rule may give a built-in tool (Claude Code's
// and Prime's): Edit covers every tool that changes files, Read every tool
// that reads them.
var toolAliases = map[string][]string{
	"bash":  {"bash"},
	"edit":  {"edit", "write"},
	"write": {"write"},
	"read":  {"read", "grep", "find", "ls"},
	"grep":  {"grep"},
	"glob":  {"find"},
	"find":  {"find"},
	"ls":    {"ls"},
}

// Call is what a rule is matched against: one tool call.
type Call struct {
	// Tool is the tool's name as the model calls it.
	Tool string
	// Command is a bash call's command line.
	Command string
	// Paths are the files a file tool's call names: the absolute path and,
	// when it differs, where its symbolic links lead.
	Paths []string
	// ReadOnly is set for a tool that is not one of Prime's own when it
	// declares that it changes nothing (an MCP tool's readOnlyHint).
	ReadOnly bool
}

// Where says how a rule's relative paths are read: Home for ~, Project for
// the rest (Claude Code reads "/x" and "x" under the project, "//x" as
// the absolute /x).
type Where struct {
	Home, Project string
}

// covers reports whether the rule names the call's tool.
func (r Rule) covers(tool string) bool {
	tool = strings.ToLower(tool)
	if names, ok := toolAliases[r.tool]; ok {
		for _, n := range names {
			if n == tool {
				return true
			}
		}
		return false
	}
	// An MCP server's name covers its tools.
	return r.tool == tool || strings.HasPrefix(r.tool, "mcp__") && strings.HasPrefix(tool, r.tool+"__")
}

// Match reports whether the rule applies to the call. For a deny rule,
// loose is set: a command matches when any of its parts does, with the
// variables set before it ignored, and a path when any of its names does;
// for an allow rule every part of a command must match (see
// [Rules.Decide]) and a command that substitutes another never does.
func (r Rule) Match(c Call, w Where, loose bool) bool {
	if !r.covers(c.Tool) {
		return false
	}
	if !r.hasSpec {
		return true
	}
	if strings.EqualFold(c.Tool, "bash") {
		return r.matchCommand(c.Command, loose)
	}
	if len(c.Paths) == 0 {
		return false
	}
	pat := r.pathPattern(w)
	if loose {
		for _, p := range c.Paths {
			if matchPath(pat, p) {
				return true
			}
		}
		return false
	}
	for _, p := range c.Paths {
		if !matchPath(pat, p) {
			return false
		}
	}
	return true
}

// matchCommand matches a command line against the rule's command.
func (r Rule) matchCommand(cmd string, loose bool) bool {
	parts, ok := SplitCommand(cmd)
	if !ok && !loose {
		return false
	}
	if len(parts) == 0 {
		return false
	}
	for _, p := range parts {
		m := matchWords(r.spec, p)
		if loose && !m {
			m = matchWords(r.spec, stripAssignments(p)) || matchWords(r.spec, plainCommand(p))
		}
		if loose && m {
			return true
		}
		if !loose && !m {
			return false
		}
	}
	return !loose
}

// matchWords matches one simple command against a rule's command: "x:*"
// is x alone or followed by a space and anything; otherwise * matches any
// text and the rest must be equal, spaces collapsed.
func matchWords(spec, cmd string) bool {
	cmd = strings.Join(strings.Fields(cmd), " ")
	if prefix, ok := strings.CutSuffix(spec, ":*"); ok {
		prefix = strings.Join(strings.Fields(prefix), " ")
		return cmd == prefix || strings.HasPrefix(cmd, prefix+" ")
	}
	return globText(strings.Join(strings.Fields(spec), " "), cmd)
}

// globText matches s against pat, where * matches any text.
func globText(pat, s string) bool {
	first, rest, star := strings.Cut(pat, "*")
	if !star {
		return pat == s
	}
	if !strings.HasPrefix(s, first) {
		return false
	}
	s = s[len(first):]
	if rest == "" {
		return true
	}
	for i := 0; i <= len(s); i++ {
		if globText(rest, s[i:]) {
			return true
		}
	}
	return false
}

// stripAssignments drops the VAR=value words before a command.
func stripAssignments(cmd string) string {
	f := strings.Fields(cmd)
	for len(f) > 0 {
		name, _, ok := strings.Cut(f[0], "=")
		if !ok || name == "" || strings.ContainsAny(name, "/$'\"") {
			break
		}
		f = f[1:]
	}
	return strings.Join(f, " ")
}

// wrappers are programs that run the command that follows their options:
// a deny rule for rm also refuses "command rm", "env rm", "sudo rm".
var wrappers = map[string]bool{"command": true, "builtin": true, "exec": true, "nohup": true, "time": true,
	"sudo": true, "doas": true, "nice": true, "env": true, "xargs": true, "setsid": true, "stdbuf": true}

// plainCommand is a simple command as a deny rule should see it, however it
// is spelled: quotes and backslashes dropped (r""m and \\rm are rm), the
// variables set before it and the wrappers that run it (with their
// options) left out, and the program's directory ("/bin/rm" is rm).
func plainCommand(cmd string) string {
	var words []string
	for _, w := range strings.Fields(cmd) {
		words = append(words, strings.NewReplacer("'", "", "\"", "", "\\", "").Replace(w))
	}
	for len(words) > 0 {
		w := words[0]
		name, _, assign := strings.Cut(w, "=")
		switch {
		case assign && name != "" && !strings.ContainsAny(name, "/$"):
		case wrappers[filepath.Base(w)]:
		case strings.HasPrefix(w, "-") && len(words) > 1:
			// An option of the wrapper before it.
		default:
			words[0] = filepath.Base(w)
			return strings.Join(words, " ")
		}
		words = words[1:]
	}
	return ""
}

// SplitCommand splits a command line into its simple commands, at ;, &,
// &&, |, || and new lines outside quotes, leaving comments out. ok is false
// when the line runs a command in a way the parts do not show, or could
// be read otherwise by the shell: a $(...) or `...` substitution, a <(...)
// process substitution, an unterminated quote, and the expansions that
// can run code or that quote differently: ${...} (${x@P} runs the
// commands in x, and ${x:=...} sets it; a subscript is arithmetic, which
// runs the $(...) in a variable's value), $[...] and $'...' (where \'
// does not end the quote, so a ; after it would be hidden).
func SplitCommand(line string) (parts []string, ok bool) {
	ok = true
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			parts = append(parts, s)
		}
		cur.Reset()
	}
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
		case quote == '$':
			// $'...': a backslash escapes the next byte, \' included.
			switch {
			case c == '\'':
				quote = 0
			case c == '\\' && i+1 < len(line):
				cur.WriteByte(c)
				i++
				c = line[i]
			}
		case quote == '"':
			switch {
			case c == '"':
				quote = 0
			case c == '\\' && i+1 < len(line):
				cur.WriteByte(c)
				i++
				c = line[i]
			case c == '`' || c == '$' && i+1 < len(line) && (line[i+1] == '(' || line[i+1] == '{' || line[i+1] == '['):
				ok = false
			}
		case c == '$' && i+1 < len(line) && line[i+1] == '\'':
			ok = false
			quote = '$'
			cur.WriteByte(c)
			i++
			c = line[i]
		case c == '$' && i+1 < len(line) && strings.IndexByte("({[\"", line[i+1]) >= 0:
			ok = false
		case c == '#' && (i == 0 || strings.IndexByte(" \t\n;&|()<>", line[i-1]) >= 0):
			// A comment, to the end of the line: what it holds is not
			// run, and its quotes quote nothing.
			for i+1 < len(line) && line[i+1] != '\n' {
				i++
			}
			continue
		case c == '\'' || c == '"':
			quote = c
		case c == '\\' && i+1 < len(line):
			cur.WriteByte(c)
			i++
			c = line[i]
		case c == '`':
			ok = false
		case (c == '<' || c == '>') && i+1 < len(line) && line[i+1] == '(':
			ok = false
		case c == '&' && (i > 0 && (line[i-1] == '>' || line[i-1] == '<') || i+1 < len(line) && line[i+1] == '>'):
			// A redirection (2>&1, &>file), not a separator.
		case c == ';' || c == '&' || c == '|' || c == '\n':
			flush()
			continue
		}
		cur.WriteByte(c)
	}
	if quote != 0 {
		ok = false
	}
	flush()
	return parts, ok
}

// redirectsToFile reports whether a simple command sends output to a file
// (> f, >> f, &> f), outside quotes; a duplication (2>&1) or /dev/null
// does not count.
func redirectsToFile(cmd string) bool {
	var quote byte
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' {
				i++
			}
			continue
		case c == '\'' || c == '"':
			quote = c
			continue
		case c == '\\':
			i++
			continue
		case c != '>':
			continue
		}
		j := i + 1
		for j < len(cmd) && (cmd[j] == '>' || cmd[j] == '|') {
			j++
		}
		for j < len(cmd) && cmd[j] == ' ' {
			j++
		}
		target := cmd[j:]
		if dup, ok := strings.CutPrefix(target, "&"); ok {
			// >&2 and >&- duplicate or close a descriptor; >&file, as
			// &>file, sends both outputs to the file.
			dup = strings.TrimLeft(dup, " \t")
			if k := strings.IndexAny(dup, " \t;&|"); k >= 0 {
				dup = dup[:k]
			}
			if dup != "" && strings.Trim(dup, "0123456789") != "" && dup != "-" && dup != "/dev/null" {
				return true
			}
			i = j
			continue
		}
		if k := strings.IndexAny(target, " \t;&|"); k >= 0 {
			target = target[:k]
		}
		if target != "/dev/null" {
			return true
		}
		i = j
	}
	return false
}

// pathPattern is the rule's path glob made absolute.
func (r Rule) pathPattern(w Where) string {
	p := r.spec
	switch {
	case strings.HasPrefix(p, "//"):
		p = p[1:]
	case p == "~" || strings.HasPrefix(p, "~/"):
		p = filepath.Join(w.Home, strings.TrimPrefix(p, "~"))
	case strings.HasPrefix(p, "/"):
		p = filepath.Join(w.Project, p)
	default:
		p = filepath.Join(w.Project, p)
	}
	if strings.HasSuffix(r.spec, "/") {
		p += "/**"
	}
	return p
}

// matchPath matches an absolute path against a glob: ** matches any number
// of directories, * and ? match within one name; a pattern without
// wildcards matches the path and everything beneath it.
func matchPath(pat, path string) bool {
	path = filepath.Clean(path)
	if !strings.ContainsAny(pat, "*?[") {
		return within(path, filepath.Clean(pat))
	}
	return matchSegments(strings.Split(strings.Trim(pat, "/"), "/"), strings.Split(strings.Trim(path, "/"), "/"))
}

func matchSegments(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			if len(pat) == 1 {
				return true
			}
			for i := 0; i <= len(segs); i++ {
				if matchSegments(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, err := filepath.Match(pat[0], segs[0]); err != nil || !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// Verdict is what the rules say of a call.
type Verdict int

// Verdicts.
const (
	// NoRule: no rule names the call; the mode decides.
	NoRule Verdict = iota
	// Allowed by an allow rule.
	Allowed
	// Denied by a deny rule.
	Denied
)

// Rules are the allow and deny rules in force.
type Rules struct {
	Allow, Deny []Rule
	Where       Where
}

// Decide returns what the rules say of the call, deny first, and the rule
// that decided.
func (rs Rules) Decide(c Call) (Verdict, Rule) {
	for _, r := range rs.Deny {
		if r.Match(c, rs.Where, true) {
			return Denied, r
		}
	}
	if strings.EqualFold(c.Tool, "bash") {
		return rs.allowCommand(c)
	}
	for _, r := range rs.Allow {
		if r.Match(c, rs.Where, false) {
			return Allowed, r
		}
	}
	return NoRule, Rule{}
}

// allowCommand allows a command line when each of its parts is allowed by
// one of the allow rules, and it substitutes no command.
func (rs Rules) allowCommand(c Call) (Verdict, Rule) {
	parts, ok := SplitCommand(c.Command)
	if !ok || len(parts) == 0 {
		return NoRule, Rule{}
	}
	var last Rule
	for _, p := range parts {
		if redirectsToFile(p) {
			return NoRule, Rule{} // "echo:*" does not allow echo x > ~/.bashrc
		}
		found := false
		for _, r := range rs.Allow {
			if r.Match(Call{Tool: c.Tool, Command: p}, rs.Where, false) {
				found, last = true, r
				break
			}
		}
		if !found {
			return NoRule, Rule{}
		}
	}
	return Allowed, last
}

// CommandPrefix is the prefix an "always" answer for a command allows: its
// first word and, when the second is a subcommand (a plain word, not an
// option or a path), the second ("git diff", "npm test", "ls"). It is ""
// for a line of several commands or one that substitutes another.
func CommandPrefix(cmd string) string {
	parts, ok := SplitCommand(cmd)
	if !ok || len(parts) != 1 {
		return ""
	}
	f := strings.Fields(parts[0])
	if len(f) == 0 || strings.Contains(f[0], "=") {
		return ""
	}
	if len(f) > 1 && subcommanded[f[0]] && isSubcommand(f[1]) {
		return f[0] + " " + f[1]
	}
	return f[0]
}

// subcommanded are programs whose second word is a subcommand, so that an
// "always" for "git diff" does not allow "git push".
var subcommanded = map[string]bool{
	"git": true, "npm": true, "pnpm": true, "yarn": true, "bun": true, "deno": true, "npx": true, "go": true,
	"cargo": true, "rustup": true, "docker": true, "podman": true, "kubectl": true, "helm": true, "terraform": true,
	"pip": true, "pip3": true, "uv": true, "poetry": true, "gh": true, "make": true, "mvn": true, "gradle": true,
	"dotnet": true, "brew": true, "apt": true, "apt-get": true, "systemctl": true, "bundle": true, "rake": true,
	"mix": true, "stack": true, "cabal": true, "swift": true, "zig": true, "nix": true, "just": true,
}

func isSubcommand(w string) bool {
	if w == "" || w[0] == '-' {
		return false
	}
	for _, c := range w {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == ':') {
			return false
		}
	}
	return true
}

// BashRule returns the rule that allows a command prefix: Bash(prefix:*).
func BashRule(prefix string) string { return "Bash(" + prefix + ":*)" }

// EditRule returns the rule that allows changing one file (an absolute
// path, links resolved): Edit(//path). An "always" answer covers that file
// only: its directory may be the home directory.
func EditRule(path string) string { return "Edit(/" + filepath.Clean(path) + ")" }

// ReadRule returns the rule that allows reading one file or directory (an
// absolute path, links resolved) and what is beneath it: Read(//path).
func ReadRule(path string) string { return "Read(/" + filepath.Clean(path) + ")" }
