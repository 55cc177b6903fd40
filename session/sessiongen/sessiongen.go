// Package sessiongen generates realistic session files for tests,
// benchmarks and "prime dev gen-session": a coding conversation with user
// prompts, assistant text and thinking, read/write/edit/bash tool calls and
// their results (a few huge, a few with images), model and thinking-level
// changes, labels, a name, extension entries, branches with and without
// branch summaries, and compactions made the way pi makes them (a valid
// firstKeptEntryId, cumulative {readFiles, modifiedFiles} details) whenever
// the simulated context outgrows the window. Assistant usage grows with the
// conversation and drops after each compaction.
//
// The output is a version-3 file that depends only on the [Options]: the
// same seed always gives the same bytes.
package sessiongen

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// Options shape a generated session. The zero value of every field but
// Entries means its default.
type Options struct {
	// Entries is the number of entries after the header.
	Entries int
	// Seed selects the session; equal options give equal bytes.
	Seed uint64
	// Start is the session's creation time (default 2025-11-03T09:00:00Z).
	Start time.Time
	// CWD is the working directory in the header (default
	// /home/dev/projects/orbit).
	CWD string
	// ContextWindow is the simulated model's window in tokens (default
	// 200,000). A compaction is written when the context passes
	// ContextWindow - ReserveTokens.
	ContextWindow int
	// ReserveTokens defaults to 16,384 and KeepRecentTokens to 20,000, as
	// in pi's settings.
	ReserveTokens    int
	KeepRecentTokens int
	// NoCompactions leaves compactions out: the context then grows without
	// bound.
	NoCompactions bool
	// BranchRate is the chance that a user turn starts a new branch from an
	// earlier user message (default 0.02; negative for none).
	BranchRate float64
	// HugeRate is the chance that a tool result is huge, 64–256 KiB
	// (default 0.001; negative for none).
	HugeRate float64
	// ImageRate is the chance that a user message or tool result carries
	// an image (default 0.01; negative for none).
	ImageRate float64
	// SizeScale multiplies the size of texts and tool outputs (default 1).
	SizeScale float64
	// TrailingHugeResults, when positive, ends the session with an
	// assistant message calling that many tools whose results are each
	// larger than KeepRecentTokens (pi 1.6's case C7b).
	TrailingHugeResults int
}

func (o *Options) defaults() {
	if o.Start.IsZero() {
		o.Start = time.Date(2025, 11, 3, 9, 0, 0, 0, time.UTC)
	}
	orDefault(&o.CWD, "/home/dev/projects/orbit")
	orDefault(&o.ContextWindow, 200_000)
	orDefault(&o.ReserveTokens, 16_384)
	orDefault(&o.KeepRecentTokens, 20_000)
	orDefault(&o.BranchRate, 0.02)
	orDefault(&o.HugeRate, 0.001)
	orDefault(&o.ImageRate, 0.01)
	orDefault(&o.SizeScale, 1)
}

// orDefault sets *v to def when it is the zero value.
func orDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// Bytes returns a generated session file.
func Bytes(o Options) []byte {
	var b bytes.Buffer
	if err := Generate(&b, o); err != nil {
		panic(err) // writing to a bytes.Buffer cannot fail
	}
	return b.Bytes()
}

// Generate writes a generated session file to w.
func Generate(w io.Writer, o Options) error {
	o.defaults()
	g := &gen{
		o:    o,
		rng:  rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15)),
		ids:  make(map[string]bool),
		now:  o.Start,
		out:  bufio.NewWriterSize(w, 1<<20),
		read: map[string]bool{}, modified: map[string]bool{},
	}
	g.corpus()
	g.provider, g.model = "anthropic", "claude-sonnet-4-5"
	g.header()
	g.limit = o.Entries
	if o.TrailingHugeResults > 0 {
		g.limit = max(0, o.Entries-o.TrailingHugeResults-1)
	}
	for g.count < g.limit && g.err == nil {
		g.turn()
	}
	if o.TrailingHugeResults > 0 {
		g.limit = o.Entries
		g.toolRound(o.TrailingHugeResults, true)
	}
	if g.err == nil {
		g.err = g.out.Flush()
	}
	return g.err
}

// node is what the generator remembers of an entry on the current branch.
type node struct {
	id     string
	kind   string // entry type, or the message role for messages
	tokens int    // estimated tokens it adds to the context
}

type gen struct {
	o     Options
	rng   *rand.Rand
	ids   map[string]bool
	now   time.Time
	out   *bufio.Writer
	err   error
	count int
	// limit is the number of entries to stop at.
	limit int

	// path is the current branch, root first; leaf is its last id.
	path []node
	// keptFrom is the index in path where the context starts (the last
	// compaction's first kept entry), and context its size in tokens.
	keptFrom, context int

	provider, model string
	thinking        string
	named           bool
	read, modified  map[string]bool

	code, prose string
}

func (g *gen) leaf() string {
	if len(g.path) == 0 {
		return ""
	}
	return g.path[len(g.path)-1].id
}

func (g *gen) newID() string {
	for {
		id := fmt.Sprintf("%08x", g.rng.Uint32())
		if !g.ids[id] {
			g.ids[id] = true
			return id
		}
	}
}

func (g *gen) tick(maxSeconds int) time.Time {
	g.now = g.now.Add(time.Duration(1+g.rng.IntN(maxSeconds*1000)) * time.Millisecond)
	return g.now
}

func (g *gen) header() {
	id := fmt.Sprintf("%08x-%04x-7%03x-%04x-%012x", g.rng.Uint32(), g.rng.Uint32()&0xffff,
		g.rng.Uint32()&0xfff, 0x8000|g.rng.Uint32()&0x3fff, g.rng.Uint64()&0xffffffffffff)
	var b bytes.Buffer
	enc := jsontext.NewEncoder(&b)
	enc.WriteToken(jsontext.BeginObject)
	for _, kv := range [][2]string{{"type", "session"}, {"version", ""}, {"id", id}, {"timestamp", session.FormatTime(g.now)}, {"cwd", g.o.CWD}} {
		enc.WriteToken(jsontext.String(kv[0]))
		if kv[0] == "version" {
			enc.WriteToken(jsontext.Int(session.CurrentVersion))
			continue
		}
		enc.WriteToken(jsontext.String(kv[1]))
	}
	enc.WriteToken(jsontext.EndObject)
	g.out.Write(b.Bytes())
}

// emit writes one entry as a child of the leaf and returns its id.
func (g *gen) emit(p session.Payload, kind string, tokens int) string {
	return g.emitAt(g.leaf(), p, kind, tokens)
}

func (g *gen) emitAt(parent string, p session.Payload, kind string, tokens int) string {
	if g.err != nil || g.count >= g.limit {
		return ""
	}
	id := g.newID()
	line, err := session.EncodeEntry(id, parent, session.FormatTime(g.tick(20)), p)
	if err != nil {
		g.err = err
		return ""
	}
	g.out.Write(line)
	g.out.WriteByte('\n')
	g.count++
	g.path = append(g.path, node{id: id, kind: kind, tokens: tokens})
	g.context += tokens
	return id
}

func (g *gen) emitMessage(m session.Message) string {
	return g.emit(&session.MessageEntry{Message: m}, m.Role(), session.EstimateTokens(m))
}

func (g *gen) chance(p float64) bool { return p > 0 && g.rng.Float64() < p }

func (g *gen) ms() int64 { return g.now.UnixMilli() }

// turn writes one user turn: maybe some session housekeeping, the prompt,
// a few tool rounds and the final answer; then compacts if the context has
// grown too large.
func (g *gen) turn() {
	if len(g.path) > 8 && g.chance(g.o.BranchRate) {
		g.branch()
	}
	switch r := g.rng.IntN(100); {
	case r < 3:
		g.thinking = []string{"off", "minimal", "low", "medium", "high"}[g.rng.IntN(5)]
		g.emit(&session.ThinkingLevelChangeEntry{ThinkingLevel: llm.ThinkingLevel(g.thinking)}, session.TypeThinkingLevelChange, 0)
	case r < 5:
		models := [][2]string{{"anthropic", "claude-sonnet-4-5"}, {"anthropic", "claude-opus-4-5"}, {"openai", "gpt-5.1-codex"}}
		m := models[g.rng.IntN(len(models))]
		g.provider, g.model = m[0], m[1]
		g.emit(&session.ModelChangeEntry{Provider: m[0], ModelID: m[1]}, session.TypeModelChange, 0)
	case r < 7 && len(g.path) > 0:
		target := g.path[g.rng.IntN(len(g.path))].id
		g.emit(&session.LabelEntry{TargetID: target, Label: g.words(1, 3)}, session.TypeLabel, 0)
	case r < 8:
		g.emit(&session.CustomEntry{CustomType: "todo-state", Data: jsontext.Value(fmt.Sprintf(`{"open":%d,"done":%d}`, g.rng.IntN(9), g.rng.IntN(30)))}, session.TypeCustom, 0)
	case r < 9:
		text := "Reminder from the review extension: " + g.sentence()
		m := &session.CustomMessageEntry{CustomType: "review-note", Content: []llm.Content{llm.Text{Text: text}}, Display: g.rng.IntN(2) == 0}
		g.emit(m, session.TypeCustomMessage, (llm.UTF16Len(text)+3)/4)
	case r < 11:
		g.bash()
	}
	g.tick(300)
	g.emitMessage(g.userPrompt())
	if !g.named && g.count > 3 {
		g.named = true
		g.emit(&session.SessionInfoEntry{Name: "Orbit: " + g.words(2, 4)}, session.TypeSessionInfo, 0)
	}
	for range g.rng.IntN(4) {
		g.toolRound(1+g.rng.IntN(3), false)
	}
	g.emitMessage(g.assistant(nil))
	if !g.o.NoCompactions && g.context > g.o.ContextWindow-g.o.ReserveTokens {
		g.compact()
	}
}

// branch moves the leaf back to the parent of an earlier user message on
// the branch, optionally leaving a branch summary there.
func (g *gen) branch() {
	var users []int
	for i := g.keptFrom; i < len(g.path)-1; i++ {
		if g.path[i].kind == llm.RoleUser && i > 0 {
			users = append(users, i)
		}
	}
	if len(users) == 0 {
		return
	}
	at := users[g.rng.IntN(len(users))]
	oldLeaf := g.leaf()
	for _, n := range g.path[at:] {
		g.context -= n.tokens
	}
	g.path = g.path[:at]
	if g.chance(0.5) {
		text := "The abandoned branch tried " + g.sentence() + " It was dropped because " + g.sentence()
		g.emit(&session.BranchSummaryEntry{FromID: oldLeaf, Summary: text, Details: g.fileDetails()}, session.TypeBranchSummary, (llm.UTF16Len(text)+3)/4)
	}
}

// compact writes a compaction keeping about KeepRecentTokens of the newest
// context, cut at a user or assistant message.
func (g *gen) compact() {
	kept, cut := 0, -1
	for i := len(g.path) - 1; i > g.keptFrom; i-- {
		kept += g.path[i].tokens
		if kept >= g.o.KeepRecentTokens {
			for j := i; j > g.keptFrom; j-- {
				if k := g.path[j].kind; k == llm.RoleUser || k == llm.RoleAssistant {
					cut = j
					break
				}
			}
			break
		}
	}
	if cut < 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Goal\n%s\n\n## Constraints & Preferences\n- %s\n\n## Progress\n### Done\n- [x] %s\n\n### In Progress\n- [ ] %s\n\n### Blocked\n- (none)\n\n## Key Decisions\n- **%s**: %s\n\n## Next Steps\n1. %s\n\n## Critical Context\n- %s\n",
		g.sentence(), g.sentence(), g.sentence(), g.sentence(), g.words(2, 4), g.sentence(), g.sentence(), g.sentence())
	fmt.Fprintf(&b, "\n<read-files>\n%s\n</read-files>\n\n<modified-files>\n%s\n</modified-files>", strings.Join(sortedKeys(g.read), "\n"), strings.Join(sortedKeys(g.modified), "\n"))
	summary := b.String()
	before := g.context
	g.emit(&session.CompactionEntry{Summary: summary, FirstKeptEntryID: g.path[cut].id, TokensBefore: before, Details: g.fileDetails()}, session.TypeCompaction, 0)
	g.keptFrom = cut
	g.context = (llm.UTF16Len(summary) + 3) / 4
	for _, n := range g.path[cut:] {
		g.context += n.tokens
	}
}

func (g *gen) fileDetails() jsontext.Value {
	v, _ := json.Marshal(struct {
		ReadFiles     []string `json:"readFiles"`
		ModifiedFiles []string `json:"modifiedFiles"`
	}{sortedKeys(g.read), sortedKeys(g.modified)})
	return v
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (g *gen) userPrompt() *llm.UserMessage {
	m := &llm.UserMessage{Timestamp: g.ms()}
	m.Content = []llm.Content{llm.Text{Text: g.paragraph(1, 4)}}
	if g.chance(g.o.ImageRate) {
		m.Content = append(m.Content, g.image())
	}
	return m
}

// toolRound writes an assistant message calling n tools and their results.
func (g *gen) toolRound(n int, huge bool) {
	calls := make([]llm.ToolCall, n)
	paths := make([]string, n)
	for i := range calls {
		calls[i], paths[i] = g.toolCall()
	}
	g.emitMessage(g.assistant(calls))
	for i, c := range calls {
		g.tick(30)
		g.emitMessage(g.toolResult(c, paths[i], huge))
	}
}

func (g *gen) assistant(calls []llm.ToolCall) *llm.AssistantMessage {
	g.tick(60)
	m := &llm.AssistantMessage{API: llm.APIAnthropicMessages, Provider: g.provider, Model: g.model, Timestamp: g.ms(), StopReason: llm.StopReasonStop}
	if g.provider == "openai" {
		m.API = "openai-responses"
	}
	if g.thinking != "" && g.thinking != "off" || g.chance(0.3) {
		m.Content = append(m.Content, llm.Thinking{Thinking: g.paragraph(1, 4), Signature: base64.StdEncoding.EncodeToString(g.bytes(48))})
	}
	m.Content = append(m.Content, llm.Text{Text: g.paragraph(1, 3)})
	for _, c := range calls {
		m.Content = append(m.Content, c)
	}
	if len(calls) > 0 {
		m.StopReason = llm.StopReasonToolUse
	}
	out := session.EstimateTokens(m)
	switch {
	case g.chance(0.004):
		m.StopReason = llm.StopReasonError
		m.ErrorMessage = "overloaded_error: Overloaded"
		m.Content = nil
		return m
	case g.chance(0.003):
		m.StopReason = llm.StopReasonAborted
		m.ErrorMessage = "Request was aborted"
		return m
	}
	cached := g.context * 9 / 10
	m.Usage = llm.Usage{Input: g.context - cached + 3000, Output: out, CacheRead: cached, CacheWrite: g.rng.IntN(2000)}
	m.Usage.TotalTokens = m.Usage.Input + m.Usage.Output + m.Usage.CacheRead + m.Usage.CacheWrite
	m.Usage.Cost = llm.Cost{Input: float64(m.Usage.Input) * 3e-6, Output: float64(out) * 15e-6, CacheRead: float64(cached) * 3e-7}
	m.Usage.Cost.Total = m.Usage.Cost.Input + m.Usage.Cost.Output + m.Usage.Cost.CacheRead
	return m
}

var files = []string{"cmd/orbit/main.go", "internal/orbit/planner.go", "internal/orbit/planner_test.go", "internal/store/store.go",
	"internal/store/migrate.go", "internal/api/handler.go", "internal/api/routes.go", "web/src/App.tsx", "web/src/api.ts",
	"docs/design.md", "README.md", "go.mod", "Makefile", "internal/orbit/ephemeris.go", "internal/telemetry/trace.go"}

type readArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset,omitzero"`
	Limit  int    `json:"limit,omitzero"`
}

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

type editArgs struct {
	Path    string `json:"path"`
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

type bashArgs struct {
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitzero"`
}

// toolCall returns a tool call and the file it touches ("" for bash).
func (g *gen) toolCall() (llm.ToolCall, string) {
	path := files[g.rng.IntN(len(files))]
	c := llm.ToolCall{ID: "toolu_" + base64.RawURLEncoding.EncodeToString(g.bytes(12))}
	var args any
	switch r := g.rng.IntN(10); {
	case r < 4:
		c.Name = "read"
		a := readArgs{Path: path}
		if g.chance(0.3) {
			a.Offset, a.Limit = 1+g.rng.IntN(400), 50+g.rng.IntN(200)
		}
		args = a
		g.read[path] = true
	case r < 5:
		c.Name = "write"
		args = writeArgs{Path: path, Content: g.codeText(400, 4000)}
		g.modified[path] = true
	case r < 7:
		c.Name = "edit"
		args = editArgs{Path: path, OldText: g.codeText(40, 400), NewText: g.codeText(40, 500)}
		g.modified[path] = true
	default:
		c.Name = "bash"
		cmds := []string{"go test ./...", "go vet ./...", "git status --short", "rg -n \"TODO\" internal", "make build && ./bin/orbit --help", "ls -la internal/orbit", "git diff --stat"}
		a := bashArgs{Command: cmds[g.rng.IntN(len(cmds))]}
		if g.chance(0.2) {
			a.Timeout = 120
		}
		args = a
	}
	c.Arguments, _ = llm.ArgumentsOf(args)
	if c.Name == "bash" {
		path = ""
	}
	return c, path
}

func (g *gen) toolResult(c llm.ToolCall, path string, huge bool) *llm.ToolResultMessage {
	m := &llm.ToolResultMessage{ToolCallID: c.ID, ToolName: c.Name, Timestamp: g.ms()}
	var text string
	switch {
	case huge:
		text = g.codeText(g.o.KeepRecentTokens*5, g.o.KeepRecentTokens*6)
	case g.chance(g.o.HugeRate):
		text = g.codeText(64<<10, 256<<10)
	}
	switch c.Name {
	case "read":
		if text == "" {
			text = g.codeText(300, 2400)
		}
		if g.chance(g.o.ImageRate) {
			m.Content = append(m.Content, g.image())
			text = "Read image file [image/png]"
		}
	case "write":
		text = "Successfully wrote " + fmt.Sprint(200+g.rng.IntN(4000)) + " bytes to " + path
	case "edit":
		text = "Successfully replaced text in " + path + "."
		m.Details = jsontext.Value(fmt.Sprintf(`{"diff":%q}`, "-"+g.words(3, 8)+"\n+"+g.words(3, 8)))
	default:
		if text == "" {
			text = g.codeText(20, 2000)
		}
		if g.chance(0.1) {
			m.IsError = true
			text += "\n\nCommand exited with code 1"
		}
	}
	m.Content = append([]llm.Content{llm.Text{Text: text}}, m.Content...)
	return m
}

func (g *gen) bash() {
	code := 0
	if g.chance(0.2) {
		code = 2
	}
	m := &session.BashExecution{Command: "git log --oneline -n 5", Output: g.codeText(50, 600), ExitCode: &code, Timestamp: g.ms(), ExcludeFromContext: g.chance(0.2)}
	g.emitMessage(m)
}

func (g *gen) image() llm.Image {
	data := g.bytes(2000 + g.rng.IntN(30000))
	copy(data, "\x89PNG\r\n\x1a\n")
	return llm.Image{Data: base64.StdEncoding.EncodeToString(data), MIMEType: "image/png"}
}

func (g *gen) bytes(n int) []byte {
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := g.rng.Uint64()
		for j := 0; j < 8 && i+j < n; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

var vocabulary = strings.Fields(`the planner orbit store handler request cache migration test failing passes
refactor extract function interface context deadline retry backoff channel goroutine mutex lock file path
config settings flag parse error wrap return value slice map struct field method receiver pointer nil check
benchmark allocation latency throughput schema index query transaction commit rollback ephemeris satellite
propagate vector epoch drift tolerance api route middleware token session compaction branch summary review
naïve café résumé déjà-vu 日本語 テスト 😀 🚀 "quoted" back\slash <tag> & tab	here`)

// corpus prepares the text that code and prose are cut from.
func (g *gen) corpus() {
	var code, prose strings.Builder
	idents := []string{"planner", "orbit", "store", "epoch", "vec", "cfg", "req", "resp", "ctx", "err", "n", "i"}
	for code.Len() < 512<<10 {
		id := idents[g.rng.IntN(len(idents))]
		switch g.rng.IntN(8) {
		case 0:
			fmt.Fprintf(&code, "func (p *Planner) %s%d(ctx context.Context, %s int) (*Result, error) {\n", strings.ToUpper(id[:1])+id[1:], g.rng.IntN(99), id)
		case 1:
			code.WriteString("\tif err != nil {\n\t\treturn nil, fmt.Errorf(\"planning %s: %w\", name, err)\n\t}\n")
		case 2:
			fmt.Fprintf(&code, "\t%s := make([]float64, 0, %d) // %s\n", id, g.rng.IntN(512), vocabulary[g.rng.IntN(len(vocabulary))])
		case 3:
			code.WriteString("}\n\n")
		case 4:
			fmt.Fprintf(&code, "\tfor i := range %s {\n\t\ttotal += %s[i] * 0.5\n\t}\n", id, id)
		case 5:
			fmt.Fprintf(&code, "--- FAIL: Test%s (0.%02ds)\n    planner_test.go:%d: got %d, want %d\n", strings.ToUpper(id[:1])+id[1:], g.rng.IntN(99), g.rng.IntN(400), g.rng.IntN(9), g.rng.IntN(9))
		case 6:
			fmt.Fprintf(&code, "\t// %s\n", g.sentence())
		default:
			fmt.Fprintf(&code, "\treturn &Result{Name: %q, Score: %d}, nil\n", id, g.rng.IntN(1000))
		}
	}
	for prose.Len() < 128<<10 {
		prose.WriteString(g.sentence())
		prose.WriteByte(' ')
	}
	g.code, g.prose = code.String(), prose.String()
}

func (g *gen) words(min, max int) string {
	n := min + g.rng.IntN(max-min+1)
	w := make([]string, n)
	for i := range w {
		w[i] = vocabulary[g.rng.IntN(len(vocabulary))]
	}
	return strings.Join(w, " ")
}

func (g *gen) sentence() string {
	s := g.words(5, 16)
	if c := s[0]; c >= 'a' && c <= 'z' {
		s = string(c-'a'+'A') + s[1:]
	}
	return s + "."
}

// paragraph returns a slice of prose of 100–300 characters per unit.
func (g *gen) paragraph(min, max int) string {
	n := int(float64((min+g.rng.IntN(max-min+1))*(100+g.rng.IntN(200))) * g.o.SizeScale)
	return cut(g.prose, g.rng.IntN(len(g.prose)), n)
}

// codeText returns min–max bytes of code-like text (scaled by SizeScale).
func (g *gen) codeText(min, max int) string {
	n := int(float64(min+g.rng.IntN(max-min+1)) * g.o.SizeScale)
	return cut(g.code, g.rng.IntN(len(g.code)), n)
}

// cut returns n bytes of s starting at off, wrapping around, trimmed to
// whole runes.
func cut(s string, off, n int) string {
	var b strings.Builder
	for n > 0 {
		k := min(n, len(s)-off)
		b.WriteString(s[off : off+k])
		n -= k
		off = 0
	}
	return strings.ToValidUTF8(b.String(), "")
}
