package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/internal/numfmt"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
)

// sessionCommands are the commands that inspect and maintain session files.
func sessionCommands() []*command {
	return []*command{
		{name: "session info", usage: "FILE [--json]", summary: "header, entry counts, leaf, branches, labels, warnings", run: runSessionInfo},
		{name: "session context", usage: "FILE [--leaf ID] [--json] [--breakdown [--width N] [--context-window N] [--cwd DIR]]", summary: "what the model would see, with token estimates (--breakdown: by kind, as a bar, with the threshold and what a compaction would cut)", run: runSessionContext},
		{name: "session tree", usage: "FILE [--json]", summary: "the entry tree, active path marked", run: runSessionTree},
		{name: "session fork", usage: "FILE [--leaf ID] [--dir DIR] [--id ID] [--json]", summary: "start a new session holding one conversation of FILE: the path to the leaf", run: runSessionFork},
		{name: "session migrate", usage: "FILE", summary: "rewrite an old session file in format version 3 (keeps FILE.bak)", run: runSessionMigrate},
		{name: "sessions", usage: "[--dir DIR] [--json]", summary: "list sessions, most recent first", run: runSessions},
	}
}

// oneFile parses the flags and the single FILE argument of a session command.
func oneFile(fs *flag.FlagSet, args []string) (string, error) {
	pos, err := parseFlags(fs, args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		return "", usageErrorf("want one session FILE, got %d arguments", len(pos))
	}
	return pos[0], nil
}

// loadArg parses a session command's flags and loads its FILE read-only.
func loadArg(a *app, fs *flag.FlagSet, args []string) (*session.Session, string, error) {
	path, err := oneFile(fs, args)
	if err != nil {
		return nil, "", err
	}
	s, err := loadSession(a, path)
	return s, path, err
}

// loadSession loads a session read-only, with the persistent index kept in
// the agent directory (see [session.IndexDir]) and written while the
// command runs: the session is closed, which waits for it, once the
// command has returned. A missing file or one that is not a session is
// bad input.
func loadSession(a *app, path string) (*session.Session, error) {
	opts := session.ReadOptions{IndexLater: true}
	if dir, err := settings.DefaultAgentDir(a.getenv); err == nil {
		opts.IndexDir = session.IndexDir(dir)
	}
	s, err := session.LoadWith(path, opts)
	if err != nil {
		return nil, sessionFileErr(err)
	}
	a.atEnd = append(a.atEnd, func() { s.Close() })
	return s, nil
}

// sessionFileErr marks an error opening a session file as bad input when
// the file is missing or is not a session.
func sessionFileErr(err error) error {
	var notSession *session.NotSessionError
	if errors.As(err, &notSession) || errors.Is(err, fs.ErrNotExist) {
		return badInput(err)
	}
	return err
}

// printWarnings reports load warnings on stderr.
func printWarnings(a *app, s *session.Session) {
	for _, w := range s.Warnings() {
		fmt.Fprintf(a.stderr, "warning: %s: %s\n", s.File(), w)
	}
}

type warningJSON struct {
	Line    int    `json:"line"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

var warningKinds = map[session.WarningKind]string{
	session.WarnMalformed:    "malformed",
	session.WarnTornTail:     "tornTail",
	session.WarnDuplicateID:  "duplicateId",
	session.WarnMissingID:    "missingId",
	session.WarnCycle:        "cycle",
	session.WarnNewerVersion: "newerVersion",
	session.WarnCoerced:      "coerced",
	session.WarnUnreadable:   "unreadable",
	session.WarnSecondHeader: "secondHeader",
	session.WarnIndex:        "index",
}

func warningsJSON(s *session.Session) []warningJSON {
	return toWarningsJSON(s.Warnings())
}

// infoJSON is the output of "prime session info --json".
type infoJSON struct {
	File          string         `json:"file"`
	ID            string         `json:"id"`
	Version       int            `json:"version"`
	CWD           string         `json:"cwd"`
	Created       string         `json:"created"`
	ParentSession string         `json:"parentSession,omitzero"`
	Name          string         `json:"name"`
	Entries       int            `json:"entries"`
	Types         map[string]int `json:"types"`
	Roles         map[string]int `json:"roles"`
	LeafID        string         `json:"leafId"`
	Leaves        int            `json:"leaves"`
	BranchPoints  int            `json:"branchPoints"`
	Labels        []labelJSON    `json:"labels"`
	Orphans       []orphanJSON   `json:"orphans"`
	Warnings      []warningJSON  `json:"warnings"`
}

type labelJSON struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

type orphanJSON struct {
	ID       string `json:"id"`
	Line     int    `json:"line"`
	ParentID string `json:"parentId"`
}

func runSessionInfo(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("session info", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	s, path, err := loadArg(a, fs, args)
	if err != nil {
		return err
	}
	h := s.Header()
	out := infoJSON{
		File: path, ID: h.ID, Version: s.FileVersion(), CWD: h.CWD, Created: h.Timestamp, ParentSession: h.ParentSession,
		Name: s.Name(), Entries: s.Len(), Types: map[string]int{}, Roles: map[string]int{}, LeafID: s.LeafID(),
		Labels: []labelJSON{}, Orphans: []orphanJSON{}, Warnings: warningsJSON(s),
	}
	for _, e := range s.Entries() {
		out.Types[e.Type]++
		if e.Type == session.TypeMessage {
			role, err := e.MessageRole()
			if err != nil {
				role = "(undecodable)"
			}
			out.Roles[role]++
		}
	}
	leaves := s.Leaves()
	out.Leaves = len(leaves)
	for _, e := range s.Entries() {
		if len(s.Children(e.ID)) > 1 {
			out.BranchPoints++
		}
	}
	labels := s.Labels()
	for _, id := range slices.Sorted(maps.Keys(labels)) {
		out.Labels = append(out.Labels, labelJSON{ID: id, Label: labels[id]})
	}
	for _, e := range s.Orphans() {
		out.Orphans = append(out.Orphans, orphanJSON{ID: e.ID, Line: e.Line, ParentID: e.ParentID})
	}
	if *asJSON {
		return writeJSON(a.stdout, out)
	}
	w := a.stdout
	fmt.Fprintf(w, "file:      %s\n", path)
	fmt.Fprintf(w, "session:   %s\n", h.ID)
	version := fmt.Sprint(s.FileVersion())
	if s.FileVersion() < session.CurrentVersion {
		version += fmt.Sprintf(" (read as %d; 'prime session migrate' rewrites it)", session.CurrentVersion)
	}
	fmt.Fprintf(w, "version:   %s\n", version)
	fmt.Fprintf(w, "created:   %s\n", h.Timestamp)
	fmt.Fprintf(w, "cwd:       %s\n", h.CWD)
	if h.ParentSession != "" {
		fmt.Fprintf(w, "forked:    %s\n", h.ParentSession)
	}
	if out.Name != "" {
		fmt.Fprintf(w, "name:      %s\n", out.Name)
	}
	fmt.Fprintf(w, "entries:   %d\n", out.Entries)
	for _, t := range slices.Sorted(maps.Keys(out.Types)) {
		fmt.Fprintf(w, "  %-22s %d\n", t, out.Types[t])
	}
	if len(out.Roles) > 0 {
		fmt.Fprintf(w, "messages by role:\n")
		for _, r := range slices.Sorted(maps.Keys(out.Roles)) {
			fmt.Fprintf(w, "  %-22s %d\n", r, out.Roles[r])
		}
	}
	fmt.Fprintf(w, "leaf:      %s\n", orNone(out.LeafID))
	fmt.Fprintf(w, "branches:  %d (leaves), %d branch points\n", out.Leaves, out.BranchPoints)
	if len(out.Labels) > 0 {
		fmt.Fprintf(w, "labels:\n")
		for _, l := range out.Labels {
			fmt.Fprintf(w, "  %s  %s\n", l.ID, l.Label)
		}
	}
	if len(out.Orphans) > 0 {
		fmt.Fprintf(w, "orphans (parent missing; read as roots):\n")
		for _, o := range out.Orphans {
			fmt.Fprintf(w, "  %s  line %d, parent %s\n", o.ID, o.Line, o.ParentID)
		}
	}
	if len(out.Warnings) > 0 {
		fmt.Fprintf(w, "warnings:\n")
		for _, x := range s.Warnings() {
			fmt.Fprintf(w, "  %s\n", x)
		}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// contextJSON is the output of "prime session context --json".
type contextJSON struct {
	File            string         `json:"file"`
	Entries         int            `json:"entries"`
	LeafID          string         `json:"leafId"`
	Messages        int            `json:"messages"`
	Roles           map[string]int `json:"roles"`
	EstimatedTokens int            `json:"estimatedTokens"`
	UsageTokens     int            `json:"usageTokens"`
	TrailingTokens  int            `json:"trailingTokens"`
	// NextTokens estimates the next request: EstimatedTokens, except right
	// after a compaction, when the last reported usage measured the context
	// before it and every message is estimated by characters instead.
	NextTokens    int               `json:"nextTokens"`
	MessageTokens int               `json:"messageTokens"`
	ThinkingLevel llm.ThinkingLevel `json:"thinkingLevel"`
	Model         *session.ModelRef `json:"model"`
	Items         []contextItemJSON `json:"items"`
	Warnings      []warningJSON     `json:"warnings"`
}

type contextItemJSON struct {
	EntryID string `json:"entryId"`
	Role    string `json:"role"`
	Tokens  int    `json:"tokens"`
	Preview string `json:"preview"`
}

func runSessionContext(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("session context", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	leaf := fs.String("leaf", "", "the entry id to build the context at (default: the leaf)")
	breakdown := fs.Bool("breakdown", false, "what fills the context, by kind, with the threshold and what a compaction would cut and keep")
	width := fs.Int("width", 0, "the bar's width in `N` columns (default: $COLUMNS, else 80)")
	window := fs.Int("context-window", 0, "assume a context window of `N` tokens (default: the session's model's)")
	var sf settingsFlags
	sf.register(fs)
	s, path, err := loadArg(a, fs, args)
	if err != nil {
		return err
	}
	if *leaf != "" && s.Entry(*leaf) == nil {
		return badInput(fmt.Errorf("%s: no entry with id %q", path, *leaf))
	}
	if *width < 0 || *window < 0 {
		return usageErrorf("--width and --context-window must not be negative")
	}
	if *breakdown {
		st, err := loadSettings(ctx, a, sf)
		if err != nil {
			return err
		}
		return runContextBreakdown(ctx, a, s, *leaf, *window, *width, *asJSON, st)
	}
	leafID := *leaf
	if leafID == "" {
		leafID = s.LeafID()
	}
	c, err := s.Context(leafID)
	if err != nil {
		return badInput(fmt.Errorf("%s: %w", path, err))
	}
	est := session.EstimateContextTokens(c.Messages)
	next := c.EstimateNext()
	out := contextJSON{
		File: path, Entries: s.Len(), LeafID: leafID, Messages: len(c.Messages), Roles: map[string]int{},
		EstimatedTokens: est.Tokens, UsageTokens: est.UsageTokens, TrailingTokens: est.TrailingTokens, NextTokens: next.Tokens,
		ThinkingLevel: c.ThinkingLevel, Model: c.Model, Items: []contextItemJSON{}, Warnings: warningsJSON(s),
	}
	for i, m := range c.Messages {
		n := session.EstimateTokens(m)
		out.Roles[m.Role()]++
		out.MessageTokens += n
		out.Items = append(out.Items, contextItemJSON{EntryID: c.Entries[i].ID, Role: m.Role(), Tokens: n, Preview: preview(m, 72)})
	}
	if *asJSON {
		return writeJSON(a.stdout, out)
	}
	printWarnings(a, s)
	w := a.stdout
	for i, it := range out.Items {
		fmt.Fprintf(w, "%4d  %-8s  %-17s %7d  %s\n", i+1, it.EntryID, it.Role, it.Tokens, it.Preview)
	}
	model := "(none)"
	if c.Model != nil {
		model = c.Model.Provider + "/" + c.Model.ModelID
	}
	fmt.Fprintf(w, "\n%d messages at leaf %s; model %s, thinking %s\n", out.Messages, orNone(leafID), model, c.ThinkingLevel)
	if est.LastUsageIndex >= 0 {
		fmt.Fprintf(w, "context: ~%s tokens = %s reported by message %d + %s estimated after it\n",
			numfmt.Commas(est.Tokens), numfmt.Commas(est.UsageTokens), est.LastUsageIndex+1, numfmt.Commas(est.TrailingTokens))
	} else {
		fmt.Fprintf(w, "context: ~%s tokens estimated (no usable usage reported)\n", numfmt.Commas(est.Tokens))
	}
	if next != est {
		fmt.Fprintf(w, "next request: ~%s tokens by characters (that usage measured the context before the latest compaction)\n", numfmt.Commas(next.Tokens))
	}
	return nil
}

// preview returns the start of a message's text on one line.
func preview(m session.Message, width int) string {
	var text string
	switch m := m.(type) {
	case *llm.UserMessage:
		text = llm.TextOf(m.Content)
		if text == "" && len(m.Content) > 0 {
			text = "[image]"
		}
	case *llm.AssistantMessage:
		text = m.Text()
		for _, c := range m.ToolCalls() {
			text += " " + c.Name + "(" + c.Arguments.String() + ")"
		}
		if text == "" && m.ErrorMessage != "" {
			text = "[" + string(m.StopReason) + "] " + m.ErrorMessage
		}
	case *llm.ToolResultMessage:
		text = m.ToolName + ": " + llm.TextOf(m.Content)
	case *session.BashExecution:
		text = "$ " + m.Command
	case *session.CustomMessage:
		text = m.CustomType + ": " + llm.TextOf(m.Content)
	case *session.BranchSummaryMessage:
		text = m.Summary
	case *session.CompactionSummaryMessage:
		text = m.Summary
	case *session.SystemMessage:
		text = m.Prompt()
	}
	return clip(text, width)
}

// clip shortens s to at most width runes on one line: its words joined
// by single spaces, cut to width-1 runes and "…" when they are longer. It
// reads s only as far as the line it makes (a preview of a long tool
// result costs its first line, not the whole text).
func clip(s string, width int) string {
	var b strings.Builder
	n, cut := 0, 0 // runes written; bytes written when they were width-1
	emit := func(piece string) bool {
		if n == width {
			return false
		}
		b.WriteString(piece)
		if n++; n == width-1 {
			cut = b.Len()
		}
		return true
	}
	space := false // a space is due before the next word
	for i, r := range s {
		if unicode.IsSpace(r) {
			space = n > 0
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		if space && !emit(" ") || !emit(s[i:i+size]) {
			return b.String()[:cut] + "…"
		}
		space = false
	}
	return b.String()
}

// treeJSON is the output of "prime session tree --json": the nodes in tree
// order (depth first, children oldest first), each naming its children, so
// a deep session does not nest deeply.
type treeJSON struct {
	File   string         `json:"file"`
	LeafID string         `json:"leafId"`
	Roots  []string       `json:"roots"`
	Nodes  []treeNodeJSON `json:"nodes"`
}

type treeNodeJSON struct {
	ID        string   `json:"id"`
	ParentID  string   `json:"parentId"`
	Type      string   `json:"type"`
	Role      string   `json:"role,omitzero"`
	Timestamp string   `json:"timestamp"`
	Label     string   `json:"label,omitzero"`
	Active    bool     `json:"active"`
	Children  []string `json:"children"`
}

func runSessionTree(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("session tree", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	s, path, err := loadArg(a, fs, args)
	if err != nil {
		return err
	}
	active := map[*session.Entry]bool{}
	for _, e := range s.LeafPath() {
		active[e] = true
	}
	roots := s.Tree()
	if *asJSON {
		out := treeJSON{File: path, LeafID: s.LeafID(), Roots: []string{}, Nodes: []treeNodeJSON{}}
		for _, r := range roots {
			out.Roots = append(out.Roots, r.Entry.ID)
		}
		walkTree(roots, func(n *session.Node, _ string, _ bool) {
			j := treeNodeJSON{ID: n.Entry.ID, ParentID: n.Entry.ParentID, Type: n.Entry.Type, Timestamp: n.Entry.Timestamp,
				Label: n.Label, Active: active[n.Entry], Children: []string{}}
			if n.Entry.Type == session.TypeMessage {
				j.Role, _ = n.Entry.MessageRole()
			}
			for _, c := range n.Children {
				j.Children = append(j.Children, c.Entry.ID)
			}
			out.Nodes = append(out.Nodes, j)
		})
		return writeJSON(a.stdout, out)
	}
	printWarnings(a, s)
	leaf := s.Leaf()
	// The entries are worded as the terminal UI's /tree words them.
	d := agent.NewDescriber()
	walkTree(roots, func(n *session.Node, indent string, branch bool) {
		mark := "  "
		if active[n.Entry] {
			mark = "* "
		}
		desc := clip(d.Describe(n.Entry, n.Entry == leaf).Text, 80)
		if n.Label != "" {
			desc = "[" + n.Label + "] " + desc
		}
		if n.Entry == leaf {
			desc += "  <- leaf"
		}
		fmt.Fprintf(a.stdout, "%s%s%s %s\n", indent, mark, n.Entry.ID, desc)
	})
	return nil
}

// walkTree visits the forest depth first without recursion. A chain of only
// children stays at one indentation; each child at a branch point is
// indented under it.
func walkTree(roots []*session.Node, visit func(n *session.Node, indent string, branch bool)) {
	type item struct {
		n      *session.Node
		indent string
		branch bool
	}
	var stack []item
	for i := len(roots) - 1; i >= 0; i-- {
		stack = append(stack, item{n: roots[i]})
	}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		visit(it.n, it.indent, it.branch)
		kids := it.n.Children
		if len(kids) == 1 {
			stack = append(stack, item{n: kids[0], indent: it.indent})
			continue
		}
		for i := len(kids) - 1; i >= 0; i-- {
			prefix := "├─"
			if i == len(kids)-1 {
				prefix = "└─"
			}
			stack = append(stack, item{n: kids[i], indent: strings.ReplaceAll(strings.ReplaceAll(it.indent, "├─", "│ "), "└─", "  ") + prefix, branch: true})
		}
	}
}

// forkJSON is the output of prime session fork --json.
type forkJSON struct {
	File          string        `json:"file"`
	ID            string        `json:"id"`
	ParentSession string        `json:"parentSession"`
	LeafID        string        `json:"leafId"`
	Entries       int           `json:"entries"`
	Labels        int           `json:"labels"`
	Warnings      []warningJSON `json:"warnings"`
}

func runSessionFork(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("session fork", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	leaf := fs.String("leaf", "", "the entry whose path to keep (default: the leaf)")
	dir := fs.String("dir", "", "the directory for the new session (default: FILE's directory)")
	id := fs.String("id", "", "the new session's id (default: a new UUID v7)")
	s, path, err := loadArg(a, fs, args)
	if err != nil {
		return err
	}
	leafID := *leaf
	if leafID == "" {
		if leafID = s.LeafID(); leafID == "" {
			return badInput(fmt.Errorf("%s: the session has no entries to fork", path))
		}
	} else if s.Entry(leafID) == nil {
		return badInput(fmt.Errorf("%s: no entry with id %q", path, leafID))
	}
	if *dir == "" {
		*dir = filepath.Dir(path)
	}
	if !*asJSON {
		printWarnings(a, s)
	}
	f, err := s.ForkIn(*dir, leafID, session.Options{ID: *id})
	if err != nil {
		if errors.Is(err, session.ErrInvalidID) {
			return badInput(err)
		}
		return err
	}
	// The command ends here, so the file is written now even when the
	// path holds no assistant message yet.
	if err := f.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	out := forkJSON{File: f.File(), ID: f.Header().ID, ParentSession: f.Header().ParentSession, LeafID: f.LeafID(), Entries: f.Len(), Labels: len(f.Labels()), Warnings: warningsJSON(s)}
	if *asJSON {
		return writeJSON(a.stdout, out)
	}
	fmt.Fprintf(a.stdout, "forked the path to %s (%d entries, %d labels) into\n%s\n", leafID, out.Entries-out.Labels, out.Labels, out.File)
	return nil
}

func runSessionMigrate(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("session migrate", flag.ContinueOnError)
	s, path, err := loadArg(a, fs, args)
	if err != nil {
		return err
	}
	printWarnings(a, s)
	if s.FileVersion() >= session.CurrentVersion {
		fmt.Fprintf(a.stdout, "%s is already version %d; nothing to do\n", path, s.FileVersion())
		return nil
	}
	done, err := session.Migrate(path)
	if err != nil {
		return err
	}
	if done {
		fmt.Fprintf(a.stdout, "migrated %s from version %d to %d; the original is in %s.bak\n", path, s.FileVersion(), session.CurrentVersion, path)
	}
	return nil
}

func runSessions(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("sessions", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	dir := fs.String("dir", "", "the directory to list (default: this directory's sessions under the agent directory)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("unexpected arguments: %s", strings.Join(pos, " "))
	}
	if *dir == "" {
		agent, err := settings.DefaultAgentDir(a.getenv)
		if err != nil {
			return err
		}
		cwd, err := os.Getwd()
		if err != nil {
			return err
		}
		*dir = settings.SessionsDir(agent, cwd)
	}
	infos, err := session.List(*dir)
	if err != nil {
		return err
	}
	if *asJSON {
		if infos == nil {
			infos = []session.Info{}
		}
		return writeJSON(a.stdout, infos)
	}
	if len(infos) == 0 {
		fmt.Fprintf(a.stdout, "no sessions in %s\n", *dir)
		return nil
	}
	for _, in := range infos {
		fmt.Fprintf(a.stdout, "%s  %5d msgs  %-50s  %s\n", in.Modified.Local().Format(time.DateTime), in.MessageCount, clip(in.Title(), 50), in.Path)
	}
	return nil
}
