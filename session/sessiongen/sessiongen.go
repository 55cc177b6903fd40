// Package sessiongen generates realistic session files for tests,
// benchmarks and "prime dev gen-session".
//
// A generated session is a developer working with a coding agent on orbit,
// a fictional Go service that plans satellite passes, with a small web UI.
// The user asks for pieces of work (fix a bug, add a flag, a migration, a
// translation), adds rules as they go ("don't touch the public API",
// "always run go test ./... before you commit"), follows up, corrects the
// assistant, asks questions, changes direction and has the work committed.
// The assistant explains, reasons in its thinking, and reads, edits, writes
// and runs commands in one consistent project tree: a read shows the
// file's contents, an edit's oldText is text of that file, a failing test
// prints the test's failure and exit code, and a fix is followed by a
// passing run. Some edits miss and are retried, some turns fail (provider
// errors, aborts) and are retried by the user.
//
// The variety tests rely on is all there: Unicode (CJK, emoji, accents),
// quotes, backslashes, HTML-like tags, tabs, huge tool results, images,
// model and thinking-level changes, labels, a session name, extension
// entries and messages, user shell commands (some excluded from context),
// branches with and without branch summaries, and compactions made the way
// pi makes them (a valid firstKeptEntryId, cumulative {readFiles,
// modifiedFiles} details) whenever the context outgrows the window.
//
// Usage on assistant messages is what a provider would report: the input
// is the chars/4 estimate of the context the model saw plus a system
// prompt of [SystemPromptTokens], split into cache reads and writes (the
// part the previous request already sent is read from the cache); the
// output is the message's own estimate. After a compaction, a branch move
// or a model change the cache is cold again, and the next usage measures
// the new, smaller context. A failed turn (stop reason error or aborted)
// has no tool calls and no usage, so no tool result ever follows one.
//
// With [Options].Pi16 the session is written as pi 1.6 writes one: the
// system prompt in the transcript (a system message, later patches, the
// replayed state on each compaction) and failed attempts hidden by
// context_edit entries. [EdgeCases] are hand-written sessions of shapes the
// generator does not make.
//
// The output is a version-3 file that depends only on the [Options]: the
// same options always give the same bytes.
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
	// larger than KeepRecentTokens (a case pi 1.6 cuts specially).
	TrailingHugeResults int
	// Pi16 writes the session as pi 1.6 does: the model and thinking level
	// first, then a system message (content "", the prompt's sections,
	// the tools' declarations with their schemas); now and then a patch
	// (a section changed or removed, a tool added or removed); failed
	// attempts retried at once and hidden by context_edit entries (a reply
	// the provider failed; a reply cut off by the output limit, with the
	// error results of its calls); compactions carrying the replayed
	// system state. Usage then counts the system state's estimate instead
	// of SystemPromptTokens. Off, the session is the same as before the
	// option existed.
	Pi16 bool
}

// SystemPromptTokens is what the system prompt and tool definitions add to
// every request's input in the simulated usage.
const SystemPromptTokens = 3200

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
		o:         o,
		rng:       rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15)),
		ids:       make(map[string]bool),
		now:       o.Start,
		out:       bufio.NewWriterSize(w, 1<<20),
		read:      map[string]bool{},
		modified:  map[string]bool{},
		compactAt: -1,
	}
	g.files = newProject(g.rng, o.SizeScale)
	g.setModel(models[0])
	g.header()
	g.limit = o.Entries
	if o.Pi16 {
		g.startPi16()
	}
	if o.TrailingHugeResults > 0 {
		g.limit = max(0, o.Entries-o.TrailingHugeResults-1)
	}
	for g.count < g.limit && g.err == nil {
		g.turn()
	}
	if o.TrailingHugeResults > 0 {
		g.limit = o.Entries
		g.trailingHuge(o.TrailingHugeResults)
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
	hidden bool   // in the context's estimate but not sent to the model
	usage  int    // the context size its usage reports (assistants), or 0
	// sys and state are the prompt in force after the entry (Pi16): the
	// generator's and as the model sees it replayed.
	sys   *system
	state *session.SystemMessage
}

// A model the simulated user switches between.
type model struct {
	provider, id string
	api          string
	// prices in dollars per token: input, output, cache read, cache write
	in, out, read, write float64
}

var models = []model{
	{"anthropic", "claude-sonnet-4-5", llm.APIAnthropicMessages, 3e-6, 15e-6, 0.3e-6, 3.75e-6},
	{"anthropic", "claude-opus-4-5", llm.APIAnthropicMessages, 5e-6, 25e-6, 0.5e-6, 6.25e-6},
	{"openai", "gpt-5", llm.APIOpenAICompletions, 1.25e-6, 10e-6, 0.125e-6, 0},
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
	// keptFrom is the index in path where the context starts (the latest
	// compaction's first kept entry), compactAt the latest compaction's
	// index (-1: none), context the context's estimate in tokens and
	// hidden the part of it the model is not sent.
	keptFrom, compactAt, context, hidden int
	// cached is the prompt prefix the provider has cached from the
	// previous request, in tokens.
	cached int

	model    model
	thinking string
	named    bool
	// sys is the prompt's state and state its replay (Pi16; nil without).
	sys   *system
	state *session.SystemMessage
	// read and modified are every file read or changed so far, for the
	// compactions' details.
	read, modified map[string]bool

	files map[string]*projectFile
	conv  conversation
	// s fills the texts of the current turn.
	s slots
	// catalog is the text huge results are cut from, made when first
	// needed.
	catalog string
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

// emit writes one entry as a child of the leaf and returns its id ("" once
// the session is full).
func (g *gen) emit(p session.Payload, n node) string { return g.emitStamped(p, n, nil) }

// emitStamped is emit, calling stamp with the entry's time before the
// entry is encoded.
func (g *gen) emitStamped(p session.Payload, n node, stamp func(time.Time)) string {
	if g.full() {
		return ""
	}
	n.id = g.newID()
	ts := g.tick(20)
	if stamp != nil {
		stamp(ts)
	}
	n.sys, n.state = g.sys, g.state
	line, err := session.EncodeEntry(n.id, g.leaf(), session.FormatTime(ts), p)
	if err != nil {
		g.err = err
		return ""
	}
	g.out.Write(line)
	g.out.WriteByte('\n')
	g.count++
	g.path = append(g.path, n)
	g.context += n.tokens
	if n.hidden {
		g.hidden += n.tokens
	}
	return n.id
}

// emitMessage writes a message entry; false once the session is full.
func (g *gen) emitMessage(m session.Message) bool {
	n := node{kind: m.Role(), tokens: session.EstimateTokens(m)}
	switch m := m.(type) {
	case *session.SystemMessage:
		n.tokens = 0 // counted by promptTokens
	case *session.BashExecution:
		n.hidden = m.ExcludeFromContext
	case *llm.AssistantMessage:
		if u, ok := session.ValidUsage(m); ok {
			n.usage = u.ContextTokens()
		}
	}
	return g.emit(&session.MessageEntry{Message: m}, n) != ""
}

// full reports that no more entries fit.
func (g *gen) full() bool { return g.err != nil || g.count >= g.limit }

func (g *gen) chance(p float64) bool { return p > 0 && g.rng.Float64() < p }

func (g *gen) ms() int64 { return g.now.UnixMilli() }

func (g *gen) setModel(m model) {
	g.model = m
	g.cached = 0 // a new model has nothing cached
}

// turn writes one user turn: maybe a branch move and some session
// housekeeping, the prompt, the assistant's work and its answer; then a
// compaction if the context has grown too large.
func (g *gen) turn() {
	if len(g.path) > 8 && g.chance(g.o.BranchRate) {
		g.branch()
	}
	if g.o.Pi16 && len(g.path) > 8 && g.chance(0.03) {
		g.patchSystem()
	}
	switch r := g.rng.IntN(100); {
	case len(g.path) == 0:
		// The session opens with the user's first request.
	case r < 3:
		g.thinking = []string{"off", "minimal", "low", "medium", "high"}[g.rng.IntN(5)]
		g.emit(&session.ThinkingLevelChangeEntry{ThinkingLevel: llm.ThinkingLevel(g.thinking)}, node{kind: session.TypeThinkingLevelChange})
	case r < 5:
		m := models[g.rng.IntN(len(models))]
		g.setModel(m)
		g.emit(&session.ModelChangeEntry{Provider: m.provider, ModelID: m.id}, node{kind: session.TypeModelChange})
	case r < 7:
		target := g.path[g.rng.IntN(len(g.path))].id
		g.emit(&session.LabelEntry{TargetID: target, Label: labels[g.rng.IntN(len(labels))]}, node{kind: session.TypeLabel})
	case r < 8:
		g.emit(&session.CustomEntry{CustomType: "todo-state", Data: jsontext.Value(fmt.Sprintf(`{"open":%d,"done":%d}`, g.rng.IntN(9), g.rng.IntN(30)))}, node{kind: session.TypeCustom})
	case r < 9:
		g.reviewNote()
	case r < 11:
		g.userShell()
	}
	g.tick(300)
	g.conversationTurn()
	if !g.o.NoCompactions && g.promptTokens()+g.context > g.o.ContextWindow-g.o.ReserveTokens {
		g.compact()
	}
}

var labels = []string{"checkpoint", "before refactor", "tests green", "🚀 release candidate", "try this again", "good explanation", "bug repro"}

// reviewNote writes a message from a review extension.
func (g *gen) reviewNote() {
	t := g.conv.current()
	text := "Review bot: " + t.files[0] + " changed without a matching test change. Consider covering " + t.sym + "."
	if g.chance(0.5) {
		text = "Review bot: the last commit touches " + t.files[len(t.files)-1] + "; remember the rule \"" + constraints[g.rng.IntN(len(constraints))] + "\""
	}
	content := []llm.Content{llm.Text{Text: text}}
	tokens := session.EstimateTokens(&session.CustomMessage{Content: content})
	g.emit(&session.CustomMessageEntry{CustomType: "review-note", Content: content, Display: g.rng.IntN(2) == 0}, node{kind: session.TypeCustomMessage, tokens: tokens})
}

// userShell writes a command the user ran themselves (pi's "!cmd").
func (g *gen) userShell() {
	code := 0
	var cmd, out string
	switch g.rng.IntN(3) {
	case 0:
		cmd = "git log --oneline -n 5"
		var b strings.Builder
		for range 5 {
			fmt.Fprintf(&b, "%07x %s\n", g.rng.Uint32()&0xfffffff, commitMessage(tasks[g.rng.IntN(len(tasks))]))
		}
		out = b.String()
	case 1:
		t := g.conv.current()
		cmd = "go test " + orDefaultString(t.pkg, "./...")
		out = g.testOutput(t, false)
		if g.chance(0.3) {
			code = 1
			out = g.testOutput(t, true)
		}
	default:
		cmd = "make build"
		out = "go build -o bin/orbit ./cmd/orbit\n"
		if g.chance(0.2) {
			code = 2
			out += "# " + module + "/internal/orbit\ninternal/orbit/planner.go:61:9: undefined: clipInterval\nmake: *** [Makefile:6: build] Error 1\n"
		}
	}
	g.emitMessage(&session.BashExecution{Command: cmd, Output: out, ExitCode: &code, Timestamp: g.ms(), ExcludeFromContext: g.chance(0.2)})
}

func orDefaultString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// branch moves the leaf back to the parent of an earlier user message after
// the latest compaction, optionally leaving a branch summary there.
func (g *gen) branch() {
	var users []int
	for i := max(g.keptFrom, g.compactAt+1); i < len(g.path)-1; i++ {
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
		if n.hidden {
			g.hidden -= n.tokens
		}
	}
	g.path = g.path[:at]
	g.sys, g.state = g.path[at-1].sys, g.path[at-1].state
	g.cached = min(g.cached, g.promptTokens())
	g.conv.branched = true
	if g.chance(0.5) {
		text := g.branchSummary()
		tokens := session.EstimateTokens(&session.BranchSummaryMessage{Summary: text})
		g.emit(&session.BranchSummaryEntry{FromID: oldLeaf, Summary: text, Details: g.fileDetails()}, node{kind: session.TypeBranchSummary, tokens: tokens})
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
	summary := g.compactionSummary()
	before := g.tokensBefore()
	c := &session.CompactionEntry{Summary: summary, FirstKeptEntryID: g.path[cut].id, TokensBefore: before, Details: g.fileDetails()}
	stamp := func(ts time.Time) {
		if g.state != nil { // pi 1.6 stamps the system state with the entry's time
			sys := *g.state
			sys.Timestamp = ts.UnixMilli()
			c.SystemMessage = &sys
		}
	}
	if g.emitStamped(c, node{kind: session.TypeCompaction}, stamp) == "" {
		return
	}
	g.keptFrom, g.compactAt = cut, len(g.path)-1
	g.context = session.EstimateTokens(&session.CompactionSummaryMessage{Summary: summary})
	g.hidden = 0
	for _, n := range g.path[cut:] {
		g.context += n.tokens
		if n.hidden {
			g.hidden += n.tokens
		}
	}
	g.cached = min(g.cached, g.promptTokens())
}

// tokensBefore is the context's size as Prime and pi measure it: the newest
// usage since the latest compaction plus the estimates after it.
func (g *gen) tokensBefore() int {
	after := 0
	for i := len(g.path) - 1; i > g.compactAt && i >= g.keptFrom; i-- {
		if n := g.path[i]; n.usage > 0 {
			return n.usage + after
		}
		after += g.path[i].tokens
	}
	return g.context
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

// finishAssistant sets a message's stop reason and usage: the prompt is the
// system prompt and the context the model is sent, split into what the
// provider had cached from the previous request and what is new.
func (g *gen) finishAssistant(m *llm.AssistantMessage) {
	m.StopReason = llm.StopReasonStop
	for _, c := range m.Content {
		if _, ok := c.(llm.ToolCall); ok {
			m.StopReason = llm.StopReasonToolUse
			break
		}
	}
	prompt := g.promptTokens() + g.context - g.hidden
	out := session.EstimateTokens(m)
	cached := min(g.cached, prompt)
	u := llm.Usage{Output: out, CacheRead: cached}
	rest := prompt - cached
	if g.model.write > 0 { // Anthropic: new input is written to the cache
		u.Input = min(rest, 1+g.rng.IntN(12))
		u.CacheWrite = rest - u.Input
	} else { // OpenAI: cached in blocks of 128 tokens, no write charge
		u.CacheRead = cached / 128 * 128
		u.Input = prompt - u.CacheRead
	}
	u.TotalTokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
	u.Cost = llm.Cost{Input: float64(u.Input) * g.model.in, Output: float64(out) * g.model.out,
		CacheRead: float64(u.CacheRead) * g.model.read, CacheWrite: float64(u.CacheWrite) * g.model.write}
	u.Cost.Total = u.Cost.Input + u.Cost.Output + u.Cost.CacheRead + u.Cost.CacheWrite
	m.Usage = u
	g.cached = prompt
}

func (g *gen) newAssistant() *llm.AssistantMessage {
	g.tick(60)
	return &llm.AssistantMessage{API: g.model.api, Provider: g.model.provider, Model: g.model.id, Timestamp: g.ms()}
}

// failedAssistant writes a turn the provider failed or the user aborted:
// no tool calls, no usage.
func (g *gen) failedAssistant() {
	m := g.newAssistant()
	if g.chance(0.55) {
		m.StopReason = llm.StopReasonError
		m.ErrorMessage = []string{"overloaded_error: Overloaded", "529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}", "request timed out after 600s"}[g.rng.IntN(3)]
		g.conv.failed = true
	} else {
		m.StopReason = llm.StopReasonAborted
		m.ErrorMessage = "Request was aborted"
		if g.chance(0.6) {
			m.Content = []llm.Content{llm.Text{Text: g.say(introLines, 1)}}
		}
		g.conv.aborted = true
	}
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

// scaled returns n scaled by SizeScale, at least 1.
func (g *gen) scaled(n int) int { return max(1, int(float64(n)*g.o.SizeScale)) }
